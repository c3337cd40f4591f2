"""TL110 cudnn-benchmark-off."""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from torchlint.analysis.grad import name_tokens
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import target_names
from torchlint.analysis.symbols import dotted
from torchlint.analysis.training import Training, is_main_guard
from torchlint.diagnostics import Applicability, Edit, Position
from torchlint.rule import Invalid, Rule

_CONV = re.compile(
    r"^torch\.nn\.(modules\.conv\.)?(Lazy)?Conv(Transpose)?[123]d$|^torch\.nn\.functional\.conv(_transpose)?[123]d$"
)
_VISION_CONVNET = re.compile(
    r"^torchvision\.models\.(\w+\.)?(resnet|resnext|wide_resnet|vgg|densenet|mobilenet|efficientnet|alexnet|squeezenet|shufflenet|mnasnet|regnet|convnext|inception|googlenet)\w*$"
)
# Helpers that usually set cuDNN's flags themselves (`init_seeds(deterministic=True)`), elsewhere.
_SETUP_WORDS = frozenset(
    {
        "seed",
        "seeds",
        "deterministic",
        "determinism",
        "reproducible",
        "reproducibility",
        "cudnn",
        "benchmark",
    }
)
# Seeding that certainly leaves cuDNN alone; a helper defined in the file shows its assignments here.
_NOT_HELPERS = ("torch.", "numpy.", "random.")


def _flag(target: cst.BaseExpression, flag: str) -> bool:
    """`torch.backends.cudnn.<flag>` or `cudnn.<flag>` as an assignment target."""
    name = dotted(target) or ""
    return name == f"cudnn.{flag}" or name.endswith(f".cudnn.{flag}")


