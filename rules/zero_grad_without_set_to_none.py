"""TL006 zero-grad-without-set-to-none."""

from __future__ import annotations

import re
from functools import cached_property

import libcst as cst

from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import find_all, is_attribute, is_name
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_zero_grads
from torchlint.diagnostics import Applicability, Edit, Fix, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# Functions that implement zeroing themselves (an optimizer's or a wrapper's zero_grad).
_ZEROING_FUNCTION = re.compile(
    r"(zero|clear|reset|reinit|init).*grad|grad.*(zero|clear|reset)", re.IGNORECASE
)
_NONE_DEFAULT_SINCE = (2, 0)
_SET_TO_NONE_SINCE = (1, 7)  # before it, a bare zero_grad() has no faster form to advise
_ZEROING_METHODS = frozenset({"zero_", "fill_"})
_SIDE_METHODS = frozenset({"detach_", "requires_grad_"})  # what Module.zero_grad did before zeroing
# The methods a zeroing statement or its companion calls (`zeros_like` in `p.grad = torch.zeros_like(p)`).
_TOUCHING_METHODS = _ZEROING_METHODS | _SIDE_METHODS | {"zeros_like"}


def _tensor(node: cst.BaseExpression, param: str | None) -> bool:
    """`param` (`w`, `model.w`); with no `param`, any tensor whose gradient is zeroed: a name,
    or an attribute of one (`w`, `model.w`, `self.w`)."""
    if param:
        return dotted(node) == param
    return isinstance(node, cst.Name) or (
        isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
    )


def _grad(node: cst.CSTNode, param: str | None) -> bool:
    """`param.grad` (any tensor's, with no `param`)."""
    return is_attribute(node, "grad") and _tensor(node.value, param)  # type: ignore[attr-defined]


def _grad_or_data(node: cst.CSTNode, param: str | None) -> bool:
    """`param.grad` or `param.grad.data`."""
    return _grad(node, param) or (is_attribute(node, "data") and _grad(node.value, param))  # type: ignore[attr-defined]


def _method_call(statement: cst.CSTNode) -> cst.Call | None:
    """The call of an expression statement `x.method(...)`."""
    if not isinstance(statement, cst.Expr):
        return None
    value = statement.value
    return value if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) else None


def _zeroes(statement: cst.CSTNode, param: str | None) -> bool:
    """`param.grad.zero_()`, `param.grad.fill_(0)`, `param.grad = torch.zeros_like(...)` (also
    through `.data`)."""
    call = _method_call(statement)
    if call is not None:
        func = cst.ensure_type(call.func, cst.Attribute)
        if not _grad_or_data(func.value, param):
            return False
        if func.attr.value == "zero_":
            return not call.args
        if func.attr.value == "fill_" and len(call.args) == 1:
            value = call.args[0].value
            return (isinstance(value, cst.Integer) and value.value == "0") or (
                isinstance(value, cst.Float) and value.value == "0.0"
            )
        return False
    return (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and _grad_or_data(statement.targets[0].target, param)
        and isinstance(statement.value, cst.Call)
        and is_attribute(statement.value.func, "zeros_like")
    )


def _accompanies(statement: cst.CSTNode, param: str | None) -> bool:
    """`param.grad.detach_()` / `param.grad.requires_grad_(...)`: what Module.zero_grad did
    before zeroing, harmless beside it."""
    call = _method_call(statement)
    return (
        call is not None
        and is_attribute(call.func, "detach_", "requires_grad_")
        and _grad(call.func.value, param)  # type: ignore[attr-defined]
    )


def _is_false(arg: cst.Arg) -> bool:
    return is_name(arg.value, "False")


def _guards_grad(test: cst.BaseExpression, param: str) -> bool:
    """`param.grad is not None`."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return (
        is_attribute(test.left, "grad")
        and is_name(test.left.value, param)  # type: ignore[attr-defined]
        and isinstance(target.operator, cst.IsNot)
        and is_name(target.comparator, "None")
    )


class ZeroGradWithoutSetToNone(Rule):
    code = "TL006"
    name = "zero-grad-without-set-to-none"
    tokens = ("grad",)
    text_tests = (may_zero_grads,)
    summary = (
        "Zeroing gradients in place instead of setting them to None costs a memset per parameter"
    )
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`zero_grad(set_to_none=True)`": "1.7",
        "`param.grad = None`": "1.0",
    }
    docs = """
