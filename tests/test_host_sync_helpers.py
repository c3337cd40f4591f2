"""TL002 recall on production code, round 3: trainer classes and helpers a per-step loop reaches.

Each case is a small project of its own (a folder with a `[tool.torchlint]` table), all checked
once by the installed `torchlint` command and marked as in `test_production_cases.py`: a line
ending in `# TL002: text` expects a finding on that line at the column where `text` starts, and
every other TL002 finding in the case's files is a failure.

The classes: a loop over one split of a collection of loaders (`self.data_loader["train"]`,
`dataloaders[phase]`) is a per-batch loop, so the trainer methods it calls run every step; a
loop counting `steps_per_epoch` (or `iter_in_epoch`) counts steps, not epochs; `if i in indices:`
tests the loop's counter even where a later loop binds `i` again; a name bound only to
`torch.device("cuda:0" if ... else "cpu")` is a device whatever it is called (`dvc`). A value passed to
a helper of another module that reads its arguments on the host (a metric logger's
`update(**losses)`) syncs at the call when it may hold device tensors: what a helper of the file
returns unchanged on one of its paths (`reduce_loss_dict(loss_dict)`, which returns the dict
itself on one GPU), or a dict holding a loss the step adds into what it backpropagates. A batch
that a bare `batch.to(device)` statement moves in place (a graph batch) is no host batch; an
evaluation's copies handed to another module's collector (`logger.update_stats(pred=p.cpu())`)
are what its host-side metrics need. A method of another module's class that returns a host read
of the instance's own buffer or parameter (`get_step`: `return self.step.data.item()`) syncs
wherever it is called every step. A model fed a host tensor (`torch.arange(n)`) beside inputs of
unknown place is not known to run on the host. A helper that returns early for CUDA tensors
(`if parameters[0].is_cuda: return torch.nn.utils.clip_grad_norm_(...)`) reads on the host only
what runs after that return, off CUDA: nothing for a model on the GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_CLIP = """\
import numpy as np
import torch


def clip_norm_(parameters, max_norm):
    parameters = list(parameters)
GUARD    norms = [np.linalg.norm(p.grad.detach().cpu().numpy()) for p in parameters]MARK
    total = float(np.linalg.norm(norms))
    for p in parameters:
        p.grad.detach().mul_(min(1.0, max_norm / (total + 1e-6)))
    return total
"""
_CUDA_GUARD = """\
    if parameters[0].is_cuda:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)
"""
_CLIPPED_STEP = """\
import torch
from utils import clip_norm_


def train(model, loader, optimizer):
    model.cuda()
    for x in loader:
        model(x.cuda()).sum().backward()
        clip_norm_(model.parameters(), 1.0){mark}
        optimizer.step()
"""

CASES = [
    # A helper that hands CUDA tensors to torch's own clipping and reads norms on the host only
    # for CPU ones (pfrl's `clip_l2_grad_norm_`) reads nothing on the host for a model on the GPU.
    Case(
        "helper-reads-only-off-cuda",
        {
            "utils.py": _CLIP.replace("GUARD", _CUDA_GUARD).replace("MARK", ""),
            "train.py": _CLIPPED_STEP.format(mark=""),
        },
    ),
    Case(
        "helper-moves-after-its-cuda-guard",
        {
            "utils.py": _CLIP.replace(
                "GUARD", _CUDA_GUARD + "    parameters = [p.cuda() for p in parameters]\n"
            ).replace("MARK", "  # TL002: p.grad.detach().cpu()"),
            "train.py": _CLIPPED_STEP.format(mark="  # TL002: clip_norm_(model.parameters(), 1.0)"),
        },
    ),
    Case(
        "helper-reads-on-every-device",
        {
            "utils.py": _CLIP.replace("GUARD", "").replace(
                "MARK", "  # TL002: p.grad.detach().cpu()"
            ),
            "train.py": _CLIPPED_STEP.format(mark="  # TL002: clip_norm_(model.parameters(), 1.0)"),
        },
    ),
    # --- 1. one split of a collection of loaders is a loader ---
    Case(
        "trainer-over-a-split-of-loaders",
        {
            "train.py": """\
import torch


