"""TL115 ddp-without-distributed-sampler."""

from __future__ import annotations

from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.distributed import Distributed
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.text import may_train
from torchlint.analysis.training import Training
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule


class DdpWithoutDistributedSampler(Rule):
    code = "TL115"
    name = "ddp-without-distributed-sampler"
    preview = True
    gpu_only = True  # the waste is one copy of the work per GPU process
    summary = "`DistributedDataParallel` trained from a `DataLoader` without a `DistributedSampler`"
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("DistributedDataParallel",)
    text_tests = (may_train,)
    docs = """
## What it does
Flags a `torch.utils.data.DataLoader` that feeds a training loop (a loop over its batches that
runs `backward()` or an optimizer step, directly or through the file's functions) in a file
that wraps a model in `torch.nn.parallel.DistributedDataParallel`, when the loader has no
`sampler=` and no `batch_sampler=` argument.

Not flagged: loaders given any sampler (a `DistributedSampler`, a sampler of your own, or an
expression choosing one); `**kwargs`; datasets that evidently stream (an `IterableDataset` of
the file or the project, `streaming=True`, a class named for streaming such as `WebDataset`:
they split the data between ranks themselves); datasets built with a rank or world size
(`ShardedDataset(path, rank=rank, world_size=world_size)`); files that split a dataset between
ranks by hand (`split_dataset_by_node`, `.shard(...)`); files that use a framework that injects
a distributed sampler itself (Lightning, accelerate's `prepare`, the Hugging Face `Trainer`,
DeepSpeed); loaders that only feed evaluation.

## Why is this bad?
DDP runs one process per GPU and averages their gradients; it does not split the data. A
plain `DataLoader` in each process walks the whole dataset, so every rank computes the same
(or, with `shuffle=True` and per-rank seeds, overlapping) batches: N GPUs do the work of one,
each epoch is N times longer than it needs to be, and the effective batch size and learning
rate schedule are not what the script assumes. `DistributedSampler` gives each rank a disjoint
1/N of the indices.

When not to act: each process deliberately reads different data some other way (files chosen
by rank inside the dataset's code, which the linter cannot see), or the script runs DDP with a
world size of one only.

## Example
```python
model = DistributedDataParallel(model, device_ids=[local_rank])
loader = DataLoader(dataset, batch_size=64, shuffle=True)
for epoch in range(epochs):
    for x, y in loader:
        ...
```

## Use instead
```python
model = DistributedDataParallel(model, device_ids=[local_rank])
sampler = DistributedSampler(dataset, shuffle=True)
loader = DataLoader(dataset, batch_size=64, sampler=sampler)
for epoch in range(epochs):
    sampler.set_epoch(epoch)  # a different shuffle every epoch
    for x, y in loader:
        ...
```

## Fix safety
Display-only: the sampler replaces `shuffle=True`, needs `set_epoch(epoch)` each epoch to
reshuffle, pads the last batch to equal lengths across ranks (`drop_last` decides), and changes
the number of steps per epoch, which schedulers and logging may count on.

## References
- [torch.utils.data.distributed.DistributedSampler](https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler)
- [Getting Started with Distributed Data Parallel](https://pytorch.org/tutorials/intermediate/ddp_tutorial.html)
- [DistributedDataParallel](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)
- [PyTorch Performance Tuning Guide: distributed training](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#distributed-optimizations)
"""
    _SETUP = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.utils.data import DataLoader

        model = DDP(model.cuda(), device_ids=[rank])
    """
    valid = [
        # a DistributedSampler, or any sampler chosen by the script
        _SETUP
        + """
        sampler = torch.utils.data.distributed.DistributedSampler(ds)
        loader = DataLoader(ds, batch_size=32, sampler=sampler)
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
        """,
        _SETUP
        + """
        loader = DataLoader(ds, batch_size=32, sampler=sampler if distributed else None)
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
        """,
        # an IterableDataset splits its data between ranks itself
        _SETUP
        + """
        class Shards(torch.utils.data.IterableDataset):
            def __iter__(self):
                yield from read_shard()

        loader = DataLoader(Shards(), batch_size=32)
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
        """,
        # the dataset is built for this rank
        _SETUP
        + """
        ds = TokenFiles(path, rank=rank, world_size=world_size)
        loader = DataLoader(ds, batch_size=32)
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
        """,
        # a subset of indices chosen for this rank
        _SETUP
        + """
        part = torch.arange(len(ds))[local_rank::world]
        loader = DataLoader(torch.utils.data.Subset(ds, part), batch_size=32)
        for x, y in loader:
            loss_fn(model(x.cuda()), y.cuda()).backward()
        """,
        # only evaluation reads this loader
        _SETUP
        + """
        val_loader = DataLoader(val_ds, batch_size=32)
        with torch.no_grad():
            for x, y in val_loader:
                print(model(x.cuda()).argmax(1).eq(y.cuda()).sum())
        """,
        # no DDP in this file
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds, batch_size=32, shuffle=True)
        for x, y in loader:
            loss_fn(model(x), y).backward()
        """,
        # accelerate's prepare() shards the loader
        _SETUP
        + """
        from accelerate import Accelerator
        accelerator = Accelerator()
        loader = accelerator.prepare(DataLoader(ds, batch_size=32))
        for x, y in loader:
            accelerator.backward(loss_fn(model(x), y))
        """,
    ]
    invalid = [
        Invalid(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader

            model = DDP(model.cuda(), device_ids=[rank])
            loader = DataLoader(ds, batch_size=32, shuffle=True)
            for epoch in range(10):
                for x, y in loader:
                    loss = loss_fn(model(x.cuda()), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            line=6,
            column=10,
            message="every process trains on the same batches",
        ),
        # the loop is in a function called with the loader
        Invalid(
            """
            import torch
            import torch.distributed as dist


            def train_epoch(model, loader, optimizer):
                for batch in loader:
                    optimizer.zero_grad()
                    model(**batch).loss.backward()
                    optimizer.step()


            def main(rank):
                dist.init_process_group("nccl")
                model = torch.nn.parallel.DistributedDataParallel(build().to(rank), device_ids=[rank])
                train_loader = torch.utils.data.DataLoader(train_set, batch_size=8, num_workers=4)
                for epoch in range(3):
                    train_epoch(model, train_loader, optimizer)
            """,
            line=15,
        ),
    ]

    def finish(self) -> None:
        loaders = self.ctx.fact(DataLoaders)
        if not loaders.constructions:
            return
        distributed = self.ctx.fact(Distributed)
        if not distributed.wraps or distributed.framework or distributed.shards_by_hand:
            return
        training = self.ctx.fact(Training)
        loops = self.ctx.fact(LoopFacts)
        trained = {loops.per_batch_loop(c, every_iteration=False) for c in training.step_calls}
        for call, args in loaders.constructions.items():
            if args.has_star or args.sampler is not None or args.batch_sampler is not None:
                continue
            if not any(loop in trained for loop in loaders.loops_of(call)):
                continue
            if loaders.streams(call) or distributed.names_ranks(args.dataset):
                continue
            fix = self.make_fix(
                "Pass `sampler=DistributedSampler(dataset)` (instead of `shuffle=True`) and call "
                "`sampler.set_epoch(epoch)` every epoch",
                Applicability.DISPLAY_ONLY,
            )
            self.report(
                call,
                "DDP training `DataLoader` without a `DistributedSampler`: "
                "every process trains on the same batches",
                fix,
            )
