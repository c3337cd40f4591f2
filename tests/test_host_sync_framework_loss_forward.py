"""TL002 recall: a loss module whose instance a framework's per-step hook calls, in another module.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed (validate production, round 6):
a `LightningModule` builds `self.loss = SomeLoss(config)` and calls it in `training_step`, which
Lightning runs every batch, or in a helper method `training_step` calls through `self.`
(LoFTR's `_trainval_inference`, openfold's `AlphaFoldLoss`). The loss's `forward`, in another
module, then runs every step, as it does when a loop over a loader or a method that steps the
optimizer calls it (`ProjectIndex.forward_called_per_step`); its host reads cost a sync a step.

Precision: the same call in a method of a plain class (no framework base) that nothing runs
per step, and in a Lightning hook run once per epoch, leave the loss's reads silent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_LOSS = """\
import torch
from torch import nn


class MatchLoss(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight

    def forward(self, data):
        loss = (data["pred"] - data["target"]).abs().mean()
        data["scalars"] = {{"loss": loss.clone().detach().cpu()}}{mark}
        return loss * self.weight
"""

_MODULE = """\
import pytorch_lightning as pl
import torch

from losses import MatchLoss


class {name}({base}):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss = MatchLoss(1.0)

    def _inference(self, batch):
        batch["pred"] = self.net(batch["x"])
        return self.loss(batch)

    def {method}(self, batch, batch_idx):
        {body}


trainer = pl.Trainer(accelerator="cuda", devices=1)
"""

_MARK = "  # TL002: loss.clone().detach().cpu()"


def _case(case_id: str, mark: str, **module: str) -> Case:
    values = {
        "name": "Matcher",
        "base": "pl.LightningModule",
        "method": "training_step",
        "body": "return self._inference(batch)",
        **module,
    }
    return Case(
        case_id,
        {"losses.py": _LOSS.format(mark=mark), "model.py": _MODULE.format(**values)},
    )


CASES = [
    _case("training-step-calls-the-loss-through-a-helper", _MARK),
    _case(
        "training-step-calls-the-loss-itself",
        _MARK,
        body='batch["pred"] = self.net(batch["x"])\n        return self.loss(batch)',
    ),
    _case("plain-class-method-calls-the-loss", "", base="object"),
    _case("per-epoch-hook-calls-the-loss", "", method="on_train_epoch_end"),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_framework_loss")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
