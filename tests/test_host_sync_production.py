"""TL002 on production code: the classes a held-out production batch showed, as invented projects.

Each case is a small multi-file project of its own (a folder with a `[tool.torchlint]` table),
all checked once by the installed `torchlint` command, and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding on that line at
the column where `text` starts, and every other TL002 finding in the case's files is a failure.

Precision: periodic guards written as helper calls (resolved in another module, or told by the
helper's name where it cannot be resolved), library `__main__` self-checks that compare
implementations on a toy net, tensors already moved to the CPU, and images converted for files
through a loop. Recall: per-step code that only the project's other modules show to be per step
(a per-parameter `.item()` in a grad helper, a base class's loss reduction, a meter's update, a
loss module's forward, a subclass's `train_step` that a base class's loop calls).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    # --- 1. periodic guards written as a helper call ---
    Case(
        "periodic-helper-in-another-module",
        {
            "utils/__init__.py": "",
            "utils/schedule.py": """\
def every_n_steps(state, freq, acc_step=None):
    test = state.step % freq == 0
    if acc_step is not None:
        test = test and state.acc_step == acc_step
    return test


def past_warmup(step):
    return step > 10
""",
            "trainer/__init__.py": "",
            "trainer/base.py": """\
class BaseTrainer:
    def _is_log_step(self):
        return (self.step + 1) % self.log_every == 0
""",
            "trainer/sr.py": """\
import torch

from .base import BaseTrainer


class SRTrainer(BaseTrainer):
    def fit(self, loader):
        for x, y in loader:
            loss = self.model(x.cuda()).mean()
            loss.backward()
            self.opt.step()
            self.step += 1
            if self._is_log_step():
                print(loss.item())
""",
            "train.py": """\
import torch
from somewhere_else import should_log

from utils.schedule import every_n_steps, past_warmup


