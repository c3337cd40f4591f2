"""The result cache, the process pool and the prefilter change speed, never findings."""

from __future__ import annotations

import io
import json
import textwrap
import tokenize
from pathlib import Path

import pytest
from conftest import FIXTURES, run_torchlint, unfiltered

import torchlint
from torchlint.config import Settings
from torchlint.engine import cache as cache_module
from torchlint.engine.lint import lint_text
from torchlint.registry import all_rules
from torchlint.rule import Invalid

SLOW = textwrap.dedent(
    """\
    import torch
    from torch import nn

    model = nn.DataParallel(nn.Linear(4, 4))
    other = torch.nn.DataParallel(model)
    """
)


def _project(tmp_path: Path, files: int = 12) -> Path:
    for i in range(files):
        body = SLOW if i % 3 == 0 else f"import torch\nx{i} = torch.zeros({i})\n"
        (tmp_path / f"mod_{i:02d}.py").write_text(body)
    return tmp_path


def _json(tmp_path: Path, *extra: str) -> list[dict]:
    result = run_torchlint("check", ".", "--output-format", "json", *extra, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_warm_cache_returns_what_a_cold_run_found(tmp_path):
    _project(tmp_path)
    cold = _json(tmp_path, "--no-cache")
    assert cold, "the project has findings"
    assert not (tmp_path / ".torchlint_cache").exists(), "--no-cache must not write"
    first = _json(tmp_path)
    assert (tmp_path / ".torchlint_cache").is_dir()
    warm = _json(tmp_path)
    assert cold == first == warm


def test_cache_is_invalidated_by_an_edit_and_by_config(tmp_path):
    _project(tmp_path)
    before = _json(tmp_path)
    (tmp_path / "mod_00.py").write_text("import torch\n")
    after_edit = _json(tmp_path)
    assert len(after_edit) == len(before) - 2
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL004"]\n')
    assert _json(tmp_path) == []


def test_cache_key_changes_with_torchlint_version(monkeypatch):
    settings = Settings()
    rules = list(all_rules())
    before = cache_module.settings_fingerprint(settings, rules)
    monkeypatch.setattr(torchlint, "__version__", torchlint.__version__ + ".post1")
    cache_module._code_fingerprint.cache_clear()
    try:
        assert cache_module.settings_fingerprint(settings, rules) != before
    finally:
        monkeypatch.undo()
        cache_module._code_fingerprint.cache_clear()


def test_one_job_and_many_jobs_give_identical_output(tmp_path):
    _project(tmp_path, files=30)
    one = run_torchlint(
        "check", ".", "--no-cache", "--jobs", "1", "--output-format", "concise", cwd=tmp_path
    )
    many = run_torchlint(
        "check", ".", "--no-cache", "--jobs", "2", "--output-format", "concise", cwd=tmp_path
    )
    assert one.returncode == many.returncode == 1
    assert one.stdout == many.stdout


def _invalid_examples():
    for rule in all_rules():
        for example in rule.invalid:
            code = example.code if isinstance(example, Invalid) else example
            yield pytest.param(rule, code, id=rule.code)


@pytest.mark.parametrize(("rule", "code"), list(_invalid_examples()))
def test_prefilter_never_hides_an_example(rule, code):
    assert rule.may_match(code)


def test_prefilter_never_hides_a_fixture():
    by_name = {rule.name: rule for rule in all_rules()}
    for before in sorted(FIXTURES.glob("*/before.py")):
        rule = by_name.get(before.parent.name)
        if rule is not None:
            assert rule.may_match(before.read_text(encoding="utf-8")), before


def _spread(code: str) -> str:
    """`code` with its expressions split after every `.` and `(`: a backslash line join outside
    brackets, a comment and a line break inside them. The text tests must read through both."""
    lines = code.splitlines(keepends=True)
    inserts: list[tuple[int, int, str]] = []
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type != tokenize.OP:
            continue
        if token.string in ")]}":
            depth -= 1
        elif token.string in "([{":
            depth += 1
        if token.string in (".", "("):
            row, column = token.end
            inserts.append((row, column, "  # spread\n" if depth else " \\\n"))
    for row, column, text in reversed(inserts):
        line = lines[row - 1]
        lines[row - 1] = line[:column] + text + line[column:]
    return "".join(lines)


def _findings(rule, code: str) -> list[str]:
    return [d.code for d in lint_text("example.py", code, [unfiltered(rule)], Settings())]


@pytest.mark.parametrize(("rule", "code"), list(_invalid_examples()))
def test_prefilter_reads_through_line_joins_and_comments(rule, code):
    spread = _spread(code)
    if _findings(rule, spread) != _findings(rule, code):
        pytest.skip("spreading the example changes what the rule finds in it")
    assert rule.may_match(spread), spread
