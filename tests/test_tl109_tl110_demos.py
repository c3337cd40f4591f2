"""TL109 and TL110 leave a library module's `__main__` self-test alone.

Production class: a library of losses or layers ends each module with a `__main__` block that
trains a toy net with plain SGD on random tensors to check the module (the demo fact of
`analysis/demos.py`: other modules import the file, and the block reads no loader). Fused
optimizers and cuDNN autotuning belong to the project's training entry point, not to that
check. Each case is an invented project checked by the installed `torchlint`.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_SELF_TEST = """\
import torch
from torch import nn


class FocalLoss(nn.Module):
    def forward(self, logits, labels):
        return nn.functional.cross_entropy(logits, labels)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.LazyLinear(10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    criterion = FocalLoss()
    for it in range(100):
        logits = net(torch.randn(16, 3, 32, 32).cuda())
        loss = criterion(logits, torch.randint(0, 10, (16,)).cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())
"""

_SELF_TEST_THROUGH_A_FUNCTION = """\
import torch
from torch import nn


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def check():
    net = nn.Sequential(nn.Conv2d(3, 8, 3), Swish()).cuda()
    opt = torch.optim.AdamW(net.parameters())
    for _ in range(10):
        net(torch.randn(4, 3, 16, 16).cuda()).mean().backward()
        opt.step()


if __name__ == "__main__":
    check()
"""

CASES = [
    Case(
        "loss-library-self-test-with-sgd",
        rules=("TL109", "TL110"),
        files={
            "losses/__init__.py": "from .focal import FocalLoss\n",
            "losses/focal.py": _SELF_TEST,
        },
    ),
    Case(
        "layer-library-self-test-in-a-function",
        rules=("TL109", "TL110"),
        files={
            "layers/__init__.py": "",
            "layers/act.py": _SELF_TEST_THROUGH_A_FUNCTION,
            "model.py": "from layers.act import Swish\n",
        },
    ),
    Case(
        "rl-script-others-import-that-parses-its-arguments-is-flagged",
        rules=("TL109",),
        files={
            "dqn.py": """\
import argparse

import gym
import torch
from torch import nn


class QNetwork(nn.Module):
    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    args = argparse.ArgumentParser().parse_args()
    env = gym.make(args.env_id)
    q = QNetwork().to("cuda")
    opt = torch.optim.Adam(q.parameters(), lr=args.lr)  # TL109: torch.optim.Adam
    obs = env.reset()
    for step in range(args.total_steps):
        loss = q(torch.as_tensor(obs, device="cuda")).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        obs, reward, done, info = env.step(env.action_space.sample())
""",
            "distill.py": "from dqn import QNetwork\n",
        },
    ),
    Case(
        "the-same-block-in-a-script-nobody-imports-is-flagged",
        rules=("TL109", "TL110"),
        files={
            "focal.py": """\
import torch
from torch import nn

if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten()).cuda()  # TL110: nn.Conv2d(3, 8, 3)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)  # TL109: torch.optim.SGD
    for it in range(100):
        loss = net(torch.randn(16, 3, 32, 32).cuda()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl109_tl110_demos"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_demo_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
