"""Every rule's VALID and INVALID examples, run through the real engine and fixer."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.config import Settings, parse_version
from torchlint.engine.lint import lint_text
from torchlint.fixes.apply import fix_to_fixpoint
from torchlint.registry import all_rules
from torchlint.rule import Invalid, Valid


def _settings(version: str | None) -> Settings:
    return Settings(target_torch_version=parse_version(version, "example") if version else None)


def _cases(kind: str):
    for rule in all_rules():
        for i, example in enumerate(getattr(rule, kind)):
            example = (
                example
                if not isinstance(example, str)
                else (Invalid(example) if kind == "invalid" else Valid(example))
            )
            yield pytest.param(rule, example, id=f"{rule.code}-{kind}-{i}")


@pytest.mark.parametrize(("rule", "example"), list(_cases("valid")))
def test_valid_example_is_clean(rule, example):
    found = lint_text("example.py", example.code, [rule], _settings(example.target_torch_version))
    assert found == [], (
        f"{rule.code} flagged valid code (or failed on it):\n{example.code}\n{found}"
    )


@pytest.mark.parametrize(("rule", "example"), list(_cases("invalid")))
def test_invalid_example_is_flagged_and_fixed(rule, example):
    settings = _settings(example.target_torch_version)
    found = lint_text("example.py", example.code, [rule], settings)
    assert [d.code for d in found] == [rule.code] * example.count, (
        f"{rule.code} on:\n{example.code}\ngot {found}"
    )
    first = found[0]
    if example.line is not None:
        assert first.start.row == example.line, f"{rule.code}: reported at {first.start}"
    if example.column is not None:
        assert first.start.column == example.column, f"{rule.code}: reported at {first.start}"
    if example.message is not None:
        assert example.message in first.message, first.message
    if example.fixed is None:
        assert not any(d.fix and d.fix.edits for d in found)
        return
    outcome = fix_to_fixpoint(
        example.code, lambda text: lint_text("example.py", text, [rule], settings), unsafe=True
    )
    assert outcome.text == example.fixed
    cst.parse_module(outcome.text)
    again = fix_to_fixpoint(
        outcome.text, lambda text: lint_text("example.py", text, [rule], settings), unsafe=True
    )
    assert again.text == outcome.text, "applying the fixes twice changed the result"


def test_every_rule_has_complete_metadata_and_docs():
    codes = set()
    for rule in all_rules():
        assert rule.code not in codes
        codes.add(rule.code)
        assert rule.name == rule.name.lower() and " " not in rule.name
        assert rule.fix_availability in ("none", "safe", "unsafe", "display-only")
        for section in (
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Use instead",
            "## Fix safety",
            "## References",
        ):
            assert section in rule.docs, f"{rule.code} docs lack {section}"
        assert rule.valid and rule.invalid, f"{rule.code} needs valid and invalid examples"
