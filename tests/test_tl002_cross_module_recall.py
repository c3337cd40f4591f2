"""TL002 recall on production code (issue 24): a per-batch host read that happens in another
module of the project, behind a value the calling file only holds. Each case is an invented
multi-file project checked once by the installed `torchlint` (the scheme of `project_cases.py`):
a line ending in `# TL002: text` expects a finding there; every other TL002 finding is a
failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_AVERAGER = """\
from collections import defaultdict


def running_mean():
    total = defaultdict(float)
    count = defaultdict(int)

    def update(metrics):
        for key, value in metrics.items():
            total[key] += float(value)
            count[key] += 1
        return {key: total[key] / count[key] for key in total}

    return update


def counter():
    seen = []

    def note(metrics):
        seen.append(len(metrics))
        return len(seen)

    return note
"""

_ALGORITHM = """\
import torch


class Algorithm(torch.nn.Module):
    class Optimizer:
        def __init__(self, optim, module):
            self._optim = optim
            self._module = module

        def step(self, loss):
            self._optim.zero_grad()
            loss.backward()
            self._optim.step()

    def _create_optimizer(self, module, lr):
        optim = self.Optimizer(torch.optim.Adam(module.parameters(), lr), module)
        return optim


class ActorCritic(Algorithm):
    def __init__(self, actor, critic, lr):
        super().__init__()
        self.actor = actor.cuda()
        self.critic = critic.cuda()
        self.optim = self._create_optimizer(self.critic, lr)
"""

CASES = [
    # A factory of another module returns a closure that turns every value it is handed into
    # a Python float: calling the closure with the step's device losses syncs at the call.
    Case(
        "closure-of-a-factory-reads-its-argument",
        files={
            "utils.py": _AVERAGER,
            "train.py": """\
import torch
from utils import running_mean


def train(model, loader, opt):
    averager = running_mean()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        logs = averager({"loss": loss})  # TL002: averager({"loss": loss})
""",
        },
        rules=("TL002",),
    ),
    # The same closure handed host numbers (`loss.item()` already read), or a closure that
    # only counts what it is given: no sync at the call.
    Case(
        "closure-of-a-factory-handed-host-values",
        files={
            "utils.py": _AVERAGER,
            "train.py": """\
import torch
from utils import counter, running_mean


def train(model, loader, opt):
    averager = running_mean()
    notes = counter()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        logs = averager({"loss": 1.0})
        n = notes({"loss": loss})
""",
        },
        rules=("TL002",),
    ),
    # An algorithm's update, run every step by another module, loops over minibatches of the
    # batch it is handed and steps the optimizer in each: the file names no device, its
    # callers' batches are on the GPU (the project names CUDA), so each `.item()` syncs.
    Case(
        "minibatch-loop-of-an-update-another-module-runs",
        files={
            "base.py": _ALGORITHM,
            "trainer.py": """\
from ppo import PPO


def train(algorithm, collector, epochs):
    for epoch in range(epochs):
        for step in range(100):
            batch = collector.collect(n_step=2048)
            algorithm.update(batch, 64)
""",
            "ppo.py": """\
import torch
from base import ActorCritic


class PPO(ActorCritic):
    def update(self, batch, size):
        losses = []
        for minibatch in batch.split(size, merge_last=True):
            value = self.critic(minibatch.obs).flatten()
            loss = (minibatch.returns - value).pow(2).mean()
            self.optim.step(loss)
            losses.append(loss.item())  # TL002: loss.item()
        return losses
""",
        },
        rules=("TL002",),
    ),
    # The minibatches drawn from a generator of the rollouts handed in (`gen =
    # rollouts.feed_forward_generator(...)`) are the handed batch's too; a loop over a loader
    # handed in as it is stays the file's own CPU loop, as far as this file says.
    Case(
        "generator-of-handed-rollouts-and-a-handed-loader",
        files={
            "main.py": """\
import torch
from algo import PPO, fit


def main(actor_critic, rollouts, loader, opt, updates):
    agent = PPO(actor_critic.cuda(), opt)
    for j in range(updates):
        rollouts.collect()
        agent.update(rollouts)
        fit(actor_critic, loader, opt)
""",
            "algo.py": """\
class PPO:
    def __init__(self, actor_critic, optimizer):
        self.actor_critic = actor_critic
        self.optimizer = optimizer

    def update(self, rollouts):
        total = 0.0
        generator = rollouts.feed_forward_generator(4)
        for obs, ret in generator:
            loss = (ret - self.actor_critic(obs)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()  # TL002: loss.item()
        return total


def fit(model, loader, optimizer):
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())
""",
        },
        rules=("TL002",),
    ),
    # A trainer whose device comes from its base class in another module: the loader is
    # wrapped in a prefetcher handed that device (`DataPrefetcher(loader, device=...)`), so
    # the batches behind the progress bar are on the device and the loss read syncs. The
    # first few batches kept for pictures (`if len(shown) < 4:`) are no per-batch work.
    Case(
        "prefetcher-handed-the-base-class-device",
        files={
            "base.py": """\
import torch


class BaseTrainer:
    def __init__(self, model, n_gpu):
        self.device = torch.device("cuda:0" if n_gpu > 0 else "cpu")
        self.model = model.to(self.device)
""",
            "prefetch.py": """\
class DataPrefetcher:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for x, y in self.loader:
            yield x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
""",
            "trainer.py": """\
from tqdm import tqdm

