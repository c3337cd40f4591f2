"""TL002 under a periodic guard joined to a last-step test: `if step % every == 0 or step >= total:`.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A trainer often evaluates every N steps and once more at the end of training, and writes both in
one test. The second part, a count reaching a limit (`step >= total`), is true on every step once
the limit is passed, unless the loop stops there: when the same loop leaves (`return`, `break`)
on the same test, the part is true at most once per pass of the loop, and the whole guard is as
periodic as its modulo part. A limit the loop does not stop at (a warm-up) guards nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "evaluation-every-n-steps-or-at-the-last-step-the-loop-returns-at",
        {
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self, model, opt, loader, metric_fn, eval_every, total_steps):
        self.model = model.cuda()
        self.opt = opt
        self.train_loader = loader
        self.metric_fn = metric_fn
        self.eval_every = eval_every
        self.total_steps = total_steps
        self.iter_count = 0

    def evaluate(self):
        columns = []
        for name, values in self.metric_fn(self.model).items():
            columns.append(values.tolist())
        return columns

    def learn(self):
        for epoch in range(100):
            for x, y in self.train_loader:
                loss = self.model(x.cuda(), y.cuda())
                loss.backward()
                self.opt.step()
                self.opt.zero_grad()
                self.iter_count += 1
                if self.iter_count % self.eval_every == 0 or self.iter_count >= self.total_steps:
                    self.evaluate()
                    print(loss.item())
                print(loss.item())  # TL002: loss.item()
                if self.iter_count >= self.total_steps:
                    return
""",
        },
    ),
    Case(
        "last-step-test-before-a-break-out-of-the-same-loop",
        {
            "train.py": """\
import torch


def train(model, optimizer, loader, log_every, max_steps):
    model.cuda()
    step = 0
    while True:
        for x, y in loader:
            loss = model(x.cuda(), y.cuda())
            loss.backward()
            optimizer.step()
            step += 1
            if step >= max_steps:
                break
            if step % log_every == 0 or step >= max_steps:
                print(loss.item())
            print(loss.sum().item())  # TL002: loss.sum().item()
""",
        },
    ),
    Case(
        "a-limit-the-loop-does-not-stop-at-is-a-warm-up-and-guards-nothing",
        {
            "train.py": """\
import torch


def train(model, optimizer, loader, log_every, warmup_steps):
    model.cuda()
    step = 0
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        step += 1
        if step % log_every == 0 or step >= warmup_steps:
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "a-limit-another-loop-stops-at-guards-nothing-here",
        {
            "train.py": """\
import torch


def train(model, optimizer, loader, log_every, total):
    model.cuda()
    step = 0
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        step += 1
        if step % log_every == 0 or step >= total:
            print(loss.item())  # TL002: loss.item()
    for x, y in loader:
        if step >= total:
            break
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_last_step")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
