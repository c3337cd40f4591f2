"""TL002 on reads whose value the host needs: where the read's value goes decides.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A copy to the host is the job, not an accident, when every use of the value ends where only the
host can take it (`analysis/host_io.py: HostWrites.host_needs`):

- in evaluation (grad off), predictions and targets copied per batch for a metric the host
  computes over the whole set: a numpy, scikit-learn or pycocotools call, or a list later handed
  to one (or written to a file); not a plain `np.mean`/`np.sum` of per-batch values, which
  could be kept on the device;
- token ids decoded to text (`tokenizer.decode`, `batch_decode`);
- replay priorities written into a host buffer (`memory.update_priorities(idx, td.cpu().numpy())`);
- sizes that set a buffer's shape (`max(sizes)` -> `torch.empty((n,))`), a slice bound or a
  `range` count: any such use makes the read necessary, whatever else reads the value (but
  one element of a tensor read per iteration of an inner loop, `int(counts[b])`, stays a
  finding: one read of the whole tensor before the loop would do);
- a test whose branch leaves the loop or the program (a NaN abort that raises, an early stop
  that breaks); a branch that only skips the batch (`continue`), picks this step's path
  (`return` from a step function) or a `while` test on a device counter is still a per-step
  truth test.

A loop that hands an action to an environment every step waits for the device there by design;
another read in the same loop waits on nothing more.

Still findings: `loss.item()` into a running sum or a logger in training, per-batch training
metrics (even when numpy computes them, or a no_grad helper inside the training loop), and
values that are also logged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "eval-copies-for-sklearn",
        {
            "evaluate.py": """\
import numpy as np
import torch
from sklearn.metrics import accuracy_score, f1_score


@torch.no_grad()
def evaluate(model, loader):
    model.cuda().eval()
    preds, probs, labels = [], [], []
    for x, y in loader:
        logits = model(x.cuda())
        preds.extend(logits.argmax(-1).cpu().tolist())
        probs.append(logits.softmax(-1).cpu().numpy())
        labels.extend(y.tolist())
    y_pred = np.array(preds)
    return accuracy_score(labels, y_pred), f1_score(labels, y_pred), np.concatenate(probs)
""",
        },
    ),
    Case(
        "eval-copies-for-numpy-metric",
        {
            "evaluate.py": """\
import numpy as np
import torch


def mean_iou(pred, gt):
    return (pred == gt).mean()


def evaluate(model, loader, threshold):
    model.cuda()
    results = []
    with torch.no_grad():
        for x, y in loader:
            scores, boxes = model(x.cuda())
            scores = scores.cpu().numpy()
            boxes = boxes.cpu().numpy()
            boxes /= 2.0
            keep = np.where(scores > threshold)[0]
            picked = boxes[keep, :]
            results.append(np.concatenate([picked, np.expand_dims(scores[keep], 1)], 1))
    return results
""",
        },
    ),
    Case(
        "eval-detections-to-coco-json",
        {
            "coco_eval.py": """\
import json

import torch


def evaluate(model, dataset, threshold):
    model.cuda()
    results = []
    with torch.no_grad():
        for index in range(len(dataset)):
            scores, labels, boxes = model(dataset[index].cuda())
            scores = scores.cpu()
            labels = labels.cpu()
            boxes = boxes.cpu()
            boxes /= 2.0
            if boxes.shape[0] > 0:
                boxes[:, 2] -= boxes[:, 0]
                for i in range(boxes.shape[0]):
                    score = float(scores[i])
                    if score < threshold:
                        break
                    results.append(
                        {
                            "category_id": dataset.to_coco(int(labels[i])),
                            "score": score,
                            "bbox": boxes[i, :].tolist(),
                        }
                    )
    if not len(results):
        return
    json.dump(results, open("results.json", "w"))
""",
        },
    ),
    Case(
        "training-metrics-stay-findings",
        {
            "train.py": """\
import numpy as np
import torch
from sklearn.metrics import accuracy_score


def train(model, loader, optimizer):
    model.cuda()
    preds, losses = [], []
    for x, y in loader:
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        loss.backward()
        optimizer.step()
        preds.append(out.argmax(-1).cpu().numpy())  # TL002: out.argmax(-1).cpu()
        losses.append(loss.item())  # TL002: loss.item()
    print(np.mean(losses), accuracy_score(np.concatenate(preds), np.zeros(len(preds))))


@torch.no_grad()
def validate(model, loader):
    total = 0.0
    all_losses = []
    for x, y in loader:
        loss = model(x.cuda()).sum()
        all_losses.append(loss.item())  # TL002: loss.item()
        print(loss.cpu().numpy())  # TL002: loss.cpu()
    return np.mean(all_losses)
""",
        },
    ),
    Case(
        "no-grad-metric-helper-in-the-training-loop",
        {
            "train.py": """\
import numpy as np
import torch


@torch.no_grad()
def accuracy(x, y, model):
    is_correct = model(x).argmax(-1) == y
    return is_correct.cpu().numpy().tolist()  # TL002: is_correct.cpu()


def train_batch(x, y, model, optimizer):
    loss = model.loss(x, y)
    loss.backward()
    optimizer.step()


