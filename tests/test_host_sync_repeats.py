"""TL002 on reads that do not wait each batch: a second read right after one the host needs,
and lazy initialisation of a local accumulator.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A read right after a read that the host needs anyway (token ids to decode, a test that raises),
in the same block with nothing between that may put work on the device (logging, builtins,
numpy), waits on nothing: the first read drained the queue, whichever tensor the second reads. A
read that computes on the device, or follows device work or a read under a branch, is still a
wait of its own. A first read that is itself a finding (a logged value) keeps the second a
finding: each is a line to move under the same periodic guard. The same holds ahead: a read
right before a copy the host needs (an evaluation's loss read before its predictions are copied
for a host metric), with only host work between and nothing queued before that copy, adds no wait
of its own; device work between, or a copy under a branch, keeps it a finding.

`if preds is None: preds = logits.cpu().numpy()` where `preds = None` once before the loop and
the loop only ever assigns arrays to it: the arm runs on the first batch only, so its read is no
per-batch cost; the `else` arm is, and stays a finding. A name the loop sets back to None each
iteration is no latch: its `is None` arm runs every batch.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

# An evaluation's loss read, then (after `between`) its predictions copied for a host metric.
_EVALUATE = """\
import numpy as np
import torch


def evaluate(model, loader, keep):
    model.cuda()
    model.eval()
    eval_loss, logits = 0.0, []
    for x, y in loader:
        with torch.no_grad():
            loss, logit = model(x.cuda(), y.cuda())
            eval_loss += loss.mean().item(){mark}
{between}            logits.append(logit.cpu().numpy())
    return eval_loss, np.mean(np.concatenate(logits, 0)[:, 1] > 0.5)
"""

CASES = [
    Case(
        "second-read-after-needed-read",
        {
            "play.py": """\
import torch


def play(policy, env, loader):
    policy.cuda()
    history = []
    for obs in loader:
        action = policy(obs.cuda()).argmax(-1)
        a = action.item()
        history.append(action.tolist())
        env.step(a)
    return history
""",
        },
    ),
    Case(
        "second-read-after-logged-read",
        {
            "play.py": """\
import torch


def play(policy, loader):
    policy.cuda()
    history = []
    for obs in loader:
        action = policy(obs.cuda()).argmax(-1)
        print(action.item())  # TL002: action.item()
        history.append(action.tolist())  # TL002: action.tolist()
    return history
""",
        },
    ),
    Case(
        "second-read-after-device-work",
        {
            "play.py": """\
import torch


def play(policy, tokenizer, loader):
    policy.cuda()
    history, texts = [], []
    for obs in loader:
        action = policy(obs.cuda()).argmax(-1)
        a = action.tolist()
        action = policy(obs.cuda()).argmax(-1)
        history.append(action.tolist())  # TL002: action.tolist()
        texts.append(tokenizer.decode(a))
    return history
""",
        },
    ),
    Case(
        "second-read-of-another-tensor",
        {
            "play.py": """\
import torch


def play(policy, tokenizer, loader):
    policy.cuda()
    history, texts = [], []
    for obs in loader:
        logits = policy(obs.cuda())
        action = logits.argmax(-1)
        a = action.tolist()
        history.append(logits.tolist())
        texts.append(tokenizer.decode(a))
    return history
