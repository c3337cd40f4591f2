"""TL001: a method's callers are the calls whose receiver may hold an instance of its class.

Callers of a method are found by its name (`x.start()`), in the file and across the project.
A call on `self` of a class unrelated to the method's, or on a local name bound only to an
instance of another library's class (`wrapper = op.WrapperPython()`), cannot run it: a demo's
`start()`, run once by `main.py`, is not repeated by the pose library's `wrapper.start()` in a
loop, nor by another class's own `start()`. Invented projects, checked once by the installed
`torchlint`; the twins keep the findings where the receiver may be the class.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_IO = """\
import torch

from net import Model


class IO:
    def __init__(self, argv=None):
        self.dev = "cuda:0"
        self.model = Model().to(self.dev)
        self.model.load_state_dict(torch.load("weights.pt"))
        self.label_names = ["walk", "run"]
"""

_NET = """\
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 1)

    def forward(self, x):
        return self.conv(x)
"""

_MAIN = """\
import sys

from processor.demo import Demo

if __name__ == "__main__":
    processor = Demo(sys.argv[2:])
    processor.start()
"""


def _demo(poses: str, mark: str = "") -> str:
    """A demo processor whose `start()` predicts once, after reading poses with `poses`."""
    return f"""\
import numpy as np
import torch

from .io import IO


class Demo(IO):
    def start(self):
        frames = self.read_poses()
        data = torch.from_numpy(frames).float().to(self.dev)
        self.model.eval()
        output = self.model(data){mark}
        label = output.sum(dim=2).argmax(dim=1)
        print(self.label_names[int(label[0])])

{poses}"""


_WRAPPER_POSES = """\
    def read_poses(self):
        from openpose import pyopenpose as op

        frames = []
        for path in ["a.mp4", "b.mp4"]:
            wrapper = op.WrapperPython()
            wrapper.configure({"video": path})
            wrapper.start()
            frames.append(np.zeros((3, 300, 18), dtype=np.float32))
        return np.stack(frames)
"""

# The same loop, but the receiver is a parameter: it may be a `Demo`.
_PARAMETER_POSES = """\
    def read_poses(self, wrapper=None):
        frames = []
        for path in ["a.mp4", "b.mp4"]:
            wrapper.configure({"video": path})
            wrapper.start()
            frames.append(np.zeros((3, 300, 18), dtype=np.float32))
        return np.stack(frames)
"""

# Another class of the file starts its own threads in a loop: `self` there is no `Demo`.
_OTHER_CLASS_POSES = """\
    def read_poses(self):
        return np.zeros((2, 3, 300, 18), dtype=np.float32)


class Reader:
    def start(self):
        pass

    def run(self, paths):
        for path in paths:
            self.start()
"""

# A subclass of `Demo` runs `start()` on every frame: `self` there is a `Demo`.
_SUBCLASS_POSES = """\
    def read_poses(self):
        return np.zeros((2, 3, 300, 18), dtype=np.float32)


class Realtime(Demo):
    def run(self, frames):
        for frame in frames:
            self.start()
"""

_MARK = "  # TL001: self.model(data)"


def _project(poses: str, mark: str = "") -> dict[str, str]:
    return {
        "main.py": _MAIN,
        "net.py": _NET,
        "processor/__init__.py": "",
        "processor/io.py": _IO,
        "processor/demo.py": _demo(poses, mark),
    }


CASES = [
    Case("start-and-another-librarys-start", _project(_WRAPPER_POSES), ("TL001",)),
    Case("start-and-a-parameters-start", _project(_PARAMETER_POSES, _MARK), ("TL001",)),
    Case("start-and-an-unrelated-classs-start", _project(_OTHER_CLASS_POSES), ("TL001",)),
    Case("start-and-a-subclasss-start", _project(_SUBCLASS_POSES, _MARK), ("TL001",)),
]


# A model API method every caller of which runs it with grad off: the trainer hands its batch
# evaluator over to a local name in a `no_grad` evaluation, and a sibling model class's own
# `predict` (which training calls with grad on) calls `self.full_sort_predict` of its own class.
_RECOMMENDERS = {
    "base.py": """\
from torch import nn


class Recommender(nn.Module):
    def calculate_loss(self, x):
        raise NotImplementedError
""",
    "models.py": """\
import torch
from torch import nn

from base import Recommender


class Ripple(Recommender):
    def __init__(self, n, d):
        super().__init__()
        self.embed = nn.Embedding(n, d)

    def forward(self, x):
        return self.embed(x).sum(-1)

    def full_sort_predict(self, x):
        self.rows = []
        for hop in range(3):
            self.rows.append(self.embed(x + hop)){mark}
        return torch.stack(self.rows).sum(0)


class Diffusion(Recommender):
    def __init__(self, n, d):
        super().__init__()
        self.embed = nn.Embedding(n, d)

    def forward(self, x):
        return self.embed(x).sum(-1)

    def full_sort_predict(self, x):
        return self.embed(x).mean(-1)

    def predict(self, x):
        return self.full_sort_predict(x)[:, 0]
""",
    "trainer.py": """\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_loader):
        for batch in train_loader:
            negatives = self.model.predict(batch).argmax(-1)
            loss = self.model(batch).mean() + negatives.float().mean()
            loss.backward()
            self.optimizer.step()

    def _full_batch_eval(self, batch):
        return self.model.full_sort_predict(batch)

    {decorator}
    def evaluate(self, loader):
        eval_func = self._full_batch_eval
        return [eval_func(batch) for batch in loader]
""",
}


def _recommenders(decorator: str, mark: str) -> dict[str, str]:
    return {
        name: text.replace("{decorator}", decorator).replace("{mark}", mark)
        for name, text in _RECOMMENDERS.items()
    }


CASES += [
    Case(
        "batch-evaluator-handed-to-a-local-under-no-grad",
        _recommenders("@torch.no_grad()", ""),
        ("TL001",),
    ),
    Case(
        "batch-evaluator-handed-to-a-local-with-grad-on",
        _recommenders("", "  # TL001: self.embed(x + hop)"),
        ("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_receivers")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_receiver_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
