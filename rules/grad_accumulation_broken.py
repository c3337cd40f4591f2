"""TL105 grad-accumulation-broken."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from torchlint.analysis.accumulation import Backprop, modulo_divisor
from torchlint.analysis.loops import LoopFacts, StepOwner
from torchlint.analysis.model import BindingKind, SemanticModel
from torchlint.analysis.nodes import walk
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# Between a call and its loop, these make the call run only on some iterations.
_CONDITIONAL = (
    cst.If,
    cst.IfExp,
    cst.ExceptHandler,
    cst.BooleanOperation,
    cst.For,
    cst.While,
    cst.CompFor,
    cst.Lambda,
    cst.FunctionDef,
    cst.Else,
)
# In the stepping block, these rescale the accumulated gradients instead of the loss.
_RESCALING = ("div", "mul", "scale", "normalize")


@dataclass
class _Group:
    """The steps of one optimizer in one per-batch loop."""

    loop: StepOwner
    optimizer: str
    guarded: list[tuple[cst.Call, cst.If]] = field(default_factory=list)
    every_iteration: bool = False


class GradAccumulationBroken(Rule):
    code = "TL105"
    name = "grad-accumulation-broken"
    summary = (
        "Gradient accumulation defeated by a per-iteration zero_grad(), or summing undivided losses"
    )
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("zero_grad", "backward")
    text_tests = (may_train,)  # it looks only at training code
    docs = """
## What it does
Looks at per-batch loops that run `backward()` on every iteration but step an optimizer only
every N iterations, under a guard such as `if (i + 1) % accum_steps == 0:` (a `%` test, a
test naming the accumulation, or a helper given the accumulation count, as in
`if history.step(grad_accumulation):`) that runs no backward pass of its own (a GAN's
generator, stepped every `n_critic` iterations after its own backward, accumulates nothing).
It flags:

1. `optimizer.zero_grad()` (or `model.zero_grad()` when the loop steps a single optimizer) that
   runs on every iteration of that loop, outside the guard: the gradients of the first N-1
   micro-batches are wiped before the step, so each step uses one micro-batch and the
   accumulation is silently defeated;
2. otherwise, a loss backpropagated on every iteration that is not divided by the number of
   accumulation steps: `loss.backward()` (or `scaler.scale(loss).backward()`) where `loss` is
   directly the result of a torch loss (`F.cross_entropy(...)`, a `nn.*Loss()` module with the
   default mean reduction) or a model's `.loss`, never rescaled in the loop.

Only clear cases are flagged by the second check. Not flagged: losses divided anywhere in the
loop (`loss = loss / accum_steps`, `(loss / n).backward()`, `loss *= weight`); losses built by
a function of your own (it may scale); losses with `reduction="sum"` or another non-default
reduction (the normalization is then a deliberate choice); loops whose stepping block rescales
the gradients instead (`p.grad.div_(n)`, `scale_grads(...)`, `multiply_grads(...)`);
`accelerator.backward(loss)` and other framework backward calls (accelerate and DeepSpeed
divide by the accumulation steps themselves).

## Why is this bad?
Gradient accumulation emulates a batch N times larger by summing the gradients of N
micro-batches before one optimizer step. Zeroing the gradients on every iteration throws all
but the last micro-batch away: training silently uses an N times smaller batch with N times
fewer updates, for the cost of the full computation. Without dividing the loss by N, the summed
gradient is N times the mean gradient of the large batch: the effective learning rate is N
times higher than configured (and gradient clipping thresholds mean something else).

## Example
```python
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
```

