"""TL002 recall: a loader a project factory builds, whose iteration moves its batches to the GPU.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed (validate production, round 10):
efficientdet's `create_loader(...)` (a package module, re-exported by its `__init__.py`) returns,
under `if use_prefetcher:`, a `PrefetchLoader` whose `__iter__` yields each batch after
`.cuda(non_blocking=True)`; the training script builds its loaders in a helper of its own that
returns them as a tuple, and hands them to `train_epoch(model, loader, ...)`, whose `for input,
target in loader:` then iterates device batches: the loss read every step is a sync
(`ProjectIndex.returns_device_loader`; `LoopFacts._loaders_passed`, `_bound_values`).

Precision: a factory whose loader class iterates without moving anything (a plain wrapper)
leaves the batches on the host, and the loop's reads stay silent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_LOADER = """\
import torch


class PrefetchLoader:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        for images, targets in self.loader:
            yield {move}, targets


def create_loader(dataset, batch_size, use_prefetcher=True):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size)
    if use_prefetcher:
        loader = PrefetchLoader(loader)
    return loader
"""

_TRAIN = """\
import torch
from detkit import create_loader


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n


def create_loaders(args, train_set, eval_set):
    loader_train = create_loader(train_set, args.batch_size, use_prefetcher=args.prefetcher)
    loader_eval = create_loader(eval_set, args.batch_size, use_prefetcher=args.prefetcher)
    return loader_train, loader_eval


def train_epoch(model, loader, optimizer):
    losses = AverageMeter()
    model.train()
    for batch_idx, (images, targets) in enumerate(loader):
        output = model(images, targets)
        loss = output["loss"]
        losses.update(loss.item(), images.size(0)){mark}
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses.sum / losses.count


def main(args, model, train_set, eval_set):
    loader_train, loader_eval = create_loaders(args, train_set, eval_set)
    model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        train_epoch(model, loader_train, optimizer)
"""


def _project(move: str, mark: str) -> dict[str, str]:
    return {
        "detkit/__init__.py": "from .data import create_loader\n",
        "detkit/data/__init__.py": "from .loader import create_loader\n",
        "detkit/data/loader.py": _LOADER.format(move=move),
        "train.py": _TRAIN.format(mark=mark),
    }


CASES = [
    Case(
        "loader-of-a-project-factory-prefetches-to-the-gpu",
        _project("images.cuda(non_blocking=True)", "  # TL002: loss.item()"),
    ),
    Case("loader-of-a-project-factory-moves-nothing", _project("images", "")),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_project_loaders")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
