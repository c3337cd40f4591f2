"""A branch taken only when a value is NaN or infinite is a rare path, for every rule that asks.

Training code guards against a diverged step: `if math.isnan(grad_norm):` drops the step's
gradients and carries on, `if not torch.isfinite(loss).all():` logs the loss and skips. Those
branches run when training has gone wrong, not on every batch, so what they do (a `zero_grad()`
beside the per-update one, a log line's `.item()`, a tensor built for the report) costs nothing
per step (`LoopFacts.rare_branch`). The usual arm (`else:`, or the body of `if not
math.isnan(...)`) still runs every step, and its findings stay; so does the test itself, which
reads a device tensor on the host every step.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_HEAD = (
    "import math\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"
)
_OLD_TORCH = "torch==1.13.1\n"  # a bare zero_grad() zeroes in place: TL006 applies

CASES = [
    Case(
        "zero-grad-on-a-nan-norm-beside-the-update",
        rules=("TL006",),
        files={
            "requirements.txt": _OLD_TORCH,
            "train.py": _HEAD
            + """\
def train(model, data, optimizer, accum, log):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    pending = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if math.isnan(norm):
            log.warning("norm is NaN")
            optimizer.zero_grad()
            pending = 0
        else:
            pending += 1
            if pending == accum:
                optimizer.step()
                optimizer.zero_grad()  # TL006: optimizer.zero_grad()
                pending = 0
""",
        },
    ),
    Case(
        "zero-grad-in-the-usual-arm-of-a-finite-test",
        rules=("TL006",),
        files={
            "requirements.txt": _OLD_TORCH,
            "train.py": _HEAD
            + """\
def train(model, data, optimizer):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if not math.isnan(norm):
            optimizer.step()
            optimizer.zero_grad()  # TL006: optimizer.zero_grad()
        elif np.isinf(norm):
            model.zero_grad()
""",
        },
    ),
    Case(
        "reports-under-a-non-finite-loss",
        rules=("TL002", "TL103"),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, optimizer, log):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        if torch.isnan(loss).any():  # TL002: torch.isnan(loss).any()
            log.warning("loss %s at %s", loss.item(), step)
            torch.save({"x": x, "mask": torch.zeros(3).cuda()}, "bad_batch.pt")
            continue
        if (~torch.isfinite(loss)).any():  # TL002: (~torch.isfinite(loss)).any()
            print(loss.item())
            continue
        if not loss.isfinite():  # TL002: loss.isfinite()
            print(loss.item())
            continue
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(loss.item())  # TL002: loss.item()
        log.info("%s", torch.ones(2).cuda())  # TL103: torch.ones(2)
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("rare_numeric"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_rare_numeric_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
