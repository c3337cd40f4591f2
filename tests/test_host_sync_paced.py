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
stay findings.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

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
]


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
