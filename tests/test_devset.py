"""Precision and recall of every rule on the labeled development set of real PyPI code.

The pinned wheels are downloaded (not installed) into .pytest_cache on first use; the installed
`torchlint` runs over the labeled files and each rule must reach the floors on the dev split.
Rules that do not exist yet are skipped, not failed. `benchmarks/devset_report.py` prints the
full table, held-out split included.
"""

from __future__ import annotations

import pytest
from devset.fetch import fetch_all
from devset.score import (
    LABELS,
    PRECISION_FLOOR,
    RECALL_FLOOR,
    RULES,
    existing_rules,
    labels_of,
    load_labels,
    problems,
    score,
)


@pytest.fixture(scope="module")
def labels() -> dict:
    return load_labels()


@pytest.fixture(scope="module")
def roots(labels):
    return fetch_all(labels["package"])


@pytest.fixture(scope="module")
def rules() -> set[str]:
    return existing_rules()


@pytest.fixture(scope="module")
def result(labels, roots, rules):
    return score(labels, roots, rules & set(RULES))


def test_labels_file_is_well_formed(labels):
    assert problems(labels) == []


def test_labels_point_at_code(labels, roots):
    """Each labeled line exists and is not blank: catches a wrong line number or a changed wheel."""
    wrong = []
    for label in labels_of(labels):
        lines = (roots[label.package] / label.path).read_text(encoding="utf-8").splitlines()
        if label.end > len(lines) or not lines[label.line - 1].strip():
            wrong.append(label.where())
    assert wrong == [], f"labels outside the code in {LABELS.name}"


def test_no_rule_crashes_on_the_labeled_files(result):
    assert result.internal_errors == []


@pytest.mark.parametrize("rule", RULES)
def test_rule_meets_the_floors_on_the_dev_split(rule, result, rules):
    if rule not in rules:
        pytest.skip(f"{rule} is not implemented yet (no such rule in `torchlint rules`)")
    tally = result.tallies.get(("dev", rule))
    if tally is None or tally.tp + tally.fp + tally.fn == 0:
        pytest.skip(f"{rule} has no labeled occurrence and no finding in the dev split")
    report = "\n".join(tally.false_positives + tally.false_negatives)
    if tally.precision is not None and tally.precision < PRECISION_FLOOR:
        pytest.fail(
            f"{rule} precision {tally.precision:.2f} < {PRECISION_FLOOR} (TP {tally.tp}, FP {tally.fp})\n{report}"
        )
    if tally.recall is not None and tally.recall < RECALL_FLOOR:
        pytest.fail(
            f"{rule} recall {tally.recall:.2f} < {RECALL_FLOOR} (TP {tally.tp}, FN {tally.fn})\n{report}"
        )
