"""TL102 speaks only of copies from pinned memory.

`non_blocking=True` makes a host-to-device copy asynchronous only when the source is pinned.
Two production classes copied pageable memory and were flagged anyway:
- a batch made anew on the host before its copy: `torch.Tensor(points_array)` after numpy
  augmentation, or a cast such as `target.long()` of float labels, is a new tensor in pageable
  memory whatever the loader pins (a cast to the dtype the batch already has returns the batch
  itself, but nothing here says which dtype that is: unknown, so silent);
- `pin_memory=args.pin_memory` where the file's parser declares `--pin_memory` off unless passed
  (`action="store_true"`, `default=False`): the run as written does not pin.
Copies of the batch itself, of an element or of a view still are findings, and so is an option
the parser turns on by default.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_HEAD = "import argparse\n\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"

CASES = [
    Case(
        "rebuilt-on-the-host-before-the-copy",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, augment):
    loader = DataLoader(data, batch_size=32, num_workers=4, pin_memory=True)
    for points, target in loader:
        points = points.data.numpy()
        points = torch.Tensor(augment(points))
        points, target = points.float().cuda(), target.long().cuda()
        model(points, target).backward()
        opt.step()
""",
        },
    ),
    Case(
        "views-and-elements-are-the-pinned-batch",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt):
    loader = DataLoader(data, batch_size=32, num_workers=4, pin_memory=True)
    for x, y in loader:
        x = x.view(x.size(0), -1).cuda()  # TL102: x.view(x.size(0), -1).cuda()
        y = y[:, 0].cuda()  # TL102: y[:, 0].cuda()
        model(x, y).backward()
        opt.step()
""",
        },
    ),
    Case(
        "pinning-off-unless-the-flag-is-passed",
        rules=("TL102",),
        files={
            "score.py": _HEAD
            + """\
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pin_memory", action="store_true", default=False)
    parser.add_argument("--num-workers", type=int, default=0)
    args = parser.parse_args()
    loader = DataLoader(data, num_workers=args.num_workers, pin_memory=args.pin_memory)
    for feats, lengths in loader:
        feats = feats.to("cuda")
        model(feats).backward()
        opt.step()
""",
        },
    ),
    Case(
        "pinning-on-by-default",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-pin-mem", action="store_false", dest="pin_mem")
    parser.add_argument("--pin_memory", action="store_true")
    parser.set_defaults(pin_memory=True)
    args = parser.parse_args()
    first = DataLoader(data, num_workers=4, pin_memory=args.pin_mem)
    for feats in first:
        feats = feats.to("cuda")  # TL102: feats.to("cuda")
        model(feats).backward()
    second = DataLoader(data, num_workers=4, pin_memory=args.pin_memory)
    for feats in second:
        feats = feats.to("cuda")  # TL102: feats.to("cuda")
        model(feats).backward()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl102_pageable"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl102_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
