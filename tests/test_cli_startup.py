"""`torchlint --version` starts without libcst, pygls or torch: the import structure, not a timing."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from conftest import torchlint_executable

# A run ends with os._exit (no interpreter teardown): the probe turns that into SystemExit so
# it can read sys.modules after the run.
PROBE = """
import os, runpy, sys
def leave(code):
    raise SystemExit(code)
os._exit = leave
sys.argv = {argv!r}
try:
    runpy.run_path({exe!r}, run_name="__main__")
except SystemExit:
    pass
heavy = ("libcst", "pygls", "torch")
print(sorted(set(filter(lambda name: name in heavy or name.startswith("torchlint.rules."), sys.modules))), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv", [["torchlint", "--version"], ["torchlint", "-V"], ["torchlint", "check", "--help"]]
)
def test_commands_that_do_not_lint_import_no_heavy_module(argv):
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, exe=torchlint_executable())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stderr.strip().splitlines()[-1] == "[]", result.stderr


def _imported(argv: list[str], cwd) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, exe=torchlint_executable())],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    return ast.literal_eval(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_checking_a_file_no_rule_may_match_imports_neither_libcst_nor_the_rules(tmp_path, cache):
    (tmp_path / "clean.py").write_text("import torch\n\nx = torch.ones(3)\n")
    assert _imported(["torchlint", "check", "--isolated", *cache, "clean.py"], tmp_path) == []


def test_a_file_a_rule_may_match_still_gets_the_rules(tmp_path):
    (tmp_path / "dp.py").write_text(
        "import torch\n\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
    )
    assert _imported(["torchlint", "check", "--isolated", "--no-cache", "dp.py"], tmp_path) == [
        "libcst",
        "torchlint.rules.data_parallel",
    ]
