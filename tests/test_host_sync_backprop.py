"""TL002 on a loss whose kind the file cannot see (`loss = losses[cfg.kind](model, x)`): it is a
tensor because the step backpropagates it, however it does (`loss.backward()`,
`scaler.scale(loss).backward()`, `accelerator.backward(loss)`); the backward calls and what they
carry are `Backprop`'s, the facts TL104 and TL105 ask too.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown


def _train(backward: str) -> str:
    return f"""\
import torch


def train(cfg, model, losses, loader, opt, scaler, accelerator):
    model.cuda()
    for x, y in loader:
        loss = losses[cfg.kind](model, x.cuda(), y.cuda())
        {backward}
        opt.step()
        total = float(loss)  # TL002: float(loss)
        print(total)
"""


CASES = [
    Case("loss-backward", {"train.py": _train("loss.backward()")}),
    Case("scaled-loss-backward", {"train.py": _train("scaler.scale(loss).backward()")}),
    Case("accelerator-backward", {"train.py": _train("accelerator.backward(loss / 2)")}),
    Case(
        "name-rebound-to-floats-after-backward",
        {
            "train.py": """\
import torch


def train(cfg, model, losses, loader, opt, accelerator):
    model.cuda()
    for x, y in loader:
        loss = losses[cfg.kind](model, x.cuda(), y.cuda())
        accelerator.backward(loss)
        opt.step()
        logs = {"loss": 0.5}
        for key, loss in logs.items():
            print(f"{key}: {loss:.3f}")
""",
        },
    ),
    Case(
        "not-backpropagated",
        {"train.py": _train("opt.zero_grad()").replace("  # TL002: float(loss)", "")},
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_backprop")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
