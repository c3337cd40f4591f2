"""TL001 recall classes of production code: forwards whose graph nothing can reach.

- A reinforcement-learning agent's `get_action` runs the policy on every environment step and
  reads each output only through `.data`, `.detach()` or a numpy copy: the graph it records is
  dropped before the method returns, and the method trains nothing itself. Its caller's loop
  runs it again and again, so it is evaluation (`Evaluation._dropped_graph_scope`). So is a
  target network's forward in a helper that returns it detached. An action whose log-probability
  is returned with its graph (for the policy-gradient loss) is training, and stays silent.
  An output unpacked into a name nothing reads (`policy, _ = self.model(state)`) drops its
  graph as well, unless the name leaves the function another way (`global`, `nonlocal`,
  `locals()`); a forward none of whose outputs is read is a warm-up.
- A torch layer without weights (`nn.CosineSimilarity`, `nn.Upsample`) records no graph of its
  own: calling it is no forward worth `no_grad`.
- A module held by a capitalised name (`E = SpeakerEncoder(80, 256).eval().cuda()`, a GAN's `G`)
  runs a forward when called: the name is bound to a module construction, not to a class.
- A submodule of a module built from a class of another file (`self.rnd.target(obs)`, where
  `self.rnd = RNDModel(...)` and RNDModel's constructor assigns `self.target = nn.Sequential(...)`)
  runs a forward when called: an intrinsic reward computed from two such forwards and returned
  as a numpy copy keeps no graph. An attribute the class assigns something else (a running
  statistic) is no forward, and stays silent.

A line marked `# TL001: text` expects a finding there (`project_cases.Case`); unmarked cases pin
that TL001 stays silent. One `torchlint` run checks all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects

_NETS = """\
import torch
from torch import nn


class SpeakerEncoder(nn.Module):
    def __init__(self, n_mels, dim):
        super().__init__()
        self.lstm = nn.LSTM(n_mels, dim, batch_first=True)

    def forward(self, mel):
        return self.lstm(mel)[0][:, -1]


class ActorCritic(nn.Module):
    def __init__(self, n_obs, n_act):
        super().__init__()
        self.body = nn.Linear(n_obs, 64)
        self.policy = nn.Linear(64, n_act)
        self.value = nn.Linear(64, 1)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.policy(h), self.value(h)
"""

_ROLLOUT = """\
import torch

from agents import Agent
from nets import ActorCritic


def main(env, n_obs, n_act):
    agent = Agent(ActorCritic(n_obs, n_act), "cuda")
    states = env.reset()
    for update in range(1000):
        buffer = []
        for step in range(128):
            action, extra = agent.get_action(states)
            states, reward, done = env.step(action)
            buffer.append((states, action, reward, extra))
        agent.train_model(buffer)
"""

# An agent whose action choice reads each output of its forward only detached.
_AGENT_ACTION = """\
        policy, value = self.model(state)  # TL001: self.model(state)
        probs = F.softmax(policy, dim=-1).data.cpu().numpy()
        return probs.argmax(1), value.detach().cpu().numpy().squeeze()
"""
_AGENT = (
    """\
import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def get_action(self, state):
        state = torch.as_tensor(state, device=self.device).float()
"""
    + _AGENT_ACTION
    + """
    def train_model(self, buffer):
        states = torch.stack([torch.as_tensor(b[0]) for b in buffer]).to(self.device)
        returns = torch.tensor([b[2] for b in buffer], device=self.device)
        policy, value = self.model(states)
        loss = F.mse_loss(value.squeeze(), returns)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
"""
)
# The same choice leaving one output unread, and a warm-up reading none.
_UNREAD_ACTION = """\
        policy, _ = self.model(state)  # TL001: self.model(state)
        return F.softmax(policy, dim=-1).detach().cpu().numpy().argmax(1), None

    def warm_up(self, state):
        _, _ = self.model(torch.as_tensor(state, device=self.device).float())
"""

CASES = [
    Case(
        "agent-action-keeps-no-graph",
        {
            "nets.py": _NETS,
            "agents.py": _AGENT,
            "train.py": _ROLLOUT,
        },
        rules=("TL001",),
    ),
    Case(
        "target-network-forward-returned-detached",
        {
            "nets.py": _NETS,
            "agents.py": """\
