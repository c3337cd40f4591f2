"""TL001 classes from the pooled validate production sample (issue 24, fix round 5), each an
invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- A forward whose value the code turns into numpy without detaching it (`model(x).cpu().numpy()`,
  or a helper of the file doing so to what it is handed: `stats.append_torch(features)`) records
  no graph: `.numpy()` raises on a tensor that requires grad. Values that left the graph first
  (`argmax`, `.detach()`) prove nothing.
- A helper whose only forward runs on a made-up input (`torch.randn(1, 2, n)`: a conversion
  check) evaluates no data, so calling it once per converted checkpoint is no evaluation.
- A method of a plain class that the project calls only on its other classes (by its name, on
  receivers that cannot hold this class) never runs: `Trainer.test_step` beside other trainers'
  own `test_step`. One that nothing calls at all is API, and still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "features_turned_into_numpy_by_a_helper_method",
        {
            "metrics.py": """\
import numpy as np
import torch

_cache = dict()


def get_detector(url, device):
    if url not in _cache:
        with open(url, "rb") as f:
            _cache[url] = torch.jit.load(f).eval().to(device)
    return _cache[url]


class Stats:
    def __init__(self):
        self.items = []

    def append(self, x):
        self.items.append(np.asarray(x, dtype=np.float32))

    def append_torch(self, x, num_gpus=1):
        if num_gpus > 1:
            x = torch.stack([x.clone() for _ in range(num_gpus)], dim=1).flatten(0, 1)
        self.append(x.cpu().numpy())


def feature_stats(loader, url, device):
    stats = Stats()
    detector = get_detector(url, device)
    for images, _labels in loader:
        features = detector(images.to(device))
        stats.append_torch(features)
    return stats
""",
        },
        rules=("TL001",),
    ),
    Case(
        "forward_turned_into_numpy_in_its_chain",
        {
            "evaluate.py": """\
import torch
from torch import nn


def evaluate(model, val_loader):
    model.eval()
    preds = []
    for x, _ in val_loader:
        preds.append(model(x).softmax(1).cpu().numpy())
    return preds


def embed(model, val_loader):
    model.eval()
    out = []
    for x, _ in val_loader:
        feats = model(x)
        out.append(feats[:, 0].cpu().numpy())
    return out
""",
        },
        rules=("TL001",),
    ),
    Case(
        "values_that_left_the_graph_prove_nothing",
        {
            "evaluate.py": """\
import torch
from torch import nn


def evaluate(model, val_loader):
    model.eval()
    preds = []
    for x, _ in val_loader:
        preds.append(model(x).argmax(1).cpu().numpy())  # TL001: model(x)
    return preds


def embed(model, val_loader):
    model.eval()
    out = []
    for x, _ in val_loader:
        feats = model(x)  # TL001: model(x)
        out.append(feats.detach().cpu().numpy())
    return out


def score(model, val_loader, verbose):
    model.eval()
    out = []
    for x, _ in val_loader:
        feats = model(x)  # TL001: model(x)
        out.append(feats.sum())
        if verbose:
            print(feats.cpu().numpy())
    return out
""",
        },
        rules=("TL001",),
    ),
    Case(
        "helper_forward_on_a_made_up_input_in_a_loop",
        {
            "convert.py": """\
import torch

from models import build_model


def compare(ref, model):
    test = torch.randn(1, 2, 44100 * 10)
    out = model(test)
    return 20 * torch.log10((out - ref(test)).norm() / out.norm()).item()


def main(sigs, ref):
    for sig in sigs:
        model = build_model(sig)
        model.load_state_dict(torch.load(sig))
        print(sig, compare(ref, model))


if __name__ == "__main__":
    main(["a", "b"], torch.nn.Identity())
""",
            "models.py": """\
from torch import nn


def build_model(sig):
    return nn.Conv1d(2, 2, 3)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "helper_forward_on_data_in_a_loop_is_still_reported",
        {
            "predict.py": """\
import torch

from models import build_model


def score(model, path):
    x = torch.load(path)
    return model(x).norm().item()  # TL001: model(x)


def main(paths):
    model = build_model("a")
    model.load_state_dict(torch.load("w.pt"))
    for path in paths:
        print(path, score(model, path))


if __name__ == "__main__":
    main(["a", "b"])
""",
            "models.py": """\
from torch import nn


def build_model(sig):
    return nn.Conv1d(2, 2, 3)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "method_nothing_in_the_project_calls",
        {
            "sdf/__init__.py": "",
            "sdf/utils.py": """\
import torch


class Trainer(object):
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def train_step(self, data):
        pred = self.model(data["points"])
        return pred, self.criterion(pred, data["sdfs"])

    def test_step(self, data):
        pred = self.model(data["points"])
        return pred

    def train(self, loader, opt):
        for data in loader:
            pred, loss = self.train_step(data)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
            "nerf/__init__.py": "",
            "nerf/utils.py": """\
import torch


class Trainer(object):
    def __init__(self, model):
        self.model = model

    def test_step(self, data):
        return self.model(data["rays"])

    @torch.no_grad()
    def test(self, loader):
        return [self.test_step(data) for data in loader]
""",
        },
        rules=("TL001",),
    ),
    Case(
        "method_no_code_calls_at_all_is_api_and_still_reported",
        {
            "evaluator.py": """\
import torch


class Evaluator(object):
    def __init__(self, model):
        self.model = model

    def evaluate(self, loader):
        self.model.eval()
        return [self.model(x).sum() for x in loader]  # TL001: self.model(x)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "method_a_loop_of_its_class_calls_is_still_reported",
        {
            "sdf/__init__.py": "",
            "sdf/utils.py": """\
import torch


class Trainer(object):
    def __init__(self, model):
        self.model = model

    def test_step(self, data):
        pred = self.model(data["points"])  # TL001: self.model(data["points"])
        return pred

    def run(self, loader):
        return [self.test_step(data).cpu() for data in loader]
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl001_round5")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
