"""A move to the device of a tensor that stays on the host moves nothing.

A forecasting trainer's `predict()` leaves the batch's targets on the CPU (`batch_y =
batch_y.float()`, no `.to`) and builds the decoder input with
`torch.zeros(...).float().to(batch_y.device)`: the zeros stay on the CPU, so there is no copy
to avoid (and `device=` would change nothing). The training loop beside it moves `batch_y` to
the GPU first, and the same line there is a finding. Checked once by the installed `torchlint`
(`# TL103: text` marks an expected finding).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "device-of-a-host-batch",
        files={
            "exp.py": """\
import torch


class Exp:
    def train(self, train_loader, model, optimizer):
        for batch_x, batch_y in train_loader:
            batch_x = batch_x.float().to(self.device)
            batch_y = batch_y.float().to(self.device)
            dec = torch.zeros([batch_y.shape[0], 4]).float().to(batch_y.device)  # TL103: torch.zeros([batch_y.shape[0], 4])
            loss = model(batch_x, dec).sum() - batch_y.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def predict(self, pred_loader, model, optimizer):
        for batch_x, batch_y in pred_loader:
            batch_x = batch_x.float().to(self.device)
            batch_y = batch_y.float()
            dec = torch.zeros([batch_y.shape[0], 4]).float().to(batch_y.device)
            loss = model(batch_x, dec).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        },
        rules=("TL103",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("host_device_target")), CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_host_device_target_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
