"""`self.m(...)` reaches the overrides of `m` in subclasses: issue 24, TL002 recall after batch 20.

A trainer hierarchy in one file: the base class's `train` loops over the batches and calls
`self.forward_propagation(batch)` every step; each subclass overrides `forward_propagation` and
reads `loss.item()` into running totals there. The object is a subclass instance, so the
override is what runs every step (template method, virtual dispatch): the call graph links
`self.m(...)` in a method of class B to `m` as each subclass of B in the file defines it,
whether B defines `m` itself (a stub) or not. A subclass method the base calls only once,
or under a periodic guard, stays as rare as the call. Each case is an invented project, checked
once by the installed `torchlint`; a line ending in `# TL002: text` expects a finding there,
every other TL002 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL002",)

CASES = [
    # the base defines a stub; children and a grandchild override it
    Case(
        "override-of-stub",
        rules=RULES,
        files={
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self):
        self.total_loss = 0.0

    def forward_propagation(self, batch, model):
        raise NotImplementedError

    def report(self):
        print(self.total_loss)

    def train(self, loader, model, optimizer):
        model.cuda()
        for step, batch in enumerate(loader):
            batch = batch.cuda()
            loss = self.forward_propagation(batch, model)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % 100 == 0:
                self.report()


class MlmTrainer(Trainer):
    def forward_propagation(self, batch, model):
        loss, correct = model(batch)
        self.total_loss += loss.item()  # TL002: loss.item()
        return loss


class BeitTrainer(MlmTrainer):
    def forward_propagation(self, batch, model):
        loss = model(batch)
        self.total_loss += loss.item()  # TL002: loss.item()
        return loss

    def report(self):
        print(float(torch.tensor(self.total_loss)))
""",
        },
    ),
    # the base does not define the method at all: only the subclasses do
    Case(
        "override-without-stub",
        rules=RULES,
        files={
            "trainer.py": """\
class Trainer:
    def train(self, loader, model, optimizer):
        model.to("cuda")
        for batch in loader:
            loss = self.step(batch.to("cuda"), model)
            loss.backward()
            optimizer.step()


class LmTrainer(Trainer):
    def step(self, batch, model):
        loss = model(batch)
        self.seen = loss.item()  # TL002: loss.item()
        return loss
""",
        },
    ),
    # an override the base calls once, after the loop, is not per step
    Case(
        "override-called-once",
        rules=RULES,
        files={
            "trainer.py": """\
class Trainer:
    def train(self, loader, model, optimizer):
        model.to("cuda")
        for batch in loader:
            loss = model(batch.to("cuda"))
            loss.backward()
            optimizer.step()
        self.finish(loss)

    def finish(self, loss):
        pass


class LmTrainer(Trainer):
    def finish(self, loss):
        print(loss.item())
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("virtual_dispatch")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_virtual_dispatch(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