def train(model, loader, optimizer):
    model.cuda()
    accuracies = []
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        train_batch(x, y, model, optimizer)
        accuracies.extend(accuracy(x, y, model))
    return np.mean(accuracies)
""",
        },
    ),
    Case(
        "eval-correctness-averaged-with-numpy",
        {
            "evaluate.py": """\
import numpy as np
import torch


@torch.no_grad()
def evaluate(model, loader):
    model.cuda()
    correct = []
    for x, y in loader:
        is_correct = model(x.cuda()).argmax(-1) == y.cuda()
        correct.extend(is_correct.cpu().numpy().tolist())  # TL002: is_correct.cpu()
    return np.mean(correct)
""",
        },
    ),
    Case(
        "step-schedules-and-counters",
        {
            "gan.py": """\
import torch


class GAN:
    def update(self, x):
        real = self.disc(x.cuda())
        d_loss = -real.mean()
        if (real > 0).float().mean().item() < 0.8:  # TL002: (real > 0).float().mean().item()
            d_loss.backward()
            self.optimizer.step()
            return d_loss.detach()
        g_loss = -self.disc(self.gen(x.cuda())).mean()
        g_loss.backward()
        self.optimizer.step()
        return g_loss.detach()


def train_steps(model, loader, optimizer, total):
    model.cuda()
    steps = torch.zeros((), device="cuda")
    batches = iter(loader)
    while steps < total:  # TL002: steps < total
        loss = model(next(batches).cuda()).mean()
        loss.backward()
        optimizer.step()
        steps += 1
""",
        },
    ),
    Case(
        "decoded-ids",
        {
            "generate.py": """\
import torch


@torch.no_grad()
def generate(model, tokenizer, loader):
    model.cuda()
    texts = []
    for batch in loader:
        out = model.generate(batch["input_ids"].cuda())
        texts.extend(tokenizer.batch_decode(out.cpu().tolist()))
        first = tokenizer.decode(out[0].tolist())
        texts.append(first)
        print(out.sum().item())  # TL002: out.sum().item()
    return texts
""",
        },
    ),
    Case(
        "replay-priorities",
        {
            "agent.py": """\
import torch


class Agent:
    def learn(self, memory):
        idxs, states, targets = memory.sample(32)
        loss = (self.net(states.cuda()) - targets.cuda()).pow(2).sum(1)
        self.optimiser.zero_grad()
        loss.mean().backward()
        self.optimiser.step()
        memory.update_priorities(idxs, loss.detach().cpu().numpy())
        self.history.append(loss.mean().item())  # TL002: loss.mean().item()


def train(agent, memory, loader):
    for batch in loader:
        agent.learn(memory)
""",
        },
    ),
    Case(
        "gathered-sizes-set-a-shape",
        {
            "comm.py": """\
import torch
import torch.distributed as dist


def pad_to_largest(tensor, world_size):
    local = tensor.numel()
    sizes = [torch.zeros([1], dtype=torch.int64, device=tensor.device) for _ in range(world_size)]
    dist.all_gather(sizes, torch.tensor([local], device=tensor.device))
    sizes = [int(size.item()) for size in sizes]
    largest = max(sizes)
    if local != largest:
        padding = torch.zeros((largest - local,), dtype=torch.uint8, device=tensor.device)
        tensor = torch.cat((tensor, padding), dim=0)
    return sizes, tensor


def gather(loader, model, world_size):
    model.cuda()
    for x in loader:
        out = model(x.cuda())
        sizes, padded = pad_to_largest(out, world_size)
        n = int(out.sum().item())
        buffer = torch.empty((n,), device="cuda")
        print(f"sizes {sizes} {buffer.shape}")
        counts = (out > 0).sum(1)
        for b in range(len(x)):
            boxes = torch.zeros(int(counts[b]), 4)  # TL002: int(counts[b])
""",
        },
    ),
    Case(
        "abort-and-early-stop",
        {
            "train.py": """\
import sys

import torch


def train(model, loader, optimizer, target):
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        if not torch.isfinite(loss).all():
            raise FloatingPointError("loss is not finite")
        if torch.isnan(loss) or torch.isinf(loss):
            sys.exit(1)
        loss.backward()
        optimizer.step()
        if loss.item() < target:
            break


def train_skipping(model, loader, optimizer):
    model.cuda()
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        if torch.isnan(loss).any():  # TL002: torch.isnan(loss).any()
            continue
        loss.backward()
        optimizer.step()
        if loss > 10:  # TL002: loss > 10
            print("large")
""",
        },
    ),
    Case(
        "reads-beside-an-environment-step",
        {
            "collect.py": """\
import torch


def collect(policy, critic, env, optimizer, obs, steps):
    policy.cuda()
    for t in range(steps):
        action = policy(torch.as_tensor(obs).cuda()).argmax(-1)
        value = critic(torch.as_tensor(obs).cuda())
        obs, reward, done, info = env.step(action.cpu().numpy())
        alpha = policy.log_alpha.exp().item()
        loss = alpha * value.mean()
        loss.backward()
        optimizer.step()


def update(policy, loader, optimizer):
    policy.cuda()
    for x, y in loader:
        loss = policy(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_needed")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_needed_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