def train(model, loader, opt, state, args):
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        state.step += 1
        if every_n_steps(state, args.log_freq):
            print(loss.item())
        if should_log(state.step) and args.verbose:
            print(loss.item())
        if past_warmup(state.step):
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    # --- 2. library __main__ self-checks ---
    Case(
        "loss-library-self-check",
        {
            "losses/__init__.py": "",
            "losses/focal.py": """\
import copy

import torch
import torch.nn as nn
import torchvision


class FocalLossV1(nn.Module):
    def forward(self, logits, label):
        return -(label * torch.log_softmax(logits, 1)).sum(1).mean()


class FocalLossV2(nn.Module):
    def forward(self, logits, label):
        return -(label * logits.log_softmax(1)).sum(1).mean()


if __name__ == "__main__":
    net1 = torchvision.models.resnet18(num_classes=2).cuda()
    net2 = copy.deepcopy(net1)
    crit1, crit2 = FocalLossV1(), FocalLossV2()
    opt1 = torch.optim.SGD(net1.parameters(), lr=0.01)
    opt2 = torch.optim.SGD(net2.parameters(), lr=0.01)
    for it in range(100):
        inten = torch.randn(16, 3, 224, 224).cuda()
        lbs = torch.randint(0, 2, (16, 2)).cuda()
        loss1 = crit1(net1(inten), lbs)
        opt1.zero_grad()
        loss1.backward()
        opt1.step()
        loss2 = crit2(net2(inten), lbs)
        opt2.zero_grad()
        loss2.backward()
        opt2.step()
        print(loss1.item(), loss2.item())
""",
            "toy_train.py": """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x.pow(2)


if __name__ == "__main__":
    model = Net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(1000):
        x = torch.randn(64, 10).cuda()
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    # --- 3. tensors already on the CPU ---
    Case(
        "already-moved-to-the-cpu",
        {
            "demo.py": """\
import torch


def visualise(model, loader, ratio, keep_on_gpu):
    for img, _ in loader:
        out = model(img.cuda())
        dets = out.detach().cpu()  # TL002: out.detach().cpu()
        boxes = dets[:, :4]
        boxes /= ratio
        for box in boxes:
            print(int(box[0]), box.tolist())
        a, b = out.cpu(), img.cpu()  # TL002: out.cpu()
        print(a.numpy().sum(), b.numpy())
        dets[dets[:, 4] < 0.3] = 0
        print(dets.tolist())
        feats = out
        if not keep_on_gpu:
            feats = feats.cpu()  # TL002: feats.cpu()
        print(feats.numpy().shape)
""",
        },
    ),
    # --- a loss from a registry is a tensor: it is backpropagated ---
    Case(
        "loss-from-a-registry-logged",
        {
            "runner.py": """\
import torch


def train(model, loader, opt, losses, writer, cfg):
    for step, (x, y) in enumerate(loader):
        loss = losses[cfg.kind](model, x.cuda())
        writer.add_scalar("loss", loss, global_step=step)  # TL002: loss, global_step
        opt.zero_grad()
        loss.backward()
        opt.step()
        score = losses[cfg.kind](model, x.cuda())
        writer.add_scalar("score", score, global_step=step)
""",
        },
    ),
    # --- an inner sampling loop's end-of-sequence test: the host needs it to stop ---
    Case(
        "sampling-loop-stops-on-eos",
        {
            "sample.py": """\
import torch


def sample(model, loader, eos, steps):
    for prompt in loader:
        out = prompt.cuda()
        for _ in range(steps):
            out = torch.cat((out, model(out).argmax(-1, keepdim=True)), -1)
            if (out == eos).any(-1).all():
                break
        loss = model(out).mean()
        loss.backward()
        if torch.isnan(loss):  # TL002: torch.isnan(loss)
            continue
""",
        },
    ),
    # --- 4. images converted for files through a loop ---
    Case(
        "images-saved-through-a-loop",
        {
            "generate.py": """\
import os

import PIL.Image
import torch


def generate(model, loader, outdir):
    for i, (z, seeds) in enumerate(loader):
        images = model(z.cuda())
        images_np = (images * 127.5 + 128).clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()
        for seed, image_np in zip(seeds, images_np):
            path = os.path.join(outdir, f"{seed:06d}.png")
            if image_np.shape[2] == 1:
                PIL.Image.fromarray(image_np[:, :, 0], "L").save(path)
            else:
                PIL.Image.fromarray(image_np, "RGB").save(path)
        scores = model(z.cuda()).softmax(1).cpu().numpy()  # TL002: model(z.cuda()).softmax(1).cpu()
        for seed, score in zip(seeds, scores):
            print(seed, score.max())
""",
        },
    ),
    # --- 5. per-parameter .item() in a project grad helper: at the helper's read, and at each
    # call that hands it a module's parameters every step (where blind labels put it too) ---
    Case(
        "grad-helper-in-another-module",
        {
            "commons.py": """\
import torch


def sequence_mask(length, max_length):
    return torch.arange(max_length, dtype=length.dtype, device=length.device) < length[:, None]


def clip_grad_value_(parameters, clip_value, norm_type=2):
    parameters = [p for p in parameters if p.grad is not None]
    total_norm = 0
    for p in parameters:
        param_norm = p.grad.data.norm(norm_type)
        total_norm += param_norm.item() ** norm_type  # TL002: param_norm.item()
        if clip_value is not None:
            p.grad.data.clamp_(min=-clip_value, max=clip_value)
    return total_norm ** (1.0 / norm_type)
""",
            "train.py": """\
import torch

import commons


def train(net, train_loader, optim):
    for batch_idx, (x, y) in enumerate(train_loader):
        x, y = x.cuda(), y.cuda()
        loss = net(x, y)
        optim.zero_grad()
        loss.backward()
        grad_norm = commons.clip_grad_value_(net.parameters(), None)  # TL002: commons.clip_grad_value_(net.parameters(), None)
        optim.step()
        if batch_idx % 100 == 0:
            print(grad_norm)
""",
        },
    ),
    # --- 6. a training step method that a registry-built model runs: its reads are per step ---
    Case(
        "stepping-method-of-a-registry-model",
        {
            "models/__init__.py": """\
import importlib


def build_model(opt):
    module = importlib.import_module(f"models.{opt['model']}")
    return getattr(module, opt["cls"])(opt)
""",
            "models/base_model.py": """\
import torch


class BaseModel:
    def __init__(self, opt):
        self.device = torch.device("cuda")

    def reduce_loss_dict(self, loss_dict):
        log = {}
        for name, value in loss_dict.items():
            log[name] = value.mean().item()
        return log
""",
            "models/sr_model.py": """\
from collections import OrderedDict

import torch

from .base_model import BaseModel


class SRModel(BaseModel):
    def feed_data(self, data):
        self.lq = data["lq"].to(self.device)
        self.gt = data["gt"].to(self.device)

    def optimize_parameters(self, step):
        self.optimizer_g.zero_grad()
        out = self.net_g(self.lq)
        l_pix = self.cri_pix(out, self.gt)
        l_pix.backward()
        self.optimizer_g.step()
        loss_dict = OrderedDict()
        loss_dict["l_pix"] = l_pix
        self.log_dict = self.reduce_loss_dict(loss_dict)  # TL002: self.reduce_loss_dict(loss_dict)
        self.loss_value = l_pix.item()  # TL002: l_pix.item()
""",
            "train.py": """\
from models import build_model


def main(opt, train_loader):
    model = build_model(opt)
    for step, data in enumerate(train_loader):
        model.feed_data(data)
        model.optimize_parameters(step)
""",
        },
    ),
    # --- 7. a meter's update that reads what the training step passes ---
    Case(
        "meters-in-a-container",
        {
            "utils/__init__.py": "",
            "utils/metrics.py": """\
import torch


class AverageMetric:
    def __init__(self):
        self._sum = 0.0
        self._count = 0

    def update(self, tensor):
        tensor = tensor[~torch.isnan(tensor)]
        self._sum += tensor.sum().item()
        self._count += len(tensor)
""",
            "train.py": """\
from collections import defaultdict

import torch

from utils.metrics import AverageMetric


def train(model, loader, opt):
    meters = defaultdict(AverageMetric)
    named, mixed = {}, {}
    for x, y in loader:
        losses = model(x.cuda(), y.cuda())
        losses.mean().backward()
        opt.step()
        meters["loss"].update(losses)  # TL002: meters["loss"].update(losses)
        named["loss"] = AverageMetric()
        named["loss"].update(losses)  # TL002: named["loss"].update(losses)
        mixed["loss"] = AverageMetric()
        mixed["lr"] = 0.1
        mixed["loss"].update(losses)
""",
        },
    ),
    # --- 8. a loss module's forward that a training step calls ---
    Case(
        "nan-check-in-a-loss-forward",
        {
            "losses.py": """\
import torch
from torch import nn


class RobustLoss(nn.Module):
    def forward(self, pred, target):
        loss = (pred - target).pow(2).mean(1)
        if torch.isnan(loss).any():  # TL002: torch.isnan(loss).any()
            loss = torch.nan_to_num(loss)
        return loss.mean()
""",
            "algorithm.py": """\
import torch

from losses import RobustLoss


class ERM(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net.cuda()
        self.criterion = RobustLoss()
        self.optimizer = torch.optim.Adam(net.parameters())

    def update(self, x, y):
        loss = self.criterion(self.net(x.cuda()), y.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}  # TL002: loss.item()
""",
        },
    ),
    # --- 9. a subclass's train_step that a base class's loop in another module calls ---
    Case(
        "train-step-called-by-a-base-loop",
        {
            "core/__init__.py": "",
            "core/base.py": """\
import torch


class AlgorithmBase:
    def train(self):
        self.model.cuda()
        for data_lb in self.loader_dict["train_lb"]:
            batch = {k: v.cuda() for k, v in data_lb.items()}
            self.out_dict, self.log_dict = self.train_step(**batch)
            self.loss.backward()
            self.optimizer.step()

    def train_step(self, **batch):
        raise NotImplementedError
""",
            "algorithms/__init__.py": "",
            "algorithms/fixmatch.py": """\
import torch

from core.base import AlgorithmBase


class FixMatch(AlgorithmBase):
    def train_step(self, x_lb, y_lb):
        logits = self.model(x_lb)
        sup_loss = self.ce_loss(logits, y_lb)
        self.loss = sup_loss
        log_dict = {"train/sup_loss": sup_loss.item()}  # TL002: sup_loss.item()
        return {"logits": logits}, log_dict
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_production")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
