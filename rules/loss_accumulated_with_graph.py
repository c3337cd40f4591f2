"""TL104 loss-accumulated-with-graph."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.accumulation import Backprop
from torchlint.analysis.grad import Grad, GradMode
from torchlint.analysis.loops import LoopFacts, StepOwner
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_ACCUMULATING = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


@dataclass(frozen=True)
class _Candidate:
    node: cst.CSTNode  # the statement part reported: the AugAssign, Assign or append call
    target: cst.BaseExpression  # the running variable (for append: the list)
    value: cst.BaseExpression  # what is added


class LossAccumulatedWithGraph(Rule):
    code = "TL104"
    name = "loss-accumulated-with-graph"
    summary = "A loss that requires grad is summed (or appended) across batches, keeping every step's graph alive"
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`.detach()`/`.item()`": "1.0",
    }
    # Every finding needs a backward pass in the file: `.backward()`, `manual_backward` or `torch.autograd.*`.
    tokens = ("backward", "autograd")
    text_tests = (may_train,)  # it looks only at training code
    docs = """
## What it does
Flags a running variable that collects a loss with its autograd history on every iteration of
a per-batch loop:

- `total_loss += loss` (also `total_loss = total_loss + loss`, `total += loss * x.size(0)`,
  `totals["ce"] += loss`, `self.epoch_loss += loss`);
- `losses.append(loss)` into a list created before the loop: every element keeps its step's
  graph exactly as a running sum does.

The value counts as a loss carrying a graph when the loop backpropagates it
(`loss.backward()`, `scaler.scale(loss).backward()`, also as part of `(loss + reg).backward()`),
or when it is the result of a loss (`criterion(out, y)`, `F.cross_entropy(...)`, an
`nn.*Loss` module, `model(**batch).loss`) computed with grad on in a loop that trains. The
running variable must outlive the iteration: bound before the loop, and not reset inside it
except now and then (`if i % 100 == 99: running = 0.0` still lets 100 graphs pile up).

Not flagged:
- values already detached: `loss.item()`, `loss.detach()`, `float(loss)`, `loss.data`;
- the other elements unpacked beside a loss (`n` and `logs` in `loss, n, logs = criterion(...)`),
  which may be counts or dicts: only the one the loop backpropagates is known to be the loss;
- the weight a loss is scaled by before its backward (`tokens` in `(loss * tokens /
  total).backward()`): it scales the graph, so `metric += v.detach() * tokens` keeps none;
- code under `torch.no_grad()`, `torch.inference_mode()` or `set_grad_enabled(False)`
  (also through decorators and callers), where no graph is recorded;
- accumulators that are themselves backpropagated later (`total.backward()`,
  `(total / n).backward()`, `torch.stack(losses).mean().backward()`): accumulating the graph is
  then the point (gradient accumulation over chunks, several loss terms);
- per-step sums reset at the top of every iteration (`loss = ce; loss += reg; loss.backward()`),
  also when the sum runs over an inner loop of loss terms and is rebound on every iteration of
  the optimisation loop around it (`total = torch.zeros(n)`, then `total += loss` per term).
- a running total of micro-batch losses that the loop backpropagates one by one and that is
  reset in the branch that steps the optimizer (gradient accumulation: `running += loss;
  loss.backward()`, then `if (i + 1) % accum == 0: opt.step(); running = 0`): each backward has
  freed its saved activations, and the total holds the bare graph nodes of one update's
  micro-batches at most, nothing measurable. `.detach()` there is hygiene, not a fix.

## Why is this bad?
A loss that requires grad references the graph that produced it. Adding it to a running total
makes the total require grad too, with a graph that links to every step's graph: nothing of
those graphs can be freed until the total goes away, so memory grows with every batch (after
`backward()` the saved activations are released, but the graph nodes of every step remain,
and before it everything stays). The PyTorch FAQ names this as the first cause of "my model
reports cuda runtime error(2): out of memory". A list of losses holds the same graphs.

## Example
```python
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss
print(total_loss / len(loader))
```

## Use instead
```python
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.detach()
print(total_loss / len(loader))
```
`loss.detach()` keeps the sum on the device without a graph, so the loop does not wait for the
GPU; `loss.item()` gives a Python float but synchronizes with the GPU on every batch (see
TL002 host-sync-in-loop).

