"""TL001: `model.predict(x)` in an evaluation function of a utility module, where `model` is a
parameter whose class the file cannot see.

A recommender's `utils.evaluate(model, ...)` loops over users calling `model.predict(...)`;
the project's only `predict` is a method of a module class that runs the class's own
submodules (`self.item_emb(...)`, an `nn.Embedding` built in `__init__`) with the caller's grad
mode, and `main.py` calls `evaluate` after `model.eval()` without `no_grad`: each call records
a graph. The twins stay silent: a `predict` decorated `@torch.no_grad()` in the project, a
`predict` of a class that is no module (a scorer), and a method name two classes define where one
runs no forward (unknown stays silent). Invented
projects, checked once by the installed `torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_MODEL = """\
import torch


class Rec(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.item_emb = torch.nn.Embedding(n, 8)
        self.mix = torch.nn.Linear(8, 8)

    def forward(self, seqs, pos):
        feats = self.mix(self.item_emb(torch.LongTensor(seqs)))
        return (feats * self.item_emb(torch.LongTensor(pos))).sum(-1)

    DECORATOR
    def predict(self, seqs, items):
        final = self.mix(self.item_emb(torch.LongTensor(seqs)))[:, -1, :]
        return self.item_emb(torch.LongTensor(items)).matmul(final.unsqueeze(-1))
"""

_UTILS = """\
import numpy as np
import torch


def evaluate(model, users, seqs):
    hits = 0.0
    for u in users:
        scores = -model.predict(np.array([seqs[u]]), np.arange(100))MARK
        hits += scores[0].argsort().argsort()[0].item() < 10
    return hits / len(users)
"""

_MAIN = """\
import torch

from model import Rec
from utils import evaluate

model = Rec(100)
opt = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for seqs, pos in batches():
        loss = model(seqs, pos).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 20 == 0:
        model.eval()
        print(evaluate(model, users, seqs))
        model.train()
"""

_SCORER = """\
class Scorer:
    def predict(self, seqs, items):
        return [len(s) for s in seqs]
"""

_MARK = "  # TL001: model.predict("


def _model(decorator: str = "") -> str:
    return _MODEL.replace("    DECORATOR\n", f"    {decorator}\n" if decorator else "")


CASES = [
    Case(
        "project-method-runs-submodules",
        files={
            "model.py": _model(),
            "utils.py": _UTILS.replace("MARK", _MARK),
            "main.py": _MAIN,
        },
        rules=("TL001",),
    ),
    Case(
        "project-method-decorated-no-grad",
        files={
            "model.py": _model("@torch.no_grad()"),
            "utils.py": _UTILS.replace("MARK", ""),
            "main.py": _MAIN,
        },
        rules=("TL001",),
    ),
    Case(
        "project-method-of-two-classes-one-no-module",
        files={
            "model.py": _model(),
            "scorer.py": _SCORER,
            "utils.py": _UTILS.replace("MARK", ""),
            "main.py": _MAIN,
        },
        rules=("TL001",),
    ),
    Case(
        "project-method-of-no-module",
        files={
            "model.py": _SCORER,
            "utils.py": _UTILS.replace("MARK", ""),
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_project_methods")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_project_method_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
