"""A function or method the file never calls runs once when the project's other modules call it
only from code that runs once (`LoopFacts.runs_once` asks `ProjectIndex.runs_once`, as TL001's
evaluation already does): a calibrator's `fit` in a command's `main` copies a few fitted numbers
once, not per batch (TL003).

Invented projects, checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL003: text` expects that finding there)."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_CALIBRATOR = """\
import numpy as np
import torch
from scipy.optimize import fmin


class ZScaling:
    def fit(self, preds, targets):
        scalings = np.zeros(preds.shape[1])
        for j in range(preds.shape[1]):
            scalings[j] = fmin(lambda s: ((preds[:, j] * s - targets[:, j]) ** 2).sum(), x0=1.0).item()
        self.scalings = torch.tensor(scalings){mark}
        return self
"""
_PREDICT = """\
import numpy as np
from pkg.calibrator import ZScaling


def main(preds, targets):
    calibrator = ZScaling()
{call}


if __name__ == "__main__":
    main(np.zeros((3, 2)), np.zeros((3, 2)))
"""

CASES = [
    Case(
        "method-called-once-elsewhere",
        files={
            "pkg/__init__.py": "",
            "pkg/calibrator.py": _CALIBRATOR.format(mark=""),
            "pkg/predict.py": _PREDICT.format(call="    calibrator.fit(preds, targets)"),
        },
        rules=("TL003",),
    ),
    # Called in a loop elsewhere: the copy repeats.
    Case(
        "method-called-in-a-loop-elsewhere",
        files={
            "pkg/__init__.py": "",
            "pkg/calibrator.py": _CALIBRATOR.format(mark="  # TL003: torch.tensor(scalings)"),
            "pkg/predict.py": _PREDICT.format(
                call="    for _ in range(10):\n        calibrator.fit(preds, targets)"
            ),
        },
        rules=("TL003",),
    ),
    # `forward` runs per batch through `model(x)`, a call that does not name it, however often
    # the project names it: what it calls may repeat.
    Case(
        "forward-named-once-elsewhere",
        files={
            "layers.py": (
                "import torch\nfrom torch import nn\n\n\nclass Corr(nn.Module):\n"
                "    def forward(self, x):\n        return self.agg(x)\n\n"
                "    def agg(self, x):\n"
                "        index = torch.arange(x.shape[1]).cuda()  # TL103: torch.arange(x.shape[1])\n"
                "        return x[:, index]\n"
            ),
            "train.py": (
                "import torch\nfrom layers import Corr\n\n\ndef main(loader, opt):\n"
                "    model = Corr()\n    print(model.forward(torch.zeros(2, 3)))\n"
                "    for x in loader:\n        model(x.cuda()).sum().backward()\n"
                "        opt.step()\n"
            ),
        },
        rules=("TL003", "TL103"),
    ),
    # Nobody calls it: unknown, so it may repeat.
    Case(
        "method-nobody-calls",
        files={
            "pkg/__init__.py": "",
            "pkg/calibrator.py": _CALIBRATOR.format(mark="  # TL003: torch.tensor(scalings)"),
        },
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("once-elsewhere")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_once_elsewhere(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
