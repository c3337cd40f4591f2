"""TL002 recall on production code (round 10): per-step host reads that only the project's
structure shows to be per step. Each case is an invented multi-file project checked once by the
installed `torchlint` (the scheme of `project_cases.py`): a line ending in `# TL002: text`
expects a finding there; every other TL002 finding is a failure.

- a loop that fetches its batch with an annotated assignment (`batch: Batch = next(it)`);
- a module's registered buffer (`self.register_buffer("ema", ...)`): a tensor on the module's
  device, wherever its class reads it;
- a helper of another module that a training step (a method running `backward()` and the
  optimizer's `step()` itself) calls in its own body, outside any periodic guard;
- a device tensor's element used as a slice bound per sample (`values[i, : ends[i]]` in a
  comprehension), which Python reads on the host (`__index__`) once per element.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "annotated-batch-fetch",
        {
            "rollouts.py": """\
import torch
from torch.utils.data import DataLoader


def forever(loader):
    while True:
        yield from loader


class Collector:
    def __init__(self, model, prompts, seeds):
        self.model = model.cuda()
        self.prompt_iterator = forever(DataLoader(prompts, batch_size=8))
        self.seeds = iter(seeds)

    def collect(self, n):
        stats = []
        while len(stats) < n:
            batch: dict = next(self.prompt_iterator)
            with torch.no_grad():
                scores = self.model(batch["ids"].cuda())
            stats.append(scores.mean().item())  # TL002: scores.mean().item()
        return stats

    def probe(self, n):
        found = []
        while len(found) < n:
            seed: int = next(self.seeds)
            found.append(self.model(torch.full((1, 4), seed).cuda()).sum().item())
        return found
""",
        },
        rules=("TL002",),
    ),
    Case(
        "registered-buffer-read-every-update",
        {
            "agent.py": """\
import torch
from torch import nn

to_np = lambda x: x.detach().cpu().numpy()


class Actor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.register_buffer("ema", torch.zeros(2))
        self.register_buffer("mask", None)
        self.scale = cfg.scale
        self.opt = torch.optim.Adam(self.net.parameters())
        print(float(self.ema[0]))

    def update(self, obs):
        loss = self.net(obs).mean() * float(self.scale)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        metrics = {"loss": loss.detach()}
        metrics["ema_lo"] = to_np(self.ema[0])  # TL002: to_np(self.ema[0])
        metrics["ema_hi"] = float(self.ema[1])  # TL002: float(self.ema[1])
        return metrics
""",
            "train.py": """\
import torch

from agent import Actor


def main(cfg, env):
    actor = Actor(cfg).cuda()
    obs = env.reset()
    for step in range(cfg.steps):
        actor.update(obs.cuda())
        obs = env.step()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "helper-a-training-step-of-another-module-calls",
        {
            "tools.py": """\
import torch

to_np = lambda x: x.detach().cpu().numpy()


def tensorstats(tensor, prefix):
    return {
        f"{prefix}_mean": to_np(torch.mean(tensor)),  # TL002: to_np(torch.mean(tensor))
        f"{prefix}_max": to_np(torch.max(tensor)),  # TL002: to_np(torch.max(tensor))
    }


def histogram(tensor):
    return to_np(torch.histc(tensor))


def describe(tensor):
    return to_np(torch.std(tensor))


class Optimizer:
    def __init__(self, params, lr):
        self._opt = torch.optim.Adam(params, lr=lr)

    def __call__(self, loss):
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
""",
            "models.py": """\
import torch
from torch import nn

import tools


class Behavior(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(8, 2)
        self._actor_opt = tools.Optimizer(self.actor.parameters(), 1e-4)
        self.updates = 0
        self.summary = tools.describe(torch.zeros(3, device="cuda"))

    def train_step(self, feat):
        action = self.actor(feat)
        loss = -action.mean()
        metrics = {}
        metrics.update(tools.tensorstats(action, "action"))
        if self.updates % 1000 == 0:
            metrics["hist"] = tools.histogram(action)
        self._actor_opt(loss)
        self.updates += 1
        return metrics
""",
            "main.py": """\
import torch

from models import Behavior


def run(replay, steps):
    behavior = Behavior().cuda()
    for _ in range(steps):
        behavior.train_step(replay.sample().cuda())
""",
        },
        rules=("TL002",),
    ),
    Case(
        "slice-bounds-read-per-sample",
        {
            "rollout.py": """\
import torch


def collect(model, loader):
    out = []
    for batch in loader:
        ids = batch["ids"].cuda()
        mask = batch["mask"].cuda()
        with torch.no_grad():
            values = model(ids)
        ends = mask.sum(1) + 1
        lengths = batch["lengths"]
        out += [values[i, 1 : ends[i]] for i in range(len(ids))]  # TL002: ends[i]
        out += [values[i, : lengths[i]] for i in range(len(ids))]
        out.append(values[:, : ends.max()])
        for i in range(len(ids)):
            pad = torch.sum(mask[i])
            out.append(values[i, :pad])  # TL002: pad
            out.append(values[i, -2:])
        for k in torch.nonzero(ends > 2).flatten():
            out.append(values[k : k + 1, : ends[k]])  # TL002: k : k + 1
    return out
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl002_xmod_recall")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_xmod_recall(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
