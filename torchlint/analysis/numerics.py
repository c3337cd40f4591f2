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
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_use_cuda, precision_mentions
from torchlint.analysis.training import Training, optimizer_class

if TYPE_CHECKING:
    from collections.abc import Callable

    from torchlint.analysis.context import FileContext


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
# torchvision's image classifiers: convolutional networks throughout (not its vision transformers).
VISION_CONVNET = re.compile(
    r"^torchvision\.models\.(\w+\.)?(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet"
    r"|alexnet|squeezenet|shufflenet|mnasnet|regnet|convnext|inception|googlenet)\w*$"
)
# A factory named like a CNN family, from any library (`model_zoo.resnet50()`, `timm`'s names):
# a convolutional network of the usual size. A class of that name (`ResNet18(...)`) is a
# convolutional network too, but often a shrunken one written for a tutorial: its size is the
# size of its own layers.
_CONVNET_FAMILIES = (
    r"(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet|alexnet|squeezenet"
    r"|shufflenet|mnasnet|regnet|convnext|inception|googlenet|unet|darknet|cspdarknet)"
)
_CONVNET_NAME = re.compile(rf"^{_CONVNET_FAMILIES}\w*$", re.IGNORECASE)
_CONVNET_FACTORY = re.compile(rf"^{_CONVNET_FAMILIES}\w*$")
# Sizes that make a layer big enough for tensor cores to matter: the multiply-adds per sample of
# a linear layer (in x out features: 2048 x 2048), the hidden size of a recurrent layer, the
# output channels of a convolution, the width of attention. Below them (a 784-500-10 MLP on
# MNIST, a 64-unit RL policy, LeNet, the Atari DQN net) each step is a few dozen kernel launches
# of microseconds: a 512-wide MLP on batches of 256 trained no faster with TF32 on an H200, and a
# width-64 transformer layer slower under autocast.
_BIG_LINEAR = 2048 * 2048
_BIG_SIZES = {
    "RNN": (1024, 1, "hidden_size"),
    "LSTM": (1024, 1, "hidden_size"),
    "GRU": (1024, 1, "hidden_size"),
    "Conv2d": (256, 1, "out_channels"),
    "Conv3d": (128, 1, "out_channels"),
    "ConvTranspose2d": (256, 1, "out_channels"),
    "MultiheadAttention": (512, 0, "embed_dim"),
    "Transformer": (512, 0, "d_model"),
    "TransformerEncoderLayer": (512, 0, "d_model"),
    "TransformerDecoderLayer": (512, 0, "d_model"),
}
# Pretrained or library models of known size: a torchvision or CNN-family factory, a Hugging
# Face model, a timm model.
_BIG_FACTORIES = re.compile(r"^torchvision\.models\.|^timm\.create_model$|^transformers\.")


# torch's optimizers by name, for one reached through a star import (`optim.LBFGS([image])`).
_OPTIMIZERS = frozenset(
    {"SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta", "LBFGS"}
)


