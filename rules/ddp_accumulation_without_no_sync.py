"""TL116 ddp-accumulation-without-no-sync."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.accumulation import Backprop
from torchlint.analysis.distributed import Distributed
from torchlint.analysis.loops import LoopFacts, StepOwner
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import walk
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, Edit, Fix, FixAvailability
from torchlint.rule import Invalid, Rule


class DdpAccumulationWithoutNoSync(Rule):
    code = "TL116"
    name = "ddp-accumulation-without-no-sync"
    preview = True
    gpu_only = True  # the saving is inter-GPU communication
    summary = (
        "Gradient accumulation under `DistributedDataParallel` all-reduces on every micro-step"
    )
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {"`model.no_sync()`": "1.2"}
    tokens = ("DistributedDataParallel",)
    text_tests = (may_train,)
    docs = """
## What it does
Flags the backward pass of a gradient-accumulation loop (a per-batch loop that runs
`backward()` on every iteration but steps the optimizer only under a guard such as
`if (i + 1) % accum_steps == 0:`) in a file that wraps its model in
`torch.nn.parallel.DistributedDataParallel`, when the file never skips the gradient sync:
no `model.no_sync()`, no accelerate `accumulate(...)`, no `require_backward_grad_sync`.

Not flagged: files that use a framework which skips the syncs itself while accumulating
(Lightning, accelerate, the Hugging Face `Trainer`, DeepSpeed); loops that step on every
iteration; loops whose guarded step runs a backward of its own.

## Why is this bad?
DDP all-reduces the gradients across all processes during every `backward()`. While
accumulating, only the gradients at the optimizer step matter, so each micro-step but the last
pays a full all-reduce of every gradient for nothing: with N micro-steps per update, N times the
communication. `no_sync()` makes the micro-steps accumulate locally; the backward of the step
that follows all-reduces the sum once. The PyTorch Performance Tuning Guide lists this as
"skip unnecessary all-reduce if training with DistributedDataParallel and gradient
accumulation".

When not to act: a world size of one, or a model whose parameters change their use between
micro-steps in ways DDP's `find_unused_parameters` must track at each backward.

