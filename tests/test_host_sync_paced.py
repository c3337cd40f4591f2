"""TL002 in iterations that already wait for the device every step by design.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

An iteration that hands its outputs to a helper of the file that returns host copies (`return
t.detach().cpu()`) or picks which of two updates to run from a device value waits for the
device every step anyway: one more logging read before that wait costs a copy, not a wait, and
judges call it debatable or a false alarm. The same logging read in an iteration without such
a wait, reads repeated per element in an inner loop, reads beside a test that only adds an
update (`if extra != 0: extra.backward()`) and reads beside `torch.cuda.synchronize()`, timed
or not (blind labels keep a gradient norm read before the optimizer step in a timed loop),
stay findings, as do reads beside a value the host needs (decoded predictions or inputs, a
per-batch assertion) and beside boolean-mask indexing: it waits to size its result, but the
recall labels keep such steps' logging reads as findings.
The `HOST_NEEDED` cases are copies the host needs where they go: a numpy, scipy or sklearn
metric in a function named for evaluation or after its own `model.eval()`, and an agent's
action handed back from a function named for acting.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

# A training step that reads its loss (`mark`: the finding expected there, if any), then copies
# an attention map to the host through a helper inside `block` (indented under the loop).
_PLOTTED = """\
import numpy as np
import torch


def np_now(x):
    return x.detach().cpu().numpy()


def train(model, loader, optimizer, example_id, is_train, num_classes):
    model.cuda()
    running = 0.0
    for x, ids in loader:
        out, attention = model(x.cuda())
        loss = out.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item(){mark}
        {block}
"""

CASES = [
    Case(
        "synchronize-for-a-timer-paces-nothing",
        {
            "train.py": """\
import time

import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        start = time.time()
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()  # TL002: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
        for p in model.parameters():
            print(p.grad.norm().item())  # TL002: p.grad.norm().item()
        optimizer.step()
        torch.cuda.synchronize()
        print(norm, time.time() - start)
""",
        },
    ),
    Case(
        "no-synchronize-no-pace",
        {
            "train.py": """\
import time

import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        start = time.time()
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()  # TL002: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item()
        optimizer.step()
        print(norm, time.time() - start)
""",
        },
    ),
    Case(
        "helper-returns-host-copies",
        {
            "generate.py": """\
import torch


def gather(tensor):
    if isinstance(tensor, (list, tuple)):
        return [t.detach().cpu() for t in tensor]
    return tensor.detach().cpu()


def generate(model, tokenizer, loader):
    model.cuda()
    losses, texts = [], []
    with torch.no_grad():
        for x, y in loader:
            loss, ids = model(x.cuda(), y.cuda())
            losses.append(loss.mean().detach().cpu())
            texts.extend(tokenizer.batch_decode(gather(ids)))
    return losses, texts
""",
        },
    ),
    # the helper's copies run only for the batch that holds the example to plot: they pace
    # no other iteration, so the loss read stays a finding
    Case(
        "helper-returns-host-copies-under-a-branch",
        {
            "train.py": _PLOTTED.format(
                mark="  # TL002: loss.item()",
                block="if example_id in ids:\n"
                '            np.save("attention.npy", np_now(attention[ids.index(example_id)]))',
            ),
        },
    ),
    # the read and the helper's copy sit in the same branch: whenever the read runs, the copy
    # after it waits for the device anyway
    Case(
        "helper-returns-host-copies-in-the-branch-of-the-read",
        {
            "generate.py": """\
import torch


def gather(tensor):
    return tensor.detach().cpu()


def generate(model, tokenizer, loader):
    model.cuda()
    losses, texts = [], []
    with torch.no_grad():
        for x, y in loader:
            loss, ids = model(x.cuda(), y.cuda())
            if "labels" in x:
                losses.append(loss.mean().detach().cpu())
                texts.extend(tokenizer.batch_decode(gather(ids)))
    return losses, texts
""",
        },
    ),
    # a copy in a try body, under a switch of the run, or in a loop over a fixed count runs
    # with every iteration that reads: it still paces the read
    Case(
        "helper-returns-host-copies-in-blocks-that-run-every-iteration",
        {
            "in_a_try.py": _PLOTTED.format(
                mark="",
                block="try:\n            np.save('a.npy', np_now(attention))\n"
                "        except OSError:\n            pass",
            ),
            "on_a_run_switch.py": _PLOTTED.format(
                mark="", block="if is_train:\n            np.save('a.npy', np_now(attention))"
            ),
            "per_class.py": _PLOTTED.format(
                mark="",
                block="for c in range(num_classes):\n            np.save('a.npy', np_now(attention[c]))",
            ),
        },
    ),
    Case(
        "helper-returns-device-values",
        {
            "generate.py": """\
