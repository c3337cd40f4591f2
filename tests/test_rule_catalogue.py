"""The catalogue the engine selects and prefilters by says what the rules themselves say."""

from __future__ import annotations

import inspect

import pytest

from torchlint.analysis import text
from torchlint.catalogue import CATALOGUE, entries, render
from torchlint.registry import all_rules
from torchlint.rule import Rule


def test_catalogue_json_is_written_from_the_rules():
    assert CATALOGUE.read_text(encoding="utf-8") == render(all_rules()), (
        "run `python -m torchlint.catalogue`"
    )


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_a_rules_prefilter_is_what_its_entry_can_repeat(rule):
    """An entry repeats a prefilter made of tokens and the text module's tests, nothing else."""
    assert rule.may_match.__func__ is Rule.may_match.__func__, (
        f"{rule.code} overrides may_match: use tokens and text_tests"
    )
    for test in rule.text_tests:
        assert inspect.getmodule(test) is text, (
            f"{rule.code}: {test.__name__} must live in torchlint.analysis.text"
        )


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_entry_and_rule_agree_on_every_example(rule):
    entry = next(e for e in entries() if e.code == rule.code)
    assert entry.load() is rule
    for example in [*rule.valid, *rule.invalid]:
        code = example if isinstance(example, str) else example.code
        assert entry.may_match(code) == rule.may_match(code)
