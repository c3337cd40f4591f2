"""TL002 recall on production code: per-step syncs that a held-out measurement missed.

Each case is a small project of its own (a folder with a `[tool.torchlint]` table), all checked
once by the installed `torchlint` command and marked as in `test_production_cases.py`: a line
ending in `# TL002: text` expects a finding on that line at the column where `text` starts, and
every other TL002 finding in the case's files is a failure.

The classes: a rank guard is not a periodic guard (it runs every step on that rank); a
per-sample evaluation loop over a dataset by index is a per-batch loop; a project helper in
another module that returns a number read from its tensor arguments is a sync where it is
called; a subclass method that a base class's loop calls every batch is per step even when its
file imports no torch; `add_scalar` of a device loss every iteration copies it to the host, in
the loop or in a logging helper of another module.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    # --- 1. a rank guard runs every step on that rank ---
    Case(
        "rank-guard-is-not-periodic",
        {
            "dist_utils.py": """\
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0
""",
            "train.py": """\
import torch
import torch.distributed as dist

from dist_utils import is_main_process


def train(model, loader, opt, rank, local_rank):
    model.cuda()
    single_rank = 0
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        opt.step()
        if rank == 0:
            print(loss.item())  # TL002: loss.item()
        if is_main_process():
            print(loss.item())  # TL002: loss.item()
        if dist.get_rank() == 0:
            print(loss.item())  # TL002: loss.item()
        if local_rank in [-1, 0]:
            print(loss.item())  # TL002: loss.item()
        if single_rank == 0:
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    # --- 2. a per-sample evaluation loop over a dataset by index ---
    Case(
        "per-sample-loop-over-a-dataset",
        {
            "evaluate.py": """\
import torch


@torch.no_grad()
def evaluate(model, val_dataset):
    model.eval()
    scores = []
    for i in range(len(val_dataset)):
        image, target = val_dataset[i]
        out = model(image[None].cuda())
        scores.append(out.cpu())  # TL002: out.cpu()
    for i in range(len(scores)):
        print(scores[i].item())
    return scores
""",
        },
    ),
    # --- 3. a helper in another module that returns a number read from its tensor arguments ---
    Case(
        "number-returning-helper-in-another-module",
        {
            "metrics/__init__.py": "",
            "metrics/accuracy.py": """\
def accuracy_mnist(scores, targets):
    acc = (scores.argmax(dim=1) == targets).float().sum()
    return acc.item()


def tensor_to_scalar(x):
    return x.item()
""",
            "train/__init__.py": "",
            "train/loop.py": """\
import torch

from metrics.accuracy import accuracy_mnist, tensor_to_scalar


def train_epoch(model, loader, opt, device):
    model.train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)
        losses = model.loss(out, y)
        losses["total"].backward()
        opt.step()
        acc = accuracy_mnist(out, y)  # TL002: accuracy_mnist(out, y)
        loss_dict = {k: tensor_to_scalar(v) for k, v in losses.items()}  # TL002: tensor_to_scalar(v)
        print(acc, loss_dict)
""",
        },
    ),
    # --- 4. a subclass's per-batch method in a file that names no device ---
    Case(
        "subclass-step-in-a-file-without-a-device",
        {
            "engine/__init__.py": "",
            "engine/base.py": """\
import torch


class BaseModel:
    def __init__(self, net):
        self.net = net.cuda()

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for data in loader:
                self.forward_backward(data)

    def forward_backward(self, data):
        raise NotImplementedError
""",
            "models/__init__.py": "",
            "models/classifier.py": """\
from engine.base import BaseModel


class Classifier(BaseModel):
    def forward_backward(self, data):
        images, labels = data
        loss = self.criterion(self.net(images), labels)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}  # TL002: loss.item()
""",
        },
    ),
    # --- 5. add_scalar of a device loss from a model in another module ---
    Case(
        "add-scalar-of-a-loss-from-another-module",
        {
            "nets/__init__.py": "",
            "nets/model.py": """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x, y):
        return nn.functional.mse_loss(self.fc(x), y)
""",
            "train.py": """\
import torch
from torch.utils.tensorboard import SummaryWriter

from nets.model import Net


def main(loader):
    model = Net().cuda()
    opt = torch.optim.Adam(model.parameters())
    writer = SummaryWriter()
    step = 0
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        writer.add_scalar("train/loss", loss, step)  # TL002: loss, step)
        step += 1
""",
        },
    ),
    # --- 5b. add_scalar inside a logging helper of another module, called every iteration ---
    Case(
        "add-scalar-in-a-logger-of-another-module",
        {
            "utils/__init__.py": "",
            "utils/logger.py": """\
from torch.utils.tensorboard import SummaryWriter


class Logger:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)

    def scalar_summary(self, tag, value, step):
        self.writer.add_scalar(tag, value, step)


def log_scalars(writer, step, **values):
    writer.add_scalars("train", {k: v for k, v in values.items()}, step)


def log_text(writer, tag, text, step):
    writer.add_text(tag, text, step)
""",
            "train.py": """\
import torch

from utils.logger import Logger, log_scalars, log_text


def main(model, loader, opt, writer):
    model.cuda()
    logger = Logger("runs")
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda(), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        logger.scalar_summary("loss", loss, step)  # TL002: logger.scalar_summary("loss", loss, step)
        log_text(writer, "loss", loss, step)
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_recall")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
