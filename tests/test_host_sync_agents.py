"""TL002 in a reinforcement-learning agent whose `update` another module calls every step: the
agent's `update(replay_iter, step)` steps no optimizer itself but calls `update_critic` and
`update_actor`, which each step their own, once per call. Like a function that steps an
optimizer in its own body and that nothing in the file calls, it is a training step another
module runs once per batch, so what it and its callees read is read every step.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_AGENT = """\
import torch


class Agent:
    def __init__(self, critic, actor, device):
        self.critic = critic.to(device)
        self.actor = actor.to(device)
        self.critic_opt = torch.optim.Adam(critic.parameters())
        self.actor_opt = torch.optim.Adam(actor.parameters())

    def update_critic(self, obs, reward):
        critic_loss = (self.critic(obs) - reward).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        return {"critic_q": self.critic(obs).mean().item()}  # TL002: self.critic(obs)

    def update_actor(self, obs):
        actor_loss = -self.critic(self.actor(obs)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        return {"actor_loss": actor_loss.item()}  # TL002: actor_loss.item()

    def update(self, replay_iter, step):
        obs, reward = next(replay_iter)
        obs, reward = obs.cuda(), reward.cuda()
        metrics = {"batch_reward": reward.mean().item()}  # TL002: reward.mean().item()
        metrics.update(self.update_critic(obs, reward))
        metrics.update(self.update_actor(obs))
        return metrics
"""

CASES = [
    Case(
        "agent-update-through-stepping-methods",
        {
            "agent.py": _AGENT,
            "train.py": """\
import agent


def train(workspace):
    while workspace.step < workspace.steps:
        metrics = workspace.agent.update(workspace.replay_iter, workspace.step)
        workspace.logger.log(metrics)
        workspace.step += 1
""",
        },
    ),
    Case(
        "agent-update-called-in-the-file",
        {
            "agent.py": _AGENT.replace("  # TL002: reward.mean().item()", "")
            .replace("  # TL002: actor_loss.item()", "")
            .replace("  # TL002: self.critic(obs)", "")
            + """

def main(critic, actor, replay_iter):
    agent = Agent(critic, actor, "cuda")
    print(agent.update(replay_iter, 0))
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_agents")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
