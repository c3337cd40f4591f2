"""TL001 false-alarm classes of production code, second batch: each an invented project.

Seen on a held-out measurement of production repositories; the snippets are invented. A line
marked `# TL001: text` expects a finding there (`project_cases.Case`); unmarked cases pin that
TL001 stays silent, and the marked ones that true findings remain. One `torchlint` run checks all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects

CASES = [
    # --- 1. a call on a non-module value named like a submodule (`data.head(1)`) ---
    Case(
        "dataframe-head-is-no-forward",
        {
            "show.py": """\
import pandas as pd
import torch


def show(model, path, loader):
    model.eval()
    table = pd.read_csv(path)
    for batch in loader:
        print(table.head(1), table.tail(2.5), table.head(len(batch)))
        out = model(batch)  # TL001: model(batch)
    return out
""",
        },
        rules=("TL001",),
    ),
    # --- 2./3. distillation and loss methods: a forward feeding a loss is training ---
    Case(
        "student-forward-beside-eval-teacher",
        {
            "kd.py": """\
import torch.nn.functional as F
from torch import nn


class KD(nn.Module):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def calculate_loss(self, batch):
        self.teacher.eval()
        x, y = batch
        student_out = self.student(x)
        teacher_out = self.teacher(x)
        return F.kl_div(student_out, teacher_out) + F.cross_entropy(student_out, y)


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.scorer = nn.Linear(8, 1)

    def predict_scores(self, x):
        return self.scorer(self.encoder(x))

    def calculate_ls_loss(self, x, y):
        return F.mse_loss(self.predict_scores(x), y)

    def calculate_loss(self, batch):
        return self.calculate_ls_loss(*batch)


def fit(model, loader, opt):
    model.train()
    for batch in loader:
        loss = model.calculate_loss(batch)
        loss.backward()
        opt.step()
""",
        },
        rules=("TL001",),
    ),
    Case(
        "prediction-helper-inside-a-loss",
        {
            "rec.py": """\
import torch
import torch.nn.functional as F
from torch import nn


class Rec(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.user_embedding = nn.Embedding(n, 8)
        self.item_encoder = nn.Linear(8, 8)

    def predict_ratings(self, users, items):
        scores = []
        for chunk in items.split(64):
            scores.append((self.user_embedding(users) * self.item_encoder(chunk)).sum(-1))
        return torch.cat(scores)

    def calculate_ls_loss(self, users, items, labels):
        return F.mse_loss(self.predict_ratings(users, items), labels)

    def calculate_loss(self, interaction):
        return self.calculate_ls_loss(*interaction)

    def full_sort_predict(self, users, items):
        return self.predict_ratings(users, items)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 1)

    def predict_all(self, chunks):
        out = []
        for c in chunks:
            out.append(self.head(c))
        return torch.cat(out)


def validate(model, loader):
    model.eval()
    errors = []
    for x, y in loader:
        errors.append(F.mse_loss(model.predict_all(x), y).item())  # TL001: model.predict_all(x)
    return errors
""",
        },
        rules=("TL001",),
    ),
    Case(
        "student-forward-in-loss-method",
        {
            "distill.py": """\
import torch.nn.functional as F
from torch import nn


class Distiller(nn.Module):
    def __init__(self, model, teacher_model):
        super().__init__()
        self.model = model
        self.teacher_model = teacher_model

    def calculate_loss(self, views):
        self.teacher_model.eval()
        loss = 0
        for v in views:
            s = self.model(v)
            t = self.teacher_model(v)  # TL001: self.teacher_model(v)
            loss = loss + F.mse_loss(s, t)
        return loss
""",
        },
        rules=("TL001",),
    ),
    # --- 4. one random sample run once, as for a FLOPs count ---
    Case(
        "random-probe-outside-loops",
        {
            "complexity.py": """\
import torch
from thop import profile


def count(model, size):
    model.eval()
    x = torch.rand(1, 3, size, size)
    out = model(x)
    macs = profile(model, inputs=(torch.randn((1, 3, size, size)),))
    return macs, model(torch.randn(1, 3, size, size)).shape, out.shape
""",
            "gan.py": """\
import torch
from torchvision.utils import save_image


def sample(netG, epoch):
    netG.eval()
    noise = torch.randn(64, 100, 1, 1)
    fake = netG(noise)  # TL001: netG(noise)
    save_image(fake, f"epoch_{epoch}.png")


