"""TL003 leaves a library module's `__main__` demo alone: a round trip of a few images through a
model that other modules import is a check, not the project's training (the shared
`LibraryDemo` fact, which per-batch loops and TL001's evaluation scopes already read).

Invented projects, checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL003: text` expects that finding there)."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_VAE = """\
import os
import sys

import numpy as np
import torch
from PIL import Image
from torch import nn


class VAE(nn.Module):
    def forward(self, x):
        return x


if __name__ == "__main__":
    model = VAE()
    for name in os.listdir(sys.argv[1]):
        image = Image.open(name)
        x = torch.tensor(np.array(image)).float(){mark}
        model(x)
"""

CASES = [
    Case(
        "demo-of-an-imported-module",
        files={
            "vae.py": _VAE.format(mark=""),
            "train.py": "from vae import VAE\n\nmodel = VAE()\n",
        },
        rules=("TL003",),
    ),
    # The copy sits in a function the demo block defines: it exists only when the demo runs.
    Case(
        "function-defined-in-the-demo",
        files={
            "vae.py": _VAE.format(mark="").replace(
                "    for name in os.listdir(sys.argv[1]):\n        image = Image.open(name)\n",
                "\n    def round_trip(name):\n        image = Image.open(name)\n",
            )
            + "\n    for name in os.listdir(sys.argv[1]):\n        round_trip(name)\n",
            "train.py": "from vae import VAE\n\nmodel = VAE()\n",
        },
        rules=("TL003",),
    ),
    # Nobody imports the module: its block is the program, and the copy repeats per image.
    Case(
        "block-of-a-module-nobody-imports",
        files={"vae.py": _VAE.format(mark="  # TL003: torch.tensor(np.array(image))")},
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("demo-copies")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_library_demo_copy(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