import copy

import torch
import torch.nn.functional as F


class Agent:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.target_model = copy.deepcopy(self.model)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def get_action(self, state):
        with torch.no_grad():
            policy, _ = self.model(torch.as_tensor(state, device=self.device))
        return policy.argmax(1).cpu().numpy(), None

    def targets(self, rewards, next_states):
        next_values = self.target_model(next_states)[1]  # TL001: self.target_model(next_states)
        return (rewards + 0.99 * next_values.squeeze()).detach()

    def train_model(self, buffer):
        states = torch.stack([torch.as_tensor(b[0]) for b in buffer]).to(self.device)
        rewards = torch.tensor([b[2] for b in buffer], device=self.device)
        target = self.targets(rewards, states)
        loss = F.mse_loss(self.model(states)[1].squeeze(), target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            "train.py": _ROLLOUT,
        },
        rules=("TL001",),
    ),
    Case(
        "action-log-prob-kept-for-the-loss",
        {
            "nets.py": _NETS,
            "agents.py": """\
import torch


class Agent:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def get_action(self, state):
        logits, _ = self.model(torch.as_tensor(state, device=self.device))
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        return action.cpu().numpy(), dist.log_prob(action)

    def train_model(self, buffer):
        log_probs = torch.stack([b[3] for b in buffer])
        returns = torch.tensor([b[2] for b in buffer], device=self.device)
        loss = -(log_probs * returns).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            "train.py": _ROLLOUT,
        },
        rules=("TL001",),
    ),
    Case(
        # A training step of the file, whose logged result is kept: the loop trains.
        "a-training-step-whose-log-is-kept",
        {
            "train.py": """\
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def train(self, batch):
        x, y = (t.cuda() for t in batch)
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}


def main(model, loader, history):
    trainer = Trainer(model)
    for batch in loader:
        log = trainer.train(batch)
        history.append(log)
""",
        },
        rules=("TL001",),
    ),
    Case(
        # A torch layer without weights (a cosine score) records no graph of its own.
        "a-weightless-layer-scoring-pairs",
        {
            "score.py": """\
import torch
from torch import nn


class Scorer:
    def __init__(self, encoder):
        self.encoder = encoder.cuda().eval()
        self.score_fn = nn.CosineSimilarity(dim=-1)

    def score(self, pairs):
        scores = []
        for a, b in pairs:
            with torch.no_grad():
                ea, eb = self.encoder(a.cuda()), self.encoder(b.cuda())
            scores.append(self.score_fn(ea, eb).cpu().detach().tolist())
        return scores
""",
        },
        rules=("TL001",),
    ),
    Case(
        # Greedy decoding the module's own `forward` runs in eval mode: part of the forward,
        # whose caller decides the grad mode (a validation loop under `no_grad`).
        "a-decoding-method-the-forward-calls",
        {
            "seq2seq.py": """\
import torch
from torch import nn


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder, target_len):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.target_len = target_len

    def predict(self, source):
        inputs = source[:, -1:]
        for i in range(self.target_len):
            out = self.decoder(inputs)
            out = torch.cat([inputs, out[:, -1:, :]], dim=-2)
            inputs = out.detach()
        return inputs[:, 1:, :]

    def forward(self, x):
        self.decoder.init_keys(self.encoder(x))
        if self.training:
            return self.decoder(x)
        return self.predict(x)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "capitalised-instance-runs-its-forward",
        {
            "nets.py": _NETS,
            "embed.py": """\
import numpy as np
import torch

from nets import SpeakerEncoder

E = SpeakerEncoder(80, 256).eval().cuda()
E.load_state_dict(torch.load("encoder.ckpt"))
embeddings = []
for path in sorted(open("utterances.txt").read().split()):
    mel = torch.from_numpy(np.load(path)).cuda()
    emb = E(mel[None])  # TL001: E(mel[None])
    embeddings.append(emb.detach().squeeze().cpu().numpy())
np.save("embeddings.npy", np.stack(embeddings))
""",
        },
        rules=("TL001",),
    ),
    Case(
        "submodules-of-a-project-module-read-as-numpy",
        {
            "rnd.py": """\
import torch
from torch import nn


class RunningStats:
    def __call__(self, x):
        return x.mean(0)


class RNDModel(nn.Module):
    def __init__(self, n_obs, dim):
        super().__init__()
        self.target = nn.Sequential(nn.Linear(n_obs, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.predictor = nn.Sequential(nn.Linear(n_obs, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.stats = RunningStats()
        for p in self.target.parameters():
            p.requires_grad = False

    def forward(self, obs):
        return self.predictor(obs), self.target(obs)
""",
            "agents.py": """\
import torch
import torch.nn.functional as F

from rnd import RNDModel


class Agent:
    def __init__(self, n_obs, device):
        self.device = device
        self.rnd = RNDModel(n_obs, 64)
        self.rnd = self.rnd.to(self.device)
        self.optimizer = torch.optim.Adam(self.rnd.predictor.parameters())

    def intrinsic_reward(self, next_obs):
        next_obs = torch.as_tensor(next_obs, device=self.device).float()
        target = self.rnd.target(next_obs)  # TL001: self.rnd.target(next_obs)
        predict = self.rnd.predictor(next_obs)
        return ((target - predict).pow(2).sum(1) / 2).data.cpu().numpy()

    def observation_mean(self, obs):
        return self.rnd.stats(torch.as_tensor(obs)).numpy()

    def train_model(self, batch):
        predict, target = self.rnd(batch.to(self.device))
        loss = F.mse_loss(predict, target.detach())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            "train.py": """\
import torch

from agents import Agent


def main(env, n_obs):
    agent = Agent(n_obs, "cuda")
    states = env.reset()
    for update in range(1000):
        seen = []
        for step in range(128):
            states, reward, done = env.step(env.sample())
            bonus = agent.intrinsic_reward(states)
            seen.append((states, reward + bonus, agent.observation_mean(states)))
        agent.train_model(torch.as_tensor([s for s, _, _ in seen]))
""",
        },
        rules=("TL001",),
    ),
    # An output unpacked into a name nothing reads drops its graph too (`action, _ =
    # self.model(state)` in an agent's action choice); a forward none of whose outputs is read
    # is a warm-up, and stays silent.
    Case(
        "agent-action-with-unread-outputs",
        {
            "nets.py": _NETS,
            "agents.py": _AGENT.replace(_AGENT_ACTION, _UNREAD_ACTION),
            "train.py": _ROLLOUT.replace(
                "    states = env.reset()\n",
                "    states = env.reset()\n    agent.warm_up(states)\n",
            ),
        },
        rules=("TL001",),
    ),
    # An output that leaves its function another way is no dropped graph, read there or not:
    # a `global` another function backpropagates (from an independent review), a `nonlocal` of
    # a closure agent, a scope that hands its locals over.
    Case(
        "unread-output-that-leaves-the-function",
        {
            "nets.py": _NETS,
            "train.py": """\
import torch
from nets import ActorCritic

policy = ActorCritic(4, 2)
optimizer = torch.optim.Adam(policy.parameters())
saved_value = None


def select_action(state):
    global saved_value
    logits, saved_value = policy(torch.as_tensor(state).float())
    return logits.argmax().item()


def make_agent():
    value = None

    def act(state):
        nonlocal value
        logits, value = policy(torch.as_tensor(state).float())
        return logits.argmax().item()

    def learn(reward):
        loss = (value - reward).pow(2).mean()
        loss.backward()

    return act, learn


def step(state):
    logits, value = policy(torch.as_tensor(state).float())
    return logits.argmax().item(), locals()


def finish_step(reward):
    loss = (saved_value - reward).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def main(env):
    act, learn = make_agent()
    state = env.reset()
    for t in range(10000):
        action = select_action(state)
        action, info = step(state)
        state, reward, done = env.step(act(state))
        finish_step(reward)
        learn(reward)
        (info["value"] - reward).pow(2).mean().backward()
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dropped_graph")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_dropped_graph_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