## What it does
Flags, in files that use torch:
- `zero_grad(set_to_none=False)` (or `zero_grad(False)`) on an optimizer or a module;
- a loop that zeroes every gradient by hand, `for p in model.parameters(): p.grad.zero_()`
  (also `p.grad.data.zero_()`, `.fill_(0)` and `p.grad = torch.zeros_like(p)`, with or without
  an `if p.grad is not None:` guard), in code that trains (the same function calls
  `backward()` or `step()`);
- in a hand-written optimizer step, `p.grad.zero_()` at the end of a loop that has just updated
  each parameter from its gradient (`p -= lr * p.grad`), or after a tensor is updated that
  way earlier in the same block (`w -= lr * w.grad; w.grad.zero_()`, also for attributes such
  as `model.w`);
- a bare `zero_grad()` only when the target torch version is below 2.0, where `set_to_none`
  defaulted to False. Since 2.0 the default is True and bare `zero_grad()` is what you want.

Not flagged: the body of a function that implements zeroing itself (a `zero_grad` method or a
helper named like one), a loop that does anything besides zeroing or such an update, and code
that reads gradients in place elsewhere in the same function (`p.grad.add_(...)`,
`p.grad.norm()` without an `is not None` guard), where zero-filled gradients are evidently
relied upon. A read after a `backward()` earlier in its block does not count: backward has just
filled the gradient.
Before torch 2.0, a bare `zero_grad()` outside the per-batch loop of its function (at the top of
an epoch, before the loop over batches) is not flagged when that loop does the per-step
`backward()` or `zero_grad()`: it zeroes once per epoch. The per-step call, inside the loop or in a
training-step function the loop calls, is flagged; so is the only `zero_grad()` of full-batch
training, where each pass of the epoch loop is a step. Nor is a bare `zero_grad()` under a periodic
guard (`if step % eval_every == 0:`, after an evaluation) in a loop that zeroes on every step
anyway: it runs now and then, on gradients already cleared.

## Why is this bad?
Zeroing writes every gradient tensor (a memset kernel per parameter) and the next backward pass
then reads and adds into it. With the gradients set to None, nothing is written, and backward
assigns its result instead of accumulating, which saves memory traffic and peak memory between
iterations.

## Example
```python
for x, y in loader:
    optimizer.zero_grad(set_to_none=False)
    loss_fn(model(x), y).backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()  # set_to_none=True is the default since PyTorch 2.0
    loss_fn(model(x), y).backward()
    optimizer.step()
```
A manual loop over `model.parameters()` becomes `optimizer.zero_grad()` when an optimizer over
exactly `model.parameters()` is visible there, else `model.zero_grad()`; a loop over other
tensors, and the zeroing after a hand-written update, become `p.grad = None`.

## Fix safety
Unsafe. A gradient of None is not the same as a gradient of zeros: optimizers skip a parameter
whose `.grad` is None instead of stepping on zeros, which matters when a parameter gets no
gradient in some iterations (momentum and weight decay would still have moved it), and code that
reads `p.grad` after `zero_grad()` and before the next backward sees None instead of a tensor.
When the target torch version is below 2.0 the fix writes `set_to_none=True` explicitly.

## Options
None; the behaviour follows `target-torch-version`.