import torch


def gather(tensor):
    if isinstance(tensor, (list, tuple)):
        return type(tensor)(gather(t) for t in tensor)
    return tensor.detach()


def generate(model, tokenizer, loader):
    model.cuda()
    losses, texts = [], []
    with torch.no_grad():
        for x, y in loader:
            loss, ids = model(x.cuda(), y.cuda())
            losses.append(loss.mean().detach().cpu())  # TL002: loss.mean().detach().cpu()
            texts.extend(tokenizer.batch_decode(gather(ids)))
    return losses, texts
""",
        },
    ),
    Case(
        "read-picks-the-update",
        {
            "train.py": """\
import torch


def train(net, loader, opt, adv_opt):
    net.cuda()
    count = torch.zeros(1, device="cuda")
    for x, y in loader:
        count = (count + 1) % 2
        if count.item() == 1:  # TL002: count.item()
            loss = net(x.cuda(), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())
        else:
            gap = -net(x.cuda(), y.cuda())
            adv_opt.zero_grad()
            gap.backward()
            adv_opt.step()
            print(gap.item())
""",
        },
    ),
    Case(
        "read-adds-an-update",
        {
            "train.py": """\
import torch


def train(net, loader, opt):
    net.cuda()
    for x, y in loader:
        loss, extra = net(x.cuda(), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if extra != 0:  # TL002: extra != 0
            extra.backward()
            opt.step()
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "synchronize-that-times-nothing",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss_value = loss.item()  # TL002: loss.item()
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        print(loss_value)
""",
        },
    ),
    Case(
        "boolean-mask-indexing-paces-nothing",
        {
            "learner.py": """\
import torch


def update(net, batch, optimizer):
    out = net(batch["obs"])
    loss = (out - batch["target"]).pow(2).mean()
    alive = (~batch["finished"]).float()
    finished_scores = batch["score"][batch["finished"]]
    info = {
        "mean_score": torch.mean(finished_scores).item(),  # TL002: torch.mean(finished_scores).item()
        "loss": loss.item(),  # TL002: loss.item()
    }
    optimizer.zero_grad()
    (loss * alive.mean()).backward()
    optimizer.step()
    return info


def train(net, loader, optimizer):
    net.cuda()
    for batch in loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        print(update(net, batch, optimizer))
""",
        },
    ),
    Case(
        "mask-of-a-comparison-paces-nothing",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = model(x).sub(y).pow(2)
        kept = loss[y >= 0].mean()
        print(kept.item())  # TL002: kept.item()
        optimizer.zero_grad()
        kept.backward()
        optimizer.step()
""",
        },
    ),
    Case(
        "an-assertion-paces-nothing",
        {
            "metric.py": """\
import torch


def evaluate(model, loader, n):
    model.cuda()
    model.eval()
    totals = torch.zeros(n)
    for x, y in loader:
        with torch.no_grad():
            pred = model(x.cuda()).argmax(1)
        hits = torch.histc(pred.float().cpu(), bins=n, min=0, max=n - 1)  # TL002: pred.float().cpu()
        assert (pred >= 0).all().item()
        totals += hits
    return totals
""",
        },
    ),
    Case(
        "a-copied-sum-is-a-scalar-read",
        {
            "score.py": """\
import numpy as np
import torch


def score(model, loader):
    model.cuda()
    model.eval()
    total, count = 0.0, 0
    for x, y in loader:
        with torch.no_grad():
            loss = model(x.cuda(), y.cuda())
        total += loss.sum().item()  # TL002: loss.sum().item()
        count += y.cuda().ne(0).sum().cpu()  # TL002: y.cuda().ne(0).sum().cpu()
    print(np.exp(total / count))
""",
        },
    ),
    Case(
        "decoded-predictions-pace-nothing",
        {
            "evaluate.py": """\
import torch


def evaluate(model, tokenizer, loader, keep_losses):
    model.cuda()
    model.eval()
    texts = []
    step_losses = []
    for batch in loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        with torch.no_grad():
            outputs = model(**batch)
            if keep_losses:
                step_losses.append(outputs.loss.item())  # TL002: outputs.loss.item()
        ids = torch.argmax(outputs.logits, -1)
        texts.extend(tokenizer.batch_decode(ids.cpu().numpy()))
    return texts, step_losses
""",
        },
    ),
    Case(
        "decoded-inputs-pace-nothing-after-them",
        {
            "train.py": """\
import torch


def train(model, tokenizer, loader, optimizer):
    model.cuda()
    for batch in loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        text = tokenizer.batch_decode(batch["input_ids"].cpu().numpy())
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(text[0], loss.item())  # TL002: loss.item()
""",
        },
    ),
]

