"""Every flag `torchlint fix` accepts does what it says without `--apply`, or is a usage error.

Without `--apply` (or `--fix`/`--fix-only`) `fix` prints a diff and writes nothing. Flags about
findings (`--statistics`, `--output-format`) or applied fixes (`--exit-non-zero-on-fix`) would
do nothing there, and `--add-noqa` would write: each is a one-line usage error (exit 2) that
says why. The rest are checked for their effect through the installed command. The flag list
comes from the command itself, so a new flag without a case here fails the suite.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from conftest import run_torchlint

from torchlint.cli import fix

SCRIPT = """\
import numpy as np
import torch

arr = np.load(path)
t = torch.tensor(arr)
model = torch.nn.DataParallel(model)
"""
FIXED = SCRIPT.replace("torch.tensor(arr)", "torch.from_numpy(arr)")
DIFF_LINE = "+t = torch.from_numpy(arr)\n"


def _diff_shown(result, tmp_path: Path) -> None:
    assert result.returncode == 1, result.stderr
    assert DIFF_LINE in result.stdout
    assert (tmp_path / "train.py").read_text() == SCRIPT


def _no_diff(result, tmp_path: Path) -> None:
    assert result.returncode == 1, result.stderr
    assert "from_numpy" not in result.stdout and "No fixes available" in result.stdout
    assert (tmp_path / "train.py").read_text() == SCRIPT


def _usage_error(*words: str) -> Callable:
    def check(result, tmp_path: Path) -> None:
        assert result.returncode == 2 and result.stdout == ""
        error = result.stderr
        assert error.count("\n") == 1 and error.startswith("torchlint: error: "), error
        assert all(word in error for word in words), error
        assert (tmp_path / "train.py").read_text() == SCRIPT

    return check


def _written(result, tmp_path: Path) -> None:
    assert result.returncode == 1, result.stderr  # TL004 remains
    assert (tmp_path / "train.py").read_text() == FIXED


def _fix_only(result, tmp_path: Path) -> None:
    assert result.returncode == 0 and (tmp_path / "train.py").read_text() == FIXED
    assert "TL004" not in result.stdout


def _to_file(result, tmp_path: Path) -> None:
    assert result.returncode == 1 and result.stdout == ""
    assert DIFF_LINE in (tmp_path / "out.diff").read_text()


def _exit_zero(result, tmp_path: Path) -> None:
    assert result.returncode == 0 and DIFF_LINE in result.stdout


def _quiet(result, tmp_path: Path) -> None:
    assert DIFF_LINE in result.stdout and "Would fix" not in result.stdout


def _no_cache(result, tmp_path: Path) -> None:
    _diff_shown(result, tmp_path)
    assert not (tmp_path / ".torchlint_cache").exists()


def _cache_dir(result, tmp_path: Path) -> None:
    _diff_shown(result, tmp_path)
    assert any((tmp_path / "cache").rglob("*.json"))


def _coloured(result, tmp_path: Path) -> None:
    assert "\x1b[32m+t = torch.from_numpy(arr)\x1b[0m" in result.stdout
    assert "\x1b[31m-t = torch.tensor(arr)\x1b[0m" in result.stdout


def _plain(result, tmp_path: Path) -> None:
    _diff_shown(result, tmp_path)
    assert "\x1b[" not in result.stdout


def _stdin_name(result, tmp_path: Path) -> None:
    assert "--- a/scripts/train.py\n" in result.stdout and DIFF_LINE in result.stdout


def _files_listed(result, tmp_path: Path) -> None:
    assert (result.returncode, result.stdout) == (0, "train.py\n")


def _settings(result, tmp_path: Path) -> None:
    assert (
        result.returncode == 0 and "file: " in result.stdout and "enabled rules:" in result.stdout
    )


def _listing(result, tmp_path: Path) -> None:
    _diff_shown(result, tmp_path)
    assert "Would fix 1 finding in 1 file (1 not fixable).\n  train.py:\n" in result.stdout
    assert "1  TL003 tensor-from-numpy" in result.stdout


def _extended(result, tmp_path: Path) -> None:
    assert "-x = 1  # noqa: TL003\n+x = 1\n" in result.stdout  # TL100's fix, selected on top


def _traceback(result, tmp_path: Path) -> None:
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "unexpected node shape" in result.stderr


# flag -> (arguments after `fix --unsafe-fixes train.py`, what must hold)
CASES: dict[str, tuple[list[str], Callable]] = {
    "--select": (["--select", "TL004"], _no_diff),
    "--ignore": (["--ignore", "TL003"], _no_diff),
    "--extend-select": (["--extend-select", "TL100"], _extended),
    "--config": (["--config", "other.toml"], _no_diff),
    "--isolated": (["--isolated"], _diff_shown),
    "--preview": (["--preview"], _diff_shown),
    "--target-torch-version": (["--target-torch-version", "0.4"], _no_diff),
    "--output-format": (["--output-format", "json"], _usage_error("--output-format", "--apply")),
    "--output-file": (["-o", "out.diff"], _to_file),
    "--statistics": (["--statistics"], _usage_error("--statistics", "--apply")),
    "--exit-zero": (["--exit-zero"], _exit_zero),
    "--quiet": (["-q"], _quiet),
    "--jobs": (["-j", "1"], _diff_shown),
    "--no-cache": (["--no-cache"], _no_cache),
    "--show-traceback": (["--show-traceback"], _traceback),
    "--color": (["--color", "always"], _coloured),
    "--stdin-filename": (["--stdin-filename", "scripts/train.py"], _stdin_name),
    "--show-files": (["--show-files"], _files_listed),
    "--add-noqa": (["--add-noqa"], _usage_error("--add-noqa", "check")),
    "--fix": (["--fix"], _written),
    "--unsafe-fixes": ([], _diff_shown),
    "--diff": (["--diff"], _diff_shown),
    "--show-fixes": (["--show-fixes"], _listing),
    "--fix-only": (["--fix-only"], _fix_only),
    "--exit-non-zero-on-fix": (
        ["--exit-non-zero-on-fix"],
        _usage_error("--exit-non-zero-on-fix", "--apply"),
    ),
    "--cache-dir": (["--cache-dir", "cache"], _cache_dir),
    "--show-settings": (["--show-settings", "train.py"], _settings),
    "--apply": (["--apply"], _written),
}
# Injected into the command for `--show-traceback`: a rule that crashes.
CRASH = (
    "import sys\n"
    "from torchlint.rules import data_parallel\n"
    "def broken(self, node):\n"
    "    raise ValueError('unexpected node shape')\n"
    "data_parallel.DataParallel.visit_Call = broken\n"
    "from torchlint.cli import main\n"
    "sys.argv = ['torchlint'] + sys.argv[1:]\n"
    "main()\n"
)


def test_every_flag_of_fix_has_a_case():
    flags = {
        max(p.opts, key=len) for p in fix.params if isinstance(p, click.Option) and p.name != "help"
    }
    assert flags == set(CASES)


@pytest.mark.parametrize("flag", sorted(CASES))
def test_the_flag_does_what_it_says_without_apply_or_is_a_usage_error(flag, tmp_path):
    arguments, check = CASES[flag]
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "other.toml").write_text('[tool.torchlint]\nignore = ["TL003"]\n')
    if flag == "--extend-select":
        (tmp_path / "train.py").write_text(SCRIPT + "x = 1  # noqa: TL003\n")
    if flag == "--isolated":
        (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL003"]\n')
    base = ["fix", "--unsafe-fixes"]
    if flag == "--stdin-filename":
        result = run_torchlint(*base, "-", *arguments, cwd=tmp_path, input=SCRIPT)
    elif flag == "--show-traceback":
        result = subprocess.run(
            [sys.executable, "-c", CRASH, *base, "train.py", *arguments],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
    else:
        result = run_torchlint(*base, "train.py", *arguments, cwd=tmp_path)
    if flag == "--extend-select":
        assert (tmp_path / "train.py").read_text() == SCRIPT + "x = 1  # noqa: TL003\n"
    check(result, tmp_path)


def test_check_diff_refuses_the_same_flags(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    result = run_torchlint(
        "check", "--isolated", "--diff", "--statistics", "train.py", cwd=tmp_path
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--statistics" in result.stderr and "--fix" in result.stderr
