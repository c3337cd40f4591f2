"""TL101 reads a `num_workers` taken from the command line by its declared default.

`pin_memory` alone is asked for an in-memory dataset only where pinning can overlap the copy:
with workers (the loader pins in a thread of its own) or with `non_blocking` copies. A loader
given `num_workers=args.num_workers`, where every `add_argument` that declares the option
defaults it to 0, runs without workers as shipped: it pins in the main thread just before a
blocking copy, which gains nothing (production class of issue 24, fix round 5: an in-memory
TensorDataset of fingerprints with `--num_workers` defaulting to 0; the snippets are invented).
An option that defaults to workers, or one the file does not declare, may give workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects

_TRAIN = """\
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--num_workers", type=int, default={default})
    args = parser.parse_args()
    x, y = torch.load("fingerprints.pt")
    train = TensorDataset(x, y)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers){mark}
    model = torch.nn.Linear(2048, 1).cuda()
    opt = torch.optim.Adam(model.parameters())
    for xb, yb in loader:
        xb, yb = xb.to("cuda"), yb.to("cuda")
        loss = (model(xb.float()).squeeze(1) - yb).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
"""

CASES = [
    Case(
        "in-memory-workers-option-defaults-to-zero",
        {"train.py": _TRAIN.format(default="0", mark="")},
        rules=("TL101",),
    ),
    Case(
        "in-memory-workers-option-defaults-to-four",
        {
            "train.py": _TRAIN.format(
                default="4",
                mark="  # TL101: DataLoader(train, batch_size",
            )
        },
        rules=("TL101",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl101workers")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl101_workers_option_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()


def test_workers_option_with_workers_asks_for_pinning(findings: list[dict]) -> None:
    found = [f for f in findings if f["filename"].startswith(CASES[1].id)]
    assert [f["message"] for f in found] == [
        "`DataLoader` feeding a device loop without `pin_memory`"
    ]
