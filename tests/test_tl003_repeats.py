"""TL003 in methods: a copy is flagged only where the code shows that it repeats.

A method is called through instances, which neither the file nor the project index follows to
the loops that may run it; judges found such copies run once (a calibrator's `fit`, a dataset's
augmentation step called while another module builds it) or copy a handful of numbers. Each
case is an invented project; a line marked `# TL003: text` expects a finding there
(`project_cases.Case`), every other TL003 finding of a case is a failure. One `torchlint` run
checks all cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects

CASES = [
    # a method whose callers the project does not show repeating: silent
    Case(
        "method-called-through-an-instance",
        {
            "calibrate.py": """\
import numpy as np
import torch


class Scaling:
    def fit(self, preds, targets):
        scalings = []
        for p, t in zip(preds, targets):
            scalings.append(float(np.std(p - t)))
        self.scalings = torch.tensor(np.array(scalings))
        return self

    def apply(self, uncs):
        cal = [u * s for u, s in zip(uncs, self.scalings)]
        return torch.tensor(np.array(cal)).t()
""",
            "predict.py": """\
from calibrate import Scaling


def main(preds, targets, uncs):
    calibrator = Scaling().fit(preds, targets)
    return calibrator.apply(uncs)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "dataset-step-called-by-another-module",
        {
            "sequential.py": """\
import numpy as np
import torch


class Sequences:
    def augment(self, users):
        lengths = np.zeros(len(users), dtype=np.int64)
        for i, u in enumerate(users):
            lengths[i] = len(u)
        self.lengths = torch.tensor(lengths)
""",
            "build.py": """\
from sequential import Sequences


def build(users):
    data = Sequences()
    data.augment(users)
    return data
""",
        },
        rules=("TL003",),
    ),
    # evidence that the method repeats: flagged
    Case(
        "method-with-evidence-of-repetition",
        {
            "agent.py": """\
import numpy as np
import torch


class Agent(torch.nn.Module):
    def forward(self, obs):
        return torch.tensor(np.stack(obs))  # TL003: torch.tensor(np.stack(obs))

    def states(self, batch):
        return torch.tensor(np.stack(batch))  # TL003: torch.tensor(np.stack(batch))

    def learn(self, memory):
        for batch in memory:
            self.states(batch)
        return [torch.tensor(np.array(b)) for b in memory]  # TL003: torch.tensor(np.array(b))
""",
        },
        rules=("TL003",),
    ),
    # a whole array copied and then converted: two copies, flagged even once
    Case(
        "method-copies-then-converts",
        {
            "ecg.py": """\
import numpy as np
import torch
from torch.utils.data import TensorDataset


class Records:
    def setup(self, raw, rows):
        x = np.asarray(raw) - 1.0
        y = np.stack(rows) * 2
        self.x = torch.tensor(x).to(torch.float)  # TL003: torch.tensor(x)
        self.y = torch.tensor(y).float()  # TL003: torch.tensor(y)
        self.z = torch.tensor(y).to("cpu")
        self.train = TensorDataset(torch.tensor(y[:8]).float())  # TL003: torch.tensor(y[:8])
""",
        },
        rules=("TL003",),
    ),
    # converted, but only for one forward of the call: a transient input, not a data set kept
    Case(
        "method-converts-an-input-for-one-forward",
        {
            "predictor.py": """\
import numpy as np
import torch


class Predictor:
    def predict(self, archs):
        feats = [self.encoder.features(a) for a in archs]
        x = torch.tensor(np.array(feats)).float().to(self.device)
        return self.forward(x)
""",
        },
        rules=("TL003",),
    ),
    # a notebook redefines a dataset class cell after cell: each `__getitem__` is per-sample code
    Case(
        "dataset-class-defined-twice",
        {
            "cells.py": """\
import cv2
import torch
from torch.utils.data import Dataset


class Images(Dataset):
    def __getitem__(self, i):
        image = cv2.imread(self.paths[i])
        return torch.tensor(image / 255)  # TL003: torch.tensor(image / 255)


class Images(Dataset):
    def __getitem__(self, i):
        image = cv2.imread(self.paths[i])
        return torch.tensor(image / 255)  # TL003: torch.tensor(image / 255)
""",
        },
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    root: Path = tmp_path_factory.mktemp("tl003_repeats")
    return check_projects(root, CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl003_repeats_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
