"""TL001 classes of issue 24 round 6b, each an invented project checked by the installed command.

- A single forward outside any loop on one example made into a batch of one (`x.unsqueeze(0)`,
  `x[None]`, also through names, a dict of inputs and an earlier forward's result) is a demo:
  it runs once and evaluates no workload, even in a script that only loads weights or after
  training in the same run. The same forward in a loop, or on a whole split, is still reported.
- A module class of the file named for a model with its loss (`ModelWithLoss`, `NetWithLoss`)
  runs the model's forward: it is no criterion, whatever its last word; and a local name bound
  to a `self.` attribute that holds a module (also its `.module`, what a DataParallel wraps)
  holds one too (`model_with_loss = self.model_with_loss` in a loop shared by training and
  validation that trains only under `if phase == "train":`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "demo-script-one-image",
        files={
            "demo.py": """\
import torch
from PIL import Image
from vlm import load_model

model, processors = load_model("base", is_eval=True)
model.load_state_dict(torch.load("w.pt"))
raw = Image.open("demo.png")
image = processors["eval"](raw).unsqueeze(0).to("cuda")
samples = {"image": image, "text": ["what is it?"]}
samples = model.forward_match(samples=samples)
samples = model.forward_caption(samples=samples, num=5)
print(samples["captions"])
""",
        },
        rules=("TL001",),
    ),
    Case(
        "one-clip-after-training",
        files={
            "tutorial.py": """\
import torch
from torch import nn

net = nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters())
for x, y in loader:
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

out_test = net(clip_test[None])
out_train = net.forward(clip_train.unsqueeze(0))
print(out_test.detach(), out_train.detach())
""",
        },
        rules=("TL001",),
    ),
    Case(
        "whole-split-after-training-still-reported",
        files={
            "train.py": """\
import torch
from torch import nn

net = nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters())
for x, y in loader:
    loss = nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

pred = net(features)  # TL001: net(features)
for clip in clips:
    print(net(clip.unsqueeze(0)).argmax())
""",
        },
        rules=("TL001",),
    ),
    Case(
        "model-with-loss-in-shared-epoch-loop",
        files={
            "trainer.py": """\
import torch


class ModelWithLoss(torch.nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch):
        out = self.model(batch["input"])
        return out, self.loss(out, batch)


class Trainer:
    def __init__(self, model, loss, optimizer):
        self.optimizer = optimizer
        self.model_with_loss = ModelWithLoss(model, loss)

    def run_epoch(self, phase, loader):
        model_with_loss = self.model_with_loss
        if phase == "train":
            model_with_loss.train()
        else:
            model_with_loss.eval()
        for batch in loader:
            out, loss = model_with_loss(batch)  # TL001: model_with_loss(batch)
            if phase == "train":
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def val(self, loader):
        return self.run_epoch("val", loader)

    def train(self, loader):
        return self.run_epoch("train", loader)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("single_example")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
