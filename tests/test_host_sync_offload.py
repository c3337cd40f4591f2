"""TL002 precision: per-batch results stored into host tensors the code allocated for them.

Layer-by-layer offloaded inference (a model too large for the device's memory with every
batch's activations) keeps each batch's activations in host tensors it allocates up front
(`outs.append(torch.zeros(...))`, no device), runs one layer at a time over every batch, and
stores each result back there (`outs[j] = layer(x)[0].cpu()`): the copy to the host is the
design, not a sync to remove. Checked by the installed `torchlint` command, marked as in
`test_production_cases.py`.

Recall kept: a store into a list the code filled with something else (`[]` of results, `None`
placeholders) is still a copy per batch, and so is one into a buffer built on the device.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "offloaded-layer-outputs",
        {
            "offload.py": """\
import torch


@torch.no_grad()
def run(model, batches, device):
    layers = model.layers
    inps, outs, kept = [], [], []
    for batch in batches:
        inps.append(torch.zeros((batch.shape[1], 64), dtype=torch.float16))
        outs.append(torch.zeros((batch.shape[1], 64), dtype=torch.float16))
        kept.append(torch.zeros((batch.shape[1], 64), device=device))
    for i in range(len(layers)):
        layer = layers[i].to(device)
        for j, batch in enumerate(batches):
            outs[j] = layer(inps[j].to(device))[0].cpu()
            kept[j] = layer(batch.to(device)).cpu()  # TL002: layer(batch.to(device)).cpu()
        layers[i] = layer.cpu()
        inps, outs = outs, inps
    return inps, kept


@torch.no_grad()
def predict(model, batches, device):
    preds = [None] * len(batches)
    for j, batch in enumerate(batches):
        preds[j] = model(batch.to(device)).cpu()  # TL002: model(batch.to(device)).cpu()
    return preds
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_offload")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
