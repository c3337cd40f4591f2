"""A long fuzzing campaign with the same properties as tests/test_fuzz.py.

    python benchmarks/fuzz_campaign.py [--examples 5000]

Prints how many programs were fuzzed and how many fixes were applied; any failure is raised
by hypothesis with the shrunk program that shows it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import hypothesmith  # noqa: E402
import libcst as cst  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from strategies.training import training_script  # noqa: E402
from test_fuzz import check_properties, lint  # noqa: E402

from torchlint.fixes.apply import fix_to_fixpoint  # noqa: E402

counts = {"programs": 0, "fixes": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=5000)
    args = parser.parse_args()
    budget = settings(
        max_examples=args.examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )

    @budget
    @given(training_script())
    def scripts(source: str) -> None:
        check_properties(source)
        counts["programs"] += 1
        counts["fixes"] += len(fix_to_fixpoint(source, lint, unsafe=True).applied)

    @budget
    @given(hypothesmith.from_node(cst.Module))
    def programs(source: str) -> None:
        text = "import torch\nfrom torch import nn\n" + source
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            return
        assert not [d for d in lint(text) if d.code == "TL999"]
        counts["programs"] += 1

    scripts()
    programs()
    print(f"programs fuzzed: {counts['programs']}, fixes applied: {counts['fixes']}, failures: 0")


if __name__ == "__main__":
    main()
