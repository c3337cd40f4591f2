"""TL003 and the code that runs while a dataset is built: issue 24, fix round 3.

A dataset's constructor, the hooks its base class runs from there (PyTorch Geometric's and
DGL's `process()`/`download()`, nerfstudio's dataparser outputs, made once per split), and
the methods of the class only those call (`self._load()`,
`self._process()`, recursion included), run once per dataset object: their loops go over the
raw data once, not per step. A copy there is a piece of a one-time pass, silent like other
set-up; outside the build's loops it is set-up that runs once, where the data-set exception
still holds (an array read whole from a file, copied whole, doubles its memory). Per-sample
methods (`__getitem__`, PyG's `get`) and methods anything else calls stay per step. Each case is
an invented project, checked once by the installed `torchlint`; a line ending in
`# TL003: text` expects a finding there, every other TL003 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL003",)

CASES = [
    # PyG runs process() once, from the dataset's constructor, and caches its result to disk
    Case(
        "pyg-process-per-molecule",
        rules=RULES,
        files={
            "loader.py": """\
import numpy as np
import torch
from torch_geometric.data import Data, InMemoryDataset


def load_labels(path):
    return np.loadtxt(path, delimiter=",")


class Molecules(InMemoryDataset):
    def process(self):
        labels = load_labels(self.raw_paths[0])
        data_list = []
        for i, smiles in enumerate(self.smiles):
            data = to_graph(smiles)
            data.y = torch.tensor(labels[i, :])
            data_list.append(data)
        torch.save(self.collate(data_list), self.processed_paths[0])

    def get(self, idx):
        return Data(y=torch.tensor(np.asarray(self.rows[idx])))  # TL003: torch.tensor(
""",
        },
    ),
    # methods a torch Dataset's constructor alone reaches, through a retrying recursion
    Case(
        "torch-dataset-build-methods",
        rules=RULES,
        files={
            "fingerprints.py": """\
import os
import pickle

import numpy as np
import torch
from torch.utils import data


class Fingerprints(data.Dataset):
    def __init__(self, root):
        self.root = root
        self._load()

    def _process(self):
        rows = []
        for i, mol in enumerate(self.molecules):
            fp = np.zeros((1024,), dtype=np.int64)
            rows.append({"fp": torch.tensor(fp), "y": torch.tensor(np.asarray(self.labels[i]))})
        with open(os.path.join(self.root, "fp.pkl"), "wb") as f:
            pickle.dump(rows, f)

    def _load(self):
        if os.path.exists(os.path.join(self.root, "fp.pkl")):
            with open(os.path.join(self.root, "fp.pkl"), "rb") as f:
                self.rows = pickle.load(f)
        else:
            self._process()
            self._load()

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return self.rows[index]
""",
        },
    ),
    # nerfstudio's data manager asks a dataparser for its outputs once per split, at set-up
    Case(
        "nerfstudio-dataparser-outputs",
        rules=RULES,
        files={
            "my_dataparser.py": """\
import numpy as np
import torch
from nerfstudio.data.dataparsers.base_dataparser import DataParser


class Scenes(DataParser):
    def _generate_dataparser_outputs(self, split="train"):
        i_all = np.arange(len(self.images))
        i_train = np.linspace(0, len(i_all) - 1, len(i_all) // 2, dtype=int)
        i_eval = np.setdiff1d(i_all, i_train)
        i_train = torch.tensor(i_train, dtype=torch.long)
        i_eval = torch.tensor(i_eval, dtype=torch.long)
        return self._outputs(i_train if split == "train" else i_eval)
""",
        },
    ),
    # a data set read whole and copied whole while the dataset is built: still flagged
    Case(
        "build-copies-whole-data-set",
        rules=RULES,
        files={
            "table.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Table(Dataset):
    def __init__(self, path):
        self._read(path)

    def _read(self, path):
        features = np.load(path)
        self.x = torch.tensor(features)  # TL003: torch.tensor(
""",
        },
    ),
    # a method both the build and __getitem__ call runs per sample; one the training loop
    # calls runs per step: both stay flagged
    Case(
        "dataset-methods-that-repeat",
        rules=RULES,
        files={
            "crops.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Crops(Dataset):
    def __init__(self, n):
        self.n = n
        self.first = self._crop(0)

    def _crop(self, i):
        return torch.tensor(np.full((64, 64), i))  # TL003: torch.tensor(

    def resample(self):  # per epoch, through an instance: no per-step evidence, silent
        self.order = torch.tensor(np.random.permutation(self.n))

    def __getitem__(self, i):
        return self._crop(i)


def train(model, ds, loader):
    for epoch in range(10):
        ds.resample()
        for x in loader:
            model(x).sum().backward()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dataset_build")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_dataset_build(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
