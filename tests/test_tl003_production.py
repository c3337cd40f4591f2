"""TL003 false-alarm classes of production code: each an invented project.

Seen on a held-out measurement of production repositories; the snippets are invented. A line
marked `# TL003: text` expects a finding there (`project_cases.Case`); every other TL003 finding
of a case is a failure. One `torchlint` run checks all cases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from project_cases import Case, case_findings, check_projects

CASES = [
    # --- 7. copies that run once while a data set or sampler is built ---
    Case(
        "copies-while-building-a-dataset",
        {
            "data.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset, Sampler


class Frames(Dataset):
    def __init__(self, paths):
        self.items = [np.load(p) for p in paths]
        self.frames = np.concatenate(self.items)
        self.weights = self._weights()
        self.index = torch.tensor(np.arange(len(paths)))

    def _weights(self):
        counts = np.bincount([len(i) for i in self.items])
        return torch.tensor(counts / counts.sum())

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return torch.tensor(self.frames[i])  # TL003: torch.tensor(self.frames[i])


class Balanced(Sampler):
    def __init__(self, labels):
        self.labels = torch.tensor(np.asarray(labels))

    def __iter__(self):
        return iter(self.labels.argsort().tolist())
""",
        },
        rules=("TL003",),
    ),
    Case(
        "methods-only-construction-calls",
        {
            "points.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Points(Dataset):
    def __init__(self, n):
        self.build_index(n)
        self.offsets = self._offsets(n)

    def build_index(self, n):
        self._index(n)

    def _index(self, n):
        keys = np.arange(n) * 2
        self.keys = torch.tensor(keys)

    def _offsets(self, n):
        return torch.tensor(np.arange(n) + 1)

    def _row(self, i):
        return torch.tensor(np.arange(i) + 1)  # TL003: torch.tensor(np.arange(i) + 1)

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, i):
        return self.keys[i], self._row(i)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "alternative-constructor-classmethod",
        {
            "points.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Points(Dataset):
    def __init__(self, keys):
        self.keys = keys

    @classmethod
    def from_arrays(cls, a):
        return cls(torch.tensor(np.sort(a)))

    @classmethod
    def resampled(cls, a):
        return cls(torch.tensor(np.sort(a)))  # TL003: torch.tensor(np.sort(a))

    @staticmethod
    def keys_of(a):  # nothing shows it repeating: unknown is silent in a method
        return torch.tensor(np.sort(a))


def main(a):
    return Points.from_arrays(a)


def epochs(a, n):
    for _ in range(n):
        yield Points.resampled(a)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "method-a-subclass-also-calls",
        {
            "points.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Points(Dataset):
    def __init__(self, n):
        self._index(n)

    def _index(self, n):
        self.keys = torch.tensor(np.arange(n) * 2)  # TL003: torch.tensor(np.arange(n) * 2)


class Shuffled(Points):
    def __getitem__(self, i):
        self._index(i)
        return self.keys[i]
""",
        },
        rules=("TL003",),
    ),
    # --- 8. arrays with a negative stride: `from_numpy`/`as_tensor` raise on them ---
    Case(
        "negative-stride-arrays",
        {
            "flip.py": """\
import numpy as np
import torch


def mirrored(x):
    return torch.tensor(np.array(x)[::-1])


def batches(loader):
    for x in loader:
        a = np.asarray(x)[:, ::-1]
        b = np.fliplr(np.asarray(x)).reshape(-1)
        c = np.asarray(x)[::2]
        yield torch.tensor(a), torch.tensor(b), torch.tensor(c)  # TL003: torch.tensor(c)
""",
        },
        rules=("TL003",),
    ),
    # --- 9. copies that become a module's weights: a checkpoint conversion, model constants ---
    Case(
        "copies-that-become-module-weights",
        {
            "convert.py": """\
import numpy as np
import torch
from torch import nn


def set_param(layer, weight, bias=None):
    layer.weight = nn.Parameter(weight)
    if bias is not None:
        layer.bias = torch.nn.Parameter(bias)


def set_block(weights, layer, hidden):
    w = np.asarray(weights[0])
    b = np.asarray(weights[1])
    set_param(layer.dense, torch.tensor(w).transpose(0, 1).contiguous().view(-1, hidden), torch.tensor(b))


def convert(weights, model, hidden):
    for i, layer in enumerate(model.layers):
        set_block(weights[i], layer, hidden)
    for i, table in enumerate(weights[-1]):
        model.tables[i] = nn.Parameter(torch.tensor(np.asarray(table)))


def show(weights, model):
    for table in weights:
        print(torch.tensor(np.asarray(table)).norm())  # TL003: torch.tensor(np.asarray(table))
""",
            "quantize.py": """\
import numpy as np
import torch
from torch import nn, tensor


class Quantizer(nn.Module):
    def __init__(self, remap):
        super().__init__()
        self.register_buffer("used", torch.tensor(np.load(remap)))
        self.register_buffer(name="order", tensor=torch.tensor(np.load(remap + ".order")))
        bands = np.load(remap + ".bands").astype("float32")
        self.bands = nn.Parameter(tensor(bands), requires_grad=False)


class Table(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.rows = torch.tensor(np.load(path))  # TL003: torch.tensor(np.load(path))
""",
        },
        rules=("TL003",),
    ),
    # --- 10. set-up of a training run, however often the run repeats ---
    Case(
        "set-up-of-a-repeated-training-run",
        {
            "train.py": """\
import numpy as np
import torch


def train(model, loader, optimizer, labels):
    classes = torch.tensor(np.concatenate(labels)[:, 0])
    for x, y in loader:
        w = torch.tensor(np.stack(y))  # TL003: torch.tensor(np.stack(y))
        model(x, w).mean().backward()
        optimizer.step()
    return classes


def step(model, optimizer, batch):
    scale = torch.tensor(np.asarray(batch[0]))  # TL003: torch.tensor(np.asarray(batch[0]))
    for chunk in batch[1]:
        model(chunk, scale).mean().backward()
    optimizer.step()


def fit(model, optimizer, loader):
    for batch in loader:
        step(model, optimizer, batch)


def evolve(model, loader, optimizer, labels):
    for _ in range(300):
        train(model, loader, optimizer, labels)
    fit(model, optimizer, loader)
""",
            "head.py": """\
import numpy as np
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x, knots, n_batches):
        w = torch.tensor(np.stack(knots))  # TL003: torch.tensor(np.stack(knots))
        for i in range(n_batches):
            x[i] = self.proj(x[i]) * w
        return x
""",
        },
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl003")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl003_production_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()


def test_negative_stride_needs_a_copy() -> None:
    """Why the rule is silent there: no constructor takes a reversed view, so swapping one for
    another fixes nothing; only `.copy()` does, after which sharing works."""
    reversed_view = np.arange(6.0).reshape(2, 3)[:, ::-1]
    for make in (torch.tensor, torch.from_numpy, torch.as_tensor):
        with pytest.raises(ValueError, match="negative"):
            make(reversed_view)
    assert torch.from_numpy(reversed_view.copy()).tolist() == reversed_view.tolist()