## Use instead
```python
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Fix safety
Display-only: moving `zero_grad()` under the step's guard or dividing the loss changes the
training dynamics (batch size, effective learning rate), which other settings may have been
tuned around.

## References
- [PyTorch FAQ and autograd mechanics: gradients accumulate into `.grad`](https://pytorch.org/docs/stable/notes/autograd.html)
- [torch.optim.Optimizer.zero_grad](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
- [Automatic mixed precision examples: gradient accumulation](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): use gradient accumulation](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        # The textbook form.
        Valid(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y) / accum_steps
                loss.backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        # No accumulation: step and zero_grad on every iteration; a step skipped on NaN is no accumulation.
        Valid(
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                if torch.isfinite(loss):
                    optimizer.step()
            """
        ),
        # A periodic scheduler step is not an optimizer step; two optimizers, each zeroed with its own step.
        Valid(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
                if i % 100 == 0:
                    scheduler.step()
            """
        ),
        Valid(
            """
            import torch
            for i, (real, _) in enumerate(loader):
                opt_d.zero_grad()
                d_loss(real).backward()
                opt_d.step()
                if i % n_critic == 0:
                    opt_g.zero_grad()
                    g_loss(real).backward()
                    opt_g.step()
            """
        ),
        # A GAN's generator steps every n_critic iterations with its own backward under the guard.
        Valid(
            """
            import torch
            for i, (real, _) in enumerate(loader):
                opt_d.zero_grad()
                d_loss(real).backward()
                opt_d.step()
                opt_g.zero_grad()
                if i % n_critic == 0:
                    g_loss(real).backward()
                    opt_g.step()
            """
        ),
        # The loss is rescaled, or summed on purpose, or gradients are rescaled at the step.
        Valid(
            """
            import torch
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                (loss / accum).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Valid(
            """
            import torch
            from torch import nn
            criterion = nn.CrossEntropyLoss(reduction='sum')
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Valid(
            """
            import torch
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                loss = F.mse_loss(model(x), y)
                loss.backward()
                if (i + 1) % accum == 0:
                    for p in model.parameters():
                        p.grad.div_(accum)
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        # accelerate divides by the accumulation steps itself.
        Valid(
            """
            import torch
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                loss = F.mse_loss(model(x), y)
                accelerator.backward(loss)
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        # A call that does not name the accumulation is no accumulation guard.
        Valid(
            """
            import torch
            for batch in loader:
                optimizer.zero_grad()
                model(batch).loss.backward()
                if scheduler.should_step(batch):
                    optimizer.step()
            """
        ),
        # zero_grad under a configuration switch, not on every iteration.
        Valid(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                if not args.accumulate:
                    optimizer.zero_grad()
                (criterion(model(x), y) / 4).backward()
                if (i + 1) % 4 == 0:
                    optimizer.step()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            for i, (x, y) in enumerate(loader):
                optimizer.zero_grad()
                loss = criterion(model(x), y) / accum_steps
                loss.backward()
                if (i + 1) % accum_steps == 0:
                    optimizer.step()
            """,
            line=3,
            column=5,
            message="`optimizer.zero_grad()` on every iteration wipes the gradients being accumulated for the step",
        ),
        # zero_grad after the guarded step, on a model, with a GradScaler.
        Invalid(
            """
            import torch
            def train(model, loader, optimizer, scaler, accum):
                for step, batch in enumerate(loader):
                    with torch.autocast('cuda'):
                        loss = model(**batch).loss / accum
                    scaler.scale(loss).backward()
                    if step % accum == accum - 1 or step == len(loader) - 1:
                        scaler.step(optimizer)
                        scaler.update()
                    model.zero_grad()
            """,
            line=10,
            column=9,
            message="`model.zero_grad()` on every iteration wipes the gradients being accumulated for the step",
        ),
        # A helper decides when to step from the accumulation count.
        Invalid(
            """
            import torch
            def fit(self, loader, optimizer, history, grad_accumulation):
                for batch in loader:
                    optimizer.zero_grad()
                    loss = self.feed_batch(batch)['loss'] / grad_accumulation
                    loss.backward()
                    if history.step(grad_accumulation):
                        optimizer.step()
            """,
            line=4,
            column=9,
            message="`optimizer.zero_grad()` on every iteration wipes the gradients being accumulated for the step",
        ),
        # The loss is summed over micro-batches without dividing it.
        Invalid(
            """
            import torch
            import torch.nn.functional as F
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                if (i + 1) % args.gradient_accumulation_steps == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            line=5,
            column=5,
            message="gradients of `loss` sum over `args.gradient_accumulation_steps` micro-batches, never divided by it",
        ),
        Invalid(
            """
            import torch
            from torch import nn
            criterion = nn.MSELoss()
            for i, (x, y) in enumerate(loader):
                outputs = model(x)
                loss = criterion(outputs, y)
                scaler.scale(loss).backward()
                if i % 8 == 0:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad(set_to_none=True)
            """,
            line=7,
            column=5,
            message="gradients of `loss` sum over `8` micro-batches, never divided by it",
        ),
    ]

    def finish(self) -> None:
        training = self.ctx.fact(Training)
        if not training.trains:
            return
        self._index()
        groups = self._groups()
        for group in groups.values():
            if (
                not group.guarded
                or group.every_iteration
                or not self._backward_every_iteration(group.loop)
            ):
                continue
            if any(self._backward_inside(guard) for _, guard in group.guarded):
                continue  # the step's own gradients are computed under its guard: nothing accumulates
            single = sum(1 for loop, _ in groups if loop is group.loop) == 1
            zeroing = self._zero_grads_every_iteration(group, single)
            if zeroing:
                for call in zeroing:
                    self._report_zeroing(call, group)
            else:
                self._check_loss_scaling(group)

    def _index(self) -> None:
        """Once per file: the zero_grad and backward calls inside each loop, and the ifs holding a backward."""
        loops = self.ctx.fact(LoopFacts)
        backward_calls = list(self.ctx.fact(Backprop).backward_calls)
        self._zero_grads: dict[cst.CSTNode, list[cst.Call]] = {}
        self._backwards: dict[cst.CSTNode, list[cst.Call]] = {}
        self._ifs_with_backward: set[cst.CSTNode] = set()
        zero_grads = [
            c
            for c in self.ctx.fact(SemanticModel).calls
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "zero_grad"
        ]
        for calls, index in ((zero_grads, self._zero_grads), (backward_calls, self._backwards)):
            for call in calls:
                for parent in self._enclosing(call):
                    if isinstance(parent, cst.For | cst.While):
                        index.setdefault(parent, []).append(call)
                    elif isinstance(parent, cst.If) and index is self._backwards:
                        self._ifs_with_backward.add(parent)
        self._backward_loops = {loops.per_batch_loop(call) for call in backward_calls}

    def _enclosing(self, node: cst.CSTNode):
        """Ancestors of `node` up to its function, lambda or class."""
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return
            yield parent

    # -- optimizer steps, grouped by loop and optimizer -----------------------------------
    def _groups(self) -> dict[tuple[StepOwner, str], _Group]:
        loops = self.ctx.fact(LoopFacts)
        groups: dict[tuple[StepOwner, str], _Group] = {}
        for call in self.ctx.fact(SemanticModel).calls:
            optimizer = self.ctx.fact(Training).stepped_optimizer(call)
            if optimizer is None:
                continue
            loop = loops.per_batch_loop(call, every_iteration=False)
            if loop is None or not self._direct(call, loop):
                continue
            group = groups.setdefault((loop, optimizer), _Group(loop, optimizer))
            guard = self.ctx.fact(Backprop).accumulation_guard(call, loop)
            if guard is not None:
                group.guarded.append((call, guard))
            elif loops.per_batch_loop(call) is loop:
                group.every_iteration = True
        return groups

    def _direct(self, node: cst.CSTNode, loop: StepOwner) -> bool:
        """Whether `node` sits in the loop's own body, not in a function called from it."""
        return any(parent is loop for parent in self._enclosing(node))

    def _backward_every_iteration(self, loop: StepOwner) -> bool:
        return loop in self._backward_loops

    def _backward_inside(self, guard: cst.If) -> bool:
        return guard in self._ifs_with_backward

    # -- 1. zero_grad on every iteration ---------------------------------------------------
    def _zero_grads_every_iteration(self, group: _Group, single: bool) -> list[cst.Call]:
        """`optimizer.zero_grad()` (or a module's, when the loop steps one optimizer) on every iteration."""
        training = self.ctx.fact(Training)
        loops = self.ctx.fact(LoopFacts)
        found = []
        for call in self._zero_grads.get(group.loop, []):
            func = call.func
            assert isinstance(func, cst.Attribute)
            owner = dotted(func.value)
            if owner != group.optimizer and not (
                single and owner is not None and not training.is_optimizer(func.value)
            ):
                continue
            if self._unconditional(call, group.loop) and loops.per_batch_loop(call) is group.loop:
                found.append(call)
        return found

    def _unconditional(self, node: cst.CSTNode, loop: StepOwner) -> bool:
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if parent is loop:
                return True
            if isinstance(parent, _CONDITIONAL):
                return False
        return False

    def _report_zeroing(self, call: cst.Call, group: _Group) -> None:
        step, guard = group.guarded[0]
        divisor = modulo_divisor(guard.test)
        every = (
            f"every `{self.ctx.code(divisor)}` iterations"
            if divisor is not None
            else "only now and then"
        )
        fix = self.make_fix(
            f"Call `{self.ctx.code(call)}` right after `{self.ctx.code(step)}`, under its guard ({every})",
            Applicability.DISPLAY_ONLY,
        )
        self.report(
            call,
            f"`{self.ctx.code(call)}` on every iteration wipes the gradients being accumulated for the step",
            fix,
        )

    # -- 2. an accumulated loss that is not divided --------------------------------------
    def _check_loss_scaling(self, group: _Group) -> None:
        _, guard = group.guarded[0]
        divisor = modulo_divisor(guard.test)
        if divisor is None or self._rescales_gradients(guard):
            return
        backprop = self.ctx.fact(Backprop)
        loops = self.ctx.fact(LoopFacts)
        for call in self._backwards.get(group.loop, []):
            if (
                not backprop.is_tensor_backward(call)
                or loops.per_batch_loop(call) is not group.loop
            ):
                continue
            loss = self._undivided_loss(call.func.value, group.loop)  # type: ignore[attr-defined]
            if loss is None:
                continue
            fix = self.make_fix(
                f"Divide the loss by `{self.ctx.code(divisor)}` before `backward()`",
                Applicability.DISPLAY_ONLY,
            )
            self.report(
                call,
                f"gradients of `{self.ctx.code(loss)}` sum over `{self.ctx.code(divisor)}` micro-batches, never divided by it",
                fix,
            )

    def _undivided_loss(
        self, target: cst.BaseExpression, loop: StepOwner
    ) -> cst.BaseExpression | None:
        """The loss of `target.backward()` when it is a plain, mean-reduced torch loss, never rescaled."""
        if (
            isinstance(target, cst.Call)
            and isinstance(target.func, cst.Attribute)
            and target.func.attr.value == "scale"
        ):
            positional = [a.value for a in target.args if a.keyword is None and not a.star]
            if len(positional) != 1:
                return None
            target = positional[0]
        value = target
        if isinstance(target, cst.Name):
            bindings = self.ctx.fact(SemanticModel).reaching(target)
            if (
                len(bindings) != 1
                or bindings[0].kind is not BindingKind.ASSIGN
                or bindings[0].value is None
            ):
                return None  # rebound, or rescaled with `loss /= n`
            if not any(
                parent is loop.body
                for parent in self.ctx.fact(SemanticModel).ancestors(bindings[0].node)
            ):
                return None
            value = bindings[0].value
        return target if self._plain_mean_loss(value) else None

    def _plain_mean_loss(self, value: cst.BaseExpression) -> bool:
        backprop = self.ctx.fact(Backprop)
        if isinstance(value, cst.Attribute | cst.Subscript):
            return backprop.is_loss_call(value)  # `model(x).loss`: the model's mean loss
        if not isinstance(value, cst.Call):
            return False
        if _non_default_reduction(value):
            return False
        qualname = self.ctx.symbols.qualname(value.func) or ""
        if qualname.startswith("torch.nn.functional."):
            return backprop.is_loss_call(value)
        module = backprop.loss_module(value.func)
        return module is not None and not _non_default_reduction(module)

    def _rescales_gradients(self, guard: cst.If) -> bool:
        """Whether the stepping block divides the gradients itself (`p.grad.div_(n)`, `scale_grads(model, 1 / n)`)."""
        for node in walk(guard.body):
            if isinstance(node, cst.Attribute) and node.attr.value == "grad":
                return True
            if isinstance(node, cst.Call):
                name = (dotted(node.func) or "").rsplit(".", 1)[-1].lower()
                if any(word in name for word in _RESCALING) and name != "update":
                    return True
        return False


def _non_default_reduction(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("reduction", "size_average", "reduce"):
            value = arg.value
            return not (isinstance(value, cst.SimpleString) and value.evaluated_value == "mean")
    return False