class Trainer:
    def __init__(self, data_loader, model, criterion, optimizer, device):
        self.data_loader = data_loader
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device
        self.total = 0.0

    def train_epoch(self):
        for steps_per_epoch, batch in enumerate(self.data_loader["train"], 1):
            self._train_step(batch)
        self.steps_per_epoch = steps_per_epoch

    def _train_step(self, batch):
        x, y = batch
        loss = self.criterion(self.model(x.to(self.device)), y.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.total += loss.item()  # TL002: loss.item()

    @torch.no_grad()
    def eval_epoch(self, indices):
        images = []
        for i, batch in enumerate(self.data_loader["dev"]):
            x, y = batch
            out = self.model(x.to(self.device))
            loss = self.criterion(out, y.to(self.device))
            self.total += loss.item()  # TL002: loss.item()
            if i in indices:
                images.append((out.cpu().numpy(), i))
        for out, i in images:
            print(out.shape, i)


def main(loaders, model, criterion, optimizer):
    device = torch.device("cuda")
    Trainer(loaders, model.to(device), criterion, optimizer, device).train_epoch()
    dvc = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    for phase in ["train", "val"]:
        for x, y in loaders[phase]:
            out = model(x.to(dvc))
            print(criterion(out, y.to(dvc)).item())  # TL002: criterion(out, y.to(dvc)).item()
""",
        },
    ),
    # --- 2. what a metric logger of another module reads, passed every step ---
    Case(
        "logger-given-a-dict-a-helper-may-return-as-is",
        {
            "metric_logger.py": """\
import torch


class MetricLogger:
    def __init__(self):
        self.totals = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.totals[k] = self.totals.get(k, 0.0) + v
""",
            "trainer.py": """\
import torch
import torch.distributed as dist

from metric_logger import MetricLogger


def reduce_loss_dict(loss_dict):
    if dist.get_world_size() < 2:
        return loss_dict
    with torch.no_grad():
        names = sorted(loss_dict)
        stacked = torch.stack([loss_dict[k] for k in names])
        dist.reduce(stacked, dst=0)
        return {k: v for k, v in zip(names, stacked)}


def normalise(loss_dict):
    return {k: v / 2 for k, v in loss_dict.items()}


def do_train(model, data_loader, optimizer, device):
    meters = MetricLogger()
    for images, targets in data_loader:
        loss_dict = model(images.to(device), targets.to(device))
        losses = sum(loss for loss in loss_dict.values())
        loss_dict_reduced = reduce_loss_dict(loss_dict)
        meters.update(**loss_dict_reduced)  # TL002: meters.update(**loss_dict_reduced)
        meters.update(**normalise(loss_dict))
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()


device = torch.device("cuda")
""",
        },
    ),
    Case(
        "logger-given-the-losses-summed-into-the-backward",
        {
            "base_model.py": """\
class BaseModel:
    def reduce_loss_dict(self, loss_dict):
        return {name: value.mean().item() for name, value in loss_dict.items()}
""",
            "sr_model.py": """\
import torch

from base_model import BaseModel


class SRModel(BaseModel):
    def __init__(self, net, cri_pix, cri_perceptual, optimizer):
        self.net = net.to(torch.device("cuda"))
        self.cri_pix = cri_pix
        self.cri_perceptual = cri_perceptual
        self.optimizer = optimizer

    def feed_data(self, data):
        self.lq = data["lq"].to(torch.device("cuda"))
        self.gt = data["gt"].to(torch.device("cuda"))

    def optimize_parameters(self, step):
        self.optimizer.zero_grad()
        output = self.net(self.lq)
        l_total = 0
        loss_dict = {}
        l_pix = self.cri_pix(output, self.gt)
        l_total += l_pix
        loss_dict["l_pix"] = l_pix
        l_percep = self.cri_perceptual(output, self.gt)
        loss_dict["l_percep"] = l_percep
        l_total.backward()
        self.optimizer.step()
        self.log_dict = self.reduce_loss_dict(loss_dict)  # TL002: self.reduce_loss_dict(loss_dict)
        lengths = {}
        lengths["out"] = self.cri_pix.lengths(output)
        self.log_lengths = self.reduce_loss_dict(lengths)
""",
            "train.py": """\
from sr_model import SRModel


def train(model: SRModel, train_loader):
    for step, data in enumerate(train_loader):
        model.feed_data(data)
        model.optimize_parameters(step)
""",
        },
    ),
    # --- 3. a batch moved in place by a bare `batch.to(device)` is no host batch ---
    Case(
        "graph-batch-moved-in-place",
        {
            "train.py": """\
import torch

from losses import compute_loss


def train_epoch(logger, loader, model, optimizer, device):
    model.train()
    for batch in loader:
        optimizer.zero_grad()
        batch.to(torch.device(device))
        pred, true = model(batch)
        loss, score = compute_loss(pred, true)
        loss.backward()
        optimizer.step()
        logger.update_stats(loss=loss.item())  # TL002: loss.item()
    for batch in loader:
        moved = batch.to(torch.device(device))
        pred, true = model(batch)
        loss, score = compute_loss(pred, true)
        loss.backward()
        optimizer.step()
        logger.update_stats(loss=loss.item(), size=moved.num_nodes)


@torch.no_grad()
def eval_epoch(logger, loader, model, device):
    model.eval()
    for batch in loader:
        batch.to(torch.device(device))
        pred, true = model(batch)
        loss, score = compute_loss(pred, true)
        logger.update_stats(
            true=true.detach().cpu(),
            pred=score.detach().cpu(),
            loss=loss.item(),  # TL002: loss.item()
        )


train_epoch(None, None, None, None, "cuda")
eval_epoch(None, None, None, "cuda")
""",
            "losses.py": """\
def compute_loss(pred, true):
    return (pred - true).abs().mean(), pred
""",
        },
    ),
    # --- 4. a method of another module's class that reads the module's own buffer ---
    Case(
        "step-counter-read-from-a-buffer",
        {
            "models/tacotron.py": """\
import torch
from torch import nn


class Tacotron(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros(1, dtype=torch.long))
        self.gain = nn.Parameter(torch.ones(1), requires_grad=False)
        self.count = 0
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        self.step += 1
        return self.proj(x) * self.gain

    def get_step(self):
        return self.step.data.item()

    def get_gain(self):
        return self.gain.item()

    def get_count(self):
        return self.count

    def describe(self, x):
        return x.item()
""",
            "train.py": """\
import torch

from models.tacotron import Tacotron


def train(loader, optimizer):
    model = Tacotron()
    model = model.cuda()
    counts = []
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step = model.get_step()  # TL002: model.get_step()
        gain = model.get_gain()  # TL002: model.get_gain()
        counts.append(model.get_count())
        counts.append((step, gain))
""",
        },
    ),
    # --- 5. a model fed one host tensor beside inputs of unknown place ---
    Case(
        "forward-with-a-host-index-beside-moved-inputs",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer):
    model.cuda()
    for data in loader:
        tmp = [None if t is None else t.cuda() for t in data]
        feats, labels = tmp
        out = model(feats, labels, torch.arange(0, len(data)))
        loss = out["loss"].mean()
        loss.backward()
        optimizer.step()
        print(loss.item())  # TL002: loss.item()
        # a model left where it is built; one moved to the GPU computes there whatever it is
        # fed (TensorFacts._on_moved_module)
        cpu_out = prior_model(torch.arange(0, len(data)), torch.zeros(3))
        print(cpu_out.sum().item())
"""
        },
    ),
    # --- a module the file moved to the GPU computes there, fed CPU batches or not: it moves
    # them itself (or the run fails); before the move it is on the CPU ---
    # placements that do not hold at the call: moved back to the CPU, moved only by a method
    # that runs later, only where CUDA is unavailable, the name rebound since; and a loss
    # module, which has no weights and computes where its inputs are
    Case(
        "moved-module-placements-that-do-not-hold",
        {
            "moved_back.py": """\
import torch


def train_then_export(model, loader, cpu_loader):
    optimizer = torch.optim.Adam(model.parameters())
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.cpu()
    total = 0.0
    with torch.no_grad():
        for x, y in cpu_loader:
            out = model(x, y)
            total += out.item()
    return total
""",
            "moved_elsewhere.py": """\
import torch


class Runner(torch.nn.Module):
    def fit(self, loader):
        optimizer = torch.optim.Adam(self.parameters())
        total = 0.0
        for batch in loader:
            loss = self.calc_loss(batch)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total

    def deploy(self):
        self.cuda()
""",
            "moved_without_cuda.py": """\
import torch


def evaluate(model, loader, device):
    if torch.cuda.is_available():
        pass
    else:
        model.to(device)
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            total += out.item()
    return total
""",
            "rebound.py": """\
import torch


def run(loader, device):
    model = Net().to(device)
    train(model)
    model = torch.load("model_cpu.pt", map_location="cpu")
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
            total += out.item()
    return total
""",
            "loss_module.py": """\
import numpy as np
import torch
from torch import nn


def evaluate(model, loader, device):
    model.to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    preds, total = [], 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x.to(device)).cpu()  # TL002: model(x.to(device)).cpu()
            preds.append(logits.numpy())
            loss = criterion(logits, y)
            total += loss.item()
    return total, np.concatenate(preds)
""",
        },
    ),
    Case(
        "method-of-a-moved-module-fed-unmoved-batches",
        {
            "train.py": """\
import torch


def fit(model, loader):
    optimizer = torch.optim.Adam(model.parameters())
    for batch in loader:
        loss = model.calc_loss(batch)
        loss.backward()
        optimizer.step()
        print(loss.item())
    model.to("cuda")
    for batch in loader:
        loss = model.calc_loss(batch)
        loss.backward()
        optimizer.step()
        print(loss.item())  # TL002: loss.item()


def fit_on_the_cpu(model, loader):
    use_cuda = False
    if use_cuda:
        model.cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for batch in loader:
        loss = model.calc_loss(batch)
        loss.backward()
        optimizer.step()
        print(loss.item())


class Recommender(torch.nn.Module):
    def fit(self, loader):
        self.to(self.device)
        optimizer = torch.optim.Adam(self.parameters())
        total = 0.0
        for batch in loader:
            loss = self.calc_loss(batch)
            loss.backward()
            optimizer.step()
            total += loss.item()  # TL002: loss.item()
        return total
"""
        },
    ),
    Case(
        "a-batch-of-batches-is-no-loader",
        {
            "train.py": """\
import torch


def train(batches, model, device):
    for i in range(len(batches)):
        for sample in batches[i]:
            print(model(sample.to(device)).sum().item())


device = torch.device("cuda")
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [Case(c.id, c.files, rules=("TL002",)) for c in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_helpers")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
