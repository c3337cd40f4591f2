"""TL001: a call the file makes once under `no_grad` and once, with the same flags, without it.

`with torch.no_grad(): run_epoch(model, validloader, criterion, None)` says the author knows the
call evaluates; `run_epoch(model, trainloader, criterion, None)` a few lines up, with the same
`None` for the optimizer (which turns the epoch's training off) and grad on, records a graph
nobody uses. Likewise `trainer.val(0, val_loader)` on a `--test` path beside the periodic
`with torch.no_grad(): trainer.val(epoch, val_loader)`: a method named for evaluation, whose
class the file cannot see. The call is reported where it is made (a wrap of its statement
fixes it). The twins stay silent: the training calls that pass an optimizer where the no_grad
call passes `None`; a call under `no_grad` elsewhere that names no evaluation and runs no
loop of forwards of the file (an EMA update), nor a mode switch (`model.eval()`, which
`is_eval_name` would take for evaluation); a flag that differs (`val(loader, True)` beside
`val(loader, False)` under no_grad); a callee the file cannot see, called once outside any
loop on no evaluation data (`model.full_sort_predict(new_batch)` in a notebook: a demo on one
example, as `predict_for_user` runs it under no_grad), nor in a closure an export traces
once. Invented projects, checked once by the installed
`torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_RUN_EPOCH = """\
import torch


def run_epoch(model, loader, loss_fn, optimizer, desc=""):
    total = 0.0
    for data, label in loader:
        preds = model(data.cuda())
        loss = loss_fn(preds, label.cuda())
        if optimizer:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / len(loader)


def train_and_eval(model, loaders, criterion, optimizer, epochs, only_eval=False):
    trainloader, validloader, testloader = loaders
    result = {}
    if only_eval:
        model.eval()
        result["train"] = run_epoch(model, trainloader, criterion, None, desc="train")  # TL001: run_epoch(
        with torch.no_grad():
            result["valid"] = run_epoch(model, validloader, criterion, None, desc="valid")
            result["test"] = run_epoch(model, testloader, criterion, None, desc="test")
        return result
    for epoch in range(epochs):
        model.train()
        result["train"] = run_epoch(model, trainloader, criterion, optimizer, desc="train")
        model.eval()
        with torch.no_grad():
            result["valid"] = run_epoch(model, validloader, criterion, None, desc="valid")
    return result
"""

_TRAINERS = """\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def run_epoch(self, phase, loader):
        results = []
        for batch in loader:
            loss = self.model(batch)  # TL001: self.model(batch)
            if phase == "train":
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            results.append(loss.item())
        return results

    def val(self, epoch, loader):
        return self.run_epoch("val", loader)

    def train(self, epoch, loader):
        return self.run_epoch("train", loader)


TRAINERS = {"det": Trainer}
"""

_MAIN = """\
import torch

from trainers import TRAINERS


def main(opt, model, optimizer, train_loader, val_loader):
    trainer = TRAINERS[opt.task](model, optimizer)
    if opt.test:
        preds = trainer.val(0, val_loader)  # TL001: trainer.val(
        return preds
    for epoch in range(opt.epochs):
        trainer.train(epoch, train_loader)
        if epoch % 5 == 0:
            with torch.no_grad():
                preds = trainer.val(epoch, val_loader)
"""

_EMA_AND_FLAGS = """\
import torch


def fit(model, ema, runner, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            ema.update(model)
        with torch.no_grad():
            model.eval()
            ema.update(model)
            runner.val(val_loader, False)
        runner.val(val_loader, True)
        model.eval()
"""

_ONE_EXAMPLE = """\
import torch


def predict_for_user(model, batch):
    model.eval()
    with torch.no_grad():
        scores = model.full_sort_predict(batch)
    return scores


new_scores = model.full_sort_predict(new_batch)
print(new_scores.argmax())


def export(model, path):
    def policy(x):
        action = model.predict(x)
        return action

    with torch.no_grad():
        action = model.predict(torch.zeros(1, 4))
    torch.jit.save(torch.jit.trace(policy, torch.zeros(1, 4)), path)
"""

CASES = [
    Case("grad-off-twin-in-file-flag-none", files={"train.py": _RUN_EPOCH}, rules=("TL001",)),
    Case(
        "grad-off-twin-eval-method-elsewhere",
        files={"trainers.py": _TRAINERS, "main.py": _MAIN},
        rules=("TL001",),
    ),
    Case("grad-off-twin-not-evaluation", files={"fit.py": _EMA_AND_FLAGS}, rules=("TL001",)),
    Case("grad-off-twin-once-on-one-example", files={"demo.py": _ONE_EXAMPLE}, rules=("TL001",)),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_grad_off_twins")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_grad_off_twin_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