@dataclass(frozen=True)
class Layers:
    """What the file's own model building says: matmul layers, convolutions, and whether some
    layer or model is big enough for tensor cores to matter. A model built in another module,
    or sized only by parameters and config values, is not known to be big: unknown means silent."""

    matmul: bool = False
    conv: bool = False
    big: bool = False


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
        return self.own_mentions | self.ctx.project.imported_precision(self.ctx.absolute_path)

    def unsettled_step(
        self, words: frozenset[str], wants: Callable[[Layers], bool] | None = None
    ) -> cst.Call | None:
        """The `training_step` of a CUDA training script whose `layers` satisfy `wants` (when
        given) and that mentions none of `words` (`precision_mentions`) in the file or in the
        project modules it imports; None otherwise. The cheap tests run first."""
        if self.own_mentions & words:
            return None
        step = self.training_step
        if step is None or (wants is not None and not wants(self.layers)):
            return None
        if self.mentions & words:
            return None
        return step

    @cached_property
    def training_step(self) -> cst.Call | None:
        """The first `backward()` (else optimizer step) run on every batch of a CUDA training
        script; None for a file that is not one: no training loop, a library module (no
        `__main__` block and no module-level training), a unit test, or no CUDA device."""
        if not may_use_cuda(self.ctx.source):
            return None
        training = self.ctx.fact(Training)
        if not training.trains or not training.is_script:
            return None
        loops = self.ctx.fact(LoopFacts)
        if not loops.uses_accelerator:
            return None
        if self._optimizes_inputs_only(training):
            return None
        steps = [call for call in training.step_calls if loops.per_batch_loop(call) is not None]
        backward = [call for call in steps if _method(call) in ("backward", "manual_backward")]
        chosen = backward or steps
        return chosen[0] if chosen else None

    def _optimizes_inputs_only(self, training: Training) -> bool:
        """Every optimizer the file builds takes a list of tensors (`Adam([image])`), none a
        model's parameters: style transfer, feature visualisation, adversarial inputs. They
        optimise an input through a frozen network, whose precision they may depend on."""
        built = [
            call
            for call in self.ctx.fact(SemanticModel).calls
            if optimizer_class(self.ctx.symbols.qualname(call.func))
            or (dotted(call.func) or "").rsplit(".", 1)[-1] in _OPTIMIZERS
        ]
        return bool(built) and all(_tensor_list(call) for call in built)

    @cached_property
    def layers(self) -> Layers:
        """The layers the file builds or calls, by their full names (`nn.Linear`, `F.conv2d`,
        `torch.matmul`, a torchvision model) and `@`, and whether one is big."""
        model = self.ctx.fact(SemanticModel)
        matmul = conv = big = False
        for call in model.calls:
            name = self.ctx.symbols.qualname(call.func) or ""
            last = _last(call.func)
            if _MATMUL_LAYERS.match(name) or (
                last == "from_pretrained" and name.startswith("transformers.")
            ):
                matmul = True
            elif _CONV_LAYERS.match(name) or _CONVNET_NAME.match(last):
                conv = True
            else:
                continue
            big = (
                big
                or _BIG_FACTORIES.match(name) is not None
                or _CONVNET_FACTORY.match(last) is not None
            )
            big = big or _big_layer(model, call, name.rsplit(".", 1)[-1])
        if not matmul and "@" in self.ctx.source:
            matmul = _has_matmul_operator(model)
        return Layers(matmul, conv, big)


def _big_layer(model: SemanticModel, call: cst.Call, layer: str) -> bool:
    """A layer whose sizes are written out (or bound once to a number) and large."""
    layer = layer.removeprefix("Lazy")
    if layer == "Linear":
        sizes = [_argument(model, call, i, k) for i, k in ((0, "in_features"), (1, "out_features"))]
        return None not in sizes and sizes[0] * sizes[1] >= _BIG_LINEAR  # type: ignore[operator]
    bar, index, keyword = _BIG_SIZES.get(layer, (0, 0, ""))
    return bool(bar) and (_argument(model, call, index, keyword) or 0) >= bar


def _argument(model: SemanticModel, call: cst.Call, index: int, keyword: str) -> int | None:
    """The size passed at position `index` or as `keyword`, when written out."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return _width(model, arg.value)
    return _width(model, positional[index]) if index < len(positional) else None


def _width(model: SemanticModel, value: cst.BaseExpression) -> int | None:
    """A size written out: `512`, or a name bound once to one (`hidden = 512`)."""
    if isinstance(value, cst.Name):
        value = model.value_of(value) or value
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    return None


def _has_matmul_operator(model: SemanticModel) -> bool:
    """`a @ b` somewhere among the file's expressions."""
    return any(
        isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply)
        for node in model.parents
    )


def _tensor_list(call: cst.Call) -> bool:
    """An optimizer built on a list of tensors, not on parameters or groups: `[image]`, and
    concatenations with the values of a dict of tensors (`[w] + list(noise_bufs.values())`)."""
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    return first is not None and _lists_tensors(first)


def _lists_tensors(node: cst.BaseExpression) -> bool:
    """`[a, b]`, `(a,)`, `list(bufs.values())`, or a `+` of those."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _lists_tensors(node.left) and _lists_tensors(node.right)
    if isinstance(node, cst.List | cst.Tuple):
        return all(isinstance(e.value, cst.Name | cst.Attribute) for e in node.elements)
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "list"
        and len(node.args) == 1
        and isinstance(inner := node.args[0].value, cst.Call)
        and isinstance(inner.func, cst.Attribute)
        and inner.func.attr.value == "values"
        and not inner.args
    )


def _last(func: cst.BaseExpression) -> str:
    return (dotted(func) or "").rsplit(".", 1)[-1]


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None