class CudnnBenchmarkOff(Rule):
    code = "TL110"
    name = "cudnn-benchmark-off"
    summary = (
        "A script trains a conv net on the GPU without `torch.backends.cudnn.benchmark = True`"
    )
    default_enabled = False
    gpu_only = True  # cuDNN autotuning exists only on a GPU
    fix_availability = "unsafe"
    fix_versions = {
        "`torch.backends.cudnn.benchmark = True`": "1.0",
    }
    tokens = ("Conv", "conv", "torchvision")
    docs = """
## What it does
Flags a training script that builds a convolutional network (`nn.Conv1d/2d/3d`, their
transposed and lazy forms, `F.conv2d`, or a torchvision CNN such as `resnet50()`), trains it
(`backward()` or an optimizer step) on an accelerator (`.cuda()`, `.to(device)`, a `"cuda"`
device string), and never sets `torch.backends.cudnn.benchmark = True`, or sets it to False.

A script is a file with an `if __name__ == "__main__":` block or training code at module
level; library modules are left alone, since the setting belongs to the entry point. Not
flagged: files that ask for determinism (`cudnn.deterministic = True`,
`torch.use_deterministic_algorithms(...)`), that call a seeding or setup helper from elsewhere
(`from utils import init_seeds`, `transformers.set_seed`), which may set these flags itself,
that set `benchmark` from a variable (`cudnn.benchmark = args.benchmark`), and unit tests.
This rule is opt-in: enable it with `--extend-select TL110`.

## Why is this bad?
With `benchmark = True`, cuDNN times the available convolution algorithms for each new
input shape on first use and keeps the fastest; with the default False it picks one by
heuristics, which is often not the fastest. For a network whose input shapes stay the same
from batch to batch (fixed image size and batch size), the one-off autotuning cost is repaid
within a few iterations and every later convolution runs faster.

## Example
```python
import torch
from torch import nn

model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
```

## Use instead
```python
import torch
from torch import nn
torch.backends.cudnn.benchmark = True

model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10)).cuda()
```

## Fix safety
Unsafe. The fastest algorithm may be nondeterministic, so runs are no longer bit-for-bit
reproducible (keep `benchmark = False` together with `cudnn.deterministic = True` when that
matters). When input shapes change from batch to batch (variable image sizes, a last partial
batch, dynamic-length sequences), each new shape triggers another round of benchmarking,
which can make training slower rather than faster. The fix inserts the setting after the
file's imports, or turns an explicit `False` into `True`.

## References
- [torch.backends.cudnn.benchmark](https://pytorch.org/docs/stable/backends.html#torch.backends.cudnn.benchmark)
- [Reproducibility: cuDNN convolution benchmarking](https://pytorch.org/docs/stable/notes/randomness.html#cuda-convolution-benchmarking)
- [PyTorch Performance Tuning Guide: enable cuDNN auto-tuner](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-cudnn-auto-tuner)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): set cudnn.benchmark](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    _NET = "model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    _LOOP = "for x in loader:\n    model(x.cuda()).sum().backward()\n    opt.step()\n"
    valid = [
        "import torch\nfrom torch import nn\ntorch.backends.cudnn.benchmark = True\n\n"
        + _NET
        + _LOOP,
        "import torch\nfrom torch import nn\n\n"
        + _NET.replace(".cuda()", "")
        + "for x in loader:\n    model(x).sum().backward()\n    opt.step()\n",
        "import torch\nfrom torch import nn\n\ndef train(loader):\n"
        + "".join("    " + line + "\n" for line in (_NET + _LOOP).splitlines()),
        "import torch\nfrom torch import nn\ntorch.backends.cudnn.benchmark = False\ntorch.backends.cudnn.deterministic = True\n\n"
        + _NET
        + _LOOP,
        "import torch\nfrom torch import nn\nfrom utils import init_seeds\n\ninit_seeds(0)\n"
        + _NET
        + _LOOP,
        "import torch\nfrom torch import nn\nfrom torch.backends import cudnn\n\ncudnn.benchmark = args.benchmark\n"
        + _NET
        + _LOOP,
        "import torch\nfrom torch import nn\n\nmodel = nn.Sequential(nn.Linear(3, 8)).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        + _LOOP,
        "import torch\nfrom torch import nn\n\n" + _NET,
    ]
    invalid = [
        Invalid(
            "import torch\nfrom torch import nn\n\n" + _NET + _LOOP,
            fixed="import torch\nfrom torch import nn\ntorch.backends.cudnn.benchmark = True\n\n"
            + _NET
            + _LOOP,
        ),
        Invalid(
            "import torch as T\nfrom torch import nn\nfrom torch.backends import cudnn\n\ncudnn.benchmark = False\n"
            + _NET.replace("torch.", "T.")
            + _LOOP,
            fixed="import torch as T\nfrom torch import nn\nfrom torch.backends import cudnn\n\ncudnn.benchmark = True\n"
            + _NET.replace("torch.", "T.")
            + _LOOP,
        ),
        Invalid(
            '"""Train a ResNet."""\nimport torchvision\nfrom torch.optim import SGD\n\n\ndef main():\n    model = torchvision.models.resnet18().to("cuda")\n'
            "    opt = SGD(model.parameters(), lr=0.1)\n    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n\n\n"
            'if __name__ == "__main__":\n    main()\n',
            fixed='"""Train a ResNet."""\nimport torchvision\nfrom torch.optim import SGD\nimport torch\ntorch.backends.cudnn.benchmark = True\n\n\n'
            'def main():\n    model = torchvision.models.resnet18().to("cuda")\n'
            "    opt = SGD(model.parameters(), lr=0.1)\n    for x in loader:\n        model(x).sum().backward()\n        opt.step()\n\n\n"
            'if __name__ == "__main__":\n    main()\n',
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.convs: list[cst.Call] = []
        self.turned_off: list[cst.BaseExpression] = []  # the literal False values assigned
        self.settled = False  # benchmark set some other way, or determinism asked for

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.symbols.qualname(node.func) or ""
        if _CONV.match(qualname) or _VISION_CONVNET.match(qualname):
            self.convs.append(node)
        elif qualname in ("torch.use_deterministic_algorithms", "torch.backends.cudnn.flags"):
            self.settled = True
        elif (
            qualname
            and not qualname.startswith(_NOT_HELPERS)
            and set(name_tokens(qualname.rsplit(".", 1)[-1])) & _SETUP_WORDS
        ):
            self.settled = True

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name, path in target_names(target.target):
                value = _element(node.value, path)
                off = value is not None and m.matches(value, m.Name("False"))
                if _flag(name, "benchmark"):
                    if off:
                        self.turned_off.append(value)
                    else:
                        self.settled = True
                elif _flag(name, "deterministic") and not off:
                    self.settled = True

    def finish(self) -> None:
        if not self.convs or self.settled:
            return
        training = self.ctx.fact(Training)
        if (
            not training.trains
            or not training.is_script
            or not self.ctx.fact(LoopFacts).uses_accelerator
        ):
            return
        if self.turned_off:
            for value in self.turned_off:
                fix = self.make_fix(
                    "Set it to True",
                    Applicability.UNSAFE,
                    self.ctx.replace(value, "True"),
                    writes="`torch.backends.cudnn.benchmark = True`",
                )
                self.report(
                    value,
                    "cuDNN autotuning is turned off in a script that trains a conv net on the GPU",
                    fix,
                )
            return
        alias, import_edit = self.ctx.torch_alias()
        line = f"{alias}.backends.cudnn.benchmark = True\n"
        edit = self._after_imports(("import torch\n" if import_edit else "") + line)
        fix = self.make_fix(
            f"Set `{alias}.backends.cudnn.benchmark = True` after the imports",
            Applicability.UNSAFE,
            edit,
            writes="`torch.backends.cudnn.benchmark = True`",
        )
        self.report(
            self.convs[0],
            "this script trains a conv net on the GPU but never sets `torch.backends.cudnn.benchmark = True`",
            fix,
        )

    def _after_imports(self, text: str) -> Edit:
        """An insertion on the line after the last module-level import (one inside a top-level `try`/`if` counts)."""
        last = None
        for statement in self.ctx.module.body:
            if _imports(statement) and not is_main_guard(statement):
                last = statement
        if last is None:
            return Edit(Position(1, 1), Position(1, 1), text)
        row = self.ctx.end(last).row
        if self.ctx.source.count("\n") > row - 1 or isinstance(last, cst.BaseCompoundStatement):
            return Edit(Position(row + 1, 1), Position(row + 1, 1), text)
        return self.ctx.insert_after(last, "\n" + text.rstrip("\n"))


def _imports(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Import | cst.ImportFrom) for small in statement.body)
    if isinstance(statement, cst.If | cst.Try):
        return isinstance(statement.body, cst.IndentedBlock) and any(
            _imports(s) for s in statement.body.body
        )
    return False


def _element(value: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    """The part of a tuple right-hand side assigned to `path` (`a, b = False, True`), if literal."""
    for i in path:
        if not isinstance(value, cst.Tuple | cst.List) or i >= len(value.elements):
            return None
        value = value.elements[i].value
    return value
