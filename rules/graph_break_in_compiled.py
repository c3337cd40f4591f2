"""TL119 graph-break-in-compiled."""

from __future__ import annotations

from typing import cast

import libcst as cst

from torchlint.analysis.compiled import Compiled
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.tensors import Kind, TensorFacts
from torchlint.analysis.text import may_compile
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# Dynamo traces NumPy code on tensors (as torch ops) from torch 2.1; before, it broke the graph.
_NUMPY_TRACED_SINCE = (2, 1)
_TENSORS = (Kind.TENSOR, Kind.HOST_TENSOR)
_CONVERSIONS = frozenset({"int", "float", "bool", "complex"})
_Tested = cst.If | cst.While | cst.IfExp | cst.Assert
_TESTED = frozenset({cst.If, cst.While, cst.IfExp, cst.Assert})


class GraphBreakInCompiled(Rule):
    code = "TL119"
    name = "graph-break-in-compiled"
    preview = True
    summary = (
        "`.item()`, `.tolist()`, `print` or a tensor's truth value inside `torch.compile`d code"
    )
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("compile",)
    text_tests = (may_compile,)
    docs = """
## What it does
Flags, in code that `torch.compile` traces, the operations that make Dynamo stop the graph
and fall back to Python:

- `.item()` and `.tolist()` (a tensor's value read into Python), and `int(t)`, `float(t)`,
  `bool(t)` of a value known to be a tensor;
- `print(...)`;
- a tensor's truth value as a condition: `if t:`, `if t.sum() > 0:`, `while t.any():`,
  `assert torch.isfinite(t).all()`, `x if t else y`, where the test is known to be a tensor
  (a shape, `self.training` or a Python number is not: those are fine);
- for a target torch below 2.1 only: `.numpy()` and NumPy calls (from 2.1 on, Dynamo traces
  NumPy code on tensors as torch operations, so they no longer break the graph).

Only calls that run whenever the traced code runs are flagged: one in an `if` branch or an
`except` handler is not (Dynamo traces only the branch a Python condition takes while
compiling, so `if self.debug: print(...)` breaks nothing while the flag is off); a condition on
a tensor is flagged itself.

Traced code is a function decorated with `@torch.compile` (bare or with options) or passed to
`torch.compile(f)`, the `forward` of a module class of the file whose instance is passed to
`torch.compile(model)` or calls `model.compile()`, and the same-file functions and methods
those call. Not flagged: functions excluded with `@torch.compiler.disable`, and branches that
run only outside compilation (`if not torch.compiler.is_compiling():`).

## Why is this bad?
A graph break splits the compiled function into several graphs with Python in between: each
break costs a return to the interpreter, loses the fusion of the operations on either side,
and a value read into Python (`.item()`, a tensor's truth value) also waits for the device to
finish (a host sync). Code with breaks in its hot path can end up little faster than eager
mode, or slower, while paying the compilation. With `fullgraph=True` the break is an error.
`torch._dynamo.explain(f)(*args)` or `TORCH_LOGS=graph_breaks` lists the breaks at run time.

When not to act: breaks outside the hot path (a branch taken once), or where the value is
needed in Python anyway. `.item()` does not break with
`torch._dynamo.config.capture_scalar_outputs = True`.

## Example
```python
@torch.compile
def step(x, w):
    y = x @ w
    if y.sum() > 0:
        y = y.relu()
    print("norm", y.norm().item())
    return y
```

## Use instead
```python
@torch.compile
def step(x, w):
    y = x @ w
    y = torch.where(y.sum() > 0, y.relu(), y)  # data-dependent choice stays in the graph
    return y

y = step(x, w)
print("norm", y.norm().item())  # outside the compiled function
```

## Fix safety
Display-only: removing a print, moving a read of a value out of the compiled code or turning
Python control flow into `torch.where`/`torch.cond` changes what the code does in ways only its
author can judge.

## References
- [torch.compile: graph breaks](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html#graph-breaks)
- [torch.compiler: the programming model, graph breaks and `torch.cond`](https://pytorch.org/docs/stable/torch.compiler.html)
- [Introduction to torch.compile](https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
"""
    valid = [
        # shapes, flags and Python numbers are not tensor truth tests
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def forward(self, x):
                if x.shape[0] > 1 and self.training:
                    x = self.drop(x)
                if self.scale != 1:
                    x = x * self.scale
                return self.fc(x)

        model = torch.compile(Net())
        """,
        # not compiled
        """
        import torch

        def step(x):
            print(x.sum().item())
            return x * 2
        """,
        # excluded from the trace, or only outside compilation
        """
        import torch

        @torch.compiler.disable
        def log(x):
            print(x.sum().item())

        @torch.compile
        def step(x):
            if not torch.compiler.is_compiling():
                print("eager")
            log(x)
            return x * 2
        """,
        # a print the trace takes only when a Python flag is on
        """
        import torch

        @torch.compile
        def step(x, debug=False):
            y = x.relu()
            if debug:
                print(y.sum().item())
            return y
        """,
        # NumPy on tensors is traced from torch 2.1 on
        """
        import numpy as np
        import torch

        @torch.compile
        def step(x):
            return torch.from_numpy(np.clip(x.numpy(), 0, 1))
        """,
        Valid(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def step(x):
                return x.relu()
            """,
            target_torch_version="2.0",
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch

            @torch.compile
            def step(x, w):
                y = x @ w
                print("norm", y.norm().item())
                return y
            """,
            line=6,
            column=5,
            message="`print` in code compiled by `@torch.compile` breaks the graph",
            count=2,
        ),
        # the forward of a module whose instance is compiled, and a method it calls
        Invalid(
            """
            import torch
            from torch import nn

            class Net(nn.Module):
                def forward(self, x):
                    h = self.body(x)
                    if torch.isnan(h).any():
                        h = torch.nan_to_num(h)
                    return self.head(h, h.argmax(-1).tolist())

                def head(self, h, labels):
                    return h[:, : len(labels)]

            model = Net().cuda()
            model = torch.compile(model)
            """,
            line=7,
            column=12,
            message="a tensor's truth value as a condition",
            count=2,
        ),
        # NumPy broke the graph before torch 2.1
        Invalid(
            """
            import numpy as np
            import torch

            def loss(pred, target):
                return torch.tensor(np.mean(pred.detach().numpy()))

            loss = torch.compile(loss)
            """,
            target_torch_version="2.0",
            message="before torch 2.1",
        ),
    ]

    def finish(self) -> None:
        compiled = self.ctx.fact(Compiled)
        if not compiled.roots:
            return
        scopes = self.ctx.fact(SemanticModel)
        traced = compiled.traced
        for call in scopes.calls:
            if scopes.function_of(call) in traced:
                self._check_call(call, compiled)
        for node in self._tests(scopes, traced):
            self._check_test(node, compiled)

    def _tests(self, scopes: SemanticModel, traced) -> list[cst.BaseExpression]:
        """The conditions of `if`, `while`, `assert` and conditional expressions in traced code."""
        found = []
        for function in traced:
            for node in scopes.own_nodes(function):
                if type(node) in _TESTED:  # exact types: isinstance goes through ABCMeta
                    found.append(cast(_Tested, node).test)
        return found

    def _check_call(self, call: cst.Call, compiled: Compiled) -> None:
        func = call.func
        tensors = self.ctx.fact(TensorFacts)
        what = None
        if isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist"):
            if tensors.kind(func.value) is not Kind.NOT_TENSOR:
                what = f"`.{func.attr.value}()`"
        elif isinstance(func, cst.Name) and func.value == "print" and self._builtin(func):
            what = "`print`"
        elif isinstance(func, cst.Name) and func.value in _CONVERSIONS and self._builtin(func):
            if len(call.args) == 1 and tensors.kind(call.args[0].value) in _TENSORS:
                what = f"`{func.value}()` of a tensor"
        elif self.ctx.target_torch_version < _NUMPY_TRACED_SINCE:
            what = self._numpy(call)
        if what is None or self._in_branch(call):
            return
        root = compiled.root_of(call)
        if root is not None:
            self._report(call, what, compiled, root)

    def _in_branch(self, node: cst.CSTNode) -> bool:
        """Inside an `if` branch or an `except` handler of its function: Dynamo traces only the
        branch a Python condition takes (`if self.debug: print(...)` breaks nothing while the
        flag is off), and a handler only when an exception is raised while tracing."""
        scopes = self.ctx.fact(SemanticModel)
        child: cst.CSTNode = node
        for parent in scopes.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return False
            if isinstance(parent, cst.If | cst.IfExp) and child is not parent.test:
                return True
            if isinstance(parent, cst.ExceptHandler):
                return True
            child = parent
        return False

    def _numpy(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not call.args:
            return "`.numpy()` (before torch 2.1)"
        qualname = self.ctx.symbols.qualname(func) or ""
        if qualname.startswith("numpy."):
            tensors = self.ctx.fact(TensorFacts)
            if any(tensors.kind(a.value) in _TENSORS for a in call.args):
                return f"`{self.ctx.code(func)}` on a tensor (before torch 2.1)"
        return None

    def _builtin(self, name: cst.Name) -> bool:
        """`print`/`int` as Python's own, not a name the file binds."""
        return not self.ctx.fact(SemanticModel).all_bindings(name)

    def _check_test(self, test: cst.BaseExpression, compiled: Compiled) -> None:
        tensors = self.ctx.fact(TensorFacts)
        for part in _operands(test):
            if tensors.kind(part) in _TENSORS:
                root = compiled.root_of(part)
                if root is not None:
                    self._report(part, "a tensor's truth value as a condition", compiled, root)
                return

    def _report(self, node: cst.CSTNode, what: str, compiled: Compiled, root) -> None:
        fix = self.make_fix(
            "Move it out of the compiled code, or keep the choice in the graph "
            "(`torch.where`, `torch.cond`)",
            Applicability.DISPLAY_ONLY,
        )
        self.report(
            node,
            f"{what} in code compiled by {compiled.how(root)} breaks the graph",
            fix,
        )


def _operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands whose truth a condition takes: `a` and `b` in `not a or b`."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.BooleanOperation):
        return _operands(test.left) + _operands(test.right)
    return [test]
