"""TL002 on reads the host needs right after another read drained the queue, and on whole-split
prediction copies handed to an evaluator.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

`n = int(lengths.min().item())` (a crop length the host needs to slice), then, in the next
statements, `for b in range(len(lengths)): start = np.random.randint(0, int(lengths[b].item()) - n)`:
the first read waited for every queued kernel, and an inner loop that queues no device
computation (views, list appends, numpy, host-to-device copies) leaves nothing for its
per-element reads of the same tensor to wait on. An inner loop that runs a forward, device work
between the reads (a tensor's `.float().max()`, however much its names look like builtins), or
element reads with no such read before them, stay findings.

`preds += [predictor(x[e]).cpu()]` in every batch of a no_grad `test()`, joined with `torch.cat`
and handed to `evaluator.eval({"y_pred": pred})`: an evaluator the file does not define computes
the metric over the whole split on the host, so each batch's copy is its input (as for the
numpy and scikit-learn metrics). The same copies in a training loop stay findings.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

# A step whose inner loop reads each element's length on the host after `before` and keeps
# `clip`: the cases where those reads stay findings.
_ELEMENT_STEP = """\
import numpy as np
import torch


def train(model, opt, loader, max_len):
    model.cuda()
    for mels, lengths in loader:
        mels, lengths = mels.cuda(), lengths.cuda()
{before}
        clips = []
        for b in range(len(lengths)):
            length = int(lengths[b].item() / 2)  # TL002: lengths[b].item()
            start = np.random.randint(0, length - crop)
            clips.append({clip})
        loss = torch.stack(clips).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def _element_reads(case_id: str, before: str, clip: str) -> Case:
    lines = "\n".join("        " + line for line in before.splitlines())
    return Case(case_id, {"train.py": _ELEMENT_STEP.format(before=lines, clip=clip)})


CASES = [
    Case(
        "element-reads-after-needed-read",
        {
            "train.py": """\
import numpy as np
import torch


def train(model, opt, loader, max_len):
    model.cuda()
    for mels, lengths, waves in loader:
        mels, lengths = mels.cuda(), lengths.cuda()
        h = model(mels)
        crop = min(int(lengths.min().item() / 2), max_len)
        clips, wavs = [], []
        for b in range(len(lengths)):
            length = int(lengths[b].item() / 2)
            start = np.random.randint(0, length - crop)
            clips.append(h[b, :, start:start + crop])
            wavs.append(torch.from_numpy(waves[b][start:start + crop]).to("cuda"))
        loss = torch.stack(clips).mean() + torch.stack(wavs).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
    ),
    _element_reads(
        "element-reads-after-needed-read-inner-forward",
        "crop = min(int(lengths.min().item() / 2), max_len)",
        "model(mels[b, :, start:start + crop])",
    ),
    _element_reads(
        "element-reads-after-device-work-named-like-builtins",
        "h = model(mels)\ncrop = min(int(lengths.min().item() / 2), max_len)\n"
        "longest = lengths.float().max()",
        "h[b, :, start:start + crop] / longest",
    ),
    _element_reads(
        "element-reads-without-read-before",
        "h = model(mels)\ncrop = 8",
        "h[b, :, start:start + crop]",
    ),
    Case(
        "eval-split-copies-for-evaluator",
        {
            "link.py": """\
import torch
from torch.utils.data import DataLoader
from ogb.linkproppred import Evaluator


@torch.no_grad()
def test(predictor, x, edges, evaluator, batch_size):
    predictor.eval()
    edges = edges.to(x.device)
    preds = []
    for perm in DataLoader(range(edges.size(0)), batch_size):
        edge = edges[perm].t()
        preds += [predictor(x[edge[0]], x[edge[1]]).squeeze().cpu()]
    pred = torch.cat(preds, dim=0)
    return evaluator.eval({"y_pred_pos": pred})["hits@20"]


def main(predictor, x, edges, train_loader, opt):
    predictor.cuda()
    x = x.cuda()
    evaluator = Evaluator(name="ogbl-ddi")
    for epoch in range(100):
        for batch in train_loader:
            loss = predictor(x[batch[0]], x[batch[1]]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch % 5 == 0:
            print(test(predictor, x, edges, evaluator, 4096))
""",
        },
    ),
    Case(
        "train-copies-for-evaluator",
        {
            "link.py": """\
import torch
from ogb.linkproppred import Evaluator


def main(predictor, x, train_loader, opt):
    predictor.cuda()
    x = x.cuda()
    evaluator = Evaluator(name="ogbl-ddi")
    for epoch in range(100):
        preds = []
        for batch in train_loader:
            out = predictor(x[batch[0]], x[batch[1]])
            loss = out.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            preds += [out.squeeze().detach().cpu()]  # TL002: out.squeeze().detach().cpu()
        print(evaluator.eval({"y_pred_pos": torch.cat(preds)}))
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_drained")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
