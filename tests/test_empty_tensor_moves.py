"""TL103 on tensors with no elements: a shape with a literal 0 dimension moves no data.

`torch.ones((n, 0, 2)).cuda()` fills nothing on the host and its copy to the device copies
nothing, so building it there saves nothing (a fallback for a batch with no images, say). A
size only known at run time may be anything and stays a finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL103",)

CASES = [
    Case(
        "empty-shapes-move-nothing",
        {
            "model.py": """\
import torch
from torch import nn


class Pool(nn.Module):
    def forward(self, x, n):
        empty = -torch.ones((n - 1, 0, 2)).cuda()
        none = torch.zeros(n, 0).to(x.device)
        nothing = torch.empty(size=(0, 3)).cuda()
        filled = torch.full((0, n), -1).to(x.device)
        rows = torch.zeros(n, 3).cuda()  # TL103: torch.zeros(n, 3).cuda()
        zero = torch.zeros(x.size(0) - 0).cuda()  # TL103: torch.zeros(x.size(0) - 0).cuda()
        counts = torch.arange(0, n).cuda()  # TL103: torch.arange(0, n).cuda()
        return empty, none, nothing, filled, rows, zero, counts
""",
        },
        rules=RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("empty_tensor")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_empty_tensor_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
