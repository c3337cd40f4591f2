"""TL101 dataloader-without-workers."""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from torchlint.analysis.dataloaders import (
    DataLoaders,
    LoaderArgs,
    Loop,
    is_dataloader,
    keyword_edits,
)
from torchlint.analysis.host_io import WaitsByDesign
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.nodes import returned_values
from torchlint.analysis.project_index import (
    DATASET_SPLITS,
    TENSOR_DATASETS,
    TORCH_LOADS,
    WHOLE,
)
from torchlint.analysis.symbols import dotted
from torchlint.analysis.tensors import Kind, TensorFacts
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

WORKERS = 4
_MAX_DEPTH = 8  # steps followed back from a loader's dataset to what builds it
# What runs a statement only sometimes, or again: a branch, a loop, code deferred to a call.
_CONDITIONAL = (
    cst.If,
    cst.IfExp,
    cst.For,
    cst.While,
    cst.Try,
    cst.BooleanOperation,
    cst.Lambda,
    cst.FunctionDef,
    cst.ClassDef,
    cst.CompFor,
)
# Library functions that return a `TensorDataset` at a position of their result when asked with
# a keyword's literal value: transformers' SQuAD features, `(features, dataset)` for "pt".
_RETURNS_TENSOR_DATASET = {
    "transformers.squad_convert_examples_to_features": ("return_dataset", "pt", 1),
    "transformers.data.squad_convert_examples_to_features": ("return_dataset", "pt", 1),
    "transformers.data.processors.squad.squad_convert_examples_to_features": (
        "return_dataset",
        "pt",
        1,
    ),
}