def train(netG, loader, epochs):
    for epoch in range(epochs):
        for batch in loader:
            netG(batch).mean().backward()
        sample(netG, epoch)
""",
        },
        rules=("TL001",),
    ),
    # --- 4b. noise of any size through a forward whose result is dropped: hooks count FLOPs ---
    Case(
        "dropped-forward-on-noise",
        {
            "complexity.py": """\
import torch


def complexity(model, input_size):
    counts = []
    hooks = [m.register_forward_hook(lambda m, x, y: counts.append(y.numel())) for m in model.modules()]
    model.eval()
    input = torch.rand(input_size)
    if next(model.parameters()).is_cuda:
        input = input.cuda()
    model(input)
    for h in hooks:
        h.remove()
    return sum(counts)


def score(model, n):
    model.eval()
    noise = torch.rand(n, 3)
    if torch.cuda.is_available():
        noise = noise.cuda()
    return model(noise).mean()  # TL001: model(noise)
""",
        },
        rules=("TL001",),
    ),
    # --- 4c. a test loop copied from the training loop keeps its module's zero_grad; an
    # optimizer's zero_grad before a forward starts an update ---
    Case(
        "zero-grad-in-test-loop",
        {
            "linear_eval.py": """\
import torch


def train(loader, model, criterion, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()


def test(loader, model, criterion, optimizer):
    model.eval()
    total = 0.0
    for x, y in loader:
        model.zero_grad()
        output = model(x.cuda())  # TL001: model(x.cuda())
        total += criterion(output, y.cuda()).item()
    return total
""",
            "agent.py": """\
import torch.nn.functional as F


class Agent:
    def learn(self, state, target):
        self.critic.eval()
        self.actor.optimizer.zero_grad()
        mu = self.actor.forward(state)
        self.actor.train()
        actor_loss = -self.critic.forward(state, mu).mean() + F.mse_loss(mu, target)
        actor_loss.backward()
        self.actor.optimizer.step()
""",
        },
        rules=("TL001",),
    ),
    # --- 5. test harness classes in library code ---
    Case(
        "testcase-harness-in-library",
        {
            "pkg/__init__.py": "",
            "pkg/harness.py": """\
import unittest

import torch


class ModelTester(unittest.TestCase):
    def check_model(self, model, inputs):
        model.eval()
        for x in inputs:
            out = model(x)
            self.assertEqual(out.shape[0], x.shape[0])
""",
        },
        rules=("TL001",),
    ),
    # --- 6. a loop comparing outputs after the export, in the exporting function ---
    Case(
        "export-check-loop",
        {
            "export.py": """\
import numpy as np
import onnxruntime
import torch


def export(model, path, loader):
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, 64, 64), path)
    session = onnxruntime.InferenceSession(path)
    for x in loader:
        ref = model(x)
        got = session.run(None, {"input": x.numpy()})[0]
        np.testing.assert_allclose(ref.numpy(), got, rtol=1e-3)


def evaluate_then_export(model, path, loader):
    model.eval()
    scores = [model(x).argmax(1) for x in loader]  # TL001: model(x)
    torch.onnx.export(model, torch.zeros(1, 3, 64, 64), path)
    return scores
""",
        },
        rules=("TL001",),
    ),
    # --- 7. a method that asserts its networks are in eval mode, run by another module's rollout ---
    Case(
        "asserted-eval-mode-container-item",
        {
            "agents.py": """\
import torch
from torch import nn


class Agent:
    def __init__(self, policy, critic):
        self.nets = nn.ModuleDict()
        self.nets["policy"] = policy
        self.nets["critic"] = critic
        self.optimizer = torch.optim.Adam(self.nets.parameters())

    def train_on_batch(self, batch):
        self.nets.train()
        loss = self.nets["policy"](batch["obs"]).pow(2).mean()
        loss.backward()
        self.optimizer.step()

    def get_action(self, obs):
        assert not self.nets.training
        return self.nets["policy"](obs)  # TL001: self.nets["policy"](

    def get_value(self, obs, hidden):
        assert not self.nets.training, "rollouts only"
        value, hidden = self.nets["critic"].forward_step(obs, hidden)  # TL001: self.nets["critic"].forward_step(
        return value

    def get_mean(self, obs):
        return self.nets["policy"](obs)

    def check_training(self, obs):
        assert self.nets.training
        return self.nets["policy"](obs)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4)])

    def forward(self, x):
        assert not self.training
        return self.layers[0](x)

    def step(self, x):
        assert not self.training
        return self.layers[0](x)
