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
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("per_step_elsewhere")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_per_step_elsewhere(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
