"""TL102 in loops that already wait for the device every iteration by design.

A blocking copy from pinned memory makes the host wait for everything queued before it. Where
each iteration also waits for the device, unconditionally (predictions copied to the host for a
host metric, `pred.cpu().numpy()`; a `torch.distributed.barrier()` every step; a scalar read
after the step, `meter.update(loss.item())`, `writer.add_scalar(tag, loss)`), the stream is
drained anyway by the time the next batch is copied: `non_blocking=True` has nothing to
overlap, and judges reject the finding (UniMatch training and evaluation loops, TLlib keypoint
validation, RWKV/minGPT trainers, the 16 SSL4MIS training loops of batch 19: 30 judged FPs
against 7 judged TPs in such loops). A scalar read is TL002's finding there, which comes first:
once it is kept on the device, the copy is the step's only sync and TL102 reports it. A read
only under a periodic guard, a rare branch or in a comprehension paces nothing. apex's dynamic
loss scaling reads its overflow flag on the host as each `with amp.scale_loss(...)` block exits,
so a loop that runs one every step waits as well (Transfer-Learning-Library's apex O1 recipes).

Each case is an invented project checked once by the installed `torchlint` (see
`project_cases.py`); a line ending in `# TL102: text` expects a finding there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_HEAD = """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(ds, batch_size=16, num_workers=4, pin_memory=True)
"""

CASES = [
    Case(
        "meter-read-after-every-step",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img = img.cuda()
    mask = mask.cuda()
    loss = criterion(model(img), mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    meter.update(loss.item())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "barrier-every-step",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img, mask = img.cuda(), mask.cuda()
    loss = criterion(model(img), mask)
    torch.distributed.barrier()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        },
        rules=("TL102",),
    ),
    Case(
        "evaluation-copies-predictions-to-host",
        files={
            "evaluate.py": _HEAD
            + """
model.eval()
with torch.no_grad():
    for img, mask in loader:
        img = img.cuda()
        pred = model(img).argmax(dim=1)
        inter, union = intersect_and_union(pred.cpu().numpy(), mask.numpy())
        metric.update(inter, union)
"""
        },
        rules=("TL102",),
    ),
    Case(
        "predictions-collected-for-after-the-loop",
        files={
            "evaluate.py": _HEAD
            + """
import numpy as np

preds = []
with torch.no_grad():
    for img, ids in loader:
        img = img.cuda()  # TL102: img.cuda()
        pred = model(img)
        preds.append(pred.cpu()[:, 0].numpy())
        for i, p in zip(ids, pred.tolist()):
            table[i] = p
scores = metric(np.concatenate(preds))
"""
        },
        rules=("TL102",),
    ),
    Case(
        "read-only-under-periodic-guard",
        files={
            "train.py": _HEAD
            + """
