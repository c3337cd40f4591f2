"""TL107 on a gradient check that runs once.

Anomaly detection and the autograd profiler are modes: switched on once, they slow every step
that follows, so one call before the loop is a finding. A gradient check is a computation: it
costs what one call costs, where it is called. Run once in a program (a module's `__main__`
self-check after its comparison loop, a check before training starts), it slows no step;
judges reject such findings (CoinCheung/pytorch-loss `swish.py`, `hswish.py`: "one gradcheck
of the custom Function after the self-check loop: it runs once"). A check inside the training
loop, or in a helper every step calls, still costs every step.

Each case is an invented project checked once by the installed `torchlint` (see
`project_cases.py`); a line ending in `# TL107: text` expects a finding there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_TRAIN = """\
import torch
from torch.autograd import gradcheck

for x, y in loader:
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

CASES = [
    Case(
        "gradcheck-once-after-the-self-check-loop",
        files={
            "swish.py": """\
import torch


class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad * (s + x * s * (1 - s))


if __name__ == "__main__":
    net = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    for i in range(100):
        loss = SwishFunction.apply(net(torch.randn(8, 4))).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    from torch.autograd import gradcheck

    inten = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    gradcheck(SwishFunction.apply, [inten])
"""
        },
        rules=("TL107",),
    ),
    Case(
        "gradcheck-once-before-training",
        files={
            "train.py": "import torch\n\nassert torch.autograd.gradcheck(layer, (x,))\n" + _TRAIN
        },
        rules=("TL107",),
    ),
    Case(
        "gradcheck-every-step",
        files={
            "train.py": _TRAIN
            + "    assert gradcheck(layer, (x,))  # TL107: gradcheck(layer, (x,))\n"
        },
        rules=("TL107",),
    ),
    Case(
        "gradcheck-in-a-helper-every-step-calls",
        files={
            "train.py": """\
import torch


def step(x, y):
    torch.autograd.gradgradcheck(layer, (x,))  # TL107: torch.autograd.gradgradcheck(layer, (x,))
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()


for x, y in loader:
    step(x, y)
"""
        },
        rules=("TL107",),
    ),
    Case(
        "anomaly-mode-set-once-slows-every-step",
        files={
            "train.py": "import torch\n\ntorch.autograd.set_detect_anomaly(True)  "
            "# TL107: torch.autograd.set_detect_anomaly(True)\n" + _TRAIN
        },
        rules=("TL107",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl107_one_off")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl107_one_off_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
