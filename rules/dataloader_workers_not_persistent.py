"""TL117 dataloader-workers-not-persistent."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders, is_dataloader, keyword_edits
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule

_CPU_COUNTS = frozenset({"os.cpu_count", "multiprocessing.cpu_count"})
_MAX_DEPTH = 4


class DataloaderWorkersNotPersistent(Rule):
    code = "TL117"
    name = "dataloader-workers-not-persistent"
    preview = True
    summary = "`DataLoader` with worker processes, iterated every epoch, restarts them each time"
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {"`persistent_workers=True`": "1.7"}
    tokens = ("DataLoader",)
    docs = """
## What it does
Flags a `torch.utils.data.DataLoader` built once with `num_workers` evidently above zero (a
positive literal, a name bound only to one, `os.cpu_count()`, or a `min`/`max` of such) and no
`persistent_workers=` argument, when the loader is iterated again and again: a loop over its
batches inside an epoch loop (or any loop) that does not build the loader anew, directly or
through calls of the function holding the loop.

Not flagged: `num_workers` that is zero or not known to be positive (`args.workers`: a choice
the linter cannot see), `persistent_workers` given at all, `**kwargs`, loaders iterated once,
and loaders built inside the loop that iterates them (their workers start with each new loader
anyway: build the loader once instead, which is other advice).

## Why is this bad?
Without persistent workers, each `for batch in loader:` starts `num_workers` fresh processes
and tears them down when the epoch ends. Each start pays process creation, the pickling of the
dataset (and its transforms) to every worker, the workers' own imports under *spawn* (Windows,
macOS), and an empty prefetch queue: the first batches of every epoch wait. With large
datasets or heavy `__init__` state, users report this start-up falling from minutes to seconds
per epoch with `persistent_workers=True`, and the GPU stalls at every epoch boundary less.

## Example
```python
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8)
for epoch in range(epochs):
    for x, y in loader:
        ...
```

## Use instead
```python
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
for epoch in range(epochs):
    for x, y in loader:
        ...
```

## Fix safety
Unsafe, although the workers produce the same kind of batches and only their lifetime changes:

- random streams shift. Each new iterator of a non-persistent loader draws a seed for its
  workers from the loader's `generator` (or, without one, from torch's global RNG, which the
  default shuffling and the model's dropout also draw from); persistent workers draw it once.
  From the second epoch on, a seeded run shuffles (and augments) differently: the same
  distribution, other samples, so results are not reproduced bit for bit;
- the dataset is changed between epochs in the main process (`dataset.set_epoch(epoch)`,
  `train_ds.resample()`, `loader.dataset.x = ...` inside the loop; the finding says so):
  persistent workers keep their own copy of the dataset from the first epoch and never see the
  change. Samplers run in the main process, so `sampler.set_epoch(epoch)` still works.

When not to act: persistent workers hold their memory between epochs, so a training loader and
a validation loader with workers both stay alive; on a machine short of RAM, keep the smaller
loader non-persistent or give it fewer workers.

