"""TL002 under a guard by elapsed counter, and on values that are no tensors.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A learner that logs `if t_env - self.log_stats_t >= self.args.log_interval:` and sets
`self.log_stats_t = t_env` in that branch logs once per interval, not every batch: a periodic
guard by elapsed counter, as `if step % n == 0:` is. The same test whose branch never moves the
mark (a warm-up: `if step - start >= warmup:`) runs on every step after it, so it guards nothing.

A module moved with `model = model.cuda()` stays a module: what its own `generate` returns is
not taken for a device tensor by that alone (a project's `generate` returning decoded strings).
A value the code also reads `.get_loc(...)` or `.iloc` of is a pandas object (torch tensors have
neither), so its `.tolist()` copies nothing from the device.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "elapsed-counter-attribute-guard",
        {
            "learner.py": """\
import torch


class QLearner:
    def __init__(self, mac, args, logger):
        self.mac = mac
        self.args = args
        self.logger = logger
        self.optimiser = torch.optim.RMSprop(mac.parameters(), lr=args.lr)
        self.log_stats_t = -args.learner_log_interval - 1
        self.last_target_update_episode = 0

    def train(self, batch, t_env, episode_num):
        q = self.mac(batch["obs"].cuda())
        mask = batch["filled"].cuda()
        loss = ((q - batch["reward"].cuda()) ** 2 * mask).sum() / mask.sum()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        if (episode_num - self.last_target_update_episode) / self.args.target_update_interval >= 1.0:
            self.logger.log_stat("target_q", q.mean().item(), t_env)
            self.last_target_update_episode = episode_num
        if t_env - self.log_stats_t >= self.args.learner_log_interval:
            self.logger.log_stat("loss", loss.item(), t_env)
            mask_elems = mask.sum().item()
            self.logger.log_stat("q_taken_mean", (q * mask).sum().item() / mask_elems, t_env)
            self.log_stats_t = t_env
""",
        },
    ),
    Case(
        "elapsed-counter-name-guard-in-a-loop",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer, log_every):
    model.cuda()
    last_log = 0
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        if step - last_log >= log_every:
            print(loss.item())
            last_log = step
""",
        },
    ),
    Case(
        "elapsed-time-guard",
        {
            "train.py": """\
import time

import torch


def train(model, loader, optimizer):
    model.cuda()
    last_print = time.time()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        if time.time() - last_print > 30:
            print(loss.item())
            last_print = time.time()
""",
        },
    ),
    Case(
        "elapsed-test-that-never-moves-its-mark-guards-nothing",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer, warmup):
    model.cuda()
    start = 0
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        if step - start >= warmup:
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "moved-module-generate-returns-no-tensor-by-itself",
        {
            "demo.py": """\
import torch
from pipeline import Generator

model = Generator()
model = model.cuda()
for i, inputs in enumerate(loader):
    inputs = inputs.cuda()
    _, sentences = model.generate(inputs)
    print("Generated:", sentences)
    scores = model(inputs)
    print(scores.sum().item())  # TL002: scores.sum().item()
""",
            "pipeline.py": """\
import torch


class Generator(torch.nn.Module):
    def forward(self, x):
        return x * 2

    def generate(self, x):
        ids = x.argmax(-1)
        return ids, self.tokenizer.batch_decode(ids)
""",
        },
    ),
    Case(
        "pandas-index-passed-to-a-per-step-helper",
        {
            "model.py": """\
import torch


class Forecaster:
    def __init__(self, exog):
        super().__init__()
        self.exog = exog
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters())

    def _exogenous(self, cols):
        return list(set(cols.tolist()) & set(self.exog))

    def _scaled(self, values, cols):
        return values.tolist()  # TL002: values.tolist()

    def _normalized(self, windows):
        cols = windows["temporal_cols"].copy()
        chosen = self._exogenous(cols=cols)
        mask = windows["temporal"][:, cols.get_loc("available_mask")]
        return windows["temporal"][:, chosen] * mask

    def fit(self, loader):
        for batch in loader:
            windows = self._normalized(self.make_windows(batch, self.step_size))
            out = self.net(windows.cuda())
            self._scaled(out, windows)
            loss = out.mean()
            loss.backward()
            self.optimizer.step()
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_elapsed")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
