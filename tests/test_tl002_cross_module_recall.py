"""TL002 recall on production code (issue 24): a per-batch host read that happens in another
module of the project, behind a value the calling file only holds. Each case is an invented
multi-file project checked once by the installed `torchlint` (the scheme of `project_cases.py`):
a line ending in `# TL002: text` expects a finding there; every other TL002 finding is a
failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_AVERAGER = """\
from collections import defaultdict


def running_mean():
    total = defaultdict(float)
    count = defaultdict(int)

    def update(metrics):
        for key, value in metrics.items():
            total[key] += float(value)
            count[key] += 1
        return {key: total[key] / count[key] for key in total}

    return update


def counter():
    seen = []

    def note(metrics):
        seen.append(len(metrics))
        return len(seen)

    return note
"""

CASES = [
    # A factory of another module returns a closure that turns every value it is handed into
    # a Python float: calling the closure with the step's device losses syncs at the call.
    Case(
        "closure-of-a-factory-reads-its-argument",
        files={
            "utils.py": _AVERAGER,
            "train.py": """\
import torch
from utils import running_mean


def train(model, loader, opt):
    averager = running_mean()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        logs = averager({"loss": loss})  # TL002: averager({"loss": loss})
""",
        },
        rules=("TL002",),
    ),
    # The same closure handed host numbers (`loss.item()` already read), or a closure that
    # only counts what it is given: no sync at the call.
    Case(
        "closure-of-a-factory-handed-host-values",
        files={
            "utils.py": _AVERAGER,
            "train.py": """\
import torch
from utils import counter, running_mean


def train(model, loader, opt):
    averager = running_mean()
    notes = counter()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        logs = averager({"loss": 1.0})
        n = notes({"loss": loss})
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl002_cross_module_recall")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_cross_module_recall(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
