"""TL001 recall: a model class imported from a folder the project puts on `sys.path` itself.

Detection codebases keep their package under `lib/` and add it to `sys.path` in a small
`_init_paths.py` (`from model.faster_rcnn.vgg16 import vgg16`). The project index resolves
such a dotted name to the one project file that ends the same way (`_on_added_path`); whether
the class built there is an `nn.Module` is answered through it too, so the demo loop's forward
over every image, with no `no_grad`, is found. Invented project, checked once by the installed
`torchlint`. (The model's name says nothing: `twoStage` is no name of the vocabulary, and
the class's lower-case name (`vgg16`) is a class only because the index finds it one.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_FILES = {
    "_init_paths.py": """\
import os.path as osp
import sys

sys.path.insert(0, osp.join(osp.dirname(__file__), "lib"))
""",
    "lib/model/__init__.py": "",
    "lib/model/detector/__init__.py": "",
    "lib/model/detector/base.py": """\
from torch import nn


class _Detector(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.head = nn.Linear(16, len(classes))

    def forward(self, x):
        return self.head(x)
""",
    "lib/model/detector/vgg16.py": """\
from model.detector.base import _Detector


class vgg16(_Detector):
    def __init__(self, classes, pretrained=False):
        super().__init__(classes)
        self.pretrained = pretrained
""",
    "demo.py": """\
import _init_paths
import torch
from model.detector.vgg16 import vgg16

if __name__ == "__main__":
    twoStage = vgg16(["cat", "dog"], pretrained=False)
    twoStage.load_state_dict(torch.load("detector.pth"))
    twoStage.eval()
    for path in image_paths:
        image = torch.load(path)
        scores = twoStage(image)  # TL001: twoStage(image)
        print(scores.sum())
""",
}

CASES = [Case("detector-class-from-an-added-path", _FILES, ("TL001",))]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("eval_added_paths")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_added_path_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
