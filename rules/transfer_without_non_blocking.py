"""TL102 transfer-without-non-blocking."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders, Loop, keyword_edits
from torchlint.analysis.host_io import WaitsByDesign
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.nodes import walk
from torchlint.analysis.text import may_build_dataloader
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# Reading a device tensor on the host waits for it anyway: no overlap left to win.
_HOST_READS = frozenset({"item", "tolist", "cpu", "numpy"})
_HOST_CONVERSIONS = frozenset({"float", "int", "bool", "print"})
# How many positional arguments come before `non_blocking` in `.to(device, dtype, non_blocking)`
# and `.cuda(device, non_blocking)`.
_BEFORE_NON_BLOCKING = {"to": 2, "cuda": 1}


class TransferWithoutNonBlocking(Rule):
    code = "TL102"
    name = "transfer-without-non-blocking"
    gpu_only = True  # a non-blocking copy overlaps a host-to-GPU transfer
    summary = (
        "Batch from a `pin_memory=True` loader copied to the device without `non_blocking=True`"
    )
    default_enabled = False
    fix_availability = FixAvailability.SAFE
    fix_versions = {
        "`non_blocking=True`": "1.0",
    }
    tokens = ("pin_memory",)
    text_tests = (may_build_dataloader,)
    docs = """
## What it does
Flags `.to(device)` and `.cuda()` calls that copy a batch (or a tensor of it: `x`, `batch[0]`,
`batch["input_ids"]`, the values of a dict comprehension over the batch) from a `DataLoader`
built in the same file with `pin_memory=True` to the device, inside the loop over that loader
or in a function of the file it passes the batch to, without `non_blocking=True`.

Not flagged: loaders that do not pin memory (or are built elsewhere: their pinning is unknown;
`pin_memory=args.pin_memory` where the file's parser leaves `--pin_memory` off unless it is
passed, `action="store_true"`, pins nothing in the run as written); tensors made anew on the host
before the copy (`x.float()`, `x / 255`, `torch.Tensor(x.numpy())`), which sit in pageable memory
whatever the loader pins;
calls already passing `non_blocking` (either way); copies inside a `with torch.cuda.stream(...)`
block, where the consumer on another stream relies on the copy being complete; values read
back on the host right away (`.item()`, `.cpu()`, `.tolist()`, `float(...)`), where nothing is
left to overlap; copies in a loop each iteration of which waits for the device, outside any
branch, comprehension or inner loop other than one over a `range` the iteration does not change
(`for cls in range(1, num_classes):`, which runs its reads every time) or a branch on a switch of
the run that no iteration changes (`if is_train:`, which runs on every batch of the runs that
take it; predictions copied to the host for a host metric,
`pred.cpu().numpy()`; a scalar read, `meter.update(loss.item())`, `float(loss)`,
`writer.add_scalar(tag, loss)` of a tensor; a `torch.distributed.barrier()`; apex's
`with amp.scale_loss(loss, optimizer):`, whose dynamic loss scaling reads its overflow flag on the
host as the block exits; a call of another
module's function or method that waits on every call, `metric.update(output, target)` whose
`update` runs `torch.cuda.synchronize()` or reads what it is passed on the host), where that wait
has drained the stream before the next copy (a wait only every `print_freq` steps, or on one
rank, paces nothing; where the wait is a per-step scalar read, TL002's finding on that read
comes first: once the value stays on the device, the copy is the step's only sync and this rule
reports it); copies in a loop whose iterations make no other call than copies to the device,
a container's methods and builtins (a prefetch that moves each batch to the device and keeps it
in a list: no device work runs beside the copy for it to overlap); copies that run only now and
then: in a loop that leaves after its first batch (`for x, y in loader: ...; break`, a
data-dependent initialization), under a periodic guard
(`if i % args.print_freq == 0:`, where metrics are measured), after an early `continue` off the
period, or in a helper only such a guarded call runs, which cost nothing per step; and
whole-batch `.to()` calls on loaders with a custom `collate_fn`, whose batch
type may have a `.to()` method without `non_blocking`. Copies to the CPU are never flagged:
there, `non_blocking=True` would be unsafe.

