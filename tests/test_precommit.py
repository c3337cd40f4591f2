"""The pre-commit hooks through the real `pre-commit try-repo`, in a throwaway git repository.

pre-commit builds the hook's own virtualenv from this repository (installing libcst, click
and pathspec from the package index, and not torch), so this test needs network access and
takes a few tens of seconds. The working tree, uncommitted files included, is copied into a
snapshot repository with one commit, which try-repo then installs from.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SCRIPT = """\
import numpy as np
import torch
from torch import nn

features = np.load("features.npy")
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for i in range(len(features)):
        x = torch.tensor(features[i])  # copies the array every step
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

model.eval()
for x in val_batches:
    print(model(x))
"""
FIXED = SCRIPT.replace("x = torch.tensor(features[i])", "x = torch.as_tensor(features[i])").replace(
    "for x in val_batches:\n    print(model(x))\n",
    "with torch.no_grad():\n    for x in val_batches:\n        print(model(x))\n",
)
NOTEBOOK_CELLS = [
    "import numpy as np\nimport torch",
    "%time data = np.zeros(4)\nx = torch.tensor(np.load(path))",
]


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    executable = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which(
        "pre-commit"
    )
    assert executable, "pre-commit is not installed"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(
        [executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def git(*args: str, cwd: Path) -> str:
    identity = [
        "-c",
        "user.name=torchlint tests",
        "-c",
        "user.email=tests@torchlint.invalid",
        "-c",
        "commit.gpgsign=false",
    ]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def snapshot_of_this_repository(destination: Path) -> tuple[Path, str]:
    """This working tree as it is now, committed in a repository of its own."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).split(
        "\0"
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    git("init", "-q", cwd=destination)
    git("add", "-A", cwd=destination)
    git("commit", "-q", "-m", "snapshot", cwd=destination)
    return destination, git("rev-parse", "HEAD", cwd=destination).strip()


def notebook_text(cells: list[str]) -> str:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell{i}",
                "metadata": {},
                "outputs": [],
                "source": c.splitlines(keepends=True),
            }
            for i, c in enumerate(cells)
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1, sort_keys=True) + "\n"


@pytest.fixture(scope="module")
def hooks(tmp_path_factory) -> tuple[Path, str, Path]:
    """This repository's snapshot, its commit and one pre-commit home, shared by the tests:
    pre-commit builds the hooks' virtualenv (from the package index) once, not once per test."""
    base = tmp_path_factory.mktemp("pre-commit")
    repository, rev = snapshot_of_this_repository(base / "torchlint")
    return repository, rev, base / "pre-commit-home"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_hooks_fail_fix_and_then_pass(hooks, tmp_path):
    repository, rev, home = hooks
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SCRIPT)
    (project / "explore.ipynb").write_text(notebook_text(NOTEBOOK_CELLS))
    (project / "pyproject.toml").write_text("[tool.torchlint]\nunsafe-fixes = true\n")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)

    # Without a hook id try-repo runs every hook of the manifest: check, then fix.
    first = pre_commit(
        "try-repo", str(repository), "--ref", rev, "--all-files", cwd=project, home=home
    )
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "torchlint...." in output and "- hook id: torchlint\n- exit code: 1" in output
    assert (
        "train.py:10:13: TL003 [*] [tensor-from-numpy]" in output
        and "train.py:18:11: TL001 [*] [eval-without-no-grad]" in output
    )
    assert "explore.ipynb:cell 2:2:5: TL003" in output
    assert "- hook id: torchlint-fix\n- files were modified by this hook" in output
    assert (project / "train.py").read_text() == FIXED
    fixed_cells = [
        NOTEBOOK_CELLS[0],
        NOTEBOOK_CELLS[1].replace("torch.tensor(np.load(path))", "torch.from_numpy(np.load(path))"),
    ]
    assert (project / "explore.ipynb").read_text() == notebook_text(fixed_cells)

    second = pre_commit(
        "try-repo", str(repository), "--ref", rev, "--all-files", cwd=project, home=home
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 2
    assert (project / "train.py").read_text() == FIXED


AMP_SCRIPT = """\
import torch
from torch.cuda import amp

cuda = torch.cuda.is_available()
scaler = amp.GradScaler(enabled=cuda)
for x in loader:
    x = x.to("cuda")
    with amp.autocast(enabled=cuda):
        loss = model(x)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_staged_file_gets_its_projects_torch_not_the_newest(hooks, tmp_path):
    """The issue's scenario: torch>=1.8.0 declared at the root, only src/train.py staged. The fix
    hook must not write torch.amp.GradScaler (torch 2.3), exactly as with --all-files."""
    repository, rev, home = hooks
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(AMP_SCRIPT)
    (project / "requirements.txt").write_text("torch>=1.8.0\n")
    git("init", "-q", cwd=project)
    git("add", "src/train.py", cwd=project)
    staged = pre_commit(
        "try-repo", str(repository), "torchlint-fix", "--ref", rev, cwd=project, home=home
    )
    assert staged.returncode == 0, staged.stdout + staged.stderr
    assert (project / "src" / "train.py").read_text() == AMP_SCRIPT
    # With a newer torch declared, the same staged file is fixed: the hook did run on it.
    (project / "requirements.txt").write_text("torch>=2.4\n")
    newer = pre_commit(
        "try-repo", str(repository), "torchlint-fix", "--ref", rev, cwd=project, home=home
    )
    assert newer.returncode == 1, newer.stdout + newer.stderr
    assert (
        'torch.amp.GradScaler("cuda", enabled=cuda)' in (project / "src" / "train.py").read_text()
    )
