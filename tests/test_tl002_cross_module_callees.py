"""TL002 recall on production code (round 9): a per-batch host read in a function or method of
another module that the project's call graph must reach from the loop that runs it: through a
star import (`from metrics import *`), through a method that steps the optimizer by calling
its own class's step method (`self.optimize(loss)`), through a parameter annotated with a
project class (`metrics: Metrics`), and under a gradient-accumulation guard, which runs with
every update. Each case is an invented multi-file project checked once by the installed
`torchlint` (the scheme of `project_cases.py`): a line ending in `# TL002: text` expects a
finding there; every other TL002 finding is a failure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_SCORES = """\
import torch


def pixel_accuracy(pred, target):
    hits = torch.sum((pred > 0.5) == (target > 0.5))
    return float(hits) / pred.numel()  # TL002: float(hits)


def dice(pred, target):
    inter = torch.sum((pred > 0.5) & (target > 0.5))
    return 2 * float(inter) / (pred.numel() + target.numel())
"""

_TRAINERS = """\
import torch


class Trainer:
    def __init__(self, model, params):
        self.model = model.cuda()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=params.lr)
        self.stats = []
        self.words = 0

    def optimize(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class PairTrainer(Trainer):
    def pair_step(self, src, tgt):
        out = self.model(src.cuda())
        loss = (out - tgt.cuda()).pow(2).mean()
        self.stats.append(loss.item())  # TL002: loss.item()
        self.optimize(loss)

    def report(self, src):
        out = self.model(src.cuda())
        self.words += out.sum().item()
"""

_METRICS = """\
import torch


class Metrics:
    def __init__(self):
        self.losses = []

    def commit(self, loss):
        self.losses.append(loss.detach())

    def push(self):
        mean = torch.stack(self.losses).mean().item()  # TL002: torch.stack(self.losses).mean().item()
        self.losses = []
        return f"loss {mean:.4f}"

    def summary(self):
        return torch.stack(self.losses).mean().item()
"""


def _unmarked(text: str) -> str:
    """`text` without its expectation markers: the same module where no line is expected."""
    return re.sub(r"  # TL002: .*", "", text)


_REGISTRY = """\
class Registry:
    def __init__(self, name):
        self.name = name
        self.classes = {}

    def register(self, klass=None):
        def add(k):
            self.classes[k.__name__] = k
            return k

        return add(klass) if klass is not None else add

    def get(self, name):
        return self.classes[name]
"""

_BUILD = """\
from registry import Registry

EVALUATORS = Registry("EVALUATOR")
HEADS = Registry("HEAD")


def build_evaluator(cfg, **kwargs):
    return EVALUATORS.get(cfg.evaluator)(cfg, **kwargs)


def build_head(cfg):
    head = HEADS.get(cfg.head)(cfg)
    return head
"""

_EVALUATORS = """\
import torch

from build import EVALUATORS, HEADS


class EvaluatorBase:
    def process(self, out, gt):
        raise NotImplementedError


@EVALUATORS.register()
class Classification(EvaluatorBase):
    def __init__(self, cfg):
        self.correct = 0

    def process(self, out, gt):
        hits = out.max(1)[1].eq(gt).float()
        self.correct += int(hits.sum().item())  # TL002: hits.sum().item()


@HEADS.register
class Probe:
    def __init__(self, cfg):
        self.seen = 0

    def process(self, out, gt):
        hits = out.max(1)[1].eq(gt).float()
        self.seen += int(hits.sum().item())
"""

CASES = [
    # A solver calls the helpers a star import brings in on every batch: each converts a
    # device count to a Python float.
    Case(
        "function-of-a-star-import-called-per-batch",
        files={
            "scores.py": _SCORES,
            "solver.py": """\
import torch
from scores import *


class Solver:
    def __init__(self, model, train_loader):
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.optimizer = torch.optim.Adam(model.parameters())

    def train(self):
        acc = 0.0
        for images, masks in self.train_loader:
            images = images.to(self.device)
            masks = masks.to(self.device)
            pred = torch.sigmoid(self.model(images))
            loss = torch.nn.functional.binary_cross_entropy(pred, masks)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            acc += pixel_accuracy(pred, masks)
""",
        },
        rules=("TL002",),
    ),
    # Modules that star-import one another (a package's helpers re-exporting each other) pass
    # the helpers of scores.py on: the search reads each module once, whatever the cycles.
    Case(
        "star-imports-in-a-cycle",
        files={
            "scores.py": _SCORES,
            "web0.py": "from web1 import *\nfrom web2 import *\nfrom web3 import *\nfrom web4 import *\nfrom web5 import *\n",
            "web1.py": "from web0 import *\nfrom web2 import *\nfrom web3 import *\nfrom web4 import *\nfrom web5 import *\n",
            "web2.py": "from web0 import *\nfrom web1 import *\nfrom web3 import *\nfrom web4 import *\nfrom web5 import *\n",
            "web3.py": "from web0 import *\nfrom web1 import *\nfrom web2 import *\nfrom web4 import *\nfrom web5 import *\n",
            "web4.py": "from web0 import *\nfrom web1 import *\nfrom web2 import *\nfrom web3 import *\nfrom web5 import *\n",
            "web5.py": "from web0 import *\nfrom web1 import *\nfrom web2 import *\nfrom web3 import *\nfrom web4 import *\nfrom scores import *\n",
            "solver.py": """\
import torch
from web0 import *


def train(model, loader, optimizer):
    model = model.cuda()
    acc = 0.0
    for images, masks in loader:
        pred = torch.sigmoid(model(images.cuda()))
        loss = torch.nn.functional.binary_cross_entropy(pred, masks.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc += pixel_accuracy(pred, masks)
""",
        },
        rules=("TL002",),
    ),
    # The caller defines its own `dice`, which the star import does not override (its own
    # definition comes later), and calls `pixel_accuracy` only after the loop: nothing of
    # scores.py runs per batch.
    Case(
        "star-import-shadowed-or-called-once",
        files={
            "scores.py": _unmarked(_SCORES),
            "solver.py": """\
import torch
from scores import *


def dice(pred, target):
    return 0.0


def train(model, train_loader, optimizer):
    device = torch.device("cuda")
    model = model.to(device)
    total = 0.0
    for images, masks in train_loader:
        pred = torch.sigmoid(model(images.to(device)))
        loss = torch.nn.functional.binary_cross_entropy(pred, masks.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += dice(pred, masks)
    return pixel_accuracy(pred, masks)
""",
        },
        rules=("TL002",),
    ),
    # A subclass's step method trains by calling the base class's `optimize`, which runs
    # backward and the optimizer's step: the loop of another module that calls it (a loop over
    # language pairs, not over a loader) runs a training step each iteration. `report`, called
    # from the same loop, steps nothing: that loop is not per batch for it.
    Case(
        "method-stepping-through-its-own-class",
        files={
            "trainers.py": _TRAINERS,
            "train.py": """\
from trainers import PairTrainer


def main(model, params, pairs, probe):
    trainer = PairTrainer(model, params)
    for epoch in range(params.epochs):
        while trainer.words < params.epoch_size:
            for src, tgt in pairs:
                trainer.pair_step(src, tgt)
                trainer.report(probe)
""",
        },
        rules=("TL002",),
    ),
    # A method that runs a whole fine-tuning per call (its epoch loop calls the step method)
    # is no training step: the loop over tasks that calls it is not per batch for what it
    # runs once per task, counting the labels on the device.
    Case(
        "method-looping-over-its-own-step-is-a-run",
        files={
            "trainers.py": _unmarked(_TRAINERS)
            + """

class Finetuner(Trainer):
    def run(self, data, epochs):
        counts = self.count(data)
        for epoch in range(epochs):
            self.train_epoch(data)
        return counts

    def count(self, data):
        return (data.cuda() == 1).sum().item()

    def train_epoch(self, data):
        out = self.model(data.cuda())
        self.optimize(out.mean())
""",
            "tasks.py": """\
from trainers import Finetuner


def main(model, params, tasks):
    tuner = Finetuner(model, params)
    for data in tasks:
        tuner.run(data, params.epochs)
""",
        },
        rules=("TL002",),
    ),
    # A trainer's evaluator is built by a factory that returns an instance of whatever class
    # a registry holds under the configured name: the classes registered with that registry
    # (not those of another) are what `self.evaluator` may hold, and their `process` runs on
    # every test batch.
    Case(
        "attribute-built-by-a-registry-factory",
        files={
            "registry.py": _REGISTRY,
            "build.py": _BUILD,
            "evaluators.py": _EVALUATORS,
            "trainer.py": """\
import torch

from build import build_evaluator


class Trainer:
    def __init__(self, cfg, model):
        self.model = model.cuda()
        self.evaluator = build_evaluator(cfg)

    @torch.no_grad()
    def test(self, test_loader):
        for batch_idx, batch in enumerate(test_loader):
            out = self.model(batch["img"].cuda())
            self.evaluator.process(out, batch["label"].cuda())
""",
        },
        rules=("TL002",),
    ),
    # The head a factory builds from the other registry is only asked once, after the loop.
    Case(
        "attribute-built-by-a-registry-factory-once",
        files={
            "registry.py": _REGISTRY,
            "build.py": _BUILD,
            "evaluators.py": _unmarked(_EVALUATORS),
            "trainer.py": """\
import torch

from build import build_head


class Trainer:
    def __init__(self, cfg, model):
        self.model = model.cuda()
        self.head = build_head(cfg)

    @torch.no_grad()
    def test(self, test_loader):
        for batch_idx, batch in enumerate(test_loader):
            out = self.model(batch["img"].cuda())
        self.head.process(out, batch["label"].cuda())
""",
        },
        rules=("TL002",),
    ),
    # A strategy's loop is handed the metrics as a parameter annotated with the project's
    # class and pushes them each time the accumulated gradients step the optimizer: that
    # guard runs with every update, so `push` reads the device once per optimizer step.
    Case(
        "annotated-parameter-pushed-every-update",
        files={
            "metrics.py": _METRICS,
            "strategy.py": """\
import torch

from metrics import Metrics


class Strategy:
    def __init__(self, model, accumulation):
        self.model = model.cuda()
        self.accumulation = accumulation
        self.optimizer = torch.optim.AdamW(model.parameters())

    def run_training(self, dataloader, metrics: Metrics):
        for idx, batch in enumerate(dataloader):
            loss = self.model(batch["x"].cuda()).mean()
            metrics.commit(loss)
            (loss / self.accumulation).backward()
            if (idx + 1) % self.accumulation == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
                status = metrics.push()
""",
        },
        rules=("TL002",),
    ),
    # The same metrics summarised under a logging interval that steps nothing: periodic,
    # not per update; and an annotated parameter of another library's class names no method
    # of the project.
    Case(
        "annotated-parameter-summarised-periodically",
        files={
            "metrics.py": _unmarked(_METRICS),
            "strategy.py": """\
import torch
from torch.utils.data import DataLoader

from metrics import Metrics


class Strategy:
    def __init__(self, model):
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW(model.parameters())

    def run_training(self, dataloader: DataLoader, metrics: Metrics, log_every: int):
        for idx, batch in enumerate(dataloader):
            loss = self.model(batch["x"].cuda()).mean()
            metrics.commit(loss)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            if idx % log_every == 0:
                print(metrics.summary())
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl002_cross_module_callees")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_cross_module_callees(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
