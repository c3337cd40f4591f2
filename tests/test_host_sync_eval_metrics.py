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

Still findings: the same copies in a loop that trains, a plain sum of per-batch values, and
copies in a loop over training data that steps nothing.
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
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_metrics")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_metrics_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
