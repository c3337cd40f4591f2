"""The project prefilter (`Rule.may_match_project`): what other files of the project say about a
file, asked before it is parsed. TL002 on a text without per-batch loops fires only where other
modules run its code every step, so a helper nobody calls in a loop is not parsed for it, and one
that a training loop calls still is (and gets its finding, through the installed command)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from torchlint.analysis.project_index import ProjectIndex
from torchlint.registry import all_rules

HELPER = """\
import torch


def grad_norm(model):
    total = torch.zeros(1, device="cuda")
    for p in model.parameters():
        total += p.grad.norm()
    return total.item()
"""

TRAIN = """\
import torch

from helpers import grad_norm


def train(model, loader, opt):
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        print(grad_norm(model))
"""

UNRELATED = """\
import torch


def report(model):
    print(sum(p.numel() for p in model.parameters()))
"""

TL002 = next(rule for rule in all_rules() if rule.code == "TL002")


def _project(tmp_path: Path, train: str) -> ProjectIndex:
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(train)
    return ProjectIndex(tmp_path)


def test_a_helper_called_every_step_passes(tmp_path: Path) -> None:
    index = _project(tmp_path, TRAIN)
    helper = (tmp_path / "helpers.py").absolute()
    assert TL002.may_match(HELPER)
    assert TL002.may_match_project(HELPER, index, helper)


def test_a_helper_nobody_runs_every_step_is_skipped(tmp_path: Path) -> None:
    index = _project(tmp_path, UNRELATED)
    helper = (tmp_path / "helpers.py").absolute()
    assert TL002.may_match(HELPER)  # the text alone cannot tell
    assert not TL002.may_match_project(HELPER, index, helper)


def test_a_text_with_batch_loops_always_passes(tmp_path: Path) -> None:
    index = _project(tmp_path, UNRELATED)
    assert TL002.may_match_project(TRAIN, index, (tmp_path / "train.py").absolute())


def test_the_helper_finding_survives_the_prefilter(tmp_path: Path) -> None:
    _project(tmp_path, TRAIN)
    command = Path(sys.executable).parent / "torchlint"
    done = subprocess.run(
        [str(command), "check", "--isolated", "--select", "TL002", "--no-cache", "--exit-zero"]
        + ["--output-format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    found = {(Path(d["filename"]).name, d["location"]["row"]) for d in json.loads(done.stdout)}
    assert ("helpers.py", 8) in found, found
