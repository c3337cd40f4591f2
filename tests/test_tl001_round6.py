"""TL001 classes from the pooled validate production sample (issue 24, fix round 6), each an
invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- A module-level function named `forward(model, i, data)` is no module's forward: it is a
  helper that training and evaluation share, so its call in the loop after `model.eval()` is
  the evaluation forward (a method named `forward` stays the module's own).
- A method of a project class that turns autograd on itself (`with torch.set_grad_enabled(True):`
  around a Grad-CAM's `backward()`), called on a model whose class the calling file cannot
  resolve (a registry's loader): the method needs the graph, so the call is no evaluation to put
  under `no_grad`. A method of the same receiver that does not is still reported.
- A loop shared by training and testing that trains only under a flag (`if train:`,
  `if phase == "train":`) evaluates when the file calls it with the flag off
  (`self.iteration(epoch, self.test_data, train=False)`) and grad on: the forward is reported,
  without an automatic fix (the training calls need the graph). Silent where that call runs
  under `no_grad`, where the project calls its caller only under `no_grad`, or where a step
  runs outside the guard.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "module_level_forward_helper_shared_with_training",
        {
            "main.py": """\
import torch


def forward(model, i, data):
    items, targets = data.get_slice(i)
    hidden = model(torch.as_tensor(items))
    return targets, model.compute_scores(hidden)


def train_test(model, train_data, test_data, opt):
    model.train()
    for i in train_data.generate_batch(32):
        opt.zero_grad()
        targets, scores = forward(model, i, train_data)
        loss = model.loss_function(scores, torch.as_tensor(targets))
        loss.backward()
        opt.step()
    model.eval()
    hits = []
    for i in test_data.generate_batch(32):
        targets, scores = forward(model, i, test_data)  # TL001: forward(model, i, test_data)
        hits.append(scores.topk(20)[1].cpu().detach().numpy())
    return hits


def run(model, train_data, test_data, opt):
    for _epoch in range(30):
        train_test(model, train_data, test_data, opt)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "project_method_turns_grad_on_itself",
        {
            "models/vqa.py": """\
import torch
from torch import nn


class VQA(nn.Module):
    def forward_itm(self, samples):
        image = samples["image"]
        with torch.set_grad_enabled(True):
            scores = self.itm(image, samples["text"])
            scores.sum().backward()
        samples["gradcams"] = self.itm.grads
        return samples

    def forward_cap(self, samples):
        return self.captioner(samples["image"])
""",
            "demo.py": """\
import torch
from models.registry import load_model

model = load_model("vqa", device="cuda")
model.load_state_dict(torch.load("vqa.pt"))
model.eval()
for samples in batches:
    samples = model.forward_itm(samples=samples)
for samples in batches:
    captions = model.forward_cap(samples)  # TL001: model.forward_cap(samples)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "training_flag_turned_off_by_a_test_pass",
        {
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self, model, optim, train_data, test_data):
        self.model = model
        self.optim = optim
        self.train_data = train_data
        self.test_data = test_data

    def train(self, epoch):
        self.iteration(epoch, self.train_data)

    def test(self, epoch):
        self.iteration(epoch, self.test_data, train=False)

    def iteration(self, epoch, data_loader, train=True):
        total = 0.0
        for data in data_loader:
            out = self.model.forward(data["input"])  # TL001: self.model.forward(data["input"])
            loss = self.model.criterion(out, data["label"])
            if train:
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()
            total += loss.item()
        return total


def run_phase(net, loader, opt, phase):
    for x, y in loader:
        loss = (net(x) - y).pow(2).mean()  # TL001: net(x)
        if phase == "train":
            opt.zero_grad()
            loss.backward()
            opt.step()


def fit(net, loaders, opt):
    for _epoch in range(10):
        run_phase(net, loaders["train"], opt, "train")
        run_phase(net, loaders["val"], opt, "val")
""",
            "main.py": """\
from trainer import Trainer

trainer = Trainer(model, optim, train_data, test_data)
for epoch in range(10):
    trainer.train(epoch)
    trainer.test(epoch)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "training_flag_off_only_under_no_grad_or_a_step_unguarded",
        {
            "loops.py": """\
import torch


def run_epoch(net, loader, opt, train=True):
    for x, y in loader:
        loss = (net(x) - y).pow(2).mean()
        if train:
            opt.zero_grad()
            loss.backward()
            opt.step()


def run_steps(net, loader, opt, train=True):
    for x, y in loader:
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        if train:
            opt.step()


class Runner:
    def iteration(self, loader, train=True):
        for x, y in loader:
            loss = self.model(x).sum()
            if train:
                loss.backward()

    def validate(self, loader):
        return self.iteration(loader, train=False)

    def train(self, loader):
        return self.iteration(loader)


def fit(net, loaders, opt):
    for _epoch in range(10):
        run_epoch(net, loaders["train"], opt)
        with torch.no_grad():
            run_epoch(net, loaders["val"], opt, train=False)
        run_steps(net, loaders["train"], opt)
        run_steps(net, loaders["val"], opt, train=False)
""",
            "main.py": """\
import torch
from loops import Runner

runner = Runner()
for epoch in range(10):
    runner.train(train_loader)
    with torch.no_grad():
        runner.validate(val_loader)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl001_round6")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
