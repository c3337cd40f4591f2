"""TL101 asks for `pin_memory` only where pinning can serve the copy a loop makes.

`pin_memory=True` pins the tensors of each batch the loader yields. A loop that converts a
batch on the host before copying it (`x.float().to(device)`, `(x / 255).cuda()`,
`y.clone().cuda()`) copies a new tensor in pageable memory, so pinning never applies
(production class: a time-series trainer casting every batch with `.float()` first). Views and
indexing keep the pinned memory; a conversion after the copy runs on the device. Workers still
load batches ahead whatever is copied, so they are still asked for.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_LOADER = "from torch.utils.data import DataLoader\n\n\n"

CASES = [
    Case(
        "cast-on-the-host-before-every-copy",
        rules=("TL101",),
        files={
            "train.py": _LOADER
            + """\
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32, num_workers=4)
    for batch_x, batch_y in loader:
        batch_x = batch_x.float().to(device)
        batch_y = batch_y.float().to(device)
        model(batch_x, batch_y).backward()
        opt.step()
""",
        },
    ),
    Case(
        "scaled-and-cloned-batches",
        rules=("TL101",),
        files={
            "train.py": _LOADER
            + """\
def train(model, data, opt):
    loader = DataLoader(data, batch_size=32, num_workers=4)
    for images, labels in loader:
        images = (images / 255.0).cuda()
        labels = labels.clone().cuda()
        model(images, labels).backward()
        opt.step()
""",
        },
    ),
    Case(
        "cast-before-the-copy-without-workers-asks-for-workers-only",
        rules=("TL101",),
        files={
            "train.py": _LOADER
            + """\
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32)  # TL101: DataLoader(data, batch_size=32)
    for x, y in loader:
        x, y = x.float().to(device), y.long().to(device)
        model(x, y).backward()
        opt.step()
""",
        },
    ),
    Case(
        "views-and-late-casts-keep-the-pinned-copy",
        rules=("TL101",),
        files={
            "train.py": _LOADER
            + """\
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32, num_workers=4)  # TL101: DataLoader(data, batch_size=32, num_workers=4)
    for x, y in loader:
        x = x.view(x.size(0), -1).to(device).float()
        y = y[:, 0].cuda().long()
        model(x, y).backward()
        opt.step()
""",
        },
    ),
    Case(
        "one-tensor-copied-as-it-comes-is-enough",
        rules=("TL101",),
        files={
            "train.py": _LOADER
            + """\
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32, num_workers=4)  # TL101: DataLoader(data, batch_size=32, num_workers=4)
    for x, y in loader:
        x = x.to(device)
        y = y.float().to(device)
        model(x, y).backward()
        opt.step()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl101_host_conversion"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl101_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()


def test_workers_alone_are_asked_for_and_fixed(findings: list[dict]) -> None:
    """Where pinning cannot serve the copies, the finding and its fix leave `pin_memory` out."""
    (finding,) = [
        d
        for d in findings
        if d["filename"].startswith("cast-before-the-copy-without-workers-asks-for-workers-only/")
    ]
    assert finding["message"] == "`DataLoader` feeding a device loop without `num_workers`"
    (edit,) = finding["fix"]["edits"]
    assert edit["content"] == ", num_workers=4"
