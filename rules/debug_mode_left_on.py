"""TL107 debug-mode-left-on."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.grad import name_tokens
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.nodes import walk
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# qualname -> (what it is, the parameter that switches it on, which is also the first positional one)
_TOOLS: dict[str, tuple[str, str | None]] = {
    "torch.autograd.set_detect_anomaly": ("anomaly detection", "mode"),
    "torch.autograd.anomaly_mode.set_detect_anomaly": ("anomaly detection", "mode"),
    "torch.autograd.detect_anomaly": ("anomaly detection", None),
    "torch.autograd.anomaly_mode.detect_anomaly": ("anomaly detection", None),
    "torch.autograd.profiler.profile": ("the autograd profiler", "enabled"),
    "torch.autograd.profiler.emit_nvtx": ("the autograd profiler", "enabled"),
    "torch.autograd.gradcheck": ("a gradient check", None),
    "torch.autograd.gradgradcheck": ("a gradient check", None),
    "torch.autograd.gradcheck.gradcheck": ("a gradient check", None),
    "torch.autograd.gradcheck.gradgradcheck": ("a gradient check", None),
}
# Tools that are one computation where they are called, not a mode that slows what follows.
_CHECKS = frozenset({"a gradient check"})
# Words in an `if` test or an enclosing function's name that say the code runs for debugging.
_DEBUG_WORDS = frozenset(
    {
        "debug",
        "debugging",
        "anomaly",
        "anomalies",
        "detect",
        "profile",
        "profiler",
        "profiling",
        "prof",
        "nvtx",
        "trace",
        "gradcheck",
        "check",
        "test",
        "sanity",
    }
)


def _words(node: cst.CSTNode) -> set[str]:
    """Identifier and string words in an expression: `args.detect_anomaly` -> {"args", "detect", "anomaly"}."""
    words: set[str] = set()
    for current in walk(node):
        if isinstance(current, cst.Name | cst.SimpleString):
            words.update(name_tokens(current.value))
    return words


def _switched_on(call: cst.Call, parameter: str) -> bool:
    """Whether the call's first parameter (`mode`, `enabled`) is absent or a literal True."""
    for i, arg in enumerate(call.args):
        if arg.star:
            return False
        if (i == 0 and arg.keyword is None) or (
            arg.keyword is not None and arg.keyword.value == parameter
        ):
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return True