class DataloaderWithoutWorkers(Rule):
    code = "TL101"
    name = "dataloader-without-workers"
    gpu_only = True  # workers and pinned memory speed up host-to-GPU feeding
    summary = "`DataLoader` feeding a GPU training loop loads batches in the main process or without pinned memory"
    default_enabled = False
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`num_workers=`, `pin_memory=True`": "1.0",
    }
    tokens = ("DataLoader",)
    docs = f"""
## What it does
Flags a `torch.utils.data.DataLoader` (under any import alias) built in the file and iterated
by a loop of the same file that moves its batches to a device (`.to(device)`, `.cuda()`), when
`num_workers` is missing or `0`, or `pin_memory` is missing. The loop may be in another
function of the file that receives the loader as an argument.

Not flagged: `num_workers` given as a variable or expression, or `pin_memory` given at all
(either way: those are choices); loaders never iterated in the file (handed to a trainer
object); loops that never move their batches to a device (the data already lives there; a
`x.to(device)` whose result is dropped moves nothing) or only to a device that is never CUDA
(`torch.device("mps" if torch.backends.mps.is_available() else "cpu")`, where PyTorch ignores
`pin_memory`); calls with `*args`/`**kwargs`; datasets built from tensors already on the device
(`TensorDataset` of device tensors, a dataset given lists the file fills only with device tensors,
`xs.append(torch.tensor(ids, device=device))`, or a split of either), or of a
class of the file that moves its samples to the device itself (CUDA cannot run in forked workers), or
with a `collate_fn` of the file that moves part of each batch to the device (features computed on
CUDA while collating: `pin_memory=True` raises on a batch's CUDA tensors); `batch_size=len(data)`, one in-memory
batch per epoch; unit tests. A dataset already in memory as tensors (`TensorDataset(x, y)`, a
list of loaded samples such as `[(img, y) for img, y in cifar if y < 2]`, a
`random_split`/`Subset` of one, what `torch.load` gives (a cache written with `torch.save`), a
`TensorDataset` a library builds (`squad_convert_examples_to_features(..., return_dataset="pt")`),
bound so in every branch of an `if`, also reaching the loader through a parameter every call of
the file passes one for, or a function of the file or of another module of the project that
returns one, alone or in the tuple it returns, with extras under a flag: `dataset, examples =
load(..., output_examples=True)`, `examples, data = utils.load_and_cache(args, "train")`) has nothing for workers to
load: for it only `pin_memory` is asked, and only where pinning can pay: the loader has workers
(it then pins in a thread of its own) or the loop copies with `non_blocking=True` (a pinned copy
then overlaps compute) and does not wait for the device in every iteration (`loss.item()` each
step, or a helper that copies the batch and returns `out.cpu()`: after such a wait the device is
idle at the next copy, so a non_blocking copy has nothing to overlap). Without workers a loader pins each batch in the main process right
before the loop copies it: one more host copy, pageable into pinned memory, in place of the one
the CUDA driver makes through its own pinned staging buffer, so a synchronous copy gains
nothing (the `pin_memory()`/`non_blocking` guide below measures pinning then copying as slower
than copying pageable memory directly). Nor is `pin_memory` asked where every batch tensor the loop copies is first made anew on
the host (`x.float().to(device)`, `(x / 255).cuda()`, `y.clone().cuda()`): the loader would pin
the batch, but the copy reads the new tensor, in pageable memory, so pinning serves no copy.
(A cast to the dtype the batch already has returns the batch itself; torchlint cannot see the
dtype, so it stays silent then too.) Views and indexing (`x.view(n, -1)`, `y[:, 0]`) copy the
pinned memory, and a cast after the copy (`x.to(device).float()`) runs on the device.
Nor is `pin_memory` asked where the code chose it by a branch (the other branch of the `if` that
builds the loader pins: `if workers > 0: DataLoader(..., pin_memory=True) else: DataLoader(...)`
is `pin_memory=workers > 0`) or, for a loader with workers, where pinning cannot show: a one-off
inference pass of a file that trains (every loop over the loader runs no backward or optimizer
step, in a function the file calls once and no other module imports, and nothing runs it again:
teacher outputs before training), an export pass (every loop over the loader writes each
batch's results to files as it goes, `torch.save(feat, path)` or `np.save` per sample outside any
branch, runs no backward or optimizer step, and nothing runs it again: features or spectrograms
precomputed for a later stage, paced by the read back and the disk write; an evaluation that
writes only under a flag, `if args.save_result:`, is still asked), or a loop whose every batch
goes through autoregressive generation (`model.generate(...)` outside any branch: seconds of
decoding per batch). A tool
whose whole run is an inference pass that keeps its results (feature statistics over a dataset,
written once at the end) is still asked. In a notebook the fix adds workers directly: its kernel is never re-imported by
them, so there is no `if __name__ == "__main__":` guard to add.

## When not to act
`pin_memory=True` saves part of each batch's copy time, which matters where batches are large
(decoded images, audio, video) and steps are short. A batch of a few hundred token ids or tabular
rows, or one image before a generation that takes seconds, copies in microseconds either way:
leaving the loader as it is costs nothing measurable. Workers matter where the dataset does work
per sample (reading and decoding files, augmenting); a loop that already waits on the host every
step (decoding outputs, beam search) hides little of it either way.

This rule is opt-in: enable it with `--extend-select TL101`. On scripts, tutorials and
notebooks its findings hold (20 of 20 judged right on repositories nobody tuned it for), but
in production codebases about half are not worth acting on: loaders whose workers already hide
the copy, one-off prediction passes of a library, data already in memory behind a project's own
`Dataset`, choices made in configuration the file cannot see. Turn it on for script and
course repositories.

## Why is this bad?
With `num_workers=0` the training process itself loads, decodes, augments and collates every
batch, and the GPU waits for it: nothing overlaps. Worker processes prepare the next batches
while the current one trains. Without `pin_memory=True`, each batch sits in pageable host
memory, which the GPU cannot read directly: the copy goes through a staging buffer and cannot
run asynchronously (`non_blocking=True` has no effect). Pinned batches copy faster and let the
copy overlap with compute.

## Example
```python
loader = DataLoader(dataset, batch_size=64, shuffle=True)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    ...
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers={WORKERS}, pin_memory=True)
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    ...
```

## Fix safety
Unsafe. The fix adds `num_workers={WORKERS}` (or replaces `num_workers=0`) and `pin_memory=True`.
{WORKERS} is a starting point, not a tuned value: measure, and keep it at or below the number of CPU
cores (each worker is a process holding its own copy of the dataset object, so memory grows
with it; consider `persistent_workers=True` too, so workers are not restarted every epoch).
Workers change behaviour in ways a codemod cannot check:

- the dataset (and `collate_fn`, sampler) must be picklable, and on platforms that start
  processes with *spawn* (Windows, macOS) the script must build and iterate the loader under an
  `if __name__ == "__main__":` guard (in a notebook, the dataset class must live in an
  importable module). Where the file runs its work at module level without such a guard, a
  notebook included, the fix adds only `pin_memory=True` and the finding says to add the guard
  first;
- each worker has its own random state: augmentation that draws from Python's or NumPy's
  global RNG needs a `worker_init_fn` (torch's own RNG is seeded per worker);
- an `IterableDataset` yields its data once per worker unless it shards by `get_worker_info()`;
- CUDA cannot be used inside forked workers.

`pin_memory=True` only changes where batches live on the host; on a machine without an
accelerator PyTorch warns and ignores it.

## References
- [torch.utils.data: single- and multi-process data loading, memory pinning](https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading)
- [A guide on good usage of `non_blocking` and `pin_memory()` in PyTorch](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
- [PyTorch Performance Tuning Guide: asynchronous data loading and augmentation](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-asynchronous-data-loading-and-augmentation)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): `num_workers` and `pin_memory`](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    _HEAD = "import torch\nfrom torch.utils.data import DataLoader\n\n"
    valid = [
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, num_workers=args.workers, pin_memory=False)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, num_workers=cfg.workers, pin_memory=cfg.pin)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        # never iterated here: handed to a trainer object
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32)
            trainer.fit(model, loader)
            """
        ),
        # batches never moved: the data or the model stays on the CPU
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                model(x).sum().backward()
            """
        ),
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, **loader_kwargs)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        # batches moved only to Apple's MPS or the CPU: PyTorch ignores pin_memory there
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            device = torch.device('mps' if torch.backends.mps.is_available() else 'cpu')
            loader = DataLoader(ds, batch_size=32, num_workers=2)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        # a dataset of tensors already on the GPU: pinning them fails, workers cannot touch CUDA
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            xs = torch.randn(100, 3).to(device)
            loader = DataLoader(TensorDataset(xs), batch_size=10)
            for (x,) in loader:
                model(x.to(device)).sum().backward()
            """
        ),
        # samples already in memory, pinned: no workers asked for
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            pairs = [(x, y) for x, y in cifar if y < 2]
            loader = DataLoader(pairs, batch_size=32, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
        # tensors in memory, no workers, a synchronous copy: the loader would pin each batch in
        # the main process right before the copy, a host copy in place of the driver's own
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            def fit(model, xs, ys):
                loader = DataLoader(TensorDataset(xs, ys), batch_size=16)
                for x, y in loader:
                    model(x.to(device), y.to(device)).backward()
            """
        ),
        # a dataset of the file that moves each sample to the GPU itself
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset

            class Images(Dataset):
                def __getitem__(self, i):
                    return load(i).to(device)

            loader = DataLoader(Images(), batch_size=32)
            for x in loader:
                model(x.to(device)).sum().backward()
            """
        ),
        # a notebook redefines `train`: the loader is run by the CPU version defined before it
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            def train(loader):
                for x, y in loader:
                    model(x).sum().backward()

            train(DataLoader(ds, batch_size=32))

            def train(loader):
                for x, y in loader:
                    model(x.cuda()).sum().backward()
            """
        ),
        # every batch tensor is cast on the host before its copy: pinning serves no copy
        Valid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for x, y in loader:
                x, y = x.float().to(device), y.float().to(device)
                model(x, y).backward()
            """
        ),
        # not torch's DataLoader
        Valid(
            """
            from torch_geometric.loader import DataLoader

            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader


            def main():
                loader = DataLoader(ds, batch_size=32, shuffle=True)
                for x, y in loader:
                    x, y = x.to(device), y.to(device)
                    model(x).sum().backward()


            if __name__ == "__main__":
                main()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader


            def main():
                loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4, pin_memory=True)
                for x, y in loader:
                    x, y = x.to(device), y.to(device)
                    model(x).sum().backward()


            if __name__ == "__main__":
                main()
            """,
            line=6,
            column=14,
            message="`DataLoader` feeding a device loop without `num_workers` or `pin_memory`",
        ),
        # a split of in-memory tensors copied with non_blocking: only pinned memory is asked for
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset, random_split

            train, val = random_split(TensorDataset(xs, ys), [80, 20])
            loader = DataLoader(train, batch_size=16)
            for x, y in loader:
                model(x.to(device, non_blocking=True)).sum().backward()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader, TensorDataset, random_split

            train, val = random_split(TensorDataset(xs, ys), [80, 20])
            loader = DataLoader(train, batch_size=16, pin_memory=True)
            for x, y in loader:
                model(x.to(device, non_blocking=True)).sum().backward()
            """,
            line=5,
            column=10,
            message="`DataLoader` feeding a device loop without `pin_memory`",
        ),
        # explicit 0 workers, pin_memory chosen: the workers are replaced, multi-line layout kept
        Invalid(
            """
            import torch.utils.data as tud


            class Model:
                def predict(self, x):
                    loader = tud.DataLoader(
                        x,
                        batch_size=256,
                        num_workers=0,
                        pin_memory=False,
                    )
                    return [self.net(b.to(self.device)) for b in loader]

                def fit(self, ds):
                    for b in tud.DataLoader(ds, num_workers=2):
                        self.step(b.cuda())
            """,
            fixed="""
            import torch.utils.data as tud


            class Model:
                def predict(self, x):
                    loader = tud.DataLoader(
                        x,
                        batch_size=256,
                        num_workers=4,
                        pin_memory=False,
                    )
                    return [self.net(b.to(self.device)) for b in loader]

                def fit(self, ds):
                    for b in tud.DataLoader(ds, num_workers=2, pin_memory=True):
                        self.step(b.cuda())
            """,
            count=2,
            line=6,
            column=18,
            message="`DataLoader` feeding a device loop without `num_workers`",
        ),
        # the loop is in another function, reached through the argument
        Invalid(
            """
            from torch.utils.data import DataLoader


            def train(model, data):
                for i, batch in enumerate(data):
                    inputs = {k: v.to(DEVICE) for k, v in batch.items()}
                    model(**inputs).loss.backward()


            def main():
                train(model, DataLoader(ds, batch_size=8, pin_memory=True))


            if __name__ == "__main__":
                main()
            """,
            fixed="""
            from torch.utils.data import DataLoader


            def train(model, data):
                for i, batch in enumerate(data):
                    inputs = {k: v.to(DEVICE) for k, v in batch.items()}
                    model(**inputs).loss.backward()


            def main():
                train(model, DataLoader(ds, batch_size=8, pin_memory=True, num_workers=4))


            if __name__ == "__main__":
                main()
            """,
            line=11,
            column=18,
            message="`DataLoader` feeding a device loop without `num_workers`",
        ),
        # module-level script without a __main__ guard: only pin_memory is added
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader

            loader = DataLoader(ds, batch_size=32, pin_memory=True)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                model(x).sum().backward()
            """,
            line=4,
            column=10,
            message="`DataLoader` feeding a device loop without `num_workers` or `pin_memory`",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.candidates: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if is_dataloader(self.ctx, node):
            self.candidates.append(node)

    def finish(self) -> None:
        if not self.candidates:
            return
        loaders = self.ctx.fact(DataLoaders)
        for call in self.candidates:
            args = loaders.constructions.get(call)
            if args is None or args.has_star or not self._moved_to_device(loaders, call):
                continue
            workers = args.num_workers is None or (
                isinstance(args.num_workers, cst.Integer) and args.num_workers.evaluated_value == 0
            )
            in_memory = self._in_memory(args.dataset)
            if in_memory:
                workers = False  # nothing to load: only pinning the batches' copies is left to gain
            pin = args.pin_memory is None and self._copies_loaded_memory(loaders, call)
            if (
                pin
                and in_memory
                and not _has_workers(loaders, args)
                and not self.ctx.fact(WaitsByDesign).copy_overlaps(call)
            ):
                pin = False  # pinned in the main process just before a synchronous copy: no gain
            if pin and self._pin_unmeasurable(loaders, call, args):
                pin = False
            if not workers and not pin:
                continue
            if (
                self._on_device(args.dataset)
                or loaders.moves_own_samples(call)
                or loaders.collates_on_device(call)
                or self._one_batch(args)
            ):
                continue
            self._report(call, workers, pin)

    def _moved_to_device(self, loaders: DataLoaders, call: cst.Call) -> bool:
        """Batches copied to a CUDA device: pinned memory and workers serve those copies (PyTorch
        ignores `pin_memory` on MPS)."""
        return any(
            loaders.to_cuda(move)
            for loop in loaders.loops_of(call)
            for move in loaders.moves.get(loop, ())
        )

    def _pin_unmeasurable(self, loaders: DataLoaders, call: cst.Call, args: LoaderArgs) -> bool:
        """`pin_memory` left out where the code chose so, or where pinning cannot show: pinned in
        the other branch of the `if` that builds this loader, or, for a loader with workers, a
        one-off inference pass of a program that trains, an export pass that writes each
        batch's results to files, or batches each followed by autoregressive generation."""
        if self._pinned_in_other_branch(loaders, call):
            return True
        if not _has_workers(loaders, args):
            return False
        return (
            self._one_off_pass(loaders, call)
            or loaders.exports_per_batch(call)
            or self._generates_per_batch(loaders, call)
        )

    def _pinned_in_other_branch(self, loaders: DataLoaders, call: cst.Call) -> bool:
        """The other branch of the nearest `if` around the loader, in its function, builds a
        loader with `pin_memory` (`if workers > 0: DataLoader(..., pin_memory=True) else:
        DataLoader(...)`): `pin_memory=workers > 0` in two statements, a choice."""
        model = self.ctx.fact(SemanticModel)
        child: cst.CSTNode = call
        for parent in model.ancestors(call):
            if isinstance(parent, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                return False
            if isinstance(parent, cst.If):
                other = parent.orelse if child is parent.body else parent.body
                if child is parent.test or other is None:
                    return False
                return any(
                    other_args.pins and model.is_ancestor(other, loader)
                    for loader, other_args in loaders.constructions.items()
                )
            child = parent
        return False

    def _one_off_pass(self, loaders: DataLoaders, call: cst.Call) -> bool:
        """Every loop over the loader is an inference pass (no backward or optimizer step) in a
        function the file calls once and no other module imports (teacher outputs before
        training), nothing runs it again, and the file trains: the pass is a sliver of the run,
        its copies hidden behind the workers. A tool whose whole run is the pass trains nothing."""
        training = self.ctx.fact(Training)
        loops = loaders.loops_of(call)
        if not loops or not training.trains or loaders.reiterated(call) is not None:
            return False
        model = self.ctx.fact(SemanticModel)
        facts = self.ctx.fact(LoopFacts)
        for loop in loops:
            function = model.function_of(loop)
            sites = model.callers.get(function, []) if function is not None else []
            if (
                not sites
                or not facts.runs_once(loop)
                or not all(facts.runs_once(site) for site in sites)
                or any(model.is_ancestor(loop, step) for step in training.step_calls)
                or self._imported_elsewhere(function)
            ):
                return False
        return True

    def _imported_elsewhere(self, function: cst.FunctionDef | None) -> bool:
        """Whether another module of the project names `function`, which may then run it again."""
        project = self.ctx.project
        return (
            function is not None
            and project is not None
            and project.named_by_importers(self.ctx.absolute_path, function.name.value)
        )

    def _generates_per_batch(self, loaders: DataLoaders, call: cst.Call) -> bool:
        """Every iteration of a loop over the loader runs autoregressive generation
        (`model.generate(...)` outside any branch or inner loop): seconds of decoding per batch
        against the microseconds a pinned copy saves."""
        model = self.ctx.fact(SemanticModel)
        loops = loaders.loops_of(call)
        return bool(loops) and all(
            any(
                isinstance(c.func, cst.Attribute)
                and c.func.attr.value == "generate"
                and self._every_iteration(model, loop, c)
                for c in model.calls
            )
            for loop in loops
        )

    @staticmethod
    def _every_iteration(model: SemanticModel, loop: Loop, node: cst.CSTNode) -> bool:
        """`node` is in the body of `loop`, outside any branch, inner loop or nested function."""
        for parent in model.ancestors(node):
            if parent is loop:
                return isinstance(loop, cst.For) and model.is_ancestor(loop.body, node)
            if isinstance(parent, _CONDITIONAL):
                return False
        return False

    @staticmethod
    def _copies_loaded_memory(loaders: DataLoaders, call: cst.Call) -> bool:
        """Some CUDA copy of the loader's batches copies the memory the loader fills, which
        `pin_memory=True` pins: not only tensors made anew on the host first (`x.float()`)."""
        return any(
            loaders.to_cuda(move) and loaders.copies_loaded_memory(loop, move)
            for loop in loaders.loops_of(call)
            for move in loaders.moves.get(loop, ())
        )

    def _on_device(self, dataset: cst.BaseExpression | None, depth: int = 0) -> bool:
        """A dataset of tensors evidently on the device: `TensorDataset(x, y)` of such tensors, a
        dataset given lists the file fills with them (`xs.append(torch.tensor(ids,
        device=device))`), or a split of one, through every value a name may hold there (the
        branches of an `if`, the arguments of a parameter). Nothing to pin, and workers cannot
        touch CUDA."""
        if isinstance(dataset, cst.Name):
            values = self._values(dataset) if depth < 4 else []
            return bool(values) and all(self._on_device(v, depth + 1) for v in values)
        if not isinstance(dataset, cst.Call):
            return False
        qualname = self.ctx.symbols.qualname(dataset.func) or ""
        if qualname in DATASET_SPLITS:
            first = next((a.value for a in dataset.args if a.keyword is None and not a.star), None)
            return self._on_device(first, depth + 1)
        tensors = self.ctx.fact(TensorFacts)
        if qualname in TENSOR_DATASETS:
            return any(tensors.kind(a.value) is Kind.TENSOR for a in dataset.args)
        return any(self._device_list(a.value, tensors) for a in dataset.args)

    def _values(self, name: cst.Name) -> list[cst.BaseExpression]:
        """Every value `name` may hold where it is read: each reaching assignment's value, its
        element of a tuple unpacked from a tuple (`xs, ys = [], []`), or the whole right-hand
        side (`train, test = random_split(...)`), and what each call of the file passes for a
        parameter. Empty when one of them is unknown."""
        model = self.ctx.fact(SemanticModel)
        values: list[cst.BaseExpression] = []
        for binding in model.reaching(name):
            value = binding.value
            if binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
                passed = [v for _, v in model.arguments(binding.node)]
                if not passed or any(v is None for v in passed):
                    return []
                values += [v for v in passed if v is not None]
            elif binding.kind is BindingKind.UNPACK and value is not None:
                index = binding.path[0] if len(binding.path) == 1 else None
                elements = value.elements if isinstance(value, cst.Tuple | cst.List) else None
                if elements is not None and index is not None and index < len(elements):
                    values.append(elements[index].value)
                else:
                    values.append(value)
            elif binding.kind is BindingKind.ASSIGN and value is not None:
                values.append(value)
            else:
                return []
        return values

    def _device_list(self, node: cst.BaseExpression, tensors: TensorFacts) -> bool:
        """A list whose every element is evidently a device tensor: written so, or an empty list
        that the file fills with `append` calls of device tensors only."""
        if not isinstance(node, cst.Name):
            return False
        values = self._values(node)
        if len(values) != 1:
            return False
        value = values[0]
        if isinstance(value, cst.ListComp):
            return tensors.kind(value.elt) is Kind.TENSOR
        if not isinstance(value, cst.List):
            return False
        if value.elements:
            return all(tensors.kind(e.value) is Kind.TENSOR for e in value.elements)
        model = self.ctx.fact(SemanticModel)
        held = model.reaching(node)
        appended = [
            call.args[0].value
            for call in model.calls
            if isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "append"
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value == node.value
            and len(call.args) == 1
            and model.reaching(call.func.value) == held
        ]
        return bool(appended) and all(tensors.kind(v) is Kind.TENSOR for v in appended)

    def _in_memory(self, dataset: cst.BaseExpression | None, depth: int = 0) -> bool:
        """A dataset already in memory as tensors: `TensorDataset(x, y)`, a list of samples, what
        `torch.load` gives (or an item of it: a cache written with `torch.save`), or a split of
        one; also through a parameter every call of the file passes one for, and through a
        function of the file whose every return of a single value gives one (`train(args,
        load_examples(...))`; a function that returns the dataset with extras under a flag,
        `return dataset, examples`, gives a tuple no loader is built on). Workers have nothing
        to load, and pinning pays only where it can overlap."""
        if depth >= _MAX_DEPTH:
            return False
        if isinstance(dataset, cst.Name):
            return self._name_in_memory(dataset, depth)
        if isinstance(dataset, cst.List | cst.ListComp):
            return True
        if isinstance(dataset, cst.Subscript):
            return self._loaded(dataset.value, depth + 1)
        if not isinstance(dataset, cst.Call):
            return False
        qualname = self.ctx.symbols.qualname(dataset.func) or ""
        if qualname in TENSOR_DATASETS or qualname in TORCH_LOADS:
            return True
        first = next((a.value for a in dataset.args if a.keyword is None and not a.star), None)
        if qualname in DATASET_SPLITS:
            return self._in_memory(first, depth + 1)
        if not self.ctx.fact(SemanticModel).callees.get(dataset):
            return self._project_dataset(dataset, WHOLE)
        whole = [v for v in self._returned(dataset) if not isinstance(v, cst.Tuple)]
        return bool(whole) and all(self._in_memory(v, depth + 1) for v in whole)

    def _project_dataset(self, call: cst.Call, position: int) -> bool:
        """`call` runs a function of another module of the project that gives an in-memory
        dataset (`ProjectIndex.returns_in_memory_dataset`): on its every single-value return
        (`WHOLE`), or as element `position` of every tuple it returns (`examples, data =
        utils.load_and_cache(...)`)."""
        project = self.ctx.project
        name = dotted(call.func)
        return (
            project is not None
            and name is not None
            and project.returns_in_memory_dataset(self.ctx.absolute_path, name, position)
        )

    def _returned(self, call: cst.Call) -> list[cst.BaseExpression]:
        """What the functions of the file that `call` may run return."""
        functions = self.ctx.fact(SemanticModel).callees.get(call, [])
        return [value for function in functions for value in returned_values(function)]

    def _loaded(self, node: cst.BaseExpression, depth: int) -> bool:
        """`node` holds what `torch.load` gave, by every binding that reaches it."""
        if isinstance(node, cst.Call):
            return (self.ctx.symbols.qualname(node.func) or "") in TORCH_LOADS
        if not isinstance(node, cst.Name) or depth >= _MAX_DEPTH:
            return False
        bindings = self.ctx.fact(SemanticModel).reaching(node)
        return bool(bindings) and all(
            b.kind is BindingKind.ASSIGN
            and b.value is not None
            and self._loaded(b.value, depth + 1)
            for b in bindings
        )

    def _name_in_memory(self, name: cst.Name, depth: int) -> bool:
        """Every binding that reaches `name` holds an in-memory dataset (the branches of an `if`):
        an assignment's value, its element of an unpacked tuple or call result, or, for a
        parameter, what every call of the file passes."""
        model = self.ctx.fact(SemanticModel)
        bindings = model.reaching(name)
        return bool(bindings) and all(self._bound_in_memory(b, depth) for b in bindings)

    def _bound_in_memory(self, binding: Binding, depth: int) -> bool:
        """One binding of a dataset's name holds an in-memory dataset."""
        if binding.kind is BindingKind.ASSIGN:
            return self._in_memory(binding.value, depth + 1)
        if binding.kind is BindingKind.UNPACK:
            if binding.value is None or len(binding.path) != 1:
                return False
            return self._element_in_memory(binding.value, binding.path[0], depth + 1)
        if binding.kind is not BindingKind.PARAM or not isinstance(binding.node, cst.Param):
            return False
        passed = [value for _, value in self.ctx.fact(SemanticModel).arguments(binding.node)]
        return bool(passed) and all(self._in_memory(v, depth + 1) for v in passed)

    def _element_in_memory(self, value: cst.BaseExpression, index: int, depth: int) -> bool:
        """Element `index` of what `value` gives, unpacked, is an in-memory dataset: of a tuple
        written out, of a split of one, of a library call known to return a `TensorDataset` there, or of every
        tuple a function of the file returns (`dataset, examples = load(..., True)`)."""
        if isinstance(value, cst.Tuple | cst.List):
            elements = value.elements
            return index < len(elements) and self._in_memory(elements[index].value, depth)
        if not isinstance(value, cst.Call):
            return False
        qualname = self.ctx.symbols.qualname(value.func) or ""
        if qualname in DATASET_SPLITS:  # `train, val = random_split(dataset, ...)`: one dataset
            first = next((a.value for a in value.args if a.keyword is None and not a.star), None)
            return self._in_memory(first, depth)
        known = _RETURNS_TENSOR_DATASET.get(qualname)
        if known is not None:
            keyword, literal, position = known
            given = next(
                (a.value for a in value.args if a.keyword and a.keyword.value == keyword), None
            )
            return (
                index == position
                and isinstance(given, cst.SimpleString)
                and given.evaluated_value == literal
            )
        if not self.ctx.fact(SemanticModel).callees.get(value):
            return self._project_dataset(value, index)
        tuples = [v for v in self._returned(value) if isinstance(v, cst.Tuple)]
        return bool(tuples) and all(self._element_in_memory(v, index, depth) for v in tuples)

    @staticmethod
    def _one_batch(args: LoaderArgs) -> bool:
        """`batch_size=len(xs)`: the whole in-memory dataset is one batch, loaded once per epoch."""
        size = args.batch_size
        return (
            isinstance(size, cst.Call)
            and isinstance(size.func, cst.Name)
            and size.func.value == "len"
        )

    def _report(self, call: cst.Call, workers: bool, pin: bool) -> None:
        guarded = self._spawn_safe(call)
        missing = []
        if workers:
            missing.append("`num_workers`")
        if pin:
            missing.append("`pin_memory`")
        message = f"`DataLoader` feeding a device loop without {' or '.join(missing)}"
        values = {}
        if workers and guarded:
            values["num_workers"] = str(WORKERS)
        if pin:
            values["pin_memory"] = "True"
        guard = (
            '; workers need the script guarded by `if __name__ == "__main__":` first'
            if workers and not guarded
            else ""
        )
        fix = None
        if values:
            added = " and ".join(f"`{name}={value}`" for name, value in values.items())
            fix = self.make_fix(
                f"Pass {added}{guard}",
                Applicability.UNSAFE,
                *keyword_edits(self.ctx, call, values),
                writes="`num_workers=`, `pin_memory=True`",
            )
        elif guard:
            fix = self.make_fix(
                'Guard the script with `if __name__ == "__main__":`, then pass `num_workers`',
                Applicability.DISPLAY_ONLY,
            )
        self.report(call, message, fix)

    def _spawn_safe(self, call: cst.Call) -> bool:
        """Whether worker processes that re-import this file (spawn) would not re-run its work:
        the loader is built in a function, and the module does no work at import. A notebook's
        kernel is never re-imported by its workers: it has no `__main__` guard to add."""
        if self.ctx.path.endswith(".ipynb"):
            return True
        return (
            self.ctx.fact(SemanticModel).function_of(call) is not None and not self._works_at_import
        )

    @cached_property
    def _works_at_import(self) -> bool:
        """Module-level loops, or calls of the file's own functions, outside a `__main__` guard."""
        callees = self.ctx.fact(SemanticModel).callees
        for statement in self.ctx.module.body:
            if isinstance(statement, cst.For | cst.While | cst.With):
                return True
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    value = small.value if isinstance(small, cst.Expr | cst.Assign) else None
                    if isinstance(value, cst.Call) and callees.get(value):
                        return True
        return False


def _has_workers(loaders: DataLoaders, args: LoaderArgs) -> bool:
    """`num_workers` given something other than a literal 0 or a command-line option the file
    defaults to 0 (`args.num_workers` of `add_argument("--num_workers", default=0)`): the loader
    pins its batches in a thread of its own, off the training thread."""
    value = args.num_workers
    return (
        value is not None
        and not (isinstance(value, cst.Integer) and value.evaluated_value == 0)
        and not loaders.zero_by_default(value)
    )
