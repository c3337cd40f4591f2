"""TL103 tensor-created-then-moved."""

from __future__ import annotations

import re
from typing import Literal

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.dead_branches import DeadBranches
from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.host_io import WaitsByDesign
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import BindingKind, SemanticModel
from torchlint.analysis.tensors import Kind, TensorFacts
from torchlint.analysis.text import moves_a_call_result
from torchlint.diagnostics import Applicability, Edit, FixAvailability, Position
from torchlint.rule import Invalid, Rule, Valid

# The same values whichever device builds them.
_EXACT = frozenset({"zeros", "ones", "empty", "full", "eye", "tensor", "as_tensor", "arange"})
# Random values come from the device's generator: different numbers, and the CPU stream moves on.
_RANDOM = frozenset({"rand", "randn", "randint", "randperm"})
# CPU and CUDA kernels round the intermediate steps differently: values may differ in the last bits.
_ROUNDED = frozenset({"linspace", "logspace"})
_FACTORIES = _EXACT | _RANDOM | _ROUNDED
# Factories of given data: it starts on the host whatever the device, so `device=` copies it
# from the host as well: nothing to save.
_DATA = frozenset({"tensor", "as_tensor"})
# Functions that run on every step: a module's forward, a step function, a loss.
_STEP_FUNCTION = re.compile(
    r"^(forward|__call__)$|^forward_|_forward$|(^|_)step$|(^|_)loss(es)?(_|$)"
)
# Legacy typed constructors: `torch.LongTensor(n, m)` allocates an uninitialised CPU tensor of that size.
_LEGACY = {
    "Tensor": "float",
    "FloatTensor": "float",
    "DoubleTensor": "double",
    "HalfTensor": "half",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "long",
    "IntTensor": "int",
    "ShortTensor": "short",
    "CharTensor": "int8",
    "ByteTensor": "uint8",
    "BoolTensor": "bool",
}
# Methods that change only a tensor's dtype, shape or fill: the tensor is still made up on the CPU.
_SHAPING = frozenset(
    {
        "float",
        "double",
        "half",
        "bfloat16",
        "long",
        "int",
        "short",
        "bool",
        "byte",
        "char",
        "fill_",
        "zero_",
        "unsqueeze",
        "squeeze",
        "view",
        "reshape",
        "expand",
        "repeat",
        "t",
        "transpose",
        "permute",
        "flatten",
        "contiguous",
    }
)
# Factories whose result is one vector whatever their arguments.
_VECTORS = frozenset({"arange", "linspace", "logspace", "randperm"})
# Factories whose positional arguments are the size (`zeros(n, 3)` or `zeros((n, 3))`).
_SIZED = frozenset({"zeros", "ones", "empty", "rand", "randn"})
# Arguments that make the creation more than "a tensor on the CPU": leave those alone.
_KEEP = frozenset({"device", "out", "pin_memory", "generator"})


