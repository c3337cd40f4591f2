"""TL002 on per-batch copies that an inference-only script keeps as its output table.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A script that loads trained weights and never trains only evaluates, whether or not it turns
grad off around each call: scores it copies to the host per chunk and collects into lists that
become a pandas table (written to a CSV) are its product, as a numpy metric over the whole set
is. The same copies in a script that trains, or collected only for a plain mean, stay findings.
A validation loop over a progress bar bound to the validation loader (`bar = tqdm(val_loader)`,
then `for x, y in bar:`) iterates validation data as `for x, y in tqdm(val_loader):` does.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "inference-script-scores-collected-into-a-dataframe",
        {
            "score.py": """\
import pandas as pd
import torch
from scorer import Scorer

model = Scorer()
model.load_state_dict(torch.load("scorer.bin"))
model.eval()
model.cuda()


def score(texts):
    with torch.no_grad():
        return model(texts)


if __name__ == "__main__":
    texts = open("texts.txt").read().splitlines()
    scores = []
    batch_size = 16
    for i in range(0, len(texts), batch_size):
        batch = texts[i : i + batch_size]
        scores.extend(list(score(batch).cpu().numpy()))
        print(score(batch).sum().item())  # TL002: score(batch).sum().item()
    df = pd.DataFrame({"text": texts, "score": scores})
    df.to_csv("scores.csv", index=False)
""",
            "scorer.py": """\
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 1)

    def forward(self, texts):
        return self.head(texts)
""",
        },
    ),
    Case(
        "inference-script-scores-only-averaged",
        {
            "score.py": """\
import numpy as np
import torch
from scorer import Scorer

model = Scorer()
model.load_state_dict(torch.load("scorer.bin"))
model.eval()
model.cuda()


def score(texts):
    with torch.no_grad():
        return model(texts)


if __name__ == "__main__":
    texts = open("texts.txt").read().splitlines()
    scores = []
    batch_size = 16
    for i in range(0, len(texts), batch_size):
        batch = texts[i : i + batch_size]
        scores.extend(list(score(batch).cpu().numpy()))  # TL002: score(batch).cpu()
    print(np.mean(scores))
""",
            "scorer.py": """\
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 1)

    def forward(self, texts):
        return self.head(texts)
""",
        },
    ),
    Case(
        "evaluation-returns-its-dict-of-per-batch-numpy-copies",
        {
            "runner.py": """\
import torch


class Runner:
    def __init__(self, model, loader, device):
        self.model = model.to(device)
        self.loader = loader
        self.device = device

    def evaluate(self, keep_all=True):
        self.model.eval()
        total = 0.0
        if keep_all:
            per_batch = {"targets": [], "predictions": [], "losses": []}
        for x, targets in self.loader:
            targets = targets.to(self.device)
            predictions = self.model(x.to(self.device))
            total += (predictions - targets).abs().sum().item()  # TL002: (predictions - targets).abs().sum().item()
            if keep_all:
                per_batch["targets"].append(targets.cpu().numpy())
                per_batch["predictions"].append(predictions.cpu().numpy())
                per_batch["losses"].append([(predictions - targets).cpu().numpy()])
        if keep_all:
            return total, per_batch
        return total

    def validate(self):
        with torch.no_grad():
            return self.evaluate(keep_all=True)
""",
        },
    ),
    Case(
        "evaluation-returns-its-dict-of-per-batch-device-tensors-moved-back",
        {
            "runner.py": """\
import torch


class Runner:
    def __init__(self, model, loader, device):
        self.model = model.to(device)
        self.loader = loader
        self.device = device

    def evaluate(self):
        self.model.eval()
        per_batch = {"predictions": []}
        for x, targets in self.loader:
            predictions = self.model(x.to(self.device))
            per_batch["predictions"].append(predictions.cpu())  # TL002: predictions.cpu()
        return per_batch

    def validate(self):
        with torch.no_grad():
            return self.evaluate()
""",
        },
    ),
    Case(
        "validation-over-a-progress-bar-named-apart-from-its-loader",
        {
            "train.py": """\
import numpy as np
import torch
from tqdm import tqdm


def valid(model, val_loader, device):
    model.eval()
    all_preds, all_labels = [], []
    bar = tqdm(val_loader, desc="validating")
    for step, (x, y) in enumerate(bar):
        x, y = x.to(device), y.to(device)
        with torch.no_grad():
            logits = model(x)
        loss = logits.sum()
        bar.set_description(f"loss {loss.item():.3f}")  # TL002: loss.item()
        all_preds.append(logits.argmax(-1).cpu().numpy())
        all_labels.append(y.cpu().numpy())
    return np.mean(np.concatenate(all_preds) == np.concatenate(all_labels))


def train(model, optimizer, train_loader, val_loader, device):
    model.to(device)
    for epoch in range(10):
        bar = tqdm(train_loader)
        for x, y in bar:
            out = model(x.to(device))
            loss = (out - y.to(device)).pow(2).mean()
            loss.backward()
            optimizer.step()
            preds = out.detach().argmax(-1).cpu().numpy()  # TL002: out.detach().argmax(-1).cpu()
            print(np.bincount(preds))
        valid(model, val_loader, device)
""",
        },
    ),
    Case(
        "training-script-scores-into-a-dataframe-stay-findings",
        {
            "train.py": """\
import pandas as pd
import torch


def train(model, optimizer, loader):
    model.cuda()
    scores = []
    for x, y in loader:
        out = model(x.cuda())
        loss = (out - y.cuda()).pow(2).mean()
        loss.backward()
        optimizer.step()
        scores.extend(list(out.detach().cpu().numpy()))  # TL002: out.detach().cpu()
    pd.DataFrame({"score": scores}).to_csv("scores.csv")
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_tables")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
