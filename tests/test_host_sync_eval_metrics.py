"""TL002 on evaluation loops that copy targets and predictions for a metric the host computes
over the whole set, where the loop runs with grad on (a forward without `no_grad` after
`model.eval()`, or only the forward under `no_grad`) over validation data.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

- predictions and targets collected per batch and compared pair by pair after the loop
  (`sum(int(p == t) for p, t in zip(preds, labels)) / len(preds)`): an accuracy the host
  computes over the whole set;
- a ground-truth array copied per scene and handed to numpy's matching (`np.unique`,
  `np.in1d`): the host needs the array whatever else reads it.

- predictions made a numpy array and handed to a function or an object of another module that
  computes with numpy on what it is passed (`running_metrics.update(gt, pred)` counting with
  `np.bincount`, `compute_iou(occ_np, occ_hat_np)` starting from `np.asarray`): the metric runs
  on the host; a look at the array's shape on the way (`pred.shape[0]` for a timing) changes
  nothing.

Still findings: the same copies in a loop that trains, a plain sum of per-batch values, copies
in a loop over training data that steps nothing, a numpy copy only printed, and numpy copies
handed to another module's average meter, whose sums could stay on the device.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "eval-accuracy-by-pairwise-comparison",
        {
            "tutorial.py": """\
import torch

model = build().cuda()
for epoch in range(5):
    for inputs in train_dataloader:
        loss = loss_func(model(inputs.cuda()), inputs["label"].cuda())
        loss.backward()
        optimizer.step()

model.eval()
allpreds = []
alllabels = []
for step, inputs in enumerate(validation_dataloader):
    inputs = inputs.cuda()
    logits = model(inputs)
    labels = inputs["label"]
    alllabels.extend(labels.cpu().tolist())
    allpreds.extend(torch.argmax(logits, dim=-1).cpu().tolist())

acc = sum([int(i == j) for i, j in zip(allpreds, alllabels)]) / len(allpreds)
print("validation:", acc)
""",
        },
        rules=("TL002",),
    ),
    Case(
        "eval-ground-truth-for-numpy-matching",
        {
            "evaluator.py": """\
import numpy as np
import torch


class InstanceEvaluator:
    def after_epoch(self):
        self.eval()

    def associate(self, pred, segment):
        segment = segment.cpu().numpy()
        void = np.in1d(segment, self.ignore)
        ids, idx = np.unique(segment, return_index=True)
        found = []
        for i in range(len(ids)):
            if segment[idx[i]] in self.ignore:
                continue
            found.append({"segment": segment[idx[i]], "mask": pred[i]})
        return found, void

    def eval(self):
        self.model.eval()
        scenes = []
        for batch in self.val_loader:
            batch = batch.cuda(non_blocking=True)
            with torch.no_grad():
                out = self.model(batch)
            scenes.append(self.associate(out, batch["segment"]))
        return match_instances(scenes)
""",
        },
        rules=("TL002",),
    ),
    Case(
        "train-accuracy-by-pairwise-comparison",
        {
            "train.py": """\
import torch

model = build().cuda()
preds, labels = [], []
for inputs, y in train_loader:
    logits = model(inputs.cuda())
    loss = loss_func(logits, y.cuda())
    loss.backward()
    optimizer.step()
    labels.extend(y.cuda().cpu().tolist())  # TL002: y.cuda().cpu()
    preds.extend(logits.argmax(-1).cpu().tolist())  # TL002: logits.argmax(-1).cpu()
acc = sum([int(i == j) for i, j in zip(preds, labels)]) / len(preds)
""",
        },
        rules=("TL002",),
    ),
    Case(
        "eval-sum-of-batch-values",
        {
            "evaluate.py": """\
import torch

model.eval()
losses = []
for x, y in val_loader:
    out = model(x.cuda())
    losses.append(criterion(out, y.cuda()).cpu().tolist())  # TL002: criterion(out, y.cuda()).cpu()
print(sum(losses) / len(losses))
""",
        },
        rules=("TL002",),
    ),
    Case(
        "eval-numpy-copies-to-a-metric-of-another-module",
        {
            "metrics.py": """\
import numpy as np


class RunningScore:
    def __init__(self, n):
        self.hist = np.zeros((n, n))

    def update(self, trues, preds):
        for t, p in zip(trues, preds):
            self.hist += np.bincount(t * len(self.hist) + p, minlength=self.hist.size).reshape(
                self.hist.shape
            )


def compute_iou(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a & b).sum(-1) / (a | b).sum(-1)
""",
            "validate.py": """\
import time

import torch

from metrics import RunningScore, compute_iou


def validate(model, val_loader, n):
    model.eval()
    score = RunningScore(n)
    ious = []
    for images, labels in val_loader:
        start = time.time()
        outputs = model(images.cuda())
        pred = outputs.max(1)[1].cpu().numpy()
        gt = labels.numpy()
        print(pred.shape[0] / (time.time() - start))
        score.update(gt, pred)
        ious.append(compute_iou((outputs > 0).cpu().numpy(), gt > 0).mean())
    return score, ious
""",
        },
        rules=("TL002",),
    ),
    Case(
        "train-numpy-copies-to-a-metric-of-another-module",
        {
            "metrics.py": """\
import numpy as np


class RunningScore:
    def update(self, trues, preds):
        self.hits = np.sum(trues == preds)
""",
            "train.py": """\
import torch

from metrics import RunningScore


def train(model, train_loader, optimizer):
    score = RunningScore()
    for images, labels in train_loader:
        outputs = model(images.cuda())
        outputs.sum().backward()
        optimizer.step()
        pred = outputs.max(1)[1].cpu().numpy()  # TL002: outputs.max(1)[1].cpu()
        score.update(labels.numpy(), pred)
""",
        },
        rules=("TL002",),
    ),
    Case(
        "eval-numpy-copies-to-an-average-meter-of-another-module",
        {
            "meters.py": """\
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n
""",
            "validate.py": """\
import torch

from meters import AverageMeter


def validate(model, val_loader):
    model.eval()
    inter = AverageMeter()
    with torch.no_grad():
        for images, labels in val_loader:
            pred = model(images.cuda()).argmax(1)
            hits = (pred == labels.cuda()).sum(0)
            inter.update(hits.cpu().numpy())  # TL002: hits.cpu()
    return inter.sum
""",
        },
        rules=("TL002",),
    ),
    Case(
        "eval-numpy-copy-only-printed",
        {
            "validate.py": """\
import torch


def validate(model, val_loader):
    model.eval()
    for images, labels in val_loader:
        outputs = model(images.cuda())
        print(outputs.max(1)[1].cpu().numpy())  # TL002: outputs.max(1)[1].cpu()
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_metrics")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_metrics_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