This rule is opt-in: enable it with `--extend-select TL102`. In production codebases the
step mostly waits for the device right after the copy (a boolean-mask index in the loss, a
`.item()` in the model, often in another module the rule cannot follow), so the non-blocking
copy has nothing to overlap; about a quarter of its findings there gain nothing.

## Why is this bad?
Copying from pinned memory to the GPU without `non_blocking=True` makes the Python thread wait
until the copy has run, and the copy runs only after everything queued on the stream before
it: the previous step's backward pass and optimizer update. So every batch is a full
synchronization: the host stops queuing work, and the GPU idles until the host catches up.
With `non_blocking=True` the copy is queued like any kernel and the host moves on to queue
the forward pass; pinning is what makes such an asynchronous copy possible.

Cast after the copy, not before: when `x.float()` changes the dtype it makes a new, unpinned
tensor on the host, so `x.float().to(device)` copies from pageable memory whatever the flags
(this rule leaves such copies alone: `non_blocking` cannot help them);
`x.to(device, non_blocking=True).float()` copies the pinned batch and casts on the device.

## Example
```python
loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    loss = criterion(model(x), y)
```

## Fix safety
Safe. A host-to-device copy with `non_blocking=True` is ordered on the current CUDA stream
like any kernel: every operation that uses the copied tensor later on that stream (the forward
pass, the loss, even `.item()`, which synchronizes) runs after the copy has finished, so the
values are the same. The source batch stays valid: PyTorch's pinned-memory allocator keeps
the block alive until the copy completes, and the loop does not write into it. The cases where
the ordering does not hold, a consumer on another stream or a copy *to* the CPU read right
away, are not flagged. On a machine without an accelerator the option does nothing.