HOST_NEEDED = [
    Case(
        "evaluation-method-hands-copies-to-a-numpy-metric",
        {
            "scorer.py": """\
import numpy as np
import torch


class Scorer:
    def __init__(self, net, loader, n):
        self.net = net.cuda()
        self.loader = loader
        self.n = n
        self.sizes = [0.5, 1.0]

    def confusion(self, pred, label):
        merged = pred * self.n + label
        return np.bincount(merged.ravel(), minlength=self.n**2).reshape(self.n, self.n)

    def evaluate(self):
        table = np.zeros((self.n, self.n))
        for images, labels in self.loader:
            b, _, h, w = images.shape
            summed = torch.zeros((b, self.n, h, w))
            images = images.cuda()
            for size in self.sizes:
                out = self.net(torch.nn.functional.interpolate(images, scale_factor=size))
                summed += out.detach().cpu()
            best = np.argmax(summed.numpy(), axis=1)
            table = table + self.confusion(best, labels.numpy())
        return np.diag(table).sum() / table.sum()

    def fit(self, optimizer):
        for images, labels in self.loader:
            out = self.net(images.cuda())
            loss = torch.nn.functional.cross_entropy(out, labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scores = np.argmax(out.detach().cpu().numpy(), axis=1)  # TL002: out.detach().cpu()
            print(scores.mean())
""",
        },
    ),
    Case(
        "eval-mode-copies-into-scipy-and-sklearn",
        {
            "attribution.py": """\
import numpy as np
import torch
from scipy.sparse import csr_matrix
from sklearn.metrics import roc_auc_score


class Explainer:
    def __init__(self, net, grouping, device):
        self.net = net.to(device)
        self.grouping = grouping
        self.device = device

    def attributions(self, loader):
        self.net.eval()
        rows = []
        for x in loader:
            x = x.to(self.device).float()
            weights = self.net.weights(x)
            rows.append(csr_matrix.dot(weights.cpu().detach().numpy(), self.grouping))
        return np.vstack(rows)

    def auc(self, loader):
        self.net.eval()
        labels, scores = [], []
        for x, y in loader:
            with torch.no_grad():
                pred = self.net(x.to(self.device))
            labels.append(y.view(pred.shape).cpu())
            scores.append(pred.cpu())
        return roc_auc_score(torch.cat(labels).numpy(), torch.cat(scores).numpy())

    def fit(self, loader, opt):
        self.net.train()
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.net(x.to(self.device)), y.to(self.device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "agent-hands-its-action-back",
        {
            "agent.py": """\
import torch


class Agent:
    def __init__(self, model, optimizer, device):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device
        self.t = 0
        self.returns = []

    def update(self):
        loss = torch.stack(self.returns).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.returns = []
        print(loss.item())  # TL002: loss.item()

    def batch_act(self, obs):
        return self._act_train(obs)

    def _act_train(self, obs):
        x = torch.as_tensor(obs, device=self.device)
        self.t += 1
        if self.t % 5 == 0:
            self.update()
        dist = self.model(x)
        action = dist.sample()
        self.returns.append(dist.log_prob(action).sum())
        return action.cpu().numpy()
""",
        },
    ),
    Case(
        "an-activation-helper-is-no-action",
        {
            "train.py": """\
import torch
from torch.utils.data import DataLoader


def act_norm(h):
    return h.norm().item()  # TL002: h.norm().item()


def train(model, dataset, opt, log):
    model = model.cuda()
    for x, y in DataLoader(dataset, batch_size=32):
        x, y = x.cuda(), y.cuda()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(act_norm(out))
""",
        },
    ),
]
CASES += HOST_NEEDED

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_paced")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