## Example
```python
model = DistributedDataParallel(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Use instead
```python
model = DistributedDataParallel(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    with contextlib.nullcontext() if (i + 1) % accum_steps == 0 else model.no_sync():
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
```

## Fix safety
Unsafe. The fix wraps the loop's statements up to the backward (the forward must be inside
too) in `with contextlib.nullcontext() if <step test> else model.no_sync():`, and imports
`contextlib`. It is offered only when that is mechanical: the backward and the step's guard are
statements of the loop's own body, the forward of the DDP model is called there, and the
guard's test reads nothing those statements bind and calls nothing but `len` (it is evaluated
twice). Otherwise the finding says why and the fix
is display-only. Unsafe because the gradients of the skipped syncs are reduced later: anything
that reads `.grad` between micro-steps (clipping per micro-step, logging gradient norms) sees
local gradients instead of averaged ones, and a loop that ends between two steps leaves
unsynchronised gradients behind.

## References
- [DistributedDataParallel.no_sync](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync)
- [PyTorch Performance Tuning Guide: skip unnecessary all-reduce with gradient accumulation](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#skip-unnecessary-all-reduce-if-training-with-distributeddataparallel-and-gradient-accumulation)
- [contextlib.nullcontext](https://docs.python.org/3/library/contextlib.html#contextlib.nullcontext)
"""
    valid = [
        # the micro-steps skip the sync
        """
        import contextlib
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        for i, (x, y) in enumerate(loader):
            sync = (i + 1) % accum == 0
            with contextlib.nullcontext() if sync else model.no_sync():
                (loss_fn(model(x), y) / accum).backward()
            if sync:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # no accumulation: a step on every iteration
        """
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model)
        for x, y in loader:
            loss_fn(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        """,
        # no DDP in this file
        """
        import torch

        for i, (x, y) in enumerate(loader):
            (loss_fn(model(x), y) / accum).backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
        # accelerate skips the syncs inside `accumulate`
        """
        from accelerate import Accelerator
        from torch.nn.parallel import DistributedDataParallel

        for x, y in loader:
            with accelerator.accumulate(model):
                accelerator.backward(loss_fn(model(x), y))
                optimizer.step()
                optimizer.zero_grad()
        """,
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net.cuda(), device_ids=[rank])
            for i, (x, y) in enumerate(loader):
                x, y = x.cuda(), y.cuda()
                loss = loss_fn(model(x), y) / accum
                loss.backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            import contextlib

            model = DDP(net.cuda(), device_ids=[rank])
            for i, (x, y) in enumerate(loader):
                with contextlib.nullcontext() if (i + 1) % accum == 0 else model.no_sync():
                    x, y = x.cuda(), y.cuda()
                    loss = loss_fn(model(x), y) / accum
                    loss.backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            line=8,
            column=5,
            message="all-reduces the gradients on every micro-step",
        ),
        # the forward runs in a helper: the wrap is not mechanical
        Invalid(
            """
            import torch

            def train(model, loader, optimizer, accum_steps):
                for step, batch in enumerate(loader):
                    loss = compute_loss(model, batch) / accum_steps
                    loss.backward()
                    if (step + 1) % accum_steps == 0:
                        optimizer.step()
                        optimizer.zero_grad()

            def main(rank):
                model = torch.nn.parallel.DistributedDataParallel(build(), device_ids=[rank])
                train(model, loader, optimizer, 4)
            """,
            message="`model.no_sync()`",
        ),
        # a helper decides when to step: calling it twice would change its count
        Invalid(
            """
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(net)
            for batch in loader:
                model(batch).loss.backward()
                if history.step(grad_accumulation):
                    optimizer.step()
            """,
            message="skip it with `model.no_sync()`",
        ),
        # the step's test reads a value the wrapped statements compute
        Invalid(
            """
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(net)
            for batch in loader:
                step = next(counter)
                model(batch).loss.backward()
                if step % grad_accum == 0:
                    optimizer.step()
            """,
        ),
    ]

    def finish(self) -> None:
        distributed = self.ctx.fact(Distributed)
        if not distributed.wraps or distributed.framework or distributed.skips_syncs:
            return
        if not self.ctx.fact(Training).trains:
            return
        reported: set[StepOwner] = set()
        for guard, loop in self._accumulating_steps():
            if loop in reported:
                continue
            backward = self._micro_backward(loop, guard)
            if backward is None:
                continue
            reported.add(loop)
            self.report(
                backward,
                "DDP all-reduces the gradients on every micro-step; skip it with `model.no_sync()`",
                self._fix(loop, backward, guard),
            )

    def _accumulating_steps(self) -> list[tuple[cst.If, StepOwner]]:
        """Optimizer steps that run only under an accumulation guard of a per-batch loop."""
        training = self.ctx.fact(Training)
        loops = self.ctx.fact(LoopFacts)
        backprop = self.ctx.fact(Backprop)
        found = []
        for call in self.ctx.fact(SemanticModel).calls:
            if training.stepped_optimizer(call) is None:
                continue
            loop = loops.per_batch_loop(call, every_iteration=False)
            guard = backprop.accumulation_guard(call, loop) if loop is not None else None
            if loop is not None and guard is not None:
                found.append((guard, loop))
        return found

    def _micro_backward(self, loop: StepOwner, guard: cst.If) -> cst.Call | None:
        """The backward the loop runs on every iteration, when none runs under the step's guard."""
        scopes = self.ctx.fact(SemanticModel)
        loops = self.ctx.fact(LoopFacts)
        every = None
        for call in self.ctx.fact(Backprop).backward_calls:
            if scopes.is_ancestor(guard, call):
                return None  # the step computes its own gradients: nothing accumulates
            if every is None and loops.per_batch_loop(call) is loop:
                every = call
        return every

    # -- the fix -------------------------------------------------------------------------
    def _fix(self, loop: StepOwner, backward: cst.Call, guard: cst.If) -> Fix:
        why, edits = self._wrap(loop, backward, guard)
        if edits is None:
            return self.make_fix(
                f"Run the micro-steps' forward and backward under `model.no_sync()` ({why})",
                Applicability.DISPLAY_ONLY,
            )
        return self.make_fix(
            "Run the forward and backward of the micro-steps under `model.no_sync()`",
            Applicability.UNSAFE,
            *edits,
            writes="`model.no_sync()`",
        )

    def _wrap(
        self, loop: StepOwner, backward: cst.Call, guard: cst.If
    ) -> tuple[str, list[Edit] | None]:
        """The edits wrapping the loop's statements up to the backward, or why there are none."""
        scopes = self.ctx.fact(SemanticModel)
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        at = {id(s): i for i, s in enumerate(body)}
        statement = scopes.statement_of(backward)
        while statement is not None and id(statement) not in at:
            parent = scopes.parents.get(statement)
            statement = scopes.statement_of(parent) if parent is not None else None
        if statement is None or id(guard) not in at:
            return "the backward and the step's guard are not statements of the loop itself", None
        last = at[id(statement)]
        if at[id(guard)] < last:
            return "the step's guard comes before the backward", None
        wrapped = list(body[: last + 1])
        model = self._ddp_forward(wrapped)
        if model is None:
            return "the loop does not call the DDP model itself", None
        if self._binds_test_names(guard.test, wrapped):
            return "the step's test reads values computed before the backward", None
        if self._calls_in_test(guard.test):
            return "the step's test calls a function, which the `with` would call again", None
        test = self.ctx.code(guard.test)
        try:
            item = cst.parse_expression(
                f"contextlib.nullcontext() if {test} else {model}.no_sync()"
            )
        except cst.ParserSyntaxError:
            return "the step's test cannot be repeated in a `with` as written", None
        block = cst.With(
            items=[cst.WithItem(item)],
            body=cst.IndentedBlock(body=[wrapped[0].with_changes(leading_lines=()), *wrapped[1:]]),
        )
        text = self.ctx.code(block, like=wrapped[0]).strip(" \t\r\n")
        edits = [Edit(self.ctx.start(wrapped[0]), self.ctx.end(wrapped[-1]), text)]
        if not self._imports_contextlib():
            edits.insert(0, self.ctx.import_edit("import contextlib"))
        return "", edits

    def _ddp_forward(self, statements: list[cst.BaseStatement]) -> str | None:
        """The DDP model that the statements call (`model` in `loss_fn(model(x), y)`), as written."""
        distributed = self.ctx.fact(Distributed)
        scopes = self.ctx.fact(SemanticModel)
        for call in scopes.calls:
            if (
                isinstance(call.func, cst.Name | cst.Attribute)
                and any(scopes.is_ancestor(s, call) for s in statements)
                and distributed.is_ddp(call.func)
            ):
                return self.ctx.code(call.func)
        return None

    def _binds_test_names(self, test: cst.BaseExpression, statements: list) -> bool:
        scopes = self.ctx.fact(SemanticModel)
        for node in walk(test):
            if isinstance(node, cst.Name):
                for binding in scopes.reaching(node):
                    if any(scopes.is_ancestor(s, binding.node) for s in statements):
                        return True
        return False

    def _calls_in_test(self, test: cst.BaseExpression) -> bool:
        """A call other than `len(...)` in the test: evaluating it twice may change what it does."""
        scopes = self.ctx.fact(SemanticModel)
        return any(
            scopes.is_ancestor(test, call)
            and not (isinstance(call.func, cst.Name) and call.func.value == "len")
            for call in scopes.calls
        )

    def _imports_contextlib(self) -> bool:
        return self.ctx.symbols.aliases.get("contextlib") == "contextlib"