from base import BaseTrainer
from prefetch import DataPrefetcher


class Trainer(BaseTrainer):
    def __init__(self, model, n_gpu, train_loader, optimizer, loss):
        super().__init__(model, n_gpu)
        self.optimizer = optimizer
        self.loss = loss
        self.train_loader = DataPrefetcher(train_loader, device=self.device)

    def train_epoch(self):
        total = 0.0
        shown = []
        tbar = tqdm(self.train_loader)
        for data, target in tbar:
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.loss(output, target)
            loss.backward()
            self.optimizer.step()
            total += loss.item()  # TL002: loss.item()
            if len(shown) < 4:
                shown.append(output[0].cpu())
        return total, shown
""",
        },
        rules=("TL002",),
    ),
    # A metrics helper of another module that reads nothing itself but hands values computed
    # from its arguments to a helper of its module that copies them to numpy: the call syncs,
    # through the chain. A helper handing them to one that reads nothing stays silent. (The
    # copy itself, of a value the helper computes, is found where it is too, as for a helper
    # called directly: this module runs every step.)
    Case(
        "metrics-helper-reads-through-a-helper-of-its-module",
        files={
            "metrics.py": """\
import torch


def pixel_accuracy(predict, target, labeled):
    correct = ((predict == target) * labeled).sum()
    return correct.cpu().numpy(), labeled.sum().cpu().numpy()  # TL002: correct.cpu()


def eval_metrics(output, target, num_class):
    predict = output.argmax(1) + 1
    target = target + 1
    labeled = (target > 0) * (target <= num_class)
    return pixel_accuracy(predict, target, labeled)


def shapes(output):
    return sizes(output)


def sizes(t):
    return list(t.shape)
""",
            "train.py": """\
from metrics import eval_metrics, shapes


def train(model, loader, opt, n):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        out = model(x)
        loss = (out - y).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = eval_metrics(out, y, n)  # TL002: eval_metrics(out, y, n)
        dims = shapes(out)
""",
        },
        rules=("TL002",),
    ),
    # A gradient norm that is a device tensor on one path (`clip_grad_norm_`) and another
    # module's helper's result on the other, handed to a meter of another module that reads
    # what it is given: on the clipping path each step syncs at the call. A loss already
    # read (`loss = loss.item()`, that read the finding) is a number at the meter: no sync at
    # that call.
    Case(
        "grad-norm-tensor-on-one-path-to-a-meter",
        files={
            "meters.py": """\
import torch


def total_norm(parameters):
    return sum(p.grad.detach().norm() ** 2 for p in parameters) ** 0.5


class MetricLogger:
    def __init__(self):
        self.sums = {}

    def update(self, **values):
        for k, v in values.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.sums[k] = self.sums.get(k, 0.0) + v
""",
            "train.py": """\
import torch
from meters import MetricLogger, total_norm


def train(model, loader, opt, max_norm):
    logger = MetricLogger()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        if max_norm > 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        else:
            norm = total_norm(model.parameters())
        opt.step()
        logger.update(grad_norm=norm)  # TL002: logger.update(grad_norm=norm)
        loss = loss.item()  # TL002: loss.item()
        logger.update(loss=loss)
""",
        },
        rules=("TL002",),
    ),
    # The same loop in a method no module runs every step, stepping only a scheduler: its
    # loop is the file's own, and the file puts nothing on a device.
    Case(
        "scheduler-attribute-of-a-base-class-steps-nothing",
        files={
            "base.py": """\
import torch


class Algorithm(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net.cuda()
        self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(torch.optim.Adam(net.parameters()))
""",
            "evaluate.py": """\
import torch
from base import Algorithm


class Evaluator(Algorithm):
    def check(self, batch, size):
        losses = []
        for minibatch in batch.split(size, merge_last=True):
            loss = (minibatch.returns - self.net(minibatch.obs)).pow(2).mean()
            self.sched.step(loss)
            losses.append(loss.item())
        return losses
""",
        },
        rules=("TL002",),
    ),
    # A meter class re-exported by its package with a star import (`from .logger import *` in
    # `misc/__init__.py`), its `update` reading each tensor it is given with `.item()`: the
    # engine's call with the step's losses syncs there. The same meter handed a host number
    # (`loss.item()` already read, that read the finding) and a class of the package whose
    # method reads nothing stay silent at the call.
    Case(
        "meter-re-exported-by-a-package-star-import",
        files={
            "src/__init__.py": "",
            "src/misc/__init__.py": """\
from .logger import *
from .timing import *
""",
            "src/misc/logger.py": """\
import torch


class MetricLogger(object):
    def __init__(self):
        self.meters = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.meters[k] = v
""",
            "src/misc/timing.py": """\
import time


class Timer(object):
    def __init__(self):
        self.marks = []

    def mark(self, *values):
        self.marks.append((time.time(), len(values)))
""",
            "src/solver/__init__.py": "",
            "src/solver/engine.py": """\
import torch

from ..misc import MetricLogger, Timer


def train_one_epoch(model, criterion, loader, optimizer):
    logger = MetricLogger()
    timer = Timer()
    for samples, targets in loader:
        outputs = model(samples.cuda())
        loss_dict = criterion(outputs, targets)
        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.update(total=loss, **loss_dict)  # TL002: logger.update(total=loss, **loss_dict)
        timer.mark(loss)
        value = loss.item()  # TL002: loss.item()
        logger.update(value=value)
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl002_cross_module_recall")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_cross_module_recall(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