## Fix safety
Unsafe: the fix adds `.detach()` to the accumulated loss. The running variable then becomes a
tensor without grad: code that later calls `backward()` on it (or uses it in a loss) would
break, which is why such accumulators are not flagged; anything else reading it that needs
its graph (an `autograd.grad` of it, a hook) would change too. The total stays on the loss's
device and dtype, so code that expects a Python float (JSON, `round`, formatting with `:d`)
may need `.item()` where it is read.

## References
- [PyTorch FAQ: my model reports "cuda runtime error(2): out of memory" (don't accumulate history across your training loop)](https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory)
- [torch.Tensor.detach](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
- [Autograd mechanics: saved tensors](https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn)](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        # Already detached or converted.
        Valid(
            """
            import torch
            total = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total += loss.item()
                history.append(loss.detach())
            """
        ),
        Valid(
            """
            import torch
            total = 0.0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                loss = loss.detach()
                total += loss
            """
        ),
        # Gradient accumulation: each micro-batch backpropagated, the total reset with the update.
        Valid(
            """
            def train(model, loader, opt, accum):
                running = 0
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum
                    running += loss
                    loss.backward()
                    if (i + 1) % accum == 0:
                        opt.step()
                        opt.zero_grad()
                        print(running)
                        running = 0
            """
        ),
        # Under no_grad: no graph.
        Valid(
            """
            import torch
            total = 0.0
            with torch.no_grad():
                for x, y in val_loader:
                    loss = criterion(model(x), y)
                    total += loss
            """
        ),
        # Accumulated on purpose, then backpropagated.
        Valid(
            """
            import torch
            for batch in loader:
                total = 0.0
                for chunk in batch.split(4):
                    total += criterion(model(chunk), chunk)
                total.backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch
            losses = []
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                losses.append(loss)
                if (i + 1) % 4 == 0:
                    torch.stack(losses).mean().backward()
                    optimizer.step()
                    losses = []
            """
        ),
        # A per-step sum, reset on every iteration.
        Valid(
            """
            import torch
            for x, y in loader:
                loss = criterion(model(x), y)
                loss += 0.01 * reg(model)
                loss.backward()
                optimizer.step()
            """
        ),
        # A sum over the loss terms of one step, rebound at the top of every step.
        Valid(
            """
            import torch

            def project(model, extractors, target, steps):
                z = torch.randn(4, 512, requires_grad=True)
                opt = torch.optim.Adam([z])
                for it in range(steps):
                    opt.zero_grad()
                    out = model(z)
                    total = torch.zeros(4)
                    for i in range(len(extractors)):
                        loss = ((extractors[i](out) - target[i]) ** 2).mean(dim=1)
                        total += loss
                        loss.sum().backward(retain_graph=True)
                    opt.step()
                    print(total)
            """
        ),
        # Not a loss, and not a loop that trains.
        Valid(
            """
            import torch
            total = 0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                total += y.size(0)
            """
        ),
        Valid(
            """
            import torch
            total = 0.0
            for x, y in loader:
                total += criterion(model(x), y)
            print(total)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            total_loss = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss
            print(total_loss / len(loader))
            """,
            fixed="""
            import torch
            total_loss = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss.detach()
            print(total_loss / len(loader))
            """,
            line=8,
            column=5,
            message="`total_loss += loss` keeps each step's graph alive; add `loss.detach()`",
        ),
        # Reset once per epoch, not per step: a whole epoch of graphs piles up.
        Invalid(
            """
            import torch
            for epoch in range(epochs):
                total = torch.zeros(())
                for x, y in loader:
                    opt.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    opt.step()
                    total += loss
                print(total)
            """,
            fixed="""
            import torch
            for epoch in range(epochs):
                total = torch.zeros(())
                for x, y in loader:
                    opt.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    opt.step()
                    total += loss.detach()
                print(total)
            """,
            line=9,
            column=9,
            message="`total += loss` keeps each step's graph alive; add `loss.detach()`",
        ),
        # Scaled, through a scaler, appended, assigned, and periodically reset.
        Invalid(
            """
            import torch.nn.functional as F
            def train(model, loader, opt, scaler):
                running, losses = 0.0, []
                for i, (x, y) in enumerate(loader):
                    loss = F.cross_entropy(model(x), y)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    running = running + loss * x.size(0)
                    losses.append(loss)
                    if i % 100 == 99:
                        print(running / 100)
                        running = 0.0
                return losses
            """,
            fixed="""
            import torch.nn.functional as F
            def train(model, loader, opt, scaler):
                running, losses = 0.0, []
                for i, (x, y) in enumerate(loader):
                    loss = F.cross_entropy(model(x), y)
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    running = running + loss.detach() * x.size(0)
                    losses.append(loss.detach())
                    if i % 100 == 99:
                        print(running / 100)
                        running = 0.0
                return losses
            """,
            count=2,
            line=8,
            column=9,
            message="`running = running + loss * x.size(0)` keeps each step's graph alive; add `loss.detach()`",
        ),
        # A loss term that is backpropagated as part of a sum; attribute accumulators.
        Invalid(
            """
            import torch
            class Trainer:
                def fit(self, loader):
                    self.epoch_ce = 0.0
                    for x, y in loader:
                        out = self.model(x)
                        ce = self.criterion(out, y)
                        total = ce + self.reg_weight * out.pow(2).mean()
                        total.backward()
                        self.optimizer.step()
                        self.epoch_ce += ce
            """,
            fixed="""
            import torch
            class Trainer:
                def fit(self, loader):
                    self.epoch_ce = 0.0
                    for x, y in loader:
                        out = self.model(x)
                        ce = self.criterion(out, y)
                        total = ce + self.reg_weight * out.pow(2).mean()
                        total.backward()
                        self.optimizer.step()
                        self.epoch_ce += ce.detach()
            """,
            line=11,
            column=13,
            message="`self.epoch_ce += ce` keeps each step's graph alive; add `ce.detach()`",
        ),
        # A loss summed from several terms on each step, then added up across steps.
        Invalid(
            """
            import torch
            epoch_loss = 0.0
            for x, y in loader:
                loss = 0.0
                for head in heads:
                    loss += criterion(head(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss += loss
            """,
            fixed="""
            import torch
            epoch_loss = 0.0
            for x, y in loader:
                loss = 0.0
                for head in heads:
                    loss += criterion(head(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss += loss.detach()
            """,
            line=9,
            column=5,
            message="`epoch_loss += loss` keeps each step's graph alive; add `loss.detach()`",
        ),
        # A loss computed in a loop that trains, never backpropagated itself.
        Invalid(
            """
            import torch
            from torch import nn
            mse = nn.MSELoss()
            monitor = 0.0
            for x, y in train_loader:
                out = model(x)
                model.loss_fn(out, y).backward()
                opt.step()
                monitor += mse(out, y)
            """,
            fixed="""
            import torch
            from torch import nn
            mse = nn.MSELoss()
            monitor = 0.0
            for x, y in train_loader:
                out = model(x)
                model.loss_fn(out, y).backward()
                opt.step()
                monitor += mse(out, y).detach()
            """,
            line=9,
            column=5,
            message="`monitor += mse(out, y)` keeps each step's graph alive; add `mse(out, y).detach()`",
        ),
        Invalid(
            """
            import torch
            totals = {'loss': 0.0}
            for batch in loader:
                outputs = model(**batch)
                outputs.loss.backward()
                optimizer.step()
                totals['loss'] += outputs.loss
            """,
            fixed="""
            import torch
            totals = {'loss': 0.0}
            for batch in loader:
                outputs = model(**batch)
                outputs.loss.backward()
                optimizer.step()
                totals['loss'] += outputs.loss.detach()
            """,
            line=7,
            column=5,
            message="`totals['loss'] += outputs.loss` keeps each step's graph alive; add `outputs.loss.detach()`",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.candidates: list[_Candidate] = []
        self._training_loops: set[StepOwner | None] | None = None

    # -- collecting --------------------------------------------------------------------
    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self.candidates.append(_Candidate(node, node.target, node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        """`total = total + loss`."""
        value = node.value
        if (
            len(node.targets) != 1
            or not isinstance(value, cst.BinaryOperation)
            or not isinstance(value.operator, cst.Add)
        ):
            return
        target = node.targets[0].target
        text = _text(target)
        if text is not None and _text(value.left) == text:
            self.candidates.append(_Candidate(node, target, value.right))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "append"
            and len(node.args) == 1
            and not node.args[0].star
        ):
            if node.args[0].keyword is None:
                self.candidates.append(_Candidate(node, func.value, node.args[0].value))

    # -- deciding ------------------------------------------------------------------------
    def finish(self) -> None:
        if not self.candidates or not self.ctx.fact(Training).trains:
            return
        loops = self.ctx.fact(LoopFacts)
        for candidate in self.candidates:
            loop = loops.per_batch_loop(candidate.node)
            if loop is None or self._function(candidate.node) is not self._function(loop):
                continue
            carrier = self._carrier(candidate, loop)
            if (
                carrier is None
                or not self._persists(candidate, loop)
                or self._backpropagated(candidate.target)
                or self._cleared_each_update(candidate, carrier, loop)
            ):
                continue
            self._report(candidate, carrier)

    def _function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return self.ctx.fact(SemanticModel).function_of(node)

    def _carrier(self, candidate: _Candidate, loop: StepOwner) -> cst.BaseExpression | None:
        """The part of the added value that carries a loss's graph, if any."""
        value = candidate.value
        parts = _terms(value)
        carriers = [p for p in parts if self._carries_graph(p, loop)]
        if not carriers:
            return None
        return carriers[0] if len(carriers) == 1 else value

    def _carries_graph(self, expr: cst.BaseExpression, loop: StepOwner) -> bool:
        backprop = self.ctx.fact(Backprop)
        if backprop.no_graph(expr):
            return False
        grad = self.ctx.fact(Grad).mode(expr)
        if grad is GradMode.DISABLED:
            return False
        if isinstance(expr, cst.Name | cst.Attribute | cst.Subscript):
            values = self._values(expr)
            if values is None or self._detached(values):
                return False
            key = backprop.key(expr) if not isinstance(expr, cst.Subscript) else None
            if key is not None and key in backprop.carried:
                return True  # the loop backpropagates this very value
            if grad is GradMode.MANAGED or not self._trains(loop) or self._unpacked(expr):
                return False
            return backprop.is_loss_call(expr) or any(backprop.is_loss_call(v) for v in values)
        if grad is GradMode.MANAGED or not self._trains(loop):
            return False
        return backprop.is_loss_call(expr)

    def _detached(self, values: list[cst.BaseExpression]) -> bool:
        """Whether what a name holds has no graph: its last binding, or every term of `x = 0; x += a; x += b`."""
        backprop = self.ctx.fact(Backprop)
        if len(values) > 1:
            return all(backprop.no_graph(v) for v in values)
        return bool(values) and backprop.no_graph(values[0])

    def _values(self, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """What a name holds where it is read (its reaching bindings); None when a binding is not an expression."""
        if not isinstance(expr, cst.Name):
            return []
        bindings = self.ctx.fact(SemanticModel).reaching(expr)
        if not bindings or any(
            b.kind not in (BindingKind.ASSIGN, BindingKind.AUGMENT, BindingKind.UNPACK)
            or b.value is None
            for b in bindings
        ):
            return None
        return [b.value for b in bindings if b.value is not None]

    def _unpacked(self, expr: cst.BaseExpression) -> bool:
        """`n` in `loss, n, logs = criterion(...)`: one element of what a loss function returned is
        not known to be the loss (it may be a count or a dict), unless the loop backpropagates it."""
        return isinstance(expr, cst.Name) and any(
            b.kind is BindingKind.UNPACK for b in self.ctx.fact(SemanticModel).reaching(expr)
        )

    def _trains(self, loop: StepOwner) -> bool:
        """Whether the loop runs a backward pass on its iterations (directly or through a same-file call)."""
        if self._training_loops is None:
            loops = self.ctx.fact(LoopFacts)
            self._training_loops = {
                loops.per_batch_loop(call, every_iteration=False)
                for call in self.ctx.fact(Backprop).backward_calls
            }
        return loop in self._training_loops

    def _persists(self, candidate: _Candidate, loop: StepOwner) -> bool:
        """Whether the running variable outlives an iteration: bound before the loop, reset in it only now and then."""
        base = _container(candidate.target)
        if not isinstance(base, cst.Name | cst.Attribute) or dotted(base) is None:
            return False
        bindings = self._all_bindings(base)
        loops = self.ctx.fact(LoopFacts)
        outside = [b for b in bindings if not self._inside(b.node, loop)]
        if not outside:
            return False
        steps = self._step_loops(candidate.node)
        for binding in bindings:
            if binding.node is candidate.node or binding.kind is BindingKind.AUGMENT:
                continue
            if loops.per_batch_loop(binding.node) in steps:
                return False  # reset on every iteration of the step's loop
        if isinstance(candidate.node, cst.Call):  # `.append`: only lists built before the loop
            return all(
                isinstance(b.value, cst.List) or _is_list_call(b.value)
                for b in outside
                if b.kind is BindingKind.ASSIGN
            )
        return True

    def _cleared_each_update(
        self, candidate: _Candidate, carrier: cst.BaseExpression, loop: StepOwner
    ) -> bool:
        """A total of micro-batch losses the loop backpropagates one by one, rebound in a branch
        of the loop that steps the optimizer: it holds the graph nodes of one update's
        micro-batches, whose activations each backward has already freed."""
        backprop = self.ctx.fact(Backprop)
        key = backprop.key(carrier) if isinstance(carrier, cst.Name | cst.Attribute) else None
        if key is None or key not in backprop.carried:
            return False
        base = _container(candidate.target)
        if not isinstance(base, cst.Name | cst.Attribute):
            return False
        scopes = self.ctx.fact(SemanticModel)
        loops = self.ctx.fact(LoopFacts)
        for binding in self._all_bindings(base):
            if binding.kind is BindingKind.AUGMENT or not self._inside(binding.node, loop):
                continue
            branch = next(
                (p for p in scopes.ancestors(binding.node) if isinstance(p, cst.If)), None
            )
            if branch is not None and self._inside(branch, loop) and loops.updates(branch.body):
                return True
        return False

    def _step_loops(self, node: cst.CSTNode) -> list[StepOwner]:
        """The per-batch loops around `node` in its function, innermost first. A sum rebound
        on every iteration of any of them (`total = torch.zeros(n)` at the top of an
        optimisation step, then `total += loss` over the loss terms in an inner loop) holds
        one step's graphs at most, as `loss = ce; loss += reg` does."""
        loops = self.ctx.fact(LoopFacts)
        function = self._function(node)
        return [
            parent
            for parent in self.ctx.fact(SemanticModel).ancestors(node)
            if isinstance(parent, cst.For | cst.While)
            and self._function(parent) is function
            and loops.is_per_batch(parent)
        ]

    def _all_bindings(self, node: cst.Name | cst.Attribute) -> list[Binding]:
        scopes = self.ctx.fact(SemanticModel)
        if isinstance(node, cst.Name):
            scope, bindings = scopes.resolve(node.value, scopes.scope_of(node))
            return list(bindings)
        return scopes.all_bindings(node)

    def _inside(self, node: cst.CSTNode, loop: StepOwner) -> bool:
        return any(parent is loop.body for parent in self.ctx.fact(SemanticModel).ancestors(node))

    def _backpropagated(self, target: cst.BaseExpression) -> bool:
        """Whether the running variable itself feeds a backward pass: accumulation on purpose."""
        backprop = self.ctx.fact(Backprop)
        target = _container(target)
        key = backprop.key(target)
        return key is None or key in backprop.feeding

    def _report(self, candidate: _Candidate, carrier: cst.BaseExpression) -> None:
        shown = " ".join(self.ctx.code(candidate.node).split())
        if len(shown) > 60:
            shown = shown[:57] + "..."
        loss = self.ctx.code(carrier)
        needs_parens = (
            not isinstance(carrier, cst.Name | cst.Attribute | cst.Call | cst.Subscript)
            and not carrier.lpar
        )
        detached = f"({loss}).detach()" if needs_parens else f"{loss}.detach()"
        fix = self.make_fix(
            f"Accumulate `{detached}`",
            Applicability.UNSAFE,
            self.ctx.replace(carrier, detached),
            writes="`.detach()`/`.item()`",
        )
        self.report(
            candidate.node,
            f"`{shown}` keeps each step's graph alive; add `{detached}`",
            fix,
        )


def _container(target: cst.BaseExpression) -> cst.BaseExpression:
    """The running variable an item store writes into: `totals` of `totals["ce"] += loss`."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return target


def _terms(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `loss * x.size(0)` or `a + b`: the parts that may carry a graph."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, _ACCUMULATING):
        left = _terms(value.left)
        return left if isinstance(value.operator, cst.Divide) else left + _terms(value.right)
    return [value]


def _text(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name | cst.Attribute):
        return dotted(node)
    return None


def _is_list_call(value: cst.BaseExpression | None) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "list"
    )