## References
- [torch.optim.Optimizer.zero_grad](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
- [torch.nn.Module.zero_grad](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.zero_grad)
- [PyTorch Performance Tuning Guide: use parameter.grad = None instead of model.zero_grad()](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-parameter-grad-none-instead-of-model-zero-grad-or-optimizer-zero-grad)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): set gradients to None](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            optimizer.zero_grad()
            """
        ),
        Valid(
            """
            import torch
            optimizer.zero_grad(set_to_none=True)
            """,
            target_torch_version="1.13",
        ),
        # once per epoch, beside the per-batch loop that zeroes every step: one memset per epoch
        Valid(
            """
            import torch
            for epoch in range(epochs):
                optimizer.zero_grad()
                for x in loader:
                    optimizer.zero_grad(set_to_none=True)
                    model(x).sum().backward()
                    optimizer.step()
            """,
            target_torch_version="1.13",
        ),
        # a zero_grad under a periodic guard (after an evaluation) beside the per-step one:
        # rare, and the gradients are already cleared
        Valid(
            """
            import torch
            for step, (x, y) in enumerate(loader):
                loss_fn(model(x), y).backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                if step % eval_every == 0:
                    evaluate(model)
                    model.zero_grad()
            """,
            target_torch_version="1.13",
        ),
        # torch before 1.7 has no set_to_none: nothing faster to advise
        Valid(
            """
            import torch
            for x in loader:
                model(x).sum().backward()
                opt.step()
                opt.zero_grad()
            """,
            target_torch_version="1.5",
        ),
        Valid(
            """
            optimizer.zero_grad(set_to_none=False)
            """
        ),
        Valid(
            """
            import torch

            class Opt(torch.optim.Optimizer):
                def zero_grad(self, set_to_none=False):
                    super().zero_grad(set_to_none=False)
            """
        ),
        Valid(
            """
            import torch

            def sgd(params, lr):
                with torch.no_grad():
                    for p in params:
                        p -= lr * p.grad
                        p.grad.zero_()
                        print(p.grad)
            """
        ),
        Valid(
            """
            import torch

            def clip(params):
                for p in params:
                    p.clamp_(-1, 1)
                    p.grad.zero_()
            """
        ),
        Valid(
            """
            import torch

            def train(model, opt, loader):
                for x in loader:
                    opt.zero_grad(set_to_none=False)
                    for p in model.parameters():
                        p.grad.add_(prior[p])
                    model(x).sum().backward()
                    opt.step()
            """
        ),
        Valid(
            """
            import torch

            def init_grads(model):
                for p in model.parameters():
                    p.grad = torch.zeros_like(p)
            """
        ),
        Valid(
            """
            import torch

            class Wrapper:
                def zero_grad(self):
                    pass

            w.zero_grad()
            """,
            target_torch_version="1.13",
        ),
    ]
    invalid = [
        # a leaf tensor trained by hand, without an optimizer
        Invalid(
            """
            import torch
            for x, y in loader:
                ((x @ w - y) ** 2).mean().backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    w.grad.zero_()
            """,
            fixed="""
            import torch
            for x, y in loader:
                ((x @ w - y) ** 2).mean().backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    w.grad = None
            """,
            line=6,
            column=9,
            message="zeroing `w.grad` after the update fills it with zeros; set `w.grad = None` instead",
        ),
        # an attribute of an object, updated by hand with another tensor before it is zeroed
        Invalid(
            """
            import torch

            def train_step(model, x, y):
                model.loss_fn(model.forward(x), y).backward()
                with torch.no_grad():
                    model.w -= 0.001 * model.w.grad
                    model.b -= 0.001 * model.b.grad
                    model.w.grad.zero_()
            """,
            fixed="""
            import torch

            def train_step(model, x, y):
                model.loss_fn(model.forward(x), y).backward()
                with torch.no_grad():
                    model.w -= 0.001 * model.w.grad
                    model.b -= 0.001 * model.b.grad
                    model.w.grad = None
            """,
            line=8,
            column=9,
            message="zeroing `model.w.grad` after the update fills it with zeros; set `model.w.grad = None` instead",
        ),
        Invalid(
            """
            import torch
            for x in loader:
                optimizer.zero_grad(set_to_none=False)
                model(x).sum().backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
            """,
            line=3,
            column=5,
            message="`zero_grad(set_to_none=False)` fills every gradient with zeros; let it set them to None",
        ),
        Invalid(
            """
            import torch
            model.zero_grad(False)
            """,
            fixed="""
            import torch
            model.zero_grad(set_to_none=True)
            """,
            target_torch_version="1.13",
            line=2,
            column=1,
            message="`zero_grad(set_to_none=False)` fills every gradient with zeros; let it set them to None",
        ),
        Invalid(
            """
            import torch
            for x in loader:
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            for x in loader:
                optimizer.zero_grad(set_to_none=True)
                model(x).sum().backward()
                optimizer.step()
            """,
            target_torch_version="1.12",
            line=3,
            column=5,
            message="`zero_grad()` zeroes gradients in place before torch 2.0; pass `set_to_none=True`",
        ),
        Invalid(
            """
            import torch

            def train(model, loader):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
                for x, y in loader:
                    for p in model.parameters():
                        if p.grad is not None:
                            p.grad.zero_()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
            """,
            fixed="""
            import torch

            def train(model, loader):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
            """,
            line=6,
            column=9,
            message="this loop fills every gradient with zeros; use `optimizer.zero_grad()`",
        ),
        Invalid(
            """
            import torch

            def train(net, loader, opt):
                for x in loader:
                    net(x).sum().backward()
                    opt.step()
                    for name, param in net.named_parameters():
                        param.grad.data.zero_()
            """,
            fixed="""
            import torch

            def train(net, loader, opt):
                for x in loader:
                    net(x).sum().backward()
                    opt.step()
                    net.zero_grad()
            """,
            line=7,
            column=9,
            message="this loop fills every gradient with zeros; use `net.zero_grad()`",
        ),
        Invalid(
            """
            import torch

            def train(net, x):
                net(x).sum().backward()
                step(net)
                for p in net.parameters():
                    p.grad = torch.zeros_like(p)
            """,
            fixed="""
            import torch

            def train(net, x):
                net(x).sum().backward()
                step(net)
                net.zero_grad(set_to_none=True)
            """,
            target_torch_version="1.13",
            line=6,
            column=5,
            message="this loop fills every gradient with zeros; use `net.zero_grad(set_to_none=True)`",
        ),
        Invalid(
            """
            import torch

            def train(params, x):
                loss(x).backward()
                for p in params:  # every tensor
                    if p.grad is not None:
                        p.grad.detach_()
                        p.grad.zero_()
                print('done')
            """,
            fixed="""
            import torch

            def train(params, x):
                loss(x).backward()
                for p in params:  # every tensor
                    p.grad = None
                print('done')
            """,
            line=5,
            column=5,
            message="this loop fills every gradient with zeros; set `p.grad = None` instead",
        ),
        Invalid(
            """
            import torch

            def sgd(params, lr, batch_size):
                with torch.no_grad():
                    for param in params:
                        param -= lr * param.grad / batch_size
                        param.grad.zero_()
            """,
            fixed="""
            import torch

            def sgd(params, lr, batch_size):
                with torch.no_grad():
                    for param in params:
                        param -= lr * param.grad / batch_size
                        param.grad = None
            """,
            line=7,
            column=13,
            message="zeroing `param.grad` after the update fills it with zeros; set `param.grad = None` instead",
        ),
        Invalid(
            """
            import torch

            def step(opt, loss):
                loss.backward()
                opt.step()
                for group in opt.param_groups:
                    for p in group['params']: p.grad.zero_()
            """,
            fixed="""
            import torch

            def step(opt, loss):
                loss.backward()
                opt.step()
                for group in opt.param_groups:
                    for p in group['params']: p.grad = None
            """,
            line=7,
            column=9,
            message="this loop fills every gradient with zeros; set `p.grad = None` instead",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []
        self.loops: list[cst.For] = []
        self.blocks: list[cst.IndentedBlock] = []
        self._reads: dict[cst.CSTNode, list[cst.Attribute]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Attribute and node.func.attr.value == "zero_grad":
            self.calls.append(node)

    def visit_For(self, node: cst.For) -> None:
        if self._may_zero(node.body):  # cheap syntactic filter, so most files need no name index
            self.loops.append(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if not isinstance(self.ctx.parents.get(node), cst.For) and self._may_zero(node):
            self.blocks.append(node)

    def finish(self) -> None:
        if not self.ctx.uses_torch or not (self.calls or self.loops or self.blocks):
            return
        for call in self.calls:
            self._check_call(call)
        for loop in self.loops:
            self._check_loop(loop)
        for block in self.blocks:
            self._check_leaf_updates(block)

    @cached_property
    def b(self) -> SemanticModel:
        """The name index, built only when a finding depends on a binding."""
        return self.ctx.fact(SemanticModel)

    @property
    def _old_torch(self) -> bool:
        return self.ctx.target_torch_version < _NONE_DEFAULT_SINCE

    # -- zero_grad(...) ------------------------------------------------------------------
    def _check_call(self, call: cst.Call) -> None:
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Call)
            and is_name(func.value.func, "super")
        ) or self._in_zeroing_function(call):
            return
        if not call.args:
            has_set_to_none = self.ctx.target_torch_version >= _SET_TO_NONE_SINCE
            if (
                self._old_torch
                and has_set_to_none
                and not self._custom_zero_grad
                and not self._reads_grads(self._scope_of(call))
                and not self._beside_batch_loop(call)
                and not self._repeats_per_step_zeroing(call)
            ):
                fix = self._set_to_none_fix(call, [])
                self.report(
                    call,
                    "`zero_grad()` zeroes gradients in place before torch 2.0; pass `set_to_none=True`",
                    fix,
                )
            return
        flag = self._set_to_none_arg(call)
        if flag is None or not _is_false(flag) or self._reads_grads(self._scope_of(call)):
            return
        kept = [a for a in call.args if a is not flag]
        self.report(
            call,
            "`zero_grad(set_to_none=False)` fills every gradient with zeros; let it set them to None",
            self._set_to_none_fix(call, kept),
        )

    @staticmethod
    def _set_to_none_arg(call: cst.Call) -> cst.Arg | None:
        keyword = next(
            (a for a in call.args if a.keyword and a.keyword.value == "set_to_none"), None
        )
        if keyword is not None:
            return keyword
        first = call.args[0]
        return first if first.keyword is None and not first.star and len(call.args) == 1 else None

    def _set_to_none_fix(self, call: cst.Call, kept: list[cst.Arg]) -> Fix:
        if self._old_torch:
            args = [
                *kept,
                cst.Arg(cst.Name("True"), keyword=cst.Name("set_to_none"), equal=_equal()),
            ]
            args = [
                a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(args) - 1 else a
                for i, a in enumerate(args)
            ]
            return self.make_fix(
                "Pass `set_to_none=True`",
                Applicability.UNSAFE,
                self.ctx.replace(call, call.with_changes(args=args)),
                writes="`zero_grad(set_to_none=True)`",
            )
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return self.make_fix(
            "Drop `set_to_none=False` (None is the default)",
            Applicability.UNSAFE,
            self.ctx.replace(call, call.with_changes(args=kept)),
            writes="`param.grad = None`",
        )

    def _beside_batch_loop(self, call: cst.Call) -> bool:
        """A `zero_grad()` that runs once per epoch or run, outside the per-batch loop of its
        function that does the per-step backward or zeroing: one memset per epoch costs nothing
        next to the per-step ones, which are reported where they are. Without such a loop (one
        backward per epoch, full-batch training) the epoch is the step and the call stays."""
        facts = self.ctx.fact(LoopFacts)
        if facts.per_batch_loop(call, every_iteration=False) is not None:
            return False
        scope = self._scope_of(call)
        return any(
            self._scope_of(loop) is scope and not self.b.is_ancestor(loop, call)
            for loop in self._gradient_batch_loops
        )

    def _repeats_per_step_zeroing(self, call: cst.Call) -> bool:
        """A `zero_grad()` under a periodic guard (`if step % eval_every == 0:`) or on a rare
        path (`if math.isnan(grad_norm):`) in a loop or step whose own per-update `zero_grad()`
        clears the gradients anyway: it runs now and then, on gradients already cleared, so
        its memset costs nothing worth a change."""
        facts = self.ctx.fact(LoopFacts)
        owner = facts.per_batch_loop(call, every_iteration=False)
        return (
            owner is not None
            and owner in self._per_step_zeroing
            and facts.per_batch_loop(call, every_update=True) is None
        )

    @cached_property
    def _per_step_zeroing(self) -> set[cst.For | cst.While | cst.FunctionDef]:
        """The per-batch loops and step functions that run a `zero_grad()` with every update:
        on every step, or in the branch that steps the optimizer every `accum` batches."""
        facts = self.ctx.fact(LoopFacts)
        owners = (facts.per_batch_loop(call, every_update=True) for call in self.calls)
        return {owner for owner in owners if owner is not None}

    @cached_property
    def _gradient_batch_loops(self) -> set[cst.For | cst.While]:
        """The per-batch loops that run a `backward()` or `zero_grad()` on every step, directly
        or through the file's functions they call."""
        facts = self.ctx.fact(LoopFacts)
        found: set[cst.For | cst.While] = set()
        for call in self.b.calls:
            if not is_attribute(call.func, "backward", "zero_grad"):
                continue
            owner = facts.per_batch_loop(call, every_iteration=False)
            if isinstance(owner, cst.For | cst.While):
                found.add(owner)
        return found

    @cached_property
    def _custom_zero_grad(self) -> bool:
        """Whether the file defines its own `zero_grad` that takes no `set_to_none`."""
        for binding in (
            b for names in self.b.bindings.values() for b in names.get("zero_grad", ())
        ):
            params = binding.function.params if binding.function else None
            if params and not any(
                p.name.value == "set_to_none" for p in (*params.params, *params.kwonly_params)
            ):
                return True
        return False

    # -- manual loops --------------------------------------------------------------------
    def _check_loop(self, loop: cst.For) -> None:
        param = self._param_variable(loop)
        if param is None or self._in_zeroing_function(loop):
            return
        if not self._only_zeroes(loop.body, param):
            self._check_update_loop(loop, param)
            return
        scope = self._scope_of(loop)
        if not self._trains(scope) or self._reads_grads(scope, outside=loop):
            return
        replacement = self._zero_grad_call(loop)
        if replacement is not None:
            fix = self.make_fix(
                f"Replace the loop with `{replacement}`",
                Applicability.UNSAFE,
                self.ctx.replace(loop, replacement),
                writes=_writes(replacement),
            )
            self.report(
                loop, f"this loop fills every gradient with zeros; use `{replacement}`", fix
            )
            return
        fix = self.make_fix(
            f"Set `{param}.grad = None` instead",
            Applicability.UNSAFE,
            self._none_body(loop, param),
            writes="`param.grad = None`",
        )
        self.report(
            loop,
            f"this loop fills every gradient with zeros; set `{param}.grad = None` instead",
            fix,
        )

    def _check_update_loop(self, loop: cst.For, param: str) -> None:
        """A hand-written optimizer step: update each parameter from its gradient, then zero it."""
        statements = self._small_statements(loop.body)
        if statements is None:
            return
        kinds = [self._zeroing_kind(s, param) for s in statements]
        start = len(kinds)
        while start > 0 and kinds[start - 1] is not None:
            start -= 1
        if (
            start == 0
            or True not in kinds[start:]
            or not any(self._updates(s, param) for s in statements[:start])
        ):
            return
        if self._reads_grads(self._scope_of(loop), outside=loop):
            return
        zeroing = statements[start:]
        edit = Edit(self.ctx.start(zeroing[0]), self.ctx.end(zeroing[-1]), f"{param}.grad = None")
        fix = self.make_fix(
            f"Set `{param}.grad = None` instead",
            Applicability.UNSAFE,
            edit,
            writes="`param.grad = None`",
        )
        self.report(
            zeroing[0],
            f"zeroing `{param}.grad` after the update fills it with zeros; set `{param}.grad = None` instead",
            fix,
        )

    def _check_leaf_updates(self, block: cst.IndentedBlock) -> None:
        """A tensor updated by hand from its gradient, then its gradient zeroed: `w -= lr * w.grad;
        w.grad.zero_()` (a leaf trained without an optimizer)."""
        statements = [
            small
            for line in block.body
            if isinstance(line, cst.SimpleStatementLine)
            for small in line.body
        ]
        for at, statement in enumerate(statements):
            zeroed = [n for n in find_all(statement, cst.Attribute) if _grad(n, None)]
            name = dotted(zeroed[0].value) if zeroed else None  # type: ignore[attr-defined]
            if (
                name is None
                or not self._zeroing_kind(statement, name)
                or not any(self._updates(s, name) for s in statements[:at])
            ):
                continue
            if self._reads_grads(self._scope_of(block), outside=block):
                return
            edit = Edit(self.ctx.start(statement), self.ctx.end(statement), f"{name}.grad = None")
            fix = self.make_fix(
                f"Set `{name}.grad = None` instead",
                Applicability.UNSAFE,
                edit,
                writes="`param.grad = None`",
            )
            self.report(
                statement,
                f"zeroing `{name}.grad` after the update fills it with zeros; set `{name}.grad = None` instead",
                fix,
            )

    @staticmethod
    def _small_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement] | None:
        """The loop body as one list of simple statements, None when it holds a block."""
        if isinstance(body, cst.SimpleStatementSuite):
            return list(body.body)
        lines = [line for line in body.body if isinstance(line, cst.SimpleStatementLine)]
        if len(lines) != len(body.body):
            return None
        return [small for line in lines for small in line.body]

    def _updates(self, statement: cst.BaseSmallStatement, param: str) -> bool:
        """`p -= lr * p.grad`, `p.data.add_(p.grad, alpha=-lr)` and the like."""

        def target(node: cst.BaseExpression) -> bool:
            return dotted(node) == param or (
                is_attribute(node, "data") and dotted(node.value) == param  # type: ignore[attr-defined]
            )

        call = _method_call(statement)
        in_place = (isinstance(statement, cst.AugAssign) and target(statement.target)) or (
            call is not None
            and target(call.func.value)  # type: ignore[attr-defined]
            and call.func.attr.value.endswith("_")  # type: ignore[attr-defined]
        )
        if not in_place:
            return False
        return any(
            is_attribute(n, "grad") and dotted(n.value) == param  # type: ignore[attr-defined]
            for n in find_all(statement, cst.Attribute)
        )

    def _param_variable(self, loop: cst.For) -> str | None:
        """The loop variable holding each tensor whose gradient the loop may zero."""
        target: cst.BaseExpression = loop.target
        iterated = self._parameters_call(loop.iter)
        if (
            iterated is not None
            and isinstance(iterated.func, cst.Attribute)
            and iterated.func.attr.value == "named_parameters"
        ):
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None
            target = target.elements[1].value
        return target.value if isinstance(target, cst.Name) else None

    def _parameters_call(self, expr: cst.BaseExpression) -> cst.Call | None:
        """`X.parameters()` / `X.named_parameters()`, directly, in `list(...)`, or through a name."""
        value = self.b.value_of(expr) if isinstance(expr, cst.Name) else expr
        if isinstance(value, cst.Call) and is_name(value.func, "list") and len(value.args) == 1:
            value = value.args[0].value
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("parameters", "named_parameters")
        ):
            return value
        return None

    def _only_zeroes(self, body: cst.BaseSuite, param: str) -> bool:
        """The body zeroes `param.grad` and does nothing else (an `is not None` guard allowed)."""
        statements = (
            [cst.SimpleStatementLine(list(body.body))]
            if isinstance(body, cst.SimpleStatementSuite)
            else list(body.body)
        )
        zeroes = False
        for statement in statements:
            if isinstance(statement, cst.If):
                if (
                    statement.orelse is not None
                    or not _guards_grad(statement.test, param)
                    or not self._only_zeroes(statement.body, param)
                ):
                    return False
                zeroes = True
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                return False
            for small in statement.body:
                kind = self._zeroing_kind(small, param)
                if kind is None:
                    return False
                zeroes = zeroes or kind
        return zeroes

    def _may_zero(self, body: cst.BaseSuite) -> bool:
        """Whether the block, or an `if` directly in it, has a statement zeroing some `x.grad`."""
        lines = [body] if isinstance(body, cst.SimpleStatementSuite) else list(body.body)
        for line in lines:
            if isinstance(line, cst.If):
                if self._may_zero(line.body):
                    return True
            elif isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
                if any(self._zeroing_kind(small, None) for small in line.body):
                    return True
        return False

    @staticmethod
    def _zeroing_kind(statement: cst.BaseSmallStatement, param: str | None) -> bool | None:
        """True for a statement that zeroes `param.grad` (any name's if None), False for a harmless companion, else None."""
        value = statement.value if type(statement) in (cst.Expr, cst.Assign) else None  # type: ignore[attr-defined]
        if not (
            type(value) is cst.Call
            and type(value.func) is cst.Attribute
            and value.func.attr.value in _TOUCHING_METHODS
        ):
            return None  # what every pattern below calls: most statements end here, unmatched
        if _zeroes(statement, param):
            return True
        if _accompanies(statement, param):
            return False
        return None

    def _zero_grad_call(self, loop: cst.For) -> str | None:
        """`optimizer.zero_grad()` or `model.zero_grad()` for a loop over `model.parameters()`."""
        if not isinstance(loop.iter, cst.Call) or self._parameters_call(loop.iter) is not loop.iter:
            return None
        owner = self.ctx.code(loop.iter.func.value)  # type: ignore[attr-defined]
        optimizer = self._optimizer_over(f"{owner}.parameters()", loop)
        target = optimizer or owner
        return (
            f"{target}.zero_grad(set_to_none=True)" if self._old_torch else f"{target}.zero_grad()"
        )

    def _none_body(self, loop: cst.For, param: str) -> Edit:
        """Replaces the loop's body (its statements, at their indentation) with `param.grad = None`."""
        body = loop.body.body
        return Edit(self.ctx.start(body[0]), self.ctx.end(body[-1]), f"{param}.grad = None")

    def _optimizer_over(self, parameters: str, loop: cst.For) -> str | None:
        """The name of an optimizer built over exactly `parameters` and visible at `loop`."""
        scope = self._scope_of(loop)
        for where in dict.fromkeys((scope, self.b.module)):
            for name, bindings in self.b.bindings[where].items():
                if len(bindings) != 1 or not self._optimizer_call(bindings[0].exact, parameters):
                    continue
                if where is scope and self.b.order[bindings[0].node] > self.b.order[loop]:
                    continue
                return name
        return None

    def _optimizer_call(self, value: cst.BaseExpression | None, parameters: str) -> bool:
        if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
            return False
        qualname = self.ctx.symbols.qualname(value.func) or ""
        return qualname.startswith("torch.optim.") and "".join(
            self.ctx.code(value.args[0].value).split()
        ) == "".join(parameters.split())

    # -- context -------------------------------------------------------------------------
    def _scope_of(self, node: cst.CSTNode) -> cst.FunctionDef | cst.Module:
        scope = self.b.scope_of(node)
        while not isinstance(scope, cst.FunctionDef | cst.Module):
            scope = self.b.scope_of(scope)
        return scope

    def _in_zeroing_function(self, node: cst.CSTNode) -> bool:
        return any(
            isinstance(a, cst.FunctionDef) and _ZEROING_FUNCTION.search(a.name.value)
            for a in self.ctx.ancestors(node)
        )

    def _trains(self, scope: cst.FunctionDef | cst.Module) -> bool:
        """The scope runs a backward pass or an optimizer step itself."""
        return any(
            isinstance(n, cst.Call) and is_attribute(n.func, "backward", "step")
            for n in self.b.own_nodes(scope)
        )

    def _reads_grads(
        self, scope: cst.FunctionDef | cst.Module, outside: cst.CSTNode | None = None
    ) -> bool:
        """Whether the scope uses a `.grad` as a tensor (unguarded), relying on zero-filled gradients."""
        return any(
            outside is None or not self.b.is_ancestor(outside, read)
            for read in self._grad_reads(scope)
        )

    def _grad_reads(self, scope: cst.FunctionDef | cst.Module) -> list[cst.Attribute]:
        if scope not in self._reads:
            nodes = (
                n
                for n in self.b.own_nodes(scope)
                if isinstance(n, cst.Attribute) and n.attr.value == "grad"
            )
            self._reads[scope] = [n for n in nodes if not self._harmless_grad_use(n)]
        return self._reads[scope]

    def _after_backward(self, node: cst.CSTNode) -> bool:
        """Whether a statement before `node`'s, in its block or a block around it, calls `backward()`."""
        child = node
        for parent in self.b.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                return False
            if isinstance(parent, cst.IndentedBlock | cst.Module):
                at = next((i for i, statement in enumerate(parent.body) if statement is child), 0)
                earlier = parent.body[:at]
                if any(
                    is_attribute(c.func, "backward")  # type: ignore[attr-defined]
                    for s in earlier
                    for c in find_all(s, cst.Call)
                ):
                    return True
            child = parent
        return False

    def _harmless_grad_use(self, node: cst.Attribute) -> bool:
        if self._after_backward(node):
            return True  # backward has just filled the gradient: set to None or not, it is there
        parent = self.b.parents.get(node)
        if isinstance(parent, cst.AssignTarget) or (
            isinstance(parent, cst.Call) and parent.func is node
        ):
            return True  # `p.grad = ...`, `torch.autograd.grad(...)`
        if isinstance(parent, cst.Comparison) and all(
            isinstance(c.operator, cst.Is | cst.IsNot) for c in parent.comparisons
        ):
            return True
        text = self.ctx.code(node)
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.If) and f"{text} is not None" in self.ctx.code(
                ancestor.test
            ):
                return True
        return False


def _equal() -> cst.AssignEqual:
    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def _writes(replacement: str) -> str:
    """The `fix_versions` entry of a loop's replacement."""
    return (
        "`zero_grad(set_to_none=True)`"
        if "set_to_none=True" in replacement
        else "`param.grad = None`"
    )
