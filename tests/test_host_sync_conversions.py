"""TL002 recall, round 6: a helper of another module that reads what it is given on the host
through a Python conversion rather than a tensor method: `math.sqrt` of a sum it accumulated from
a parameter (`total += p.grad.norm() ** 2` over `params`), or `float(v)` of each value of a dict
it is handed (`for k, v in metrics.items()`). The project index's "reads its arguments on the
host" fact (`syncs_arguments`) counts these, so the caller passing device tensors every step is
where the finding goes.

A conversion of a parameter itself (`float(n)`, `int(count)`) is no such read: such a parameter is
mostly a host number (a batch size beside the value the helper keeps), and the fact is said of the
function, not of each parameter, so counting it would flag every tensor handed alongside.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts; every other TL002 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "a-grad-norm-helper-that-ends-in-math-sqrt",
        {
            "utils.py": """\
import math


def grad_norm(params):
    total = 0
    for p in params:
        if p.grad is None:
            continue
        total += p.grad.norm() ** 2
    return math.sqrt(total)
""",
            "train.py": """\
import torch

from utils import grad_norm


def train(model, loader, opt):
    norms = []
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        norms.append(grad_norm(model.parameters()))  # TL002: grad_norm(model.parameters())
        opt.step()
    return norms
""",
        },
    ),
    Case(
        "an-averager-that-floats-every-value-of-a-dict",
        {
            "meters.py": """\
class Averager:
    def __init__(self):
        self.sums = {}

    def update(self, metrics, weight=1):
        for key, value in metrics.items():
            self.sums[key] = self.sums.get(key, 0.0) + weight * float(value)
""",
            "train.py": """\
import torch

from meters import Averager


def train(model, loader, opt):
    averager = Averager()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        averager.update({"loss": loss})  # TL002: averager.update({"loss": loss})
""",
        },
    ),
    Case(
        "a-conversion-of-a-count-beside-a-kept-tensor-stays-silent",
        {
            "meters.py": """\
import math


class History:
    def __init__(self):
        self.values = []
        self.count = 0

    def update(self, value, n=1):
        self.values.append(value)
        self.count += int(n)
        self.scale = math.sqrt(float(n))
""",
            "train.py": """\
import torch

from meters import History


def train(model, loader, opt):
    history = History()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.update(loss.detach(), len(x))
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [Case(c.id, c.files, rules=("TL002",)) for c in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_conversions")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
