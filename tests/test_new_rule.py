"""`python -m torchlint.new_rule NAME` in a copy of the repository's rules: a preview rule with the
next free code and every docs section, a fixture pair that trains, and nothing overwritten."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from conftest import DOC_SECTIONS, ROOT

from torchlint.registry import all_rules
from torchlint.rule import Invalid, Rule


def _new_rule(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torchlint.new_rule", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The rules of this repository and an empty fixtures folder, as a root to scaffold in."""
    shutil.copytree(
        ROOT / "rules", tmp_path / "rules", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "fixtures").mkdir()
    return tmp_path


def _load(path: Path) -> type[Rule]:
    spec = importlib.util.spec_from_file_location("scaffolded", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (rule,) = [
        v for v in vars(module).values() if isinstance(v, type) and v.__module__ == "scaffolded"
    ]
    assert issubclass(rule, Rule)
    return rule


def test_the_skeleton_is_a_preview_rule_with_the_next_code_and_every_section(checkout):
    result = _new_rule("slow-thing", cwd=checkout)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "wrote rules/slow_thing.py",
        "wrote fixtures/slow-thing/before.py",
        "wrote fixtures/slow-thing/after.py",
    ]
    highest = max(int(r.code[2:]) for r in all_rules() if r.code != "TL999")
    rule = _load(checkout / "rules" / "slow_thing.py")
    assert (rule.code, rule.name, rule.preview) == (f"TL{highest + 1:03d}", "slow-thing", True)
    assert rule.__name__ == "SlowThing"
    for section in DOC_SECTIONS:
        assert f"## {section}" in rule.docs
    (example,) = rule.invalid
    assert isinstance(example, Invalid) and example.code == "import torch\nTODO\n"
    assert (example.line, example.column) == (2, 1)


def test_the_fixture_pair_parses_and_it_runs(checkout):
    assert _new_rule("slow-thing", cwd=checkout).returncode == 0
    pair = checkout / "fixtures" / "slow-thing"
    for half in ("before", "after"):
        cst.parse_module((pair / f"{half}.py").read_text())
    ran = subprocess.run(
        [sys.executable, "before.py", "--scale", "1"],
        cwd=pair,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]


def test_nothing_is_overwritten(checkout):
    assert _new_rule("slow-thing", cwd=checkout).returncode == 0
    rule = checkout / "rules" / "slow_thing.py"
    rule.write_text("# mine\n")
    again = _new_rule("slow-thing", cwd=checkout)
    assert again.returncode == 2
    assert again.stderr.strip() == f"torchlint.new_rule: {rule} already exists"
    assert rule.read_text() == "# mine\n"
    taken = _new_rule("data-parallel", cwd=checkout)
    assert taken.returncode == 2 and "data_parallel.py already exists" in taken.stderr


@pytest.mark.parametrize("name", ["Slow_Thing", "slow thing", "-slow", "slow--thing"])
def test_a_name_that_is_not_kebab_case_is_refused(checkout, name):
    result = _new_rule(name, cwd=checkout)
    assert result.returncode == 2 and result.stderr.startswith("usage:")
    assert sorted(p.name for p in (checkout / "fixtures").iterdir()) == []


def test_outside_a_checkout_it_says_where_to_run_it(tmp_path):
    result = _new_rule("slow-thing", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "torchlint.new_rule: run it from the repository root (rules/ and fixtures/ not found)\n"
    )
    assert list(tmp_path.iterdir()) == []
