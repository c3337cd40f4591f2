"""TL002 recall: a loader that another name of the function holds, prepared for the device.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed (a trainer that resumes mid-epoch):
the loop runs over a plain name bound to the prepared loader or to a loader skipping its first
batches (`current = skipped if resumed else loader`), so the batches arrive on the device as the
prepared loader's do, and a logging `.item()` of a loss computed from them waits every step.

Precision: an alias of a loader nobody prepared, whose batches stay on the host, stays silent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "alias-of-a-prepared-loader",
        {
            "trainer.py": """\
import torch
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

    def train(self, dataset, epochs, skipped):
        loader = torch.utils.data.DataLoader(dataset, batch_size=32)
        loader, self.scheduler = self.accelerator.prepare(loader, self.scheduler)
        for epoch in range(epochs):
            if skipped:
                resumed = self.accelerator.skip_first_batches(loader, num_batches=skipped)
                current = resumed
            else:
                current = loader
            for batch in current:
                loss = self.model(batch["x"], batch["y"])
                self.accelerator.backward(loss)
                self.optimizer.step()
                self.accelerator.log({"loss": loss.item()})  # TL002: loss.item()
""",
        },
    ),
    Case(
        "alias-of-a-host-loader",
        {
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train(self, dataset, epochs):
        loader = torch.utils.data.DataLoader(dataset, batch_size=32)
        for epoch in range(epochs):
            current = loader
            for batch in current:
                loss = self.model(batch["x"], batch["y"])
                loss.backward()
                self.optimizer.step()
                print(loss.item())
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("device_loader_aliases")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_loader_alias_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