## References
- [A guide on good usage of `non_blocking` and `pin_memory()` in PyTorch](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
- [Tensor.to](https://pytorch.org/docs/stable/generated/torch.Tensor.to.html) and [Tensor.cuda](https://pytorch.org/docs/stable/generated/torch.Tensor.cuda.html)
- [CUDA semantics: use pinned memory buffers](https://pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers)
- [torch.utils.data: memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): `pin_memory` and `non_blocking`](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    _HEAD = "import torch\nfrom torch.utils.data import DataLoader\n\n"
    _PINNED = "loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)\n"
    valid = [
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device, non_blocking=True), y.cuda(non_blocking=True)
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4)
            for x, y in loader:
                x = x.to(device)
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, num_workers=4, pin_memory=False)
            for x, y in loader:
                x = x.to(device)
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                x = x.to(device, torch.float32, False)
                y = y.to('cpu')
                w = y.to(torch.float16)
            """
        ),
        # read back on the host straight away
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                n = y.to(device).sum().item()
                labels = y.to(device)
                print(labels.tolist())
            """
        ),
        # every iteration copies its predictions to the host: nothing left to overlap
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            with torch.no_grad():
                for x, y in loader:
                    pred = model(x.to(device)).argmax(dim=1)
                    metric.update(pred.cpu().numpy(), y.numpy())
            """
        ),
        # every iteration reads its loss on the host after the step: the stream is drained
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                meter.update(loss.item())
            """
        ),
        # a side stream: the consumer relies on the copy having finished
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            s = torch.cuda.Stream()
            for x, y in loader:
                with torch.cuda.stream(s):
                    x = x.to(device)
            """
        ),
        # a custom batch type's own `.to()` may not take `non_blocking`
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, collate_fn=collate, pin_memory=True)
            for batch in loader:
                batch = batch.to(device)
            """
        ),
        # a loader built elsewhere: whether it pins memory is unknown
        Valid(
            """
            def train(loader, pin_memory=True):
                for x, y in loader:
                    x = x.to(device)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device), y.cuda()
                model(x).sum().backward()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=64, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device, non_blocking=True), y.cuda(non_blocking=True)
                model(x).sum().backward()
            """,
            count=2,
            line=6,
            column=12,
            message="pinned batch copied without `non_blocking=True`: the host waits for the copy",
        ),
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, collate_fn=collate, pin_memory=True)
            for i, batch in enumerate(loader):
                inputs = {k: v.to(device) for k, v in batch.items()}
                labels = batch['labels'].cuda(0)
                loss = model(**inputs, labels=labels).loss
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, collate_fn=collate, pin_memory=True)
            for i, batch in enumerate(loader):
                inputs = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                labels = batch['labels'].cuda(0, non_blocking=True)
                loss = model(**inputs, labels=labels).loss
            """,
            count=2,
            line=6,
            column=18,
            message="pinned batch copied without `non_blocking=True`: the host waits for the copy",
        ),
        # the copy is in a helper the loop passes the batch to
        Invalid(
            """
            from torch.utils import data


            class Trainer:
                def step(self, x, y):
                    x = x.flatten(1).to(self.device)
                    return self.model(x)

                def fit(self, ds):
                    loader = data.DataLoader(ds, pin_memory=self.pin)
                    for x, y in loader:
                        self.step(x, y)
            """,
            fixed="""
            from torch.utils import data


            class Trainer:
                def step(self, x, y):
                    x = x.flatten(1).to(self.device, non_blocking=True)
                    return self.model(x)

                def fit(self, ds):
                    loader = data.DataLoader(ds, pin_memory=self.pin)
                    for x, y in loader:
                        self.step(x, y)
            """,
            line=6,
            column=13,
            message="pinned batch copied without `non_blocking=True`: the host waits for the copy",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.any_loader = False

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "pin_memory":
            self.any_loader = True

    def finish(self) -> None:
        if not self.any_loader:
            return
        loaders = self.ctx.fact(DataLoaders)
        waits = self.ctx.fact(WaitsByDesign)
        reported: set[cst.Call] = set()
        for loop, moves in loaders.moves.items():
            pinned = [c for c in loaders.fed_loops[loop] if self._pins(loaders, c)]
            if not pinned:
                continue
            if waits.drains_every_iteration(loop) or waits.queues_nothing(loop):
                continue  # the device is idle at each copy anyway: nothing left to overlap
            custom = any(self._custom_batches(loaders, c) for c in pinned)
            for call in moves:
                if (
                    call in reported
                    or not self._blocking(call)
                    or not loaders.copies_loaded_memory(loop, call)
                    or not loaders.copies_per_batch(loop, call)
                    or not loaders.to_cuda(call)
                ):
                    continue
                if custom and self._whole_batch(loaders.moved(call), loop):
                    continue
                if self._on_side_stream(call) or self._read_on_host(call):
                    continue
                if self._now_and_then(call):
                    continue
                reported.add(call)
                edits = keyword_edits(self.ctx, call, {"non_blocking": "True"})
                fix = self.make_fix(
                    "Pass `non_blocking=True`",
                    Applicability.SAFE,
                    *edits,
                    writes="`non_blocking=True`",
                )
                self.report(
                    call,
                    "pinned batch copied without `non_blocking=True`: the host waits for the copy",
                    fix,
                )

    def _now_and_then(self, call: cst.Call) -> bool:
        """The copy runs only on some iterations of its per-batch loop: under a periodic guard
        (`if i % args.print_freq == 0:`, where the metrics are measured and a timer syncs on
        purpose), after an early `continue` off the period, or in a helper of the file that
        only such a guarded call runs. Once every N steps a blocking copy costs nothing per
        step (judged FPs). Asked of `LoopFacts`: a per-batch loop runs the copy when guards
        are ignored, and none does when they count."""
        loops = self.ctx.fact(LoopFacts)
        return (
            loops.per_batch_loop(call) is None
            and loops.per_batch_loop(call, every_iteration=False) is not None
        )

    @staticmethod
    def _pins(loaders: DataLoaders, call: cst.Call) -> bool:
        keyword = any(a.keyword is not None and a.keyword.value == "pin_memory" for a in call.args)
        return keyword and loaders.pins(call)

    @staticmethod
    def _custom_batches(loaders: DataLoaders, call: cst.Call) -> bool:
        """Batches of a type the default collation did not build: a `collate_fn`, or no batching."""
        args = loaders.constructions[call]
        no_batching = isinstance(args.batch_size, cst.Name) and args.batch_size.value == "None"
        return args.collate_fn is not None or no_batching

    @staticmethod
    def _blocking(call: cst.Call) -> bool:
        """No `non_blocking` argument is given, and none could be (`**kwargs`)."""
        if any(
            a.star or (a.keyword is not None and a.keyword.value == "non_blocking")
            for a in call.args
        ):
            return False
        method = call.func.attr.value  # type: ignore[attr-defined]
        positional = sum(1 for a in call.args if a.keyword is None)
        return positional <= _BEFORE_NON_BLOCKING[method]

    def _whole_batch(self, receiver: cst.BaseExpression | None, loop: Loop) -> bool:
        """Whether the copied value may be the loop's whole batch (or a field of it) rather than an element."""
        while True:
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                receiver = receiver.func.value
            elif isinstance(receiver, cst.Attribute):
                receiver = receiver.value
            else:
                break
        if isinstance(receiver, cst.Subscript):
            return False
        if not isinstance(receiver, cst.Name):
            return True
        return any(_may_be_whole(b, loop) for b in self.ctx.fact(SemanticModel).reaching(receiver))

    def _on_side_stream(self, call: cst.Call) -> bool:
        for parent in self.ctx.ancestors(call):
            if isinstance(parent, cst.With):
                for item in parent.items:
                    func = item.item.func if isinstance(item.item, cst.Call) else None
                    if (
                        isinstance(func, cst.Attribute | cst.Name)
                        and (func.attr.value if isinstance(func, cst.Attribute) else func.value)
                        == "stream"
                    ):
                        return True
            if isinstance(parent, cst.FunctionDef):
                return False
        return False

    def _read_on_host(self, call: cst.Call) -> bool:
        """The copied value goes to the host right away: in the same expression or the next statement."""
        child: cst.CSTNode = call
        for parent in self.ctx.ancestors(call):
            if (
                isinstance(parent, cst.Attribute)
                and parent.value is child
                and parent.attr.value in _HOST_READS
            ):
                return True
            if (
                isinstance(parent, cst.Call)
                and isinstance(parent.func, cst.Name)
                and parent.func.value in _HOST_CONVERSIONS
            ):
                return True
            if isinstance(parent, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                return self._next_reads(parent, child)
            child = parent
        return False

    def _next_reads(self, statement: cst.CSTNode, small: cst.CSTNode) -> bool:
        """`y = y.to(device)` followed by a statement reading `y` on the host."""
        if (
            not isinstance(small, cst.Assign)
            or len(small.targets) != 1
            or not isinstance(small.targets[0].target, cst.Name)
        ):
            return False
        name = small.targets[0].target.value
        block = self.ctx.parents.get(statement)
        body = getattr(block, "body", None)
        if not isinstance(body, list | tuple):
            return False
        index = next((i for i, s in enumerate(body) if s is statement), None)
        if index is None or index + 1 >= len(body):
            return False
        return _reads_on_host(body[index + 1], name)


def _may_be_whole(binding: Binding, loop: Loop) -> bool:
    """A loop target that is the whole batch, or a name bound in a way that cannot tell."""
    if binding.kind is BindingKind.UNPACK or (
        binding.kind is BindingKind.LOOP and binding.node is not loop
    ):
        return False  # `x, y = batch`, `for k, v in batch.items()`: an element
    if binding.kind is not BindingKind.LOOP:
        return True
    value = binding.value
    wrapped = (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "enumerate"
    )
    return binding.path == ((1,) if wrapped else ())


def _reads_on_host(statement: cst.CSTNode, name: str) -> bool:
    """Whether a simple statement (or an `if`'s test) converts `name` to a host value."""
    if isinstance(statement, cst.If):
        statement = statement.test
    elif not isinstance(statement, cst.SimpleStatementLine):
        return False
    for node in walk(statement):
        if isinstance(node, cst.Call):
            func = node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in _HOST_READS
                and isinstance(func.value, cst.Name)
                and func.value.value == name
            ):
                return True
            if (
                isinstance(func, cst.Name)
                and func.value in _HOST_CONVERSIONS
                and any(isinstance(a.value, cst.Name) and a.value.value == name for a in node.args)
            ):
                return True
    return False