""",
            "rollout.py": """\
from agents import Agent, Head


def rollout(agent, env, head, horizon):
    obs, hidden = env.reset(), None
    for _ in range(horizon):
        obs = env.step(agent.get_action(obs) + agent.get_value(obs, hidden) + head(obs))
        obs = obs + agent.get_mean(obs) + agent.check_training(obs) + head.step(obs)
""",
        },
        rules=("TL001",),
    ),
    # --- 8. a lambda handed to a call that runs it in a new worker, where grad mode is on ---
    Case(
        "lambda-run-in-new-worker",
        {
            "search.py": """\
import torch
from ray.tune import register_trainable
from hpo import submit_later


def eval_policy(config, reporter):
    model = torch.load(config["path"])
    model.eval()
    for x, y in config["loader"]:
        reporter(acc=(model(x).argmax(1) == y).float().mean().item())  # TL001: model(x)


def score_policy(config, reporter):
    model = torch.load(config["path"])
    model.eval()
    for x, y in config["loader"]:
        reporter(acc=(model(x).argmax(1) == y).float().mean().item())


@torch.no_grad()
def check_policy(config, reporter):
    model = torch.load(config["path"])
    model.eval()
    for x, y in config["loader"]:
        reporter(acc=(model(x).argmax(1) == y).float().mean().item())


def search(configs):
    for i, config in enumerate(configs):
        register_trainable(f"eval{i}", lambda cfg, rpt: eval_policy(cfg, rpt))
        register_trainable(f"check{i}", lambda cfg, rpt: check_policy(cfg, rpt))
        submit_later(lambda cfg, rpt: score_policy(cfg, rpt))
""",
        },
        rules=("TL001",),
    ),
    # --- 9. a function named for prediction that a training step calls through a helper ---
    Case(
        "prediction-inside-backpropagated-helper",
        {
            "trainer.py": """\
import torch
from torch import nn


class Trainer:
    def __init__(self, encoder, pose, loader, test_loader):
        self.models = nn.ModuleDict({"encoder": encoder, "pose": pose})
        self.optimizer = torch.optim.Adam(self.models.parameters())
        self.loader, self.test_loader = loader, test_loader

    def run_epoch(self):
        self.models.train()
        for inputs in self.loader:
            losses = self.process_batch(inputs)
            self.optimizer.zero_grad()
            losses["loss"].backward()
            self.optimizer.step()

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs["image"])
        poses = self.predict_poses(features)
        return {"loss": (poses - inputs["pose"]).abs().mean()}

    def predict_poses(self, features):
        return self.models["pose"](features)

    def predict_depths(self):
        self.models.eval()
        return [self.models["encoder"](x).mean() for x in self.test_loader]  # TL001: self.models["encoder"](x)

    def run(self, epochs):
        for _ in range(epochs):
            self.run_epoch()
            print(self.predict_depths())
""",
        },
        rules=("TL001",),
    ),
    # --- 10. a call also made under no_grad, whose result is backpropagated here: training ---
    Case(
        "no-grad-twin-backpropagated",
        {
            "learner.py": """\
import torch
from torch import nn


class Learner:
    def __init__(self, heads):
        self.heads = nn.ModuleList(heads)
        self.optimizer = torch.optim.Adam(self.heads.parameters())

    def contrast(self, samples):
        losses = []
        for i, x in enumerate(samples):
            losses.append(self.heads[i](x).mean())
        return sum(losses)

    def optimize(self, samples):
        self.optimizer.zero_grad()
        loss = self.contrast(samples)
        total = loss / len(samples)
        total.backward()
        self.optimizer.step()

    def validate(self, batches):
        for samples in batches:
            with torch.no_grad():
                loss = self.contrast(samples)
            print(loss.item())

    def probe(self, samples):
        loss = self.contrast(samples)  # TL001: self.contrast(samples)
        print(loss.item())


def main(learner, batches):
    for samples in batches:
        learner.optimize(samples)
        learner.probe(samples)
    learner.validate(batches)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("eval2")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_production_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
