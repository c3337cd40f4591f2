"""Code that another module or a framework runs every step, reached through edges the file
itself does not show: each case an invented project, checked by the installed `torchlint`
(marks as in `project_cases.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    # `train/train.py` runs as a script, so its folder is on `sys.path` and `import trainlib`
    # names `train/trainlib/`: the base trainer there loops over the loader and calls
    # `self.train_step`, which the script's subclass overrides (its backward alone does not
    # make it a training step: the base steps the optimizer).
    Case(
        "script_folder_base_trainer",
        {
            "train/trainlib/__init__.py": "from .trainer import Trainer\n",
            "train/trainlib/trainer.py": """\
import torch


class Trainer:
    def __init__(self, net, loader):
        self.net = net.to("cuda")
        self.loader = loader
        self.optim = torch.optim.Adam(net.parameters())

    def train_step(self, data, step):
        raise NotImplementedError

    def start(self):
        for step, data in enumerate(self.loader):
            self.optim.zero_grad()
            losses = self.train_step(data, step)
            self.optim.step()
            if step % 100 == 0:
                print(losses)
""",
            "train/train.py": """\
import torch
import trainlib


class NerfTrainer(trainlib.Trainer):
    def calc_losses(self, data, is_train=True):
        loss = self.net(data["x"].cuda()).mean()
        if is_train:
            loss.backward()
        return {"t": loss.item()}  # TL002: loss.item()

    def train_step(self, data, step):
        return self.calc_losses(data, is_train=True)


if __name__ == "__main__":
    NerfTrainer(torch.nn.Linear(2, 1), []).start()
""",
        },
        rules=("TL002",),
    ),
    # A detector's `forward` computes its losses in training mode through a criterion built
    # in its constructor: the criterion's `forward` runs on every training step, whoever calls
    # the detector (a framework's trainer here). Its evaluation-only postprocessor does not.
    Case(
        "criterion_in_training_forward",
        {
            "det/__init__.py": "",
            "det/detector.py": """\
import torch
from torch import nn

from .loss import Postprocess, SetCriterion


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.criterion = SetCriterion()
        self.post = Postprocess()
        self.device = torch.device("cuda")

    def forward(self, images, targets=None):
        out = self.head(images.to(self.device))
        if self.training:
            return self.criterion(out, targets)
        return self.post(out)
""",
            "det/loss.py": """\
from torch import nn


class SetCriterion(nn.Module):
    def forward(self, outputs, targets):
        matched = (outputs > 0).sum().item()  # TL002: (outputs > 0).sum().item()
        return outputs.sum() / max(matched, 1)


class Postprocess(nn.Module):
    def forward(self, outputs):
        return outputs, (outputs > 0).sum().item()
""",
        },
        rules=("TL002",),
    ),
    # A base trainer's loop runs `self.forward_propagation(...)` on every step; the subclasses
    # of the same file override it, and theirs is what runs there. A method of a subclass that
    # the base does not call stays unknown.
    Case(
        "override_of_a_base_in_the_same_file",
        {
            "trainer.py": """\
import torch


class Trainer:
    def forward_propagation(self, batch, model):
        raise NotImplementedError

    def train(self, loader, model, optimizer):
        model.cuda()
        batches = iter(loader)
        while True:
            batch = [t.cuda() for t in next(batches)]
            loss = self.forward_propagation(batch, model)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


class MlmTrainer(Trainer):
    def forward_propagation(self, batch, model):
        loss, correct = model(*batch)
        self.total_correct += correct.item()  # TL002: correct.item()
        return loss

    def report(self, correct):
        return correct.item()
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("per_step_elsewhere")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_per_step_elsewhere(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
