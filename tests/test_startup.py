"""`torchlint --version` starts without libcst, pygls or torch: the import structure, not a timing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import torchlint_executable

PROBE = """
import runpy, sys
sys.argv = {argv!r}
try:
    runpy.run_path({exe!r}, run_name="__main__")
except SystemExit:
    pass
print(sorted(name for name in ("libcst", "pygls", "torch", "torchlint.rules") if name in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["torchlint", "--version"], ["torchlint", "-V"], ["torchlint", "check", "--help"]])
def test_commands_that_do_not_lint_import_no_heavy_module(argv):
    result = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, exe=torchlint_executable())], capture_output=True, text=True, timeout=120)
    assert result.stderr.strip().splitlines()[-1] == "[]", result.stderr