""",
        },
    ),
    Case(
        "run-of-logged-values",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer, writer, dice):
    model.cuda()
    for step, (x, y) in enumerate(loader):
        out = model(x.cuda())
        loss_ce = torch.nn.functional.cross_entropy(out, y.cuda())
        loss_dice = dice(out, y.cuda())
        loss = loss_ce + loss_dice
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step = step + 1
        writer.add_scalar("total", loss, step)  # TL002: loss
        writer.add_scalar("ce", loss_ce, step)  # TL002: loss_ce
        print(f"total {loss}")  # TL002: loss}
        total = loss_ce.detach().item() / len(y)  # TL002: loss_ce.detach().item()
""",
        },
    ),
    Case(
        "read-after-a-needed-test",
        {
            "scale.py": """\
import torch


def train(model, loader, optimizer, history):
    model.cuda()
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if torch.isnan(norm) or torch.isinf(norm):
            raise FloatingPointError("non-finite gradients")

        history.append(norm.item())
        optimizer.step()
""",
        },
    ),
    Case(
        "read-after-a-needed-test-and-device-work",
        {
            "scale.py": """\
import torch


def train(model, loader, optimizer, history):
    model.cuda()
    for x in loader:
        out = model(x.cuda())
        out.sum().backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if torch.isnan(norm):
            raise FloatingPointError("non-finite gradients")
        peak = out.max()
        history.append(peak.item())  # TL002: peak.item()
        optimizer.step()
""",
        },
    ),
    Case(
        # Nothing says `outputs["loss"]` is a tensor but the read of it: rescaling it between
        # the two reads queues a kernel the second read waits for.
        "read-after-a-needed-test-and-rescaling-the-read-value",
        {
            "scale.py": """\
import torch


def train(model, loader, optimizer, group):
    model.cuda()
    total = 0.0
    for x in loader:
        outputs = model(x.cuda())
        loss = outputs["loss"]
        if torch.isnan(loss):
            raise ValueError("nan loss")
        loss = loss / len(group)
        total += loss.item()  # TL002: loss.item()
        loss.backward()
        optimizer.step()
""",
        },
    ),
    Case(
        "read-after-a-read-that-may-not-run",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer, verbose):
    model.cuda()
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        optimizer.step()
        if verbose and not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss")
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "read-that-computes-after-a-read",
        {
            "train.py": """\
import torch


def train(model, loader, optimizer):
    model.cuda()
    for x in loader:
        out = model(x.cuda())
        loss = out.sum()
        loss.backward()
        optimizer.step()
        print(loss.item())  # TL002: loss.item()
        print(model(x.cuda()).mean().item())  # TL002: model(x.cuda()).mean().item()
""",
        },
    ),
    Case(
        "loss-read-before-copies-a-host-metric-needs",
        {"evaluate.py": _EVALUATE.format(mark="", between="")},
    ),
    Case(
        "loss-read-before-device-work-and-copies",
        {
            "evaluate.py": _EVALUATE.format(
                mark="  # TL002: loss.mean().item()",
                between="            logit = model.head(logit)\n",
            )
        },
    ),
    Case(
        "loss-read-before-copies-under-a-branch",
        {
            "evaluate.py": _EVALUATE.format(
                mark="  # TL002: loss.mean().item()",
                between="            if keep:\n    ",
            )
        },
    ),
    Case(
        "second-read-not-adjacent",
        {
            "play.py": """\
import torch


def play(policy, tokenizer, loader):
    policy.cuda()
    history, texts = [], []
    for obs in loader:
        action = policy(obs.cuda()).argmax(-1)
        a = action.tolist()
        texts.append(tokenizer.decode(a))
        history.append(action.tolist())  # TL002: action.tolist()
    return history
""",
        },
    ),
    Case(
        "lazy-init-local-accumulator",
        {
            "evaluate.py": """\
import numpy as np
import torch


def stack_logits(model, loader):
    model.cuda()
    preds = None
    for x, y in loader:
        logits = model(x.cuda())
        if preds is None:
            preds = logits.detach().cpu().numpy()
        else:
            preds = np.append(preds, logits.detach().cpu().numpy(), axis=0)  # TL002: logits.detach().cpu()
    return preds
""",
        },
    ),
    Case(
        "lazy-init-set-none-later-in-loop",
        {
            "evaluate.py": """\
import torch


def evaluate(model, loader):
    model.cuda()
    best = None
    for x, y in loader:
        logits = model(x.cuda())
        if best is None:
            best = logits.max().item()  # TL002: logits.max().item()
        print(best)
        best = None
""",
        },
    ),
    Case(
        "lazy-init-no-none-before-loop",
        {
            "evaluate.py": """\
import torch


def evaluate(model, loader, preds):
    model.cuda()
    for x, y in loader:
        logits = model(x.cuda())
        if preds is None:
            preds = logits.cpu()  # TL002: logits.cpu()
        print(preds)
""",
        },
    ),
    Case(
        "lazy-init-none-only-after-loop",
        {
            "evaluate.py": """\
import torch


def evaluate(model, loader, preds):
    model.cuda()
    for x, y in loader:
        logits = model(x.cuda())
        if preds is None:
            preds = logits.max().item()  # TL002: logits.max().item()
        print(preds)
    preds = None
    return preds
""",
        },
    ),
    Case(
        "lazy-init-reset-in-batch-loop-around-inner-loop",
        {
            "evaluate.py": """\
import torch


def evaluate(model, loader):
    model.cuda()
    for x, y in loader:
        first = None
        for chunk in x.cuda().split(4):
            logits = model(chunk)
            if first is None:
                first = logits.cpu()  # TL002: logits.cpu()
        print(first)
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_repeats")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
