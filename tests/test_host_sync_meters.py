"""TL002 recall, round 5: values handed every step to another module's helper that reads them on
the host (a metric logger's `update`), where the caller's value reaches the helper through a container
of tensors.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts; every other TL002 finding is a failure.

The classes: a dict whose items the step sums into what it backpropagates
(`total = sum(losses[k] * w[k] for k in losses)`, `total.backward()`) holds tensors; a dict
comprehension over a dict of tensors (`{k: v * w[k] for k, v in losses.items()}`), one of its
items (`losses["err"]`) and the sum of its values hold tensors too; so does what a helper of
another module hands back unchanged on one of its paths (`reduce_dict(losses)`, which returns
the dict itself on one GPU: the project index's `returns_argument`). A module-level lambda that
copies its parameter to the host (`to_np = lambda x: x.detach().cpu().numpy()`) syncs where it is
called, as a helper of another module does. A helper that turns each value of the dict into a
number (`as_floats`: `{k: float(v) ...}`) syncs at its call; the host numbers it hands back do not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_LOGGER = """\
import torch


class MetricLogger:
    def __init__(self):
        self.sums = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.sums[k] = self.sums.get(k, 0.0) + v

"""

CASES = [
    Case(
        "comprehension-item-and-sum-of-a-dict-of-losses",
        {
            "meters.py": _LOGGER,
            "train.py": """\
import torch

from meters import MetricLogger


def train(model, criterion, loader, opt, weights):
    logger = MetricLogger()
    for x, y in loader:
        losses = criterion(model(x.cuda()), y.cuda())
        total = sum(losses[k] * weights[k] for k in losses.keys() if k in weights)
        total.backward()
        opt.step()
        scaled = {k: v * weights[k] for k, v in losses.items() if k in weights}
        logger.update(**scaled)  # TL002: logger.update(**scaled)
        logger.update(err=losses["err"])  # TL002: logger.update(err=losses["err"])
        logger.update(loss=sum(scaled.values()))  # TL002: logger.update(loss=sum(scaled.values()))
""",
        },
    ),
    Case(
        "a-dict-another-module-hands-back-on-one-gpu",
        {
            "meters.py": _LOGGER,
            "dist_utils.py": """\
import torch
import torch.distributed as dist


def reduce_dict(values):
    if not dist.is_initialized() or dist.get_world_size() < 2:
        return values
    with torch.no_grad():
        stacked = torch.stack(list(values.values()))
        dist.all_reduce(stacked)
        return dict(zip(values, stacked / dist.get_world_size()))


def as_floats(values):
    return {k: float(v) for k, v in values.items()}
""",
            "train.py": """\
import torch

import dist_utils
from meters import MetricLogger


def train(model, criterion, loader, opt, weights):
    logger = MetricLogger()
    for x, y in loader:
        losses = criterion(model(x.cuda()), y.cuda())
        total = sum(losses[k] * weights[k] for k in losses.keys() if k in weights)
        total.backward()
        opt.step()
        reduced = dist_utils.reduce_dict(losses)
        logger.update(**{k: v for k, v in reduced.items()})  # TL002: logger.update(**{k: v for k, v in reduced.items()})
        logged = dist_utils.as_floats(losses)  # TL002: dist_utils.as_floats(losses)
        logger.update(**logged)
""",
        },
    ),
    Case(
        "comprehension-of-host-numbers-stays-silent",
        {
            "meters.py": _LOGGER,
            "train.py": """\
import torch

from meters import MetricLogger


def train(model, loader, opt, weights):
    logger = MetricLogger()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        counts = {"seen": len(x), "steps": 1}
        logger.update(**{k: v * 2 for k, v in counts.items()})
        logger.update(seen=counts["seen"])
""",
        },
    ),
    Case(
        "a-lambda-helper-that-copies-to-the-host",
        {
            "train.py": """\
import torch

to_np = lambda x: x.detach().cpu().numpy()
size = lambda x: x.shape[0]


def train(model, loader, opt):
    losses, norms, sizes = [], [], []
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(to_np(loss))  # TL002: to_np(loss)
        norms.append(to_np(norm))  # TL002: to_np(norm)
        sizes.append(size(x))
    return losses, norms, sizes
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [Case(c.id, c.files, rules=("TL002",)) for c in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_meters")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
