"""Shared test helpers: the installed `torchlint` command, run in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from torchlint.config import Settings, parse_version
from torchlint.diagnostics import Diagnostic
from torchlint.engine.lint import lint_text
from torchlint.fixes.apply import fix_to_fixpoint
from torchlint.project import rules_for
from torchlint.registry import find_rule

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def torchlint_executable() -> str:
    candidate = Path(sys.executable).parent / "torchlint"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("torchlint")
    assert found, "the torchlint command is not installed"
    return found


def run_torchlint(
    *args: str, cwd: Path | str | None = None, input: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the installed command; the result has .returncode, .stdout and .stderr as text."""
    return subprocess.run(
        [torchlint_executable(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def unfiltered(rule: type) -> type:
    """The same rule without its prefilter: run whatever the file's text, to see what it would hide."""
    return type(
        rule.__name__,
        (rule,),
        {
            "may_match": classmethod(lambda cls, text: True),
            "may_match_project": classmethod(lambda cls, text, project, file: True),
        },
    )


def lint_source(
    codes: str, text: str, path: str = "train.py", version: str | None = None
) -> list[Diagnostic]:
    """The findings of the comma-separated rule `codes` on `text`, through the real engine, as
    it lints the file at `path`: test code gets no performance rules (`rules_for`)."""
    target = parse_version(version, "test") if version else None
    settings = Settings(target_torch_version=target)
    rules = [find_rule(code) for code in codes.split(",")]
    return lint_text(path, text, rules_for(path, rules, settings), settings)


def fixed_source(codes: str, text: str, unsafe: bool = True) -> str:
    """`text` after the fixes of `codes`, applied to a fixpoint; the result must still parse."""
    outcome = fix_to_fixpoint(text, lambda t: lint_source(codes, t), unsafe=unsafe)
    cst.parse_module(outcome.text)
    return outcome.text


def check_json(*paths: str, select: str, cwd: Path | str) -> list[dict]:
    """`torchlint check --output-format json` on `paths`, isolated from any config and cache."""
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        select,
        "--output-format",
        "json",
        *paths,
        cwd=cwd,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def listed_rules() -> dict[str, dict]:
    """`torchlint rules --output-format json`, by code."""
    result = run_torchlint("rules", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    return {r["code"]: r for r in json.loads(result.stdout)}


DOC_SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)


def rule_docs(code: str) -> str:
    """`torchlint rule CODE`, checked to have every section a rule's docs need."""
    result = run_torchlint("rule", code)
    assert result.returncode == 0, result.stderr
    for section in DOC_SECTIONS:
        assert section in result.stdout
    return result.stdout


@pytest.fixture
def torchlint():
    return run_torchlint


# Tests that take minutes, or seconds each because they run scripts under torch: the sweeps over
# real code, fuzzing, pre-commit, verify and every test that runs a fixed script to show it still
# works. They run in the full command (CI); `-m "not slow"` leaves them out of the edit loop.
SLOW_TESTS = (
    "test_prefilter_sweep.py::test_prefilter_hides_nothing",
    "test_fix_sweep.py::",
    "test_devset.py::",
    "test_fuzz.py::",
    "test_verify.py::",
    "test_precommit.py::",
    "test_verify_reaping.py::",
    "test_verify_progress.py::",
    "still_runs",
    "and_it_runs",
    "runs_on_cpu",
    "test_fixture_pair_and_the_fixed",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(marker in item.nodeid for marker in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
