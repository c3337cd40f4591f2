"""TL002 recall in-file: per-batch loops the loop facts did not see, and tensors the author typed.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The classes, each from production code judges labelled as missed:
- an evaluation loop over a range that steps by a batch size (`range(0, n, batch_size)`) runs
  once per batch, like a loop over a loader;
- a loop that fetches its batch inside a `with torch.no_grad():` or `try:` block at the top of
  its body (`batch = next(it)` under `try`, `StopIteration` restarting the iterator) is a
  per-batch loop too, as one that fetches it as its first statement is;
- a range bounded by a count of iterations in each epoch (`total_it_each_epoch`) iterates steps,
  not epochs, as `steps_per_epoch` does;
- a loop whose target is named `batch` over a parameter iterates batches, whatever the
  parameter is called (`for i, batch in enumerate(gen_val):` over a loader another module
  hands in), though not over an iterable the function builds itself (`np.array_split(x, 64)`,
  a progress wrapper);
- optimizers stepped in a loop over them (`for opt in optimizers.values(): opt.step()`) make
  one update: a periodic guard whose branch calls the function that does so is gradient
  accumulation, and what that function runs (a per-parameter finiteness test) runs every update;
- `torch.tensor(t)` of a device tensor copies it on its device (`torch.tensor(grad_norm).item()`
  of a `clip_grad_norm_` result syncs), while `torch.tensor(3.0)` is built on the CPU;
- a loop over epochs that steps the optimizer in its own body, with no loop over batches in
  it, is full-batch training (a whole graph each step): each epoch is one step, and a read in
  it syncs every step; an epoch loop around a per-batch loop stays a loop of epochs;
- what a helper of the file returns after backpropagating it (`loss =
  self.backward_propagate(loss, step)` returning its `loss`) is a loss, so a tensor: formatted
  into the progress bar each batch, it syncs;
- a local annotated `loss: Tensor = a + b` holds a tensor, as an annotated parameter does;
- a loop whose target is named `batch` over what is named an iterator or a loader of batches
  (`for batch in self.get_iterator("valid", lang):`, the call that makes one or the name that
  holds one) iterates batches, wherever the iterable comes from.

Precision: a range stepping by another step (`range(0, n, 2)`), a loop over files whose target
is `batch_file`, an annotated `float`, and a first-time test at the top of the loop (`if not
first: first = logits`) stay silent; so do a loop over an iterator whose target is not named a
batch (`for item in self.get_iterator(...)`) and one whose target is a batch but whose iterable
is named for something else (`for batch in self.sample_texts(split)`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "range-by-batch-size",
        {
            "train.py": """\
import numpy as np
import torch


def evaluate(net, data, labels, batch_size, device):
    total = 0.0
    order = np.random.permutation(len(data))
    for start in range(0, len(order), batch_size):
        with torch.no_grad():
            inds = order[start:start + batch_size]
            x = torch.from_numpy(data[inds]).to(device)
            y = torch.from_numpy(labels[inds]).to(device)
            loss = ((net(x) - y) ** 2).mean()
            total += loss.item()  # TL002: loss.item()
    for start in range(0, len(order), 2):
        x = torch.from_numpy(data[start]).to(device)
        total += net(x).sum().item()
    return total
