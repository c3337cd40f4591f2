"""The prefilter on real code: a rule it skips for a file would have found nothing there.

For every .py file of the installed torch and of the development set's pinned wheels, each rule whose `may_match` is false for the file's text is
run on it anyway, through a subclass without the prefilter. A finding it reports is one the
prefilter hides. This is the real-code half of `test_engine_cache_jobs_prefilter.py`, which checks
every rule's examples and fixtures.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest
from conftest import unfiltered
from devset.fetch import cache_dir, download, verified_wheel
from devset.score import load_labels
from sweep.trees import Tree, torch_tree, wheel_tree

from torchlint.config import Settings
from torchlint.engine.lint import decode, lint_text
from torchlint.registry import all_rules

RULES = {rule.code: rule for rule in all_rules()}


UNFILTERED = {code: unfiltered(rule) for code, rule in RULES.items()}


def _hidden_in(job: tuple[str, bytes, str]) -> list[str]:
    """Findings in one file of the rules that its prefilter skips."""
    path, data, target = job
    try:
        text = decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return []
    skipped = [UNFILTERED[code] for code, rule in RULES.items() if not rule.may_match(text)]
    if not skipped:
        return []
    settings = Settings(target_torch_version=tuple(int(p) for p in target.split(".")[:2]))
    return [
        f"{path}:{d.start.row}: {d.code} {d.message}"
        for d in lint_text(path, text, skipped, settings)
        if d.code in RULES
    ]


def _hidden(trees: list[Tree]) -> list[str]:
    jobs = [
        (f"{tree.name}/{path}", data, tree.target)
        for tree in trees
        for path, data in tree.files.items()
    ]
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        return [finding for found in pool.map(_hidden_in, jobs, chunksize=8) for finding in found]


def test_prefilter_hides_nothing_in_torch():
    tree = torch_tree()
    assert len(tree.files) > 1000, (
        "the installed torch has too few .py files to be the real package"
    )
    assert _hidden([tree]) == []


def test_prefilter_hides_nothing_in_the_development_set_packages():
    """Every .py file of the pinned wheels, not only the labeled ones."""
    packages = load_labels()["package"]
    wheels = cache_dir() / "wheels"
    download(packages, wheels)
    trees = [wheel_tree(package, verified_wheel(package, wheels)) for package in packages]
    assert sum(len(tree.files) for tree in trees) > 5000
    assert _hidden(trees) == []


@pytest.mark.parametrize("code", sorted(RULES))
def test_unfiltered_rule_is_the_rule(code):
    """The subclass differs only in its prefilter: same code, name and visitors."""
    rule, unfiltered = RULES[code], UNFILTERED[code]
    assert issubclass(unfiltered, rule) and unfiltered.code == rule.code
    assert unfiltered.may_match("") and not rule.may_match("")
