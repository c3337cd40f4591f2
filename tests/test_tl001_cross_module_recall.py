"""TL001 recall on production code (issue 24): evaluation whose forward pass sits behind a
project helper or a model method of another module. Each case is an invented multi-file
project checked once by the installed `torchlint` (the scheme of `project_cases.py`): a line
ending in `# TL001: text` expects a finding there; every other TL001 finding is a failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    # A helper that trains on one replay buffer and is then run on the test buffer every step,
    # its loss only logged: the test buffer names evaluation data like `test_loader` does.
    Case(
        "helper-on-test-replay-buffer",
        files={
            "trainer.py": """\
import torch


class BCTrainer:
    def __init__(self, policy, optimizer):
        self.policy = policy
        self.optimizer = optimizer

    def batch_loss(self, buffer, policy):
        obs, act = buffer.sample(256)
        return ((policy(obs) - act) ** 2).mean()

    def pretrain(self, train_buffer, test_buffer, steps):
        for i in range(steps):
            loss = self.batch_loss(train_buffer, self.policy)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            test_loss = self.batch_loss(test_buffer, self.policy)  # TL001: self.batch_loss
            if i % 100 == 0:
                print(float(test_loss))
""",
        },
        rules=("TL001",),
    ),
    # The model's inference method lives in another module and runs the encoder itself; a test
    # script loads the model, puts it in eval mode and calls it once per sample.
    Case(
        "model-method-of-another-module-per-sample",
        files={
            "pkg/__init__.py": "",
            "pkg/model.py": """\
import torch
from torch import nn


class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)

    def forward(self, x):
        return self.encoder(x)

    def inference(self, image=None, prompt=None):
        hidden = self.encoder(torch.as_tensor(image))
        return {"predictions": [hidden.argmax(-1)]}

    @torch.no_grad()
    def quick_look(self, image=None):
        return self.encoder(torch.as_tensor(image))
""",
            "test.py": """\
import torch
from pkg.model import Reader


def test(dataset, path):
    model = Reader.from_pretrained(path)
    model.eval()
    scores = []
    for sample in dataset:
        output = model.inference(image=sample["image"], prompt="<s>")  # TL001: model.inference
        scores.append(output["predictions"][0] == sample["label"])
        model.quick_look(image=sample["image"])
    return sum(scores) / len(scores)
""",
        },
        rules=("TL001",),
    ),
    # A separation helper takes the model as a parameter named for its role, not as a model;
    # the evaluation loop passes the loaded model for it on every test track, so the helper's
    # call runs a forward (`len` passed for `counter` is no module). The helper returns only a
    # detached numpy copy, so its own forward is where no_grad goes, for every caller.
    Case(
        "helper-parameter-every-caller-passes-a-model",
        files={
            "eval.py": """\
import torch
from models import load


def separate(audio, separator, device="cpu"):
    mix = torch.tensor(audio).float().to(device)
    estimates = separator(mix)  # TL001: separator(mix)
    return estimates.cpu().detach().numpy()


def count(tracks, counter):
    return counter(tracks)


def eval_main(tracks, path):
    model = load(path)
    model.eval()
    scores = []
    for track in tracks:
        scores.append(separate(track.audio, model))
    return count(scores, len)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("cross_module_recall")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_cross_module_recall(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
