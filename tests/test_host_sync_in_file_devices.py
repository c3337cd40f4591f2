"""TL002 recall in the file that holds the loop: device evidence the file gets from a helper of
another module of the project.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed: a helper of another module that
returns the tensors it was handed moved to the GPU through names it bound to the moves (`x, y =
x.cuda(), y.cuda()` then `return x, y`) moves its arguments, whether they are passed by position
or by keyword (`prepare(batch=b, args=a)`): the file that calls it runs on a GPU, and the loss
it reads with `.item()` every batch is a device tensor.

Precision: a file whose helper returns the tensors it was handed without moving them (in a
project that names no device elsewhere) stays silent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "helper-returns-moved-locals",
        {
            "util.py": """\
import torch


def prepare(batch, args=None, cuda=False):
    use_cuda = args.cuda if args is not None else cuda
    image, label = batch
    image = torch.cat((image, image), dim=1)
    if use_cuda:
        image, label = image.cuda(), label.cuda()
    return image, label
""",
            "trainer.py": """\
import torch

from util import prepare


class Trainer:
    def __init__(self, args, model, criterion, optimizer, loader, writer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.loader = loader
        self.writer = writer

    def train_epoch(self, epoch):
        self.model.train()
        for step, batch in enumerate(self.loader):
            self.optimizer.zero_grad()
            image, label = prepare(batch=batch, args=self.args)
            loss = self.criterion(self.model(image), label)
            loss.backward()
            self.optimizer.step()
            self.writer.add(step, loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "helper-returns-unmoved-locals",
        {
            "util.py": """\
import torch


def prepare(batch, args=None):
    image, label = batch
    image = torch.cat((image, image), dim=1)
    image, label = image.float(), label.long()
    return image, label
""",
            "trainer.py": """\
import torch

from util import prepare


class Trainer:
    def __init__(self, model, criterion, optimizer, loader, writer):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.loader = loader
        self.writer = writer

    def train_epoch(self, epoch):
        for step, batch in enumerate(self.loader):
            self.optimizer.zero_grad()
            image, label = prepare(batch=batch)
            loss = self.criterion(self.model(image), label)
            loss.backward()
            self.optimizer.step()
            self.writer.add(step, loss.item())
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_in_file_devices")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