""",
        },
    ),
    Case(
        "batch-fetched-in-a-block",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer, start_it, total_it_each_epoch, meter, rank):
    it = iter(loader)
    for cur_it in range(start_it, total_it_each_epoch):
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            batch = next(it)
        loss = model(batch.cuda()).mean()
        loss.backward()
        optimizer.step()
        if rank == 0:
            meter.update(loss.item())  # TL002: loss.item()


def evaluate(model, get_batch, steps):
    total = 0.0
    for step in range(steps):
        with torch.no_grad():
            x, y = get_batch("val")
            loss = model(x.cuda(), y.cuda())
        total += loss.item()  # TL002: loss.item()
    return total
""",
        },
    ),
    Case(
        "loop-target-named-batch",
        {
            "utils_fit.py": """\
import numpy as np
import torch


def fit_one_epoch(model, yolo_loss, gen_val, epoch_step_val, local_rank):
    val_loss = 0
    model.eval()
    for iteration, batch in enumerate(gen_val):
        if iteration >= epoch_step_val:
            break
        images, boxes = batch[0], batch[1]
        with torch.no_grad():
            images = images.cuda(local_rank)
            boxes = boxes.cuda(local_rank)
            loss_value = yolo_loss(model(images), boxes)
        val_loss += loss_value.item()  # TL002: loss_value.item()
    return val_loss


def read_files(model, batch_files):
    sizes = []
    for batch_file in batch_files:
        x = torch.load(batch_file).cuda()
        sizes.append(model(x).sum().item())
    return sizes


def chunks(model, states, log_progress):
    means = []
    for batch in np.array_split(states, 64):
        means.append(model(torch.tensor(batch).cuda()).mean().item())
    for batch in log_progress("generate", states):
        means.append(model(batch.cuda()).mean().item())
    return means
""",
        },
    ),
    Case(
        "annotated-tensor-local",
        {
            "learner.py": """\
import torch
from torch import Tensor


class Learner:
    def train(self, loader, losses: list):
        self.model.cuda()
        for batch_num, mb in enumerate(loader):
            mb = mb.cuda()
            policy_loss, value_loss = self.losses(mb)
            actor_loss: Tensor = policy_loss + value_loss
            losses[batch_num] = float(actor_loss)  # TL002: float(actor_loss)
            rate: float = self.rate + 1
            losses[batch_num] += float(rate)
            loss = actor_loss + self.critic_loss(mb)
            loss.backward()
            self.optimizer.step()
""",
        },
    ),
    Case(
        "optimizers-stepped-in-a-loop-over-them",
        {
            "brain.py": """\
import torch


class Brain:
    def fit(self, loader):
        self.modules.cuda()
        for i, batch in enumerate(loader):
            loss = self.modules(batch.cuda()).mean()
            (loss / self.accumulation).backward()
            if (i + 1) % self.accumulation == 0:
                self.optimizers_step()

    def optimizers_step(self):
        if self.skip_nonfinite_grads:
            self.check_gradients()
        for opt in self.optimizers.values():
            opt.step()
            opt.zero_grad()

    def check_gradients(self):
        for param in self.modules.parameters():
            if param.grad is not None:
                if not torch.isfinite(param.grad).all():  # TL002: torch.isfinite(param.grad).all()
                    param.grad = None
""",
        },
    ),
    Case(
        "tensor-of-a-device-tensor",
        {
            "ppo.py": """\
import torch


def optimize(agent, loader, optimizer, info):
    agent.cuda()
    for x in loader:
        loss = agent(x.cuda()).mean()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(agent.parameters(), 1.0)
        optimizer.step()
        info.append(torch.tensor(grad_norm).item())  # TL002: torch.tensor(grad_norm).item()
        info.append(torch.as_tensor(3.0).item())
""",
        },
    ),
    Case(
        "loss-returned-by-a-backward-helper",
        {
            "train.py": """\
import torch


class Trainer:
    def train(self, loader, bar):
        self.model.cuda()
        loss, first = 0, []
        for step, batch in enumerate(loader):
            bar.set_description(f"step {loss:.4f}")  # TL002: loss
            logits = self.model(batch.cuda())
            loss = self.backward_propagate(logits.mean(), step)
            total = self.count(logits)
            bar.set_postfix(f"{total}")
            if not first:
                first = logits

    def backward_propagate(self, loss, step):
        loss = loss / self.accumulation
        loss.backward()
        if step % self.accumulation == 0:
            self.optimizer.step()
        return loss

    def count(self, logits):
        logits.sum().backward()
        return 3
""",
        },
    ),
    Case(
        "full-graph-training-steps-each-epoch",
        {
            "main.py": """\
import torch
from tqdm import tqdm


def pretrain(model, graph, feat, optimizer, max_epoch, device, loader):
    x = feat.to(device)
    model.to(device)
    epoch_iter = tqdm(range(max_epoch))
    for epoch in epoch_iter:
        loss = model(graph, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_iter.set_description(f"epoch {epoch}: {loss.item():.4f}")  # TL002: loss.item()
    for epoch in range(max_epoch):
        for batch in loader:
            loss = model(graph, batch.to(device))
            loss.backward()
            optimizer.step()
        print(loss.item())
""",
        },
    ),
    Case(
        "batch-target-over-a-named-iterator",
        {
            "evaluator.py": """\
import torch


class Evaluator:
    def __init__(self, model, data):
        self.model = model
        self.data = data

    def get_iterator(self, split, lang):
        return self.data[split][lang].get_iterator(shuffle=False, group_by_size=True)

    def sample_texts(self, split):
        return self.data[split]["texts"]

    def evaluate_lm(self, split, lang):
        self.model.eval()
        total, words = 0.0, 0
        for batch in self.get_iterator(split, lang):
            x, lengths = batch
            x = x.cuda()
            loss = self.model(x, lengths)
            words += lengths.size(0)
            total += loss.item() * lengths.size(0)  # TL002: loss.item()
        for item in self.get_iterator(split, lang):
            x = item[0].cuda()
            print(self.model(x).mean().item())
        for batch in self.sample_texts(split):
            x = batch.cuda()
            print(self.model(x).mean().item())
        return total / words
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_batch_loops")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