for i, (img, mask) in enumerate(loader):
    img = img.cuda()  # TL102: img.cuda()
    loss = criterion(model(img), mask.cuda())  # TL102: mask.cuda()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % 100 == 0:
        print(loss.item())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "read-only-on-one-rank",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    loss = criterion(model(img), mask)
    loss.backward()
    optimizer.step()
    if rank == 0:
        writer.add_scalar("loss", loss.item())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "host-array-read-is-no-device-read",
        files={
            "train.py": _HEAD
            + """
import numpy as np

for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    weights = np.ones(4)
    loss = criterion(model(img), mask)
    loss.backward()
    optimizer.step()
    total += weights.tolist()[0]
"""
        },
        rules=("TL102",),
    ),
    Case(
        "host-batch-kept-is-no-device-read",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    loss = criterion(model(img), mask.cuda())  # TL102: mask.cuda()
    loss.backward()
    optimizer.step()
    labels.append(mask.cpu())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "read-per-element-in-inner-loop",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    losses = model(img, mask)
    sum(losses.values()).backward()
    optimizer.step()
    for name, value in losses.items():
        meters[name].update(value.item())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "loss-logged-every-step",
        files={
            "train.py": _HEAD
            + """
import logging

for i, batch in enumerate(loader):
    volume, label = batch["image"].cuda(), batch["label"].cuda()
    loss = criterion(model(volume), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    writer.add_scalar("info/lr", lr, i)
    logging.info("iteration %d : loss : %f" % (i, loss.item()))
"""
        },
        rules=("TL102",),
    ),
    Case(
        "loss-collected-every-step",
        files={
            "train.py": _HEAD
            + """
losses = []
for x, y in loader:
    x = x.to(device)
    y = y.to(device)
    with torch.set_grad_enabled(is_train):
        logits, loss = model(x, y)
        losses.append(loss.mean().item())
"""
        },
        rules=("TL102",),
    ),
    Case(
        "loss-tensor-written-every-step",
        files={
            "train.py": _HEAD
            + """
import torch.nn.functional as F

for i, (x, y) in enumerate(loader):
    x = x.cuda()
    loss = F.cross_entropy(model(x), y.cuda())
    loss.backward()
    optimizer.step()
    writer.add_scalar("loss", loss, i)
"""
        },
        rules=("TL102",),
    ),
    Case(
        "loss-converted-every-step",
        files={
            "train.py": _HEAD
            + """
import torch.nn.functional as F

for x, y in loader:
    x = x.cuda()
    loss = F.cross_entropy(model(x), y.cuda())
    loss.backward()
    optimizer.step()
    total += float(loss)
"""
        },
        rules=("TL102",),
    ),
    Case(
        "plain-numbers-logged-every-step",
        files={
            "train.py": _HEAD
            + """
import torch.nn.functional as F

for i, (x, y) in enumerate(loader):
    x = x.cuda()  # TL102: x.cuda()
    loss = F.cross_entropy(model(x), y.cuda())  # TL102: y.cuda()
    loss.backward()
    optimizer.step()
    writer.add_scalar("lr", float(lr), i)
"""
        },
        rules=("TL102",),
    ),
    Case(
        "read-only-in-training-branch",
        files={
            "train.py": _HEAD
            + """
for x, y in loader:
    x = x.to(device)  # TL102: x.to(device)
    loss = model(x, y)
    if is_train:
        loss.backward()
        optimizer.step()
        now_loss = loss.item()
"""
        },
        rules=("TL102",),
    ),
    Case(
        "read-only-in-comprehension",
        files={
            "train.py": _HEAD
            + """
for x, y in loader:
    x = x.to(device)  # TL102: x.to(device)
    preds = model(x)
    loss = criterion(preds, y)
    loss.backward()
    optimizer.step()
    step = {name: fn(preds, y).item() for name, fn in metrics.items()}
"""
        },
        rules=("TL102",),
    ),
    Case(
        "host-scalar-read-is-no-device-read",
        files={
            "train.py": _HEAD
            + """
import numpy as np

for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    loss = criterion(model(img), mask)
    loss.backward()
    optimizer.step()
    total += np.float32(lr).item()
"""
        },
        rules=("TL102",),
    ),
    Case(
        "per-class-reads-in-range-loop",
        files={
            "evaluate.py": _HEAD
            + """
dice = [0] * 3
with torch.no_grad():
    for img, mask in loader:
        img, mask = img.cuda(), mask.cuda()
        pred = model(img).argmax(dim=1)
        for cls in range(1, cfg["nclass"]):
            inter = ((pred == cls) * (mask == cls)).sum().item()
            dice[cls - 1] += inter
"""
        },
        rules=("TL102",),
    ),
    Case(
        "reads-in-range-loop-of-a-count-the-batch-sets",
        files={
            "evaluate.py": _HEAD
            + """
with torch.no_grad():
    for img, mask in loader:
        img = img.cuda()  # TL102: img.cuda()
        n = count_objects(mask)
        pred = model(img)
        for k in range(n):
            scores[k] += pred[k].sum().item()
"""
        },
        rules=("TL102",),
    ),
    # A method of another module that waits for the device on every call: each iteration
    # that calls it, outside any branch, drains the stream (SegmenTron's SegmentationMetric.
    # update: judged FPs in its evaluation loops). The project index says so to the caller.
    Case(
        "metric-of-another-module-synchronizes",
        files={
            "metrics.py": """\
import torch


class Scores:
    def __init__(self, n):
        self.n = n
        self.hits = 0

    def update(self, preds, labels):
        def one(pred, label):
            hits = (pred.argmax(1) == label).sum()
            torch.cuda.synchronize()
            self.hits += hits.item()

        if isinstance(preds, torch.Tensor):
            one(preds, labels)
        elif isinstance(preds, (list, tuple)):
            for pred, label in zip(preds, labels):
                one(pred, label)
""",
            "evaluate.py": """\
import torch
from torch.utils.data import DataLoader
from metrics import Scores


class Evaluator:
    def __init__(self, ds, model):
        self.loader = DataLoader(ds, batch_size=4, num_workers=4, pin_memory=True)
        self.scores = Scores(21)
        self.model = model

    def run(self):
        self.model.eval()
        for image, target in self.loader:
            image = image.to(self.device)
            target = target.to(self.device)
            with torch.no_grad():
                output = self.model(image)
            self.scores.update(output, target)
""",
        },
        rules=("TL102",),
    ),
    Case(
        "function-of-another-module-reads-its-arguments",
        files={
            "metrics.py": """\
def pixel_hits(pred, label):
    return (pred.argmax(1) == label).sum().item()
""",
            "evaluate.py": _HEAD
            + """
from metrics import pixel_hits

model.eval()
with torch.no_grad():
    for image, target in loader:
        image, target = image.cuda(), target.cuda()
        total += pixel_hits(model(image), target)
""",
        },
        rules=("TL102",),
    ),
    # ... but not one whose wait sits under a branch on its own state or a flag, which may
    # skip it on every call of a run, nor one that waits for nothing.
    Case(
        "metric-of-another-module-synchronizes-only-when-asked",
        files={
            "metrics.py": """\
import torch


class Scores:
    def __init__(self, n, timed=False):
        self.hits = torch.zeros(())
        self.timed = timed

    def update(self, pred, label):
        self.hits += (pred.argmax(1) == label).sum()
        if self.timed:
            torch.cuda.synchronize()
""",
            "evaluate.py": _HEAD
            + """
from metrics import Scores

scores = Scores(21)
model.eval()
with torch.no_grad():
    for image, target in loader:
        image = image.cuda()  # TL102: image.cuda()
        scores.update(model(image), target.cuda())  # TL102: target.cuda()
""",
        },
        rules=("TL102",),
    ),
    Case(
        "metric-of-another-module-keeps-its-sums-on-the-device",
        files={
            "metrics.py": """\
import torch


class Scores:
    def __init__(self, n):
        self.hits = torch.zeros(())

    def update(self, pred, label):
        self.hits += (pred.argmax(1) == label).sum()
""",
            "train.py": _HEAD
            + """
from metrics import Scores

scores = Scores(21)
for image, target in loader:
    image = image.cuda()  # TL102: image.cuda()
    output = model(image)
    loss = criterion(output, target.cuda())  # TL102: target.cuda()
    loss.backward()
    optimizer.step()
    scores.update(output, target)
""",
        },
        rules=("TL102",),
    ),
    Case(
        "apex-overflow-check-every-step",
        files={
            "train.py": _HEAD
            + """
from apex import amp

for img, mask in loader:
    img, mask = img.cuda(), mask.cuda()
    loss = criterion(model(img), mask)
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""
        },
        rules=("TL102",),
    ),
    Case(
        "scale-loss-of-a-project-scaler-is-no-wait",
        files={
            "train.py": _HEAD
            + """
for img, mask in loader:
    img = img.cuda()  # TL102: img.cuda()
    loss = criterion(model(img), mask.cuda())  # TL102: mask.cuda()
    optimizer.zero_grad()
    with scaler.scale_loss(loss) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""
        },
        rules=("TL102",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("transfer_paced")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_transfer_paced_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
