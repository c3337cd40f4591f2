"""Every module of torchlint imports alone, in a fresh interpreter.

With the import layers acyclic (`lint-imports`, `[tool.importlinter]` in pyproject.toml) no
module needs another to have been imported first; this proves it on the installed package,
including the rule pack (`rules/`, installed as `torchlint.rules`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _dotted(path: Path, folder: Path, package: str) -> str:
    parts = path.relative_to(folder).with_suffix("").parts
    return ".".join((package, *parts)).removesuffix(".__init__")


def _modules() -> list[str]:
    names = [
        _dotted(p, ROOT / "torchlint", "torchlint") for p in (ROOT / "torchlint").rglob("*.py")
    ]
    names += [_dotted(p, ROOT / "rules", "torchlint.rules") for p in (ROOT / "rules").glob("*.py")]
    # `python -m torchlint` runs the command when imported; it is started as one below.
    return sorted(name for name in names if name != "torchlint.__main__")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # -I: neither the working directory nor PYTHON* variables on the path, only what is installed.
    return subprocess.run(
        [sys.executable, "-I", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_every_module_is_listed():
    modules = _modules()
    assert "torchlint.rules.data_parallel" in modules and "torchlint.analysis.model" in modules
    assert len(modules) == len(set(modules))


@pytest.mark.parametrize("module", _modules())
def test_module_imports_alone(module, tmp_path):
    result = _run(["-c", f"import {module}"], tmp_path)
    assert result.returncode == 0, result.stderr


def test_the_main_module_runs_alone(tmp_path):
    result = _run(["-m", "torchlint", "--version"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "torchlint" in result.stdout
