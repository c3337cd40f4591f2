"""TL118 cuda-in-dataset."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel, passed_argument
from torchlint.analysis.text import may_load_samples
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule

_CREATION = frozenset(
    "tensor as_tensor zeros ones empty full arange linspace rand randn randint randperm eye "
    "zeros_like ones_like empty_like full_like rand_like randn_like".split()
)


class CudaInDataset(Rule):
    code = "TL118"
    name = "cuda-in-dataset"
    preview = True
    gpu_only = True  # CUDA work; the loader's workers cannot run it
    summary = "CUDA work in `Dataset.__getitem__` or a `collate_fn`"
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("cuda",)
    text_tests = (may_load_samples,)
    docs = """
## What it does
Flags CUDA work in the code a `DataLoader` runs for every sample or batch: the `__getitem__`
(or `__getitems__`) of a `torch.utils.data.Dataset` subclass (of the file, or derived from a
project class that is one), a function passed as `collate_fn=` (a def, a lambda or a
`functools.partial` of one), and the file's functions those call. CUDA work is `.cuda()`,
`.to(device)` where the device is evidently a CUDA GPU (`"cuda"`, `torch.device("cuda", i)`,
or a name the file binds only to such values, `"cuda" if ... else "cpu"` included), and torch
tensor factories given such a `device=`.

Not flagged: moves to a device that is the CPU or unknown (`self.device` set from an argument),
and moves elsewhere in the dataset (`__init__` loading the whole dataset to the GPU once is a
different trade-off).

## Why is this bad?
The loader's worker processes cannot use CUDA: with `num_workers > 0` and the default *fork*
start method, the first CUDA call in a worker raises "Cannot re-initialize CUDA in forked
subprocess", so a dataset that moves its samples forces `num_workers=0`. Loading, decoding and
augmentation then run in the training process, one sample at a time, while the GPU waits;
each per-sample copy is a tiny host-to-device transfer (and a sync) instead of one copy per
batch, and pinned memory cannot be used. With *spawn*, every worker creates its own CUDA
context (hundreds of MB of GPU memory each).

When not to act: a dataset whose tensors already live on the GPU, indexed with
`num_workers=0` on purpose (small data kept on the device), where the move is a no-op.

## Example
```python
class Images(Dataset):
    def __getitem__(self, i):
        image = decode(self.paths[i])
        return image.cuda(), self.labels[i].cuda()
```

## Use instead
```python
class Images(Dataset):
    def __getitem__(self, i):
        return decode(self.paths[i]), self.labels[i]

loader = DataLoader(Images(paths, labels), batch_size=64, num_workers=4, pin_memory=True)
for images, labels in loader:
    images = images.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
```

## Fix safety
Display-only: the move belongs in the training loop, once per batch, which a codemod cannot
place for you.

## References
- [torch.utils.data: multi-process data loading, CUDA in multiprocessing](https://pytorch.org/docs/stable/data.html#multi-process-data-loading)
- [Multiprocessing best practices: CUDA in multiprocessing](https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing)
- [PyTorch Performance Tuning Guide: asynchronous data loading](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-asynchronous-data-loading-and-augmentation)
"""
    valid = [
        # a device that may be the CPU only, or that the linter cannot see
        """
        import torch
        from torch.utils.data import Dataset

        class Pairs(Dataset):
            def __init__(self, xs, device):
                self.xs = xs
                self.device = device

            def __getitem__(self, i):
                return self.xs[i].to(self.device), self.xs[i].to("cpu")
        """,
        # moved in the training loop, not in the dataset
        """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Pairs(Dataset):
            def __getitem__(self, i):
                return self.xs[i]

        for x in DataLoader(Pairs(), batch_size=8):
            model(x.cuda())
        """,
        # the whole dataset moved once, in __init__
        """
        import torch
        from torch.utils.data import Dataset

        class OnGpu(Dataset):
            def __init__(self, xs):
                self.xs = xs.cuda()

            def __getitem__(self, i):
                return self.xs[i]
        """,
        # not a torch Dataset
        """
        import torch

        class Cache:
            def __getitem__(self, key):
                return self.store[key].cuda()
        """,
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch.utils.data import Dataset

            class Images(Dataset):
                def __getitem__(self, i):
                    image = torch.load(self.paths[i])
                    return image.cuda(), self.labels[i]
            """,
            line=7,
            column=16,
            message="`.cuda()` in `Images.__getitem__`",
        ),
        # a collate function and a device string chosen at run time
        Invalid(
            """
            import torch
            from torch.utils.data import DataLoader

            device = "cuda" if torch.cuda.is_available() else "cpu"


            def collate(samples):
                batch = torch.stack(samples)
                mask = torch.ones(len(samples), device=device)
                return batch.to(device), mask


            loader = DataLoader(ds, batch_size=8, collate_fn=collate)
            """,
            line=9,
            column=12,
            message="in `collate_fn`",
            count=2,
        ),
        # a helper method called from __getitem__ of a subclass of a dataset class of the file
        Invalid(
            """
            import torch
            import torch.utils.data as data

            class Base(data.Dataset):
                pass

            class Clips(Base):
                def __getitem__(self, i):
                    return self.load(i)

                def load(self, i):
                    return self.clips[i].to(torch.device("cuda", 0))
            """,
            message="`.to(cuda)` in `Clips.__getitem__`",
        ),
    ]

    def finish(self) -> None:
        loaders = self.ctx.fact(DataLoaders)
        if not loaders.sample_code:
            return
        for call in self.ctx.fact(SemanticModel).calls:
            what = self._cuda_work(call)
            if what is None:
                continue
            where = loaders.sample_function(call)
            if where is None:
                continue
            fix = self.make_fix(
                "Return CPU tensors and move each batch in the training loop "
                "(`pin_memory=True`, `non_blocking=True`)",
                Applicability.DISPLAY_ONLY,
            )
            self.report(
                call,
                f"{what} in {where}: CUDA work in a loader fails in its workers",
                fix,
            )

    def _cuda_work(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            return "`.cuda()`" if self.ctx.symbols.qualname(func) is None else None
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            target = next((a.value for a in call.args if a.keyword is None and not a.star), None)
            device = target if target is not None else passed_argument(call, "device", None)
            return "`.to(cuda)`" if self._cuda(device) else None
        qualname = self.ctx.symbols.qualname(func) or ""
        if qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _CREATION:
            name = qualname.rsplit(".", 1)[-1]
            return (
                f"`torch.{name}(..., device=cuda)`"
                if self._cuda(passed_argument(call, "device", None))
                else None
            )
        return None

    def _cuda(self, device: cst.BaseExpression | None) -> bool:
        """A device expression that evidently names a CUDA GPU (on a machine that has one)."""
        if device is None:
            return False
        strings = self.ctx.fact(LoopFacts).device_strings(device)
        return strings is not None and any(s.startswith("cuda") for s in strings)