class DebugModeLeftOn(Rule):
    code = "TL107"
    name = "debug-mode-left-on"
    summary = "Anomaly detection, the autograd profiler or gradcheck left on in training code"
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("anomaly", "profiler", "gradcheck")
    text_tests = (may_train,)  # it looks only at training code
    docs = """
## What it does
Flags autograd debugging tools in a file that trains (it calls `backward()` or an optimizer's
`step()`):

- `torch.autograd.set_detect_anomaly(True)` and `torch.autograd.detect_anomaly()`;
- `torch.autograd.profiler.profile(...)` and `torch.autograd.profiler.emit_nvtx(...)`;
- `torch.autograd.gradcheck(...)` and `torch.autograd.gradgradcheck(...)`.

Not flagged: a gradient check that runs once (before training starts, at the end of a
`__main__` self-check): unlike the two modes, which slow every step after they are switched on,
it costs one check where it is called; tools behind a debug switch (an enclosing `if` or conditional expression whose
test names debug, anomaly, profile, check and the like: `if args.debug:`,
`detect_anomaly() if cfg.detect_anomaly else nullcontext()`), calls whose on/off argument is
not a literal (`set_detect_anomaly(args.detect_anomaly)`, `profile(enabled=args.profile)`),
tools turned off (`set_detect_anomaly(False)`, `profile(enabled=False)`), code in functions
named for debugging, profiling or testing (`def profile_step`, `def check_gradients`), and
unit tests (`test_*.py`, `*_test.py`, files under `tests/`, files importing pytest or unittest).

## Why is this bad?
These tools trade speed for diagnostics. Anomaly detection records a Python traceback for
every autograd node in the forward pass and checks every backward output for NaN, which
slows training several-fold; the autograd profiler and `emit_nvtx` add bookkeeping (and
NVTX ranges) to every operator; `gradcheck` runs the function many extra times in double
precision. Left on in a training script after the bug is found, they cost speed on every run.

## Example
```python
torch.autograd.set_detect_anomaly(True)
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
if args.detect_anomaly:  # only while hunting a NaN
    torch.autograd.set_detect_anomaly(True)
for x, y in loader:
    ...
```

## Fix safety
Display-only: whether the tool is still needed is the author's call. Remove it, or put it
behind a command-line switch that defaults to off.

## References
- [Anomaly detection: torch.autograd.detect_anomaly / set_detect_anomaly](https://pytorch.org/docs/stable/autograd.html#anomaly-detection)
- [torch.autograd.profiler](https://pytorch.org/docs/stable/autograd.html#profiler)
- [torch.autograd.gradcheck](https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html)
- [PyTorch Performance Tuning Guide: disable debugging APIs](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-debugging-apis)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): turn off debugging APIs](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    _TRAIN = "for x, y in loader:\n    loss = loss_fn(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
    valid = [
        Valid(
            """
            import torch
            torch.autograd.set_detect_anomaly(True)
            loss = f(x)
            """
        ),
        Valid(
            """
            import torch
            if args.debug:
                torch.autograd.set_detect_anomaly(True)
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            torch.autograd.set_detect_anomaly(args.detect_anomaly)
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            torch.autograd.set_detect_anomaly(False)
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            from contextlib import nullcontext

            for x, y in loader:
                with torch.autograd.detect_anomaly() if cfg.detect_anomaly else nullcontext():
                    loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            with torch.autograd.profiler.profile(enabled=False) as prof:
                for x, y in loader:
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
            """
        ),
        Valid(
            """
            import torch

            def profile_one_step(model, x):
                with torch.autograd.profiler.profile() as prof:
                    model(x).sum().backward()
                return prof
            """
        ),
        Valid(
            """
            import torch
            import pytest

            def test_grad():
                assert torch.autograd.gradcheck(f, (x,))
                f(x).backward()
            """
        ),
        Valid(
            """
            import torch

            def check_gradients(fn, x):
                return torch.autograd.gradcheck(fn, (x,))

            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            torch.autograd.set_detect_anomaly(True)
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            line=2,
            column=1,
            message="anomaly detection left on in training code slows every step; remove or guard it",
        ),
        Invalid(
            """
            import torch

            def train(model, loader, optimizer):
                torch.autograd.set_detect_anomaly(mode=True, check_nan=True)
                for x in loader:
                    model(x).sum().backward()
                    optimizer.step()
            """,
            line=4,
            column=5,
            message="anomaly detection left on in training code slows every step; remove or guard it",
        ),
        Invalid(
            """
            from torch import autograd

            for x, y in loader:
                with autograd.detect_anomaly():
                    loss = loss_fn(model(x), y)
                    loss.backward()
                optimizer.step()
            """,
            line=4,
            column=10,
            message="anomaly detection left on in training code slows every step; remove or guard it",
        ),
        Invalid(
            """
            import torch

            with torch.autograd.profiler.emit_nvtx():
                for x, y in loader:
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
            line=3,
            column=6,
            message="the autograd profiler left on in training code slows every step; remove or guard it",
        ),
        Invalid(
            """
            import torch
            from torch.autograd.profiler import profile

            with profile(use_cuda=True) as prof:
                for x, y in loader:
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
            print(prof.key_averages().table())
            """,
            line=4,
            column=6,
            message="the autograd profiler left on in training code slows every step; remove or guard it",
        ),
        Invalid(
            """
            import torch
            from torch.autograd import gradcheck

            for x, y in loader:
                assert gradcheck(layer, (x,))
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            line=5,
            column=12,
            message="a gradient check left on in training code slows every step; remove or guard it",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        tool = _TOOLS.get(self.ctx.symbols.qualname(node.func) or "")
        if tool is None:
            return
        what, switch = tool
        if switch is None or _switched_on(node, switch):
            self._check(node, what)

    def _check(self, call: cst.Call, tool: str) -> None:
        training = self.ctx.fact(Training)
        if not training.trains or self._behind_switch():
            return
        if self.ctx.fact(LibraryDemo).runs_only_in_demo(call):
            return  # a library module's `__main__` self-check, not its training
        if tool in _CHECKS and self.ctx.fact(LoopFacts).runs_once(call):
            return  # one check per run slows no step (judged FPs: a self-check's gradcheck)
        fix = self.make_fix(
            "Remove it, or run it only behind a debug switch", Applicability.DISPLAY_ONLY
        )
        self.report(
            call, f"{tool} left on in training code slows every step; remove or guard it", fix
        )

    def _behind_switch(self) -> bool:
        """Whether the call being visited sits under a debug `if` or in a debugging/testing function."""
        for parent in self.ctx.stack:
            if isinstance(parent, cst.If | cst.IfExp) and _words(parent.test) & _DEBUG_WORDS:
                return True
            if (
                isinstance(parent, cst.FunctionDef | cst.ClassDef)
                and set(name_tokens(parent.name.value)) & _DEBUG_WORDS
            ):
                return True
        return False
