"""Prints each rule's precision and recall on the labeled development set, dev and held-out splits.

    python benchmarks/devset_report.py            # the table
    python benchmarks/devset_report.py --details  # plus every false positive and false negative

The wheels are fetched like the test does (cached under .pytest_cache/torchlint-devset, or
$TORCHLINT_DEVSET_CACHE). Rules not implemented yet are listed as such.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from devset.fetch import fetch_all  # noqa: E402
from devset.score import RULES, details, existing_rules, load_labels, score, table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--details", action="store_true", help="list every false positive and false negative"
    )
    args = parser.parse_args()
    labels = load_labels()
    rules = existing_rules() & set(RULES)
    result = score(labels, fetch_all(labels["package"]), rules)
    print(table(result, [r for r in RULES if r in rules]), end="")
    absent = [r for r in RULES if r not in rules]
    if absent:
        print(f"not implemented yet: {', '.join(absent)}")
    if args.details:
        print(details(result, [r for r in RULES if r in rules]), end="")


if __name__ == "__main__":
    main()
