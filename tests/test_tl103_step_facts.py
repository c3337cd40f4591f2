"""TL103 asks the project's per-step facts where an allocation runs, not the names of functions.

Production classes: an allocation under a periodic guard inside a framework hook (the guard
written as a framework helper, or as an early `return`) runs now and then, not every step, and
one under `if self.total is None: self.total = ...` runs once per object; a
function named like a step (`test_step`) that only a module's own `__main__` runs is a one-off
smoke test. Each case is an invented project checked by the installed `torchlint`.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

CASES = [
    Case(
        "mmengine-hook-under-a-helper-guard",
        rules=("TL103",),
        files={
            "hooks.py": """\
import torch
from mmengine.hooks import Hook


class ShowGrid(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if self.every_n_train_iters(runner, self.interval):
            grid = torch.zeros(3, 64, 64).cuda()
            runner.visualizer.add_image("grid", grid)


class ShowLast(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if not self.every_n_inner_iters(batch_idx, self.interval):
            return
        canvas = torch.ones(3, 64, 64).to(runner.model.device)
        runner.visualizer.add_image("canvas", canvas)


class Stamp(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        stamp = torch.zeros(1).cuda()  # TL103: torch.zeros(1).cuda()
        runner.message_hub.update_info("stamp", stamp)
""",
        },
    ),
    Case(
        "own-callback-hook-with-an-early-return",
        rules=("TL103",),
        files={
            "callbacks.py": """\
import torch


class ImageLogger:
    def after_train_step(self, trainer):
        if trainer.global_step % self.every != 0:
            return
        self.log_grid(trainer)

    def log_grid(self, trainer):
        grid = torch.zeros(3, 64, 64).cuda()
        trainer.log_image(grid)

    def on_step(self, trainer):
        if trainer.global_step % self.every == 0:
            self.log_grid(trainer)
""",
            "trainer.py": """\
import torch
from callbacks import ImageLogger


class Trainer:
    def fit(self, model, loader, opt):
        logger = ImageLogger()
        for x, y in loader:
            model(x.cuda()).mean().backward()
            opt.step()
            logger.after_train_step(self)
""",
        },
    ),
    Case(
        "test-step-smoke-test-run-by-main",
        rules=("TL103",),
        files={
            "layers/__init__.py": "from .rnn import Cell\n",
            "layers/rnn.py": """\
import torch
from torch import nn


class Cell(nn.Module):
    def step(self, x, state):
        return self.cell(x, state)


def test_step():
    cell = Cell().cuda()
    state = torch.zeros(2, 16).cuda()
    for t in range(8):
        state = cell.step(torch.randn(2, 4).cuda(), state)
    print(state.shape)


def timing_step():
    x = torch.randn(64, 4).cuda()
    print(Cell().cuda().step(x, x).shape)


if __name__ == "__main__":
    test_step()
    for _ in range(10):
        timing_step()
""",
        },
    ),
    Case(
        "lazy-init-of-a-running-sum-runs-once",
        rules=("TL103",),
        files={
            "metric.py": """\
import torch


class Mean:
    def __init__(self):
        self.total = None

    def update(self, y):
        if self.total is None:
            self.total = torch.zeros(y.shape[1]).to(y.device)
        self.total += y.sum(0)

    def weigh(self, y, weights=None):
        if weights is None:
            weights = torch.ones(y.shape[0]).to(y.device)  # TL103: torch.ones(y.shape[0]).to(y.device)
        return (weights[:, None] * y).sum(0)


def train(model, loader, opt):
    meter = Mean()
    for x, y in loader:
        out = model(x.cuda())
        out.mean().backward()
        opt.step()
        meter.update(out.detach())
        meter.weigh(out.detach())
""",
        },
    ),
    Case(
        "step-function-run-per-batch-elsewhere-is-flagged",
        rules=("TL103",),
        files={
            "algo.py": """\
import torch


def update_step(model, batch, opt):
    mask = torch.ones(batch.shape[0]).cuda()  # TL103: torch.ones(batch.shape[0]).cuda()
    (model(batch) * mask).mean().backward()
    opt.step()
""",
            "train.py": """\
from algo import update_step

for batch in loader:
    update_step(model, batch.cuda(), opt)
""",
        },
    ),
    Case(
        "step-function-whose-callers-are-unknown-is-flagged",
        rules=("TL103",),
        files={
            "solver.py": """\
import torch


class Solver:
    def train_step(self, batch):
        noise = torch.randn(batch.shape).cuda()  # TL103: torch.randn(batch.shape).cuda()
        return self.model(batch + noise).mean()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl103_step_facts"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl103_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
