"""TL002 on a few samples printed after training: a loop over `range(5)` that fetches a batch
each time (`x = batch(1, 128)`), runs the model and prints decoded ids runs five times per run,
not once per batch. Its reads cost five waits in all, so they are no per-batch finding.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

A helper that leaves early on most calls (`if steps % every != 0: return`, also nested in
`if steps == 0: ... else: ...` with a `steps` parameter the training loop passes its count for)
runs the rest now and then, like a loop body under `if step % n: continue`.

Only a literal count says "a handful": `range(steps)` stays a per-batch loop, as does a loop
over `range(5)` that steps the optimizer (five training steps are training), and a read in a
short inner loop of a per-batch loop is still a read every batch.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_TRAIN = """\
import torch
import torch.nn.functional as F
from torch import nn

S = "0123456789"


def batch(b, t):
    return torch.randint(0, 10, (b, t), device="cuda")


model = nn.Linear(8, 10).cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(1000):
    x = batch(64, 8)
    loss = F.cross_entropy(model(x.float()), x[:, 0])
    print(loss.item())  # TL002: loss.item()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

CASES = [
    Case(
        "samples-printed-after-training",
        {
            "train.py": _TRAIN
            + """
with torch.no_grad():
    for sample in range(5):
        x = batch(1, 8)
        z = model(x.float()).argmax(-1)
        print("".join(S[t] for t in z.tolist()))
        print("".join("." if z[i].item() == x[i, 0].item() else "^" for i in range(z.size(0))))
        print((z == x[:, 0]).sum().item())
""",
        },
    ),
    Case(
        "samples-counted-by-a-setting",
        {
            "train.py": _TRAIN
            + """
with torch.no_grad():
    for sample in range(num_samples):
        x = batch(1, 8)
        z = model(x.float()).argmax(-1)
        print((z == x[:, 0]).sum().item())  # TL002: (z == x[:, 0])
""",
        },
    ),
    Case(
        "five-training-steps",
        {
            "train.py": """\
import torch
import torch.nn.functional as F
from torch import nn


def batch(b, t):
    return torch.randint(0, 10, (b, t), device="cuda")


model = nn.Linear(8, 10).cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(5):
    x = batch(64, 8)
    loss = F.cross_entropy(model(x.float()), x[:, 0])
    print(loss.item())  # TL002: loss.item()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
        },
    ),
    Case(
        "short-inner-loop-of-a-batch-loop",
        {
            "train.py": """\
import torch


def train(model, heads, loader, opt):
    model.cuda()
    for x, y in loader:
        out = model(x.cuda())
        for k in range(3):
            print(heads[k](out).mean().item())  # TL002: heads[k](out)
        loss = out.sum()
        loss.backward()
        opt.step()
""",
        },
    ),
]


_SAMPLER = """\
import numpy as np
import torch
from PIL import Image


def sample_images(args, epoch, steps, model):
    if steps == 0:
        if not args.sample_at_first:
            return
    else:
        if args.sample_every_n_steps is None and args.sample_every_n_epochs is None:
            return
        if args.sample_every_n_epochs is not None:
            if epoch is None or epoch % args.sample_every_n_epochs != 0:
                return
        else:
            if steps % args.sample_every_n_steps != 0 or epoch is not None:
                return
    with torch.no_grad():
        for prompt in args.prompts:
            sample_image(model, prompt)


def sample_image(model, prompt):
    image = model(prompt)
    print(image.mean().item())
"""

_SAMPLED_TRAINING = """\
import torch

import sampler


def train(args, model, loader, opt):
    model.cuda()
    global_step = 0
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = model(x.cuda()).sum()
            loss.backward()
            opt.step()
            global_step += 1
            sampler.sample_images(args, None, global_step, model)
"""

CASES += [
    Case(
        "sample-images-helper-that-returns-early-off-period",
        {"sampler.py": _SAMPLER, "train.py": _SAMPLED_TRAINING},
    ),
    Case(
        "helper-that-skips-only-the-first-step",
        {
            "sampler.py": """\
import torch


def sample_images(args, epoch, steps, model):
    if steps == 0:
        return
    print(model(args.prompt).mean().item())  # TL002: model(args.prompt)
""",
            "train.py": _SAMPLED_TRAINING,
        },
    ),
    Case(
        "helper-whose-early-return-tests-an-index",
        {
            "sampler.py": """\
import torch


def sample_images(args, epoch, i, model):
    if i != 0:
        return
    print(model(args.prompt).mean().item())  # TL002: model(args.prompt)
""",
            "train.py": _SAMPLED_TRAINING,
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_samples")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