class TensorCreatedThenMoved(Rule):
    code = "TL103"
    name = "tensor-created-then-moved"
    gpu_only = True  # the saving is a host-to-GPU copy
    summary = "Tensor built on the CPU and then copied to the device, instead of built there"
    fix_availability = FixAvailability.SAFE
    fix_versions = {
        "`device=` at creation": "1.0",
    }
    tokens = (*sorted(_FACTORIES), "Tensor")
    text_tests = (moves_a_call_result,)
    docs = """
## What it does
Flags a tensor factory of torch (`torch.zeros`, `ones`, `empty`, `full`, `eye`, `arange`,
`linspace`, `logspace`, `rand`, `randn`, `randint`, `randperm`) or the size form of a legacy
constructor (`torch.LongTensor(n, 8)`) whose result is moved to a device, directly or after
methods that only change its dtype, shape or fill (`.float()`, `.fill_(0)`, `.unsqueeze(0)`),
where it runs on every step: `torch.zeros(n).cuda()` in a per-batch loop or a function the
project runs every step (a framework's step hook, a `train_step` that another module calls in its
loop), `torch.arange(n).to(x.device)` in a `forward`, a loss or a `*_step` function, or in a
function of the file those call.

Not flagged:
- a creation that runs once (before the loop, in `__init__`, at module level, in a function only
  such code calls, as a `test_step()` smoke test that a module's `__main__` runs): one copy per
  run costs nothing, and a random one drawn from the CPU generator is often deliberate (its
  values then do not depend on the device);
- a creation under a guard that makes it rare, at any call level between it and the step
  (`if step % n == 0:`, `if not self.every_n_train_iters(runner, n): return` in a hook), or in a
  library module's `__main__` demo;
- a creation in a module-level class the project never builds (a loss beside the one the trainer
  uses), or in a function only such dead code calls: no file, notebook or configuration of the
  project builds it, and no module looks class names up from text (`eval(name)`);
- a vector (`torch.arange(k)`, `torch.zeros(1)`, `torch.ones(len(x))`) created beside a wait
  its function makes on purpose, at the same level of its branches and loops: an op whose
  output size depends on the data (`counts = index.bincount()`, `torch.nonzero(mask)`, `x[x >
  0]`, `list(target.unique())`) or a device value the host needs (`n =
  int(lengths.max().item())` to size `torch.arange(n)`). The host waits for the device there
  anyway, so the small blocking copy lands on a drained stream or only moves that wait by a
  few ops. A matrix sized by the data (`torch.zeros(n_points, n_classes)`) stays a finding:
  its host fill and copy cost megabytes whatever the stream holds;
- `torch.tensor(data)` and `torch.as_tensor(data)`: the data starts on the host, so building
  with `device=` copies it from the host as well;
- a size with a literal 0 dimension (`torch.ones((n, 0, 2)).cuda()`): the tensor has no
  elements, nothing is filled on the host and the move copies nothing;
- factories already given `device=` (a later `.to()` is something else), given `out=`,
  `pin_memory=` or a `generator=` (a CPU generator cannot draw on the GPU), or `**kwargs`;
- `.to()` calls whose first argument is not a device (`.to(torch.float16)`, `.to(other_tensor)`);
- unit tests.

## Why is this bad?
The tensor is first allocated and filled in host memory, then a second allocation is made on
the device and the data is copied over, a synchronous copy from pageable memory. Building it on
the device directly skips the host work and the copy: one allocation and, for `zeros`, `ones`
or `arange`, a fill kernel that runs asynchronously. In code that runs on every step (a
`forward`, a training loop) this is a host-device round trip per call.

## Example
```python
mask = torch.ones(batch_size, seq_len).to(device)
positions = torch.arange(seq_len).cuda()
```

## Use instead
```python
mask = torch.ones(batch_size, seq_len, device=device)
positions = torch.arange(seq_len, device="cuda")
```

## Fix safety
The fix passes the device at creation and drops the move. It is offered only for a pure move:
`.to(device)` or `.to(device=...)` with nothing else, or `.cuda()` / `.cuda(index)` (which
becomes `device="cuda"` / `device="cuda:index"`, the same current-device semantics). It is
not offered when the move also converts (`.to(device, dtype)`), or passes `non_blocking`,
`copy` or `memory_format`.

Safe for `zeros`, `ones`, `empty`, `full`, `eye` and `arange` without a
`step`: the values are the same on every device. Unsafe for:

- `rand`, `randn`, `randint`, `randperm`: on the device the values come from the device's
  generator, not the CPU one. With a fixed seed the numbers change, and the CPU generator no
  longer advances, so every later CPU draw (shuffling, augmentation) changes too. Keep the CPU
  draw where results must match runs on other devices;
- `linspace`, `logspace` and `arange` with a `step`: each value is computed from several
  roundings, with different intermediate precision on each device (`arange` accumulates in
  double on the CPU and in the tensor's type on CUDA; GPU code fuses multiply-adds), so values
  may differ in the last bits. Without a step, integer `arange` is exact everywhere, and a
  floating one is too below 2**24 elements (each value is then one correctly rounded addition);
- factories given `requires_grad=True`: `torch.zeros(3, requires_grad=True).cuda()` is not a
  leaf (its `.grad` stays `None`, the gradient goes to the CPU tensor), while the fixed tensor
  is a leaf that receives gradients. Usually what was meant, but a change in behaviour.

## References
- [Tensor creation ops and their `device` argument](https://pytorch.org/docs/stable/torch.html#creation-ops)
- [Tensor.to](https://pytorch.org/docs/stable/generated/torch.Tensor.to.html) and [Tensor.cuda](https://pytorch.org/docs/stable/generated/torch.Tensor.cuda.html)
- [PyTorch Performance Tuning Guide: create tensors directly on the target device](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device)
- [Reproducibility: random numbers on CPU and CUDA](https://pytorch.org/docs/stable/notes/randomness.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): create tensors directly on the GPU](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            x = torch.zeros(3, device=device)
            """
        ),
        # a legacy constructor's data form copies host data whatever the device
        Valid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                rows = torch.FloatTensor(rows_list).to(device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(3, device='cpu').to(device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(3).to(torch.float16)
            y = torch.ones(3).to(other)
            """
        ),
        Valid(
            """
            import torch
            x = torch.randn(3, generator=g).to(device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.empty(3, pin_memory=True).to(device, non_blocking=True)
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(3, **factory_kwargs).cuda()
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros_like(y).cuda()
            z = torch.from_numpy(a).cuda()
            """
        ),
        Valid(
            """
            import numpy as np
            x = np.zeros(3).to(device)
            """
        ),
        Valid(
            """
            import torch
            x = torch.zeros(3)
            x = x.cuda()
            """
        ),
        # a random initialization, drawn once from the CPU generator
        Valid(
            """
            import torch


            class Cross(torch.nn.Module):
                def __init__(self, n):
                    self.w = torch.nn.Parameter(torch.randn(n).to(device))
            """
        ),
        # built once, before the loop: one copy per run costs nothing
        Valid(
            """
            import torch
            rewards = torch.zeros(steps, envs).to(device)
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
            """
        ),
        # given data starts on the host: `device=` would copy it from the host as well
        Valid(
            """
            import torch
            for obs, r in train_loader:
                reward = torch.tensor(r).to(device)
                model(obs).sum().backward()
                optimizer.step()
            """
        ),
        Valid(
            """
            import torch


            class Head(torch.nn.Module):
                def forward(self, x):
                    return x * torch.tensor([0.5, 0.25]).cuda()
            """
        ),
        # a smoke test named like a step that only the module's `__main__` runs, once
        Valid(
            """
            import torch


            def test_step():
                state = torch.zeros(2, 16).cuda()
                print(cell(state).shape)


            if __name__ == "__main__":
                test_step()
            """
        ),
        # a hook's allocation behind an early return that skips all but every n-th step
        Valid(
            """
            import torch


            class Logger:
                def after_train_step(self, trainer):
                    if trainer.global_step % self.every != 0:
                        return
                    trainer.log_image(torch.zeros(3, 64, 64).cuda())

                def on_train_step(self, trainer):
                    self.after_train_step(trainer)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                noise = torch.zeros(3, 4).cuda()
            """,
            fixed="""
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                noise = torch.zeros(3, 4, device="cuda")
            """,
            line=5,
            column=13,
            message="`zeros(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        Invalid(
            """
            import torch as T


            class Block(T.nn.Module):
                def forward(self, x):
                    n = x.size(0)
                    mask = T.ones(
                        n, 1, dtype=T.bool,
                    ).to(self.device)
                    return x * mask
            """,
            fixed="""
            import torch as T


            class Block(T.nn.Module):
                def forward(self, x):
                    n = x.size(0)
                    mask = T.ones(
                        n, 1, dtype=T.bool, device=self.device,
                    )
                    return x * mask
            """,
            line=7,
            column=16,
            message="`ones(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        Invalid(
            """
            import torch as T


            class Block(T.nn.Module):
                def forward(self, x):
                    n = x.size(0)
                    pos = T.arange(x.size(1)).to(device=x.device)
                    return x + pos
            """,
            fixed="""
            import torch as T


            class Block(T.nn.Module):
                def forward(self, x):
                    n = x.size(0)
                    pos = T.arange(x.size(1), device=x.device)
                    return x + pos
            """,
            line=7,
            column=15,
            message="`arange(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        # random values on every forward: unsafe, the generator changes
        Invalid(
            """
            import torch


            class Noisy(torch.nn.Module):
                def forward(self, x):
                    return x + self.scale(torch.randn(x.shape).to(x.device))
            """,
            fixed="""
            import torch


            class Noisy(torch.nn.Module):
                def forward(self, x):
                    return x + self.scale(torch.randn(x.shape, device=x.device))
            """,
            line=6,
            column=31,
            message="`randn(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        # not a pure move: flagged without a fix
        Invalid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                x = torch.zeros(3).to(device, torch.float16)
            """,
            line=5,
            column=9,
            message="`zeros(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        Invalid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                x = torch.ones(3).cuda(non_blocking=True)
            """,
            line=5,
            column=9,
            message="`ones(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        # through dtype and shape methods; the size form of a legacy constructor (no fix: it takes no device)
        Invalid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                x = torch.zeros(n, 3).float().unsqueeze(0).to(device)
            """,
            fixed="""
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                x = torch.zeros(n, 3, device=device).float().unsqueeze(0)
            """,
            line=5,
            column=9,
            message="`zeros(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
        ),
        Invalid(
            """
            import torch
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
                mask = torch.LongTensor(n, 8).fill_(0).cuda()
            """,
            line=5,
            column=12,
            message="`LongTensor(size)` is built on the CPU, then copied; build it on the device with `torch.empty`",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.candidates: list[tuple[cst.Call, cst.Call, str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            not isinstance(func, cst.Attribute)
            or func.attr.value not in ("cuda", "to")
            or not isinstance(func.value, cst.Call)
        ):
            return
        creation = func.value
        while (
            isinstance(creation.func, cst.Attribute)
            and creation.func.attr.value in _SHAPING
            and isinstance(creation.func.value, cst.Call)
        ):
            creation = (
                creation.func.value
            )  # `torch.zeros(n).float().to(device)`: still made up on the CPU
        module, _, factory = (self.ctx.symbols.qualname(creation.func) or "").rpartition(".")
        if module != "torch" or not self._plain(creation):
            return
        if _empty(creation, factory):
            return  # no elements: nothing is filled on the host, and the move copies nothing
        if factory in _FACTORIES or (factory in _LEGACY and self._sized(creation)):
            self.candidates.append((node, creation, factory))

    def finish(self) -> None:
        if not self.candidates:
            return
        for move, creation, factory in self.candidates:
            if factory in _DATA:  # the data starts on the host: `device=` copies it from there too
                continue
            device = self._device(move)
            if device is None or not self._per_step(
                move
            ):  # built once: one copy per run costs nothing
                continue
            if self.ctx.fact(DeadBranches).unbuilt(move):
                continue  # a loss or block the project never builds: its forward never runs
            if self._vector(creation, factory) and self.ctx.fact(WaitsByDesign).waits_beside(move):
                continue  # a small copy beside a wait the function makes on purpose
            if factory in _LEGACY:
                advice = f"`torch.empty(..., dtype=torch.{_LEGACY[factory]}, device=...)`"
                self.report(
                    move,
                    f"`{factory}(size)` is built on the CPU, then copied; build it on the device with `torch.empty`",
                    self.make_fix(f"Build it with {advice}", Applicability.DISPLAY_ONLY),
                )
                continue
            fix = None
            if (
                device is not False and not creation.lpar
            ):  # `(torch.zeros(3)).cuda()`: rare, left to the user
                applicability = (
                    Applicability.SAFE if self._exact(factory, creation) else Applicability.UNSAFE
                )
                fix = self.make_fix(
                    "Pass the device at creation",
                    applicability,
                    *self._device_edits(move, creation, device),
                    writes="`device=` at creation",
                )
            self.report(
                move,
                f"`{factory}(...)` is built on the CPU and then copied to the device; pass `device=` to build it there",
                fix,
            )

    def _vector(self, creation: cst.Call, factory: str) -> bool:
        """A one-dimensional creation (`torch.arange(k)`, `torch.zeros(1)`, `torch.ones(len(x))`):
        positions, counts or a fill of one row, whose copy costs little once the stream is
        drained. A matrix sized by the data (`torch.zeros(n_points, n_classes)`, megabytes)
        costs its host fill and transfer whatever the stream holds (judged TP beside a sync),
        as does a size the code does not show (`torch.zeros(shape)`)."""
        if factory in _VECTORS:
            return True
        dimensions = _dimensions(creation, factory)
        return len(dimensions) == 1 and self._count(dimensions[0], 0)

    def _count(self, size: cst.BaseExpression, depth: int) -> bool:
        """A single number: a literal, `len(x)`, an element of a shape (`x.shape[0]`,
        `x.size(0)`), arithmetic of those, or a name bound to one where it is read."""
        if isinstance(size, cst.Integer | cst.Subscript):
            return True
        if isinstance(size, cst.BinaryOperation):
            return self._count(size.left, depth) and self._count(size.right, depth)
        if isinstance(size, cst.Call):
            func = size.func
            if isinstance(func, cst.Name):
                return func.value in ("len", "int", "max", "min")
            return isinstance(func, cst.Attribute) and (
                func.attr.value == "item" or (func.attr.value == "size" and bool(size.args))
            )
        if not isinstance(size, cst.Name) or depth > 2:
            return False
        bound = self.ctx.fact(SemanticModel).reaching(size)
        value = bound[0].exact if len(bound) == 1 else None
        return value is not None and self._count(value, depth + 1)

    @staticmethod
    def _sized(creation: cst.Call) -> bool:
        """The size form of a legacy constructor (`LongTensor(n, 8)`, `FloatTensor(16)`), not its data form
        (`FloatTensor(rows)`, which copies host data whatever the device)."""
        positional = [a for a in creation.args if a.keyword is None]
        if (
            not positional
            or any(a.star for a in positional)
            or len(positional) != len(creation.args)
        ):
            return False
        return len(positional) > 1 or isinstance(positional[0].value, cst.Integer)

    def _per_step(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs on every step, with no guard that makes it rare (`if len(state)
        == 0:` lazy initialisation, `if step % n == 0:`, `if not self.every_n_iters(...):
        return`) between it and what runs it, at any call level (a gradient-accumulation guard,
        whose branch steps the optimizer, runs every update): in a per-batch loop or a function
        the project runs every step (a framework's step hook included), or in a module's
        `forward` or a loss function, or in a function of the file one of those calls, two calls
        deep at most. A function named like a step (`test_step`) is per step only when the
        project runs it so: a one-off smoke test is not."""
        loops = self.ctx.fact(LoopFacts)
        if loops.per_batch_loop(node, every_iteration=False) is not None:
            return loops.per_batch_loop(node, every_update=True) is not None
        scopes, demo = self.ctx.fact(SemanticModel), self.ctx.fact(LibraryDemo)
        sites = [node]
        for _ in range(3):
            sites = [
                site
                for site in sites
                if loops.periodic_guard(site, every_update=True) is None
                and not loops.runs_once(site)
                and not demo.runs_only_in_demo(site)
            ]
            functions = [f for f in map(scopes.function_of, sites) if f is not None]
            if any(_STEP_FUNCTION.search(f.name.value) for f in functions):
                return True
            sites = [call for f in functions for call in scopes.callers.get(f, ())]
        return False

    @staticmethod
    def _plain(creation: cst.Call) -> bool:
        """A CPU creation: no device, output buffer, pinning, generator, or `**kwargs`."""
        return not any(
            a.star == "**" or (a.keyword is not None and a.keyword.value in _KEEP)
            for a in creation.args
        )

    def _device(self, move: cst.Call) -> cst.BaseExpression | Literal[False] | None:
        """The device expression of a pure move; False for a device move that does more; None for no device move."""
        method = move.func.attr.value  # type: ignore[attr-defined]
        if any(a.star for a in move.args):
            return None
        positional = [a.value for a in move.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in move.args if a.keyword is not None}
        if method == "cuda":
            target = positional[0] if positional else keywords.get("device")
            pure = len(move.args) <= 1 and set(keywords) <= {"device"}
            if not pure:
                return False
            if target is None:
                return cst.SimpleString('"cuda"')
            if isinstance(target, cst.Integer):
                return cst.SimpleString(f'"cuda:{target.value}"')
            return target
        target = positional[0] if positional else keywords.get("device")
        if target is None or not self.ctx.fact(DataLoaders).may_be_accelerator(target):
            return None
        if self._host_device(target):
            return None  # `.to(batch_y.device)` of a batch left on the CPU moves nothing
        return target if len(move.args) == 1 else False

    def _host_device(self, target: cst.BaseExpression) -> bool:
        """`x.device` of a loader batch that stays on the host: `x` comes from a loader loop's
        target through dtype methods only, and is never moved (`batch_y = batch_y.float()`)."""
        if not isinstance(target, cst.Attribute) or target.attr.value != "device":
            return False
        batch = target.value
        return (
            isinstance(batch, cst.Name)
            and self.ctx.fact(TensorFacts).kind(batch) is Kind.HOST_TENSOR
            and self._loop_target(batch, 0)
        )

    def _loop_target(self, name: cst.Name, depth: int) -> bool:
        """Whether every value `name` holds is a loop's target, through dtype methods only."""
        model = self.ctx.fact(SemanticModel)
        bindings = model.reaching(name)
        if not bindings or depth > 4:
            return False
        for binding in bindings:
            if binding.kind is BindingKind.LOOP:
                continue
            value = binding.exact
            if not (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _KEEPS_BATCH
                and isinstance(value.func.value, cst.Name)
                and self._loop_target(value.func.value, depth + 1)
            ):
                return False
        return True

    @staticmethod
    def _exact(factory: str, creation: cst.Call) -> bool:
        """Whether building on the device gives the very same tensor."""
        if factory not in _EXACT:
            return False
        if _passes(creation, "requires_grad"):
            return False
        if (
            factory == "arange"
        ):  # without a step, each value is one correctly rounded addition anywhere
            positional = [a for a in creation.args if a.keyword is None]
            return (
                len(positional) <= 2
                and not any(a.star for a in positional)
                and not _passes(creation, "step")
            )
        return True

    def _device_edits(
        self, move: cst.Call, creation: cst.Call, device: cst.BaseExpression
    ) -> list[Edit]:
        """Add `device=...` after the creation's last argument and drop the move (the dtype and shape
        methods between them stay: they run on the device then)."""
        text = cst.Module([]).code_for_node(device)
        if creation.args:
            add = self.ctx.insert_after(creation.args[-1].value, f", device={text}")
        else:
            end = self.ctx.end(creation)
            at = Position(end.row, end.column - 1)  # before the closing parenthesis
            add = Edit(at, at, f"device={text}")
        return [add, Edit(self.ctx.end(move.func.value), self.ctx.end(move), "")]  # type: ignore[attr-defined]


# Methods after which a loader batch is still the batch, where it was (`batch_y.float()`).
_KEEPS_BATCH = frozenset({"float", "double", "half", "long", "int", "bool", "contiguous"})


def _empty(creation: cst.Call, factory: str) -> bool:
    """A size with a literal 0 dimension (`torch.ones((n, 0, 2))`, `torch.zeros(size=(0, 3))`):
    the tensor has no elements, so building it on the device saves no fill and no copy."""
    return any(
        isinstance(d, cst.Integer) and d.evaluated_value == 0
        for d in _dimensions(creation, factory)
    )


def _dimensions(creation: cst.Call, factory: str) -> list[cst.BaseExpression]:
    """The size a factory is given, one expression per dimension; none where unknown."""
    size = next((a.value for a in creation.args if a.keyword and a.keyword.value == "size"), None)
    positional = [a.value for a in creation.args if a.keyword is None and not a.star]
    if size is None and factory in ("full", "randint"):
        size = next((v for v in positional if isinstance(v, cst.Tuple | cst.List)), None)
    if size is None and (factory in _SIZED or factory in _LEGACY) and positional:
        size = positional[0] if isinstance(positional[0], cst.Tuple | cst.List) else None
        if size is None:
            return positional
    if isinstance(size, cst.Tuple | cst.List):
        return [e.value for e in size.elements if not isinstance(e, cst.StarredElement)]
    return [size] if size is not None else []


def _passes(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword for a in call.args)
