"""TL110 cudnn-benchmark-off."""

from __future__ import annotations

import re

import libcst as cst

from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.grad import name_tokens
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import target_names
from torchlint.analysis.nodes import is_name
from torchlint.analysis.numerics import VISION_CONVNET
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_CONV = re.compile(
    r"^torch\.nn\.(modules\.conv\.)?(Lazy)?Conv(Transpose)?[123]d$|^torch\.nn\.functional\.conv(_transpose)?[123]d$"
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
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`torch.backends.cudnn.benchmark = True`": "1.0",
    }
    tokens = ("Conv", "conv", "torchvision")
    text_tests = (may_train,)  # it speaks only where the file itself trains (`Training.trains`)
    docs = """
## What it does
Flags a training script that builds a convolutional network (`nn.Conv1d/2d/3d`, their
transposed and lazy forms, `F.conv2d`, or a torchvision CNN such as `resnet50()`), trains it
(`backward()` or an optimizer step) on an accelerator (`.cuda()`, `.to(device)`, a `"cuda"`
device string), and never sets `torch.backends.cudnn.benchmark = True`, or sets it to False.

A script is a file with an `if __name__ == "__main__":` block that trains (a step in it, or a
call of a function of the file that trains, or of one imported from elsewhere) or training code
at module level; library modules are left alone, since the setting belongs to the entry point,
and so is a library module's `__main__` demo that only runs a forward, or a self-test that
trains a toy net on random tensors (the module is imported by others of the project, and the
block reads neither a loader nor the command line). A run on XLA devices
(`torch_xla`, TPUs) or pinned to the CPU (`Trainer(accelerator="cpu")`) is not a GPU run. Not
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
    valid = [
        Valid(
            """
            import torch
            from torch import nn
            torch.backends.cudnn.benchmark = True

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten())
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            def train(loader):
                model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                for x in loader:
                    model(x.cuda()).sum().backward()
                    opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn
            torch.backends.cudnn.benchmark = False
            torch.backends.cudnn.deterministic = True

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn
            from utils import init_seeds

            init_seeds(0)
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn
            from torch.backends import cudnn

            cudnn.benchmark = args.benchmark
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(3, 8)).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            fixed="""
            import torch
            from torch import nn
            torch.backends.cudnn.benchmark = True

            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            line=4,
            column=23,
            message="this script trains a conv net on the GPU but never sets `torch.backends.cudnn.benchmark = True`",
        ),
        Invalid(
            """
            import torch as T
            from torch import nn
            from torch.backends import cudnn

            cudnn.benchmark = False
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = T.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            fixed="""
            import torch as T
            from torch import nn
            from torch.backends import cudnn

            cudnn.benchmark = True
            model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()
            opt = T.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            line=5,
            column=19,
            message="cuDNN autotuning is turned off in a script that trains a conv net on the GPU",
        ),
        Invalid(
            '''
            """Train a ResNet."""
            import torchvision
            from torch.optim import SGD


            def main():
                model = torchvision.models.resnet18().to("cuda")
                opt = SGD(model.parameters(), lr=0.1)
                for x in loader:
                    model(x).sum().backward()
                    opt.step()


            if __name__ == "__main__":
                main()
            ''',
            fixed='''
            """Train a ResNet."""
            import torchvision
            from torch.optim import SGD
            import torch
            torch.backends.cudnn.benchmark = True


            def main():
                model = torchvision.models.resnet18().to("cuda")
                opt = SGD(model.parameters(), lr=0.1)
                for x in loader:
                    model(x).sum().backward()
                    opt.step()


            if __name__ == "__main__":
                main()
            ''',
            line=7,
            column=13,
            message="this script trains a conv net on the GPU but never sets `torch.backends.cudnn.benchmark = True`",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.convs: list[cst.Call] = []
        self.turned_off: list[cst.BaseExpression] = []  # the literal False values assigned
        self.settled = False  # benchmark set some other way, or determinism asked for

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.symbols.qualname(node.func) or ""
        if _CONV.match(qualname) or VISION_CONVNET.match(qualname):
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
                off = is_name(value, "False")
                if _flag(name, "benchmark"):
                    if value is not None and off:
                        self.turned_off.append(value)
                    else:
                        self.settled = True
                elif _flag(name, "deterministic") and not off:
                    self.settled = True

    def finish(self) -> None:
        if not self.convs or self.settled:
            return
        training = self.ctx.fact(Training)
        if not training.trains or not training.is_script or not self.ctx.fact(LoopFacts).uses_gpu:
            return
        if self.ctx.fact(LibraryDemo).only_in_self_test(training.step_calls):
            return  # a library module's `__main__` self-test is no training script
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
        edit = self.ctx.insert_after_imports(("import torch\n" if import_edit else "") + line)
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


def _element(value: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    """The part of a tuple right-hand side assigned to `path` (`a, b = False, True`), if literal."""
    for i in path:
        if not isinstance(value, cst.Tuple | cst.List) or i >= len(value.elements):
            return None
        value = value.elements[i].value
    return value