## References
- [torch.utils.data.DataLoader: `persistent_workers`](https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader)
- [torch.utils.data: multi-process data loading](https://pytorch.org/docs/stable/data.html#multi-process-data-loading)
- [PyTorch Performance Tuning Guide: asynchronous data loading](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-asynchronous-data-loading-and-augmentation)
"""
    valid = [
        # persistent workers asked for, or decided elsewhere
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=True)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4, persistent_workers=args.persist)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
        # no workers, or a count the linter cannot see
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, num_workers=0)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
        # iterated once
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, num_workers=4)
        for x in loader:
            step(x)
        """,
        # built anew every epoch: the workers start with each loader anyway
        """
        from torch.utils.data import DataLoader
        for epoch in range(10):
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for x in loader:
                step(x)
        """,
        """
        from torch.utils.data import DataLoader

        def make_loader(ds):
            return DataLoader(ds, batch_size=32, num_workers=4)

        def train(ds):
            for epoch in range(10):
                for x in make_loader(ds):
                    step(x)
        """,
        # the helper runs every epoch for the validation loader, once for the test loader
        """
        from torch.utils.data import DataLoader

        val_loader = DataLoader(val_ds, batch_size=32, persistent_workers=True, num_workers=2)
        test_loader = DataLoader(test_ds, batch_size=32, num_workers=2)

        def evaluate(model, loader):
            return [model(x) for x in loader]

        for epoch in range(10):
            evaluate(model, val_loader)
        evaluate(model, test_loader)
        """,
        # options unknown
        """
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, num_workers=4, **kwargs)
        for epoch in range(10):
            for x in loader:
                step(x)
        """,
    ]
    invalid = [
        Invalid(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for x, y in loader:
                    step(x, y)
            """,
            line=2,
            column=10,
            message="restarts its 4 worker processes",
        ),
        # the epoch loop calls the function that iterates the loader; workers from a constant
        Invalid(
            """
            import os
            import torch

            WORKERS = min(8, os.cpu_count())


            def train_one_epoch(model, loader):
                for batch in loader:
                    model(batch).sum().backward()


            def main():
                loader = torch.utils.data.DataLoader(
                    ds,
                    batch_size=32,
                    num_workers=WORKERS,
                )
                for epoch in range(10):
                    train_one_epoch(model, loader)
            """,
            fixed="""
            import os
            import torch

            WORKERS = min(8, os.cpu_count())


            def train_one_epoch(model, loader):
                for batch in loader:
                    model(batch).sum().backward()


            def main():
                loader = torch.utils.data.DataLoader(
                    ds,
                    batch_size=32,
                    num_workers=WORKERS,
                    persistent_workers=True,
                )
                for epoch in range(10):
                    train_one_epoch(model, loader)
            """,
            line=13,
        ),
        # the dataset changes between epochs: persistent workers would keep the first epoch's copy
        Invalid(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(train_ds, batch_size=32, num_workers=2)
            for epoch in range(10):
                train_ds.set_epoch(epoch)
                for x in loader:
                    step(x)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(train_ds, batch_size=32, num_workers=2, persistent_workers=True)
            for epoch in range(10):
                train_ds.set_epoch(epoch)
                for x in loader:
                    step(x)
            """,
            message="the dataset changes between epochs",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def finish(self) -> None:
        # The loaders are the calls the import table names DataLoader (`loaders.constructions`),
        # read here once the table is complete: where there is none, the loader facts (the
        # semantic model, the loops) need not be built at all. Most files naming DataLoader
        # only import it or mention it.
        if not any(is_dataloader(self.ctx, call) for call in self.calls):
            return
        loaders = self.ctx.fact(DataLoaders)
        for call, args in loaders.constructions.items():
            if args.has_star or args.persistent_workers is not None:
                continue
            workers = self._positive(args.num_workers)
            if workers is None:
                continue
            outer = loaders.reiterated(call)
            if outer is None:
                continue
            changed = self._dataset_changed(call, args.dataset, outer)
            self._report(call, workers, changed)

    def _positive(self, node: cst.BaseExpression | None, depth: int = 0) -> str | None:
        """How many workers, as written, when evidently more than zero; else None."""
        if node is None or depth > _MAX_DEPTH:
            return None
        if isinstance(node, cst.Integer):
            return node.value if node.evaluated_value > 0 else None
        if isinstance(node, cst.Name):
            value = self.ctx.fact(SemanticModel).value_of(node)
            return node.value if self._positive(value, depth + 1) is not None else None
        if not isinstance(node, cst.Call):
            return None
        if self.ctx.symbols.qualname(node.func) in _CPU_COUNTS:
            return self.ctx.code(node)
        if not isinstance(node.func, cst.Name) or node.func.value not in ("min", "max"):
            return None
        known = [self._positive(a.value, depth + 1) is not None for a in node.args if not a.star]
        if len(known) != len(node.args) and node.func.value == "min":
            return None
        positive = all(known) if node.func.value == "min" else any(known)
        return self.ctx.code(node) if positive and known else None

    def _dataset_changed(
        self, loader: cst.Call, dataset: cst.BaseExpression | None, outer: cst.CSTNode
    ) -> bool:
        """A method call or attribute store on the dataset (or `loader.dataset`) inside the loop
        that re-iterates the loader: persistent workers would not see what it changes."""
        scopes = self.ctx.fact(SemanticModel)
        loaders = self.ctx.fact(DataLoaders)
        receivers: list[cst.CSTNode] = [
            a
            for a in scopes.attributes.get("dataset", ())
            if scopes.is_ancestor(outer, a) and loader in loaders.sources(a.value)
        ]
        name = dotted(dataset) if dataset is not None else None
        if name is not None and "." not in name:
            receivers += [n for n in scopes.names.get(name, ()) if scopes.is_ancestor(outer, n)]
        return any(self._changes(receiver) for receiver in receivers)

    def _changes(self, receiver: cst.CSTNode) -> bool:
        scopes = self.ctx.fact(SemanticModel)
        attribute = scopes.parents.get(receiver)
        if not isinstance(attribute, cst.Attribute) or attribute.value is not receiver:
            return False
        user = scopes.parents.get(attribute)
        if isinstance(user, cst.Call) and user.func is attribute:
            return not attribute.attr.value.startswith("__")
        return isinstance(user, cst.AssignTarget) or (
            isinstance(user, cst.AugAssign | cst.AnnAssign) and user.target is attribute
        )

    def _report(self, call: cst.Call, workers: str, changed: bool) -> None:
        if workers == "1":
            count = "its worker process"
        elif workers.isdigit():
            count = f"its {workers} worker processes"
        else:
            count = "its worker processes"
        message = f"`DataLoader` restarts {count} every epoch; pass `persistent_workers=True`"
        title = "Pass `persistent_workers=True` (seeded runs draw other random samples)"
        if changed:
            message = (
                f"`DataLoader` restarts {count} every epoch (the dataset changes between epochs)"
            )
            title = "Pass `persistent_workers=True` (the workers would keep the first epoch's copy of the dataset)"
        fix = self.make_fix(
            title,
            Applicability.UNSAFE,
            *keyword_edits(self.ctx, call, {"persistent_workers": "True"}),
            writes="`persistent_workers=True`",
        )
        self.report(call, message, fix)
