"""A declaration file that names no torch does not reset the torch target: the nearest enclosing
declaration that names torch applies, with or without a git repository around the project.

An example folder with its own `requirements.txt` (numpy, matplotlib) inside a repository that
pins torch is the common case; `--show-settings` and the fixes offered both show the target."""

from __future__ import annotations

import subprocess

import pytest
from conftest import run_torchlint

# TL006 advises `set_to_none=True` only where zero_grad does not already default to it (< 2.0).
TRAIN = "import torch\nfor x in loader:\n    opt.zero_grad()\n    model(x).sum().backward()\n    opt.step()\n"


@pytest.mark.parametrize("git", [False, True], ids=["no-git", "git"])
def test_a_subfolder_declaration_without_torch_keeps_the_enclosing_pin(tmp_path, git):
    if git:
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "repo"\ndependencies = ["torch>=1.13,<2"]\n'
    )
    example = tmp_path / "examples" / "mnist"
    example.mkdir(parents=True)
    (example / "requirements.txt").write_text("numpy\nmatplotlib>=3\n")
    (example / "train.py").write_text(TRAIN)
    shown = run_torchlint("check", "--show-settings", "examples/mnist/train.py", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    assert lines["project root"] == str(example)  # its own project for settings and cache
    assert lines["torch target"] == "1.13 (pyproject.toml: torch>=1.13,<2)"
    found = run_torchlint(
        "check", "--select", "TL006", "--output-format", "concise", "examples", cwd=tmp_path
    )
    assert found.returncode == 1 and "TL006" in found.stdout, found.stdout


def test_a_subfolder_that_names_torch_itself_still_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "repo"\ndependencies = ["torch>=1.13,<2"]\n'
    )
    example = tmp_path / "examples"
    example.mkdir()
    (example / "requirements.txt").write_text("torch>=2.4\n")
    (example / "train.py").write_text(TRAIN)
    shown = run_torchlint("check", "--show-settings", "examples/train.py", cwd=tmp_path)
    assert "torch target: 2.4 (requirements.txt: torch>=2.4)" in shown.stdout
