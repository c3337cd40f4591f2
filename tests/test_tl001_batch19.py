"""TL001 false alarms that the judges of held-out batch 19 found on production code (issue 24),
each an invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- A policy's `evaluate_actions` whose result a trainer backpropagates is the update's forward,
  also where the trainer's module does not import the policy's: a runner imports both and hands
  the policy to the trainer (imported at the top or, as here, in a function).
- A training hook that is no module calls its own `eval()` method (`self.eval()`): that puts
  nothing in eval mode, so its numpy matching helper `self.associate(pred, segment)` called with
  tensors is no forward pass.
- A project model deriving from transformers' `GenerationMixin` whose `generate` hands over to
  `super().generate(...)` (decorated no_grad in the library) generates without grad, also when
  the script imports it through its package, moves it (`prompt_model = prompt_model.cuda()`)
  and receives it as a parameter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, obs, actions):
        logits = self.fc(obs)
        return logits.log_softmax(-1).gather(1, actions), logits.mean(1)
"""

_POLICY = """\
import torch
from pkg.net import Net


class Policy:
    def __init__(self, lr):
        self.net = Net()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def evaluate_actions(self, obs, actions):
        log_probs, values = self.net(obs, actions)  # TL001: self.net(obs, actions)
        return values, log_probs
"""

_RUNNER = """\
class Runner:
    def __init__(self, buffer):
        from pkg.policy import Policy
        from pkg.trainer import Trainer as TrainAlgo

        self.buffer = buffer
        self.policy = Policy(1e-3)
        self.trainer = TrainAlgo(self.policy)

    def run(self):
        for epoch in range(100):
            self.trainer.train(self.buffer)
"""


def _trainer(update: str) -> str:
    return f"""\
import torch


class Trainer:
    def __init__(self, policy):
        self.policy = policy

    def update(self, obs, actions, advantages):
{update}

    def train(self, buffer):
        for obs, actions, advantages in buffer:
            self.update(obs, actions, advantages)
"""


_PIPELINE = """\
from torch import nn
from transformers.generation_utils import GenerationMixin


class PromptForGeneration(nn.Module, GenerationMixin):
    def __init__(self, plm):
        super().__init__()
        self.plm = plm

    def forward(self, batch):
        return self.plm(**batch)

    def generate(self, batch, **kwargs):
        output = {generate}
        return output.cpu().tolist()
"""

_TUTORIAL = """\
import torch
from transformers import AutoModelForCausalLM
from pkg import PromptForGeneration

plm = AutoModelForCausalLM.from_pretrained("gpt2")
prompt_model = PromptForGeneration(plm)
if torch.cuda.is_available():
    prompt_model = prompt_model.cuda()
loader = torch.load("batches.pt")


def evaluate(prompt_model, dataloader):
    prompt_model.eval()
    out = []
    for inputs in dataloader:
        inputs = inputs.cuda()
        out.extend(prompt_model.generate(inputs, max_length=5))
    return out


for epoch in range(3):
    print(evaluate(prompt_model, loader))
"""

CASES = [
    Case(
        "policy_forward_backpropagated_by_a_trainer_the_runner_hands_it_to",
        {
            "pkg/__init__.py": "",
            "pkg/net.py": _NET,
            "pkg/policy.py": _POLICY.replace("  # TL001: self.net(obs, actions)", ""),
            "pkg/trainer.py": _trainer(
                """\
        values, log_probs = self.policy.evaluate_actions(obs, actions)
        loss = -(log_probs * advantages).mean() + values.pow(2).mean()
        self.policy.optimizer.zero_grad()
        loss.backward()
        self.policy.optimizer.step()"""
            ),
            "pkg/runner.py": _RUNNER,
        },
        rules=("TL001",),
    ),
    Case(
        "policy_evaluation_the_trainer_never_backpropagates_is_still_reported",
        {
            "pkg/__init__.py": "",
            "pkg/net.py": _NET,
            "pkg/policy.py": _POLICY,
            "pkg/trainer.py": _trainer(
                """\
        values, log_probs = self.policy.evaluate_actions(obs, actions)
        print(values.mean().item(), log_probs.mean().item())"""
            ),
            "pkg/runner.py": _RUNNER,
        },
        rules=("TL001",),
    ),
    Case(
        "hook_calling_its_own_eval_method_is_no_module",
        {
            "pkg/__init__.py": "",
            "pkg/hooks/__init__.py": "",
            "pkg/hooks/default.py": """\
class HookBase:
    trainer = None

    def after_epoch(self):
        pass
""",
            "pkg/hooks/evaluator.py": """\
import numpy as np
import torch
from pkg.hooks.default import HookBase


class InstanceEvaluator(HookBase):
    def after_epoch(self):
        self.eval()

    def associate(self, pred, segment):
        segment = segment.cpu().numpy()
        masks = pred["masks"]
        return [np.count_nonzero(np.logical_and(segment == i, masks[i])) for i in range(3)]

    def eval(self):
        self.trainer.model.eval()
        scenes = []
        for batch in self.trainer.val_loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            with torch.no_grad():
                output = self.trainer.model(batch)
            segment = batch["segment"]
            scenes.append(self.associate(output, segment))
        return scenes
""",
        },
        rules=("TL001",),
    ),
    Case(
        "project_generation_wrapper_hands_over_to_transformers_generate",
        {
            "pkg/__init__.py": "from .pipeline import PromptForGeneration\n",
            "pkg/pipeline.py": _PIPELINE.format(generate="super().generate(**batch, **kwargs)"),
            "tutorial.py": _TUTORIAL,
        },
        rules=("TL001",),
    ),
    Case(
        "project_generate_of_its_own_is_still_reported",
        {
            "pkg/__init__.py": "from .pipeline import PromptForGeneration\n",
            "pkg/pipeline.py": _PIPELINE.format(generate="self.plm(**batch).logits.argmax(-1)"),
            "tutorial.py": _TUTORIAL.replace(
                "out.extend(prompt_model.generate(inputs, max_length=5))",
                "out.extend(prompt_model.generate(inputs, max_length=5))  # TL001: prompt_model.generate(inputs, max_length=5)",
            ),
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl001_batch19")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_batch19_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
