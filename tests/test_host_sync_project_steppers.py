"""TL002 recall across modules: a function that steps an optimizer through a project callable.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed (dreamerv3's `WorldModel._train`):
a method that hands its loss to `self._model_opt(loss, params)`, where `self._model_opt` holds an
instance of a project class (another module's) whose `__call__` runs `backward()` and the
optimizer's `step()`, is a training step, as one that runs them in its own body is: another
module runs it once per update, so what it reads on the host is read every step. The same holds
for `self.learner.step(loss)` where the project class's `step` backpropagates its argument.

Precision: a method that calls a project class whose `__call__` trains nothing (a statistics
helper) is no training step, and with no caller in its file its reads stay silent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_TOOLS = """\
import torch


class Optimizer:
    def __init__(self, params, lr):
        self._opt = torch.optim.Adam(params, lr=lr)

    def __call__(self, loss, params):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
        return {}


class Stepper:
    def __init__(self, params, lr):
        self._opt = torch.optim.SGD(params, lr=lr)

    def step(self, loss):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()


class Stats:
    def __call__(self, x):
        return {"mean": x.mean()}
"""

CASES = [
    Case(
        "optimizer-callable-of-another-module",
        {
            "tools.py": _TOOLS,
            "models.py": """\
import torch
from torch import nn

import tools


class WorldModel(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self._model_opt = tools.Optimizer(self.parameters(), lr)
        self._stats = tools.Stats()

    def _train(self, data):
        embed = self.encoder(data.to("cuda"))
        loss = embed.pow(2).mean()
        metrics = self._model_opt(loss, self.parameters())
        metrics["loss"] = loss.item()  # TL002: loss.item()
        return metrics

    def _score(self, data):
        embed = self.encoder(data.to("cuda"))
        stats = self._stats(embed)
        stats["norm"] = embed.norm().item()
        return stats
""",
            "dreamer.py": """\
from models import WorldModel


class Dreamer:
    def __init__(self, lr, dataset):
        self._wm = WorldModel(lr)
        self._dataset = dataset

    def __call__(self, steps):
        for _ in range(steps):
            self._wm._train(next(self._dataset))
""",
        },
    ),
    Case(
        "stepper-of-another-module-backpropagates",
        {
            "tools.py": _TOOLS,
            "ppo.py": """\
import torch
from torch import nn

from tools import Stepper


class PPO:
    def __init__(self, policy, lr):
        self.policy = policy.to("cuda")
        self.learner = Stepper(policy.parameters(), lr)

    def _update(self, batch):
        loss = self.policy(batch.obs.to("cuda")).mean()
        self.learner.step(loss)
        return {"loss": loss.item()}  # TL002: loss.item()

    def learn(self, batches):
        return [self._update(batch) for batch in batches]
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_project_steppers")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
