"""Property-based tests: the engine never raises, fixes always parse and are idempotent,
and `# noqa: CODE` removes exactly the findings it names. A bounded number of examples
runs here; benchmarks/fuzz_campaign.py runs thousands on demand.
"""

from __future__ import annotations

import hypothesmith
import libcst as cst
from hypothesis import HealthCheck, given, settings
from strategies.training import training_script

from torchlint.config import Settings
from torchlint.engine.lint import INTERNAL_ERROR, lint_text
from torchlint.fixes.apply import fix_to_fixpoint

SETTINGS = Settings(select=("ALL",))
RULES = SETTINGS.enabled_rules()
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)


def lint(text: str):
    return lint_text("fuzz.py", text, RULES, SETTINGS)


def check_properties(source: str) -> None:
    found = lint(source)
    assert not [d for d in found if d.code == INTERNAL_ERROR[0]], [d.message for d in found]
    outcome = fix_to_fixpoint(source, lint, unsafe=True)
    cst.parse_module(outcome.text)
    compile(outcome.text, "fuzz.py", "exec")
    assert not outcome.broken, [d.code for d in outcome.broken]
    assert fix_to_fixpoint(outcome.text, lint, unsafe=True).text == outcome.text
    check_noqa(source, found)


def check_noqa(source: str, found) -> None:
    """Suppressing one finding's code on its row removes the findings that comment covers, only those."""
    lines = source.split("\n")
    for target in found[:3]:
        if target.code == "TL000":
            continue
        row = target.start.row
        changed = lines.copy()
        changed[row - 1] += f"  # noqa: {target.code}"
        after = lint("\n".join(changed))
        expected = [d for d in found if not (d.code == target.code and row in d.anchor_rows)]
        # Compared by what identifies a finding: a fix that rewrites the commented line
        # rightly carries the new comment in its text.
        assert [_identity(d) for d in after] == [_identity(d) for d in expected]


def _identity(finding) -> tuple:
    return finding.code, finding.start, finding.end, finding.message


@FUZZ
@given(training_script())
def test_training_scripts(source):
    check_properties(source)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(hypothesmith.from_node(cst.Module))
def test_random_python_programs(source):
    text = "import torch\nimport numpy as np\nfrom torch import nn\n" + source
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError:
        return
    found = lint(text)
    assert not [d for d in found if d.code == INTERNAL_ERROR[0]], [d.message for d in found]
