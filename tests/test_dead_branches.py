"""Code under a branch that never runs reports nothing, for every performance rule alike.

A research codebase switches code off by binding a local flag to a constant and testing it:
`parallel = False` then `if parallel:` around the `nn.DataParallel` wraps (a gated attention
layer of a segmentation codebase). The branch is dead when the test's value is fixed: a literal
(`if False:`), or a function's local name bound once, to a literal (also read by a function
inside it), and never declared `nonlocal` by one. A parameter, a second
binding, a module constant (another module may set it) or the branch the test does take keep
their findings. Each case is its own project, all checked once by the installed `torchlint`
(the scheme of `test_production_cases.py`: `# TL004: text` marks an expected finding).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL002", "TL004")

CASES = [
    Case(
        "local-flag-false-guards-data-parallel",
        files={
            "grid_attention.py": """\
from torch import nn


class GridAttention(nn.Module):
    def __init__(self, use_w=True, use_phi=True):
        super().__init__()
        self.W = nn.Conv2d(4, 4, 1)
        self.phi = nn.Conv2d(4, 4, 1)
        parallel = False
        if parallel:
            if use_w: self.W = nn.DataParallel(self.W)
            if use_phi: self.phi = nn.DataParallel(self.phi)
""",
        },
        rules=RULES,
    ),
    Case(
        "zero-none-literal-and-conjunction",
        files={
            "wrap.py": """\
import torch
from torch import nn


def wrap(model):
    multi = 0
    if multi and torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    legacy: bool = None
    model = nn.DataParallel(model) if legacy else model
    if False:
        model = nn.DataParallel(model)
    if 0:
        model = nn.DataParallel(model)
    return model


def read_by_an_inner_function(model):
    parallel = False

    def wrap():
        if parallel:
            return nn.DataParallel(model)
        return model

    return wrap()
""",
        },
        rules=RULES,
    ),
    Case(
        "else-of-a-true-flag-and-per-step-sync",
        files={
            "train.py": """\
from torch import nn
from torch.utils.data import DataLoader


def train(model, data, optimizer):
    single_gpu = True
    if single_gpu:
        model = model.cuda()
    else:
        model = nn.DataParallel(model).cuda()
    if not single_gpu:
        model = nn.DataParallel(model)
    loader = DataLoader(data, batch_size=32, num_workers=4, pin_memory=True)
    profile = False
    for x in loader:
        loss = model(x.cuda(non_blocking=True)).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if profile:
            print(loss.item())
""",
        },
        rules=RULES,
    ),
    Case(
        "flags-that-may-be-true-keep-their-findings",
        files={
            "wrap.py": """\
import argparse

from torch import nn

PARALLEL = False


def from_parameter(model, parallel=False):
    if parallel:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


def rebound(model, args):
    parallel = False
    if args.gpus > 1:
        parallel = True
    if parallel:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


def module_constant(model):
    if PARALLEL:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


def taken(model):
    parallel = False
    if parallel:
        pass
    else:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    enabled = True
    if enabled:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


def set_by_a_closure(model):
    parallel = False

    def enable():
        nonlocal parallel
        parallel = True

    enable()
    if parallel:
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


if __name__ == "__main__":
    print(argparse)
""",
        },
        rules=RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dead_branches")), CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_dead_branch_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
