"""GPU training scripts and what they say about numeric precision: TF32, mixed precision, memory format.

The precision rules (TL112 TF32, TL113 autocast, TL114 channels_last) ask the same two
questions of a file: is it a CUDA training script, with its training loop, and what does the
entry point, with the project modules it imports, say about precision. A process-wide setting
made in a config module the script imports is made for the script too; a word that may settle
the question anywhere (a `--tf32` flag, a `use_amp` option, a framework that picks the
precision) settles it: unknown means silent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_use_cuda, precision_mentions
from torchlint.analysis.training import Training

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


# Layers whose work is matrix multiplication (TF32 for matmuls speeds them up), by full name.
_MATMUL_LAYERS = re.compile(
    r"^torch\.nn\.(modules\.\w+\.)?(Lazy)?(Linear|Bilinear|RNN|LSTM|GRU|RNNCell|LSTMCell|GRUCell"
    r"|MultiheadAttention|Transformer|TransformerEncoder|TransformerDecoder|TransformerEncoderLayer"
    r"|TransformerDecoderLayer)$"
    r"|^torch\.(matmul|mm|bmm|einsum|baddbmm|addmm)$|^torch\.nn\.functional\.(linear|bilinear"
    r"|scaled_dot_product_attention|multi_head_attention_forward)$"
)
_CONV_LAYERS = re.compile(
    r"^torch\.nn\.(modules\.conv\.)?(Lazy)?Conv(Transpose)?[123]d$"
    r"|^torch\.nn\.functional\.conv(_transpose)?[123]d$|^torchvision\.models\."
)
# A factory named like a CNN family, from any library (`model_zoo.resnet50()`, `timm`'s names).
_CONVNET_NAME = re.compile(
    r"^(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet|alexnet|squeezenet"
    r"|shufflenet|mnasnet|regnet|convnext|inception|googlenet|unet|darknet|cspdarknet)\w*$",
    re.IGNORECASE,
)
# Layers sized by their first two arguments (features in and out, input and hidden size).
_SIZED = re.compile(r"\.(Linear|Bilinear|RNN|LSTM|GRU)$")
# A model of such layers alone, none wider than this with its sizes written out, is too small
# for tensor cores to matter: an XOR net, a logistic regression or a 784-512-10 MLP on MNIST, a
# 64-unit RL policy. Each step is a few dozen kernel launches of microseconds: a 512-wide MLP on
# batches of 256 trained no faster with TF32 on an H200. A convolution's work depends on the
# image size too: a conv net is never taken for tiny.
_TINY_WIDTH = 1024


@dataclass(frozen=True)
class Layers:
    """What the file's own model building says: matmul layers, convolutions, and whether every
    layer it sizes is written out and narrow (a model too small for precision to matter)."""

    matmul: bool = False
    conv: bool = False
    tiny: bool = False


class Numerics:
    """File-level precision facts, via `ctx.fact(Numerics)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @property
    def own_mentions(self) -> frozenset[str]:
        """`text.precision_mentions` of the file alone: ask it before anything costlier."""
        return precision_mentions(self.ctx.source)

    @cached_property
    def mentions(self) -> frozenset[str]:
        """`text.precision_mentions` of the file and of the project modules it imports."""
        if self.ctx.project is None:
            return self.own_mentions
        return self.own_mentions | self.ctx.project.imported_precision(Path(self.ctx.path))

    @cached_property
    def training_step(self) -> cst.Call | None:
        """The first `backward()` (else optimizer step) run on every batch of a CUDA training
        script; None for a file that is not one: no training loop, a library module (no
        `__main__` block and no module-level training), a unit test, or no CUDA device."""
        if not may_use_cuda(self.ctx.source):
            return None
        training = self.ctx.fact(Training)
        if not training.trains or not training.is_script or training.is_test_file:
            return None
        loops = self.ctx.fact(LoopFacts)
        if not loops.uses_accelerator:
            return None
        steps = [call for call in training.step_calls if loops.per_batch_loop(call) is not None]
        backward = [call for call in steps if _method(call) in ("backward", "manual_backward")]
        chosen = backward or steps
        return chosen[0] if chosen else None

    @cached_property
    def layers(self) -> Layers:
        """The layers the file builds or calls, by their full names (`nn.Linear`, `F.conv2d`,
        `torch.matmul`, a torchvision model) and `@`; a model built in another module is unknown."""
        model = self.ctx.fact(SemanticModel)
        matmul = conv = False
        widths: list[int | None] = []
        for call in model.calls:
            name = self.ctx.symbols.qualname(call.func) or ""
            if _MATMUL_LAYERS.match(name):
                matmul = True
            elif _CONV_LAYERS.match(name) or _CONVNET_NAME.match(_last(call.func)):
                conv = True
                widths.append(None)
            else:
                continue
            if _SIZED.search(name):
                widths += [_width(model, a.value) for a in call.args[:2] if a.keyword is None]
        if not matmul and "@" in self.ctx.source:
            matmul = _has_matmul_operator(model)
        tiny = bool(widths) and all(w is not None and w <= _TINY_WIDTH for w in widths)
        return Layers(matmul, conv, tiny)


def _width(model: SemanticModel, value: cst.BaseExpression) -> int | None:
    """A layer size written out: `512`, or a name bound once to one (`hidden = 512`)."""
    if isinstance(value, cst.Name):
        value = model.value_of(value) or value
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    return None


def _has_matmul_operator(model: SemanticModel) -> bool:
    """`a @ b` somewhere among the file's expressions (not a decorator)."""
    return any(
        isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply)
        for node in model.parents
    )


def _last(func: cst.BaseExpression) -> str:
    return (dotted(func) or "").rsplit(".", 1)[-1]


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None
