"""TL002 in the code an instance call runs, in another module: a loss class built in a training
function (`dice_loss = DiceLoss(n)`, or kept as `self.criterion` by a trainer class) and called on
every batch runs its `forward` on every batch, and a plain class's `__call__` likewise
(TransUNet's per-class Dice loss reading each class's score with `.item()`). The callers are the
files that build the class: the project index follows the instance from the name (or `self.`
attribute) bound to the class's call to what calling it runs.

Each case is an invented project checked once by the installed `torchlint` (see
`project_cases.py`); a line ending in `# TL002: text` expects a finding there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_LOSSES = """\
import torch
from torch import nn


class DiceLoss(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.scores = []

    def forward(self, inputs, target):
        loss = 0.0
        for i in range(self.n):
            dice = self._dice(inputs[:, i], target[:, i])
            self.scores.append(1.0 - dice.item())  # TL002: dice.item()
            loss += dice
        return loss / self.n
"""

CASES = [
    Case(
        "loss-module-built-in-the-training-function",
        files={
            "losses.py": _LOSSES,
            "train.py": """\
import torch
from losses import DiceLoss


def main():
    model = Net().cuda()
    dice_loss = DiceLoss(9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = dice_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "loss-module-kept-by-a-trainer-class",
        files={
            "losses.py": _LOSSES,
            "trainer.py": """\
import torch
from losses import DiceLoss


class Trainer:
    def __init__(self, model, loader):
        self.model = model.cuda()
        self.loader = loader
        self.criterion = DiceLoss(9)
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_epoch(self):
        for x, y in self.loader:
            loss = self.criterion(self.model(x.cuda()), y.cuda())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "plain-class-called-on-every-batch",
        files={
            "metrics.py": """\
class Accuracy:
    def __init__(self):
        self.hits = []

    def __call__(self, logits, target):
        self.hits.append((logits.argmax(1) == target).float().mean().item())  # TL002: (logits
""",
            "train.py": """\
import torch
from metrics import Accuracy


def train(model, loader, opt):
    accuracy = Accuracy()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        accuracy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "loss-module-called-once-after-the-loop",
        files={
            "losses.py": _LOSSES.replace("  # TL002: dice.item()", ""),
            "train.py": """\
import torch
from losses import DiceLoss


def main():
    model = Net().cuda()
    dice_loss = DiceLoss(9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(dice_loss(model(x), y))


if __name__ == "__main__":
    main()
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("instance_calls")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_instance_call_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
