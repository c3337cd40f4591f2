"""TL002 under periodic guards by elapsed time or counter that the loop facts missed.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A trainer that saves its latest checkpoint "every N seconds" often writes the test as the number
of whole intervals passed so far against a count of saves made, and bumps the count in the
branch: the branch then runs once per interval, not every batch, as `if step % n == 0:` does.
The same test whose branch leaves the count alone runs on every batch once the first interval
has passed, so it guards nothing.

An elapsed-time test joined to another with `and` (`if rank == 0 and now - last > every:`) whose
branch moves the mark (`last = now`) is as periodic as the test alone: the branch runs at most
once per interval.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "checkpoint-copied-once-per-counted-interval",
        {
            "train.py": """\
import torch


def model_state_to_cpu(state):
    out = type(state)()
    for key, val in state.items():
        out[key] = val.cpu()
    return out


def train_one_epoch(model, optimizer, loader, pbar, interval, path):
    model.cuda()
    saves = 1
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        elapsed = pbar.format_dict["elapsed"]
        if elapsed // interval >= saves:
            torch.save(model_state_to_cpu(model.state_dict()), path)
            saves += 1
""",
        },
    ),
    Case(
        "counted-interval-on-an-attribute-with-plain-assignment",
        {
            "trainer.py": """\
import time

import torch


class Trainer:
    def __init__(self, model, optimizer, interval):
        self.model = model.cuda()
        self.optimizer = optimizer
        self.interval = interval
        self.start = time.time()
        self.reports = 0

    def fit(self, loader):
        for x, y in loader:
            loss = self.model(x.cuda(), y.cuda())
            loss.backward()
            self.optimizer.step()
            if (time.time() - self.start) // self.interval >= self.reports:
                print(loss.item())
                self.reports = self.reports + 1
""",
        },
    ),
    Case(
        "elapsed-time-guard-joined-with-and",
        {
            "train.py": """\
import time

import torch


def train(model, loader, optimizer, rank, every):
    model.cuda()
    last_logging = time.time()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        current_time = time.time()
        if rank == 0 and current_time - last_logging > every:
            print(loss.item())
            last_logging = current_time
""",
        },
    ),
    Case(
        "elapsed-time-joined-with-or-guards-nothing",
        {
            "train.py": """\
import time

import torch


def train(model, loader, optimizer, verbose, every):
    model.cuda()
    last_logging = time.time()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        current_time = time.time()
        if verbose or current_time - last_logging > every:
            print(loss.item())  # TL002: loss.item()
            last_logging = current_time
""",
        },
    ),
    Case(
        "counted-interval-whose-count-never-moves-guards-nothing",
        {
            "train.py": """\
import torch


def train(model, optimizer, loader, pbar, interval):
    model.cuda()
    first = 1
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        if pbar.format_dict["elapsed"] // interval >= first:
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_counted")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
