"""Each rule's fixture pair (fixtures/<name>/before.py and after.py), its entry in `torchlint rules`
and its page, through the installed command; where a rule's fix is meant to write the after, it does,
and the fixed script still runs under torch on CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import libcst as cst
import pytest
from conftest import FIXTURES, check_json, listed_rules, rule_docs, run_torchlint

# code: (fixture folder, on by default, what its page cites)
RULES = {
    "TL003": ("tensor-from-numpy", True, ()),
    "TL004": ("data-parallel", True, ()),
    "TL005": ("bias-before-batchnorm", True, ()),
    "TL006": ("zero-grad-without-set-to-none", True, ()),
    "TL101": (
        "dataloader-without-workers",
        False,
        ("pytorch.org", "efficientdl.com", "tuning_guide"),
    ),
    "TL102": (
        "transfer-without-non-blocking",
        False,
        ("pytorch.org", "efficientdl.com", "tuning_guide"),
    ),
    "TL103": (
        "tensor-created-then-moved",
        True,
        ("pytorch.org", "efficientdl.com", "tuning_guide"),
    ),
    "TL104": ("loss-accumulated-with-graph", True, ("pytorch.org", "efficientdl.com")),
    "TL105": ("grad-accumulation-broken", True, ("pytorch.org", "efficientdl.com")),
    "TL106": ("deprecated-cuda-amp", True, ("pytorch.org",)),
    "TL107": ("debug-mode-left-on", True, ("pytorch.org",)),
    "TL108": ("sync-call-in-loop", False, ("pytorch.org", "efficientdl.com")),
    "TL109": ("optimizer-not-fused", False, ("pytorch.org",)),
    "TL110": ("cudnn-benchmark-off", False, ("pytorch.org",)),
    "TL111": ("adam-with-weight-decay", False, ("pytorch.org",)),
}
LISTED = [code for code, (_, _, cited) in RULES.items() if cited]

# code: (the rules the fix runs with, whether the fixed code is exactly the after's).
# TL101's after also has TL102's non_blocking, which its pinning makes safe; the after of the
# opt-in rules spells the change out in more words than the fix writes.
FIXED = {
    "TL003": ("TL003", True),
    "TL005": ("TL005", True),
    "TL006": ("TL006", True),
    "TL101": ("TL101,TL102,TL103", True),
    "TL102": ("TL101,TL102,TL103", True),
    "TL103": ("TL101,TL102,TL103", True),
    "TL104": ("TL104", True),
    "TL109": ("TL109", False),
    "TL110": ("TL110", False),
    "TL111": ("TL111", False),
}


def _without_docstring(text: str) -> str:
    module = cst.parse_module(text)
    return module.with_changes(body=module.body[1:]).code


@pytest.fixture(scope="module")
def listed() -> dict[str, dict]:
    return listed_rules()


@pytest.mark.parametrize("code", LISTED)
def test_rules_are_listed_with_their_name_and_default_state(code, listed):
    name, on, _ = RULES[code]
    assert listed[code]["name"] == name
    assert listed[code]["default"] == ("on" if on else "opt-in")


@pytest.mark.parametrize("code", LISTED)
def test_rule_docs_are_complete(code):
    docs = rule_docs(code)
    for reference in RULES[code][2]:
        assert reference in docs


@pytest.mark.parametrize("code", sorted(RULES))
def test_fixture_before_is_flagged_and_after_is_clean(code):
    found = check_json("before.py", "after.py", select=code, cwd=FIXTURES / RULES[code][0])
    assert {(d["filename"], d["code"]) for d in found} == {("before.py", code)}


@pytest.mark.parametrize("code", sorted(FIXED))
def test_unsafe_fix_turns_the_fixture_into_its_after_version_and_it_runs(code, tmp_path):
    select, exact = FIXED[code]
    folder = tmp_path / "pair"
    folder.mkdir()
    for name in ("before.py", "after.py"):
        (folder / name).write_text((FIXTURES / RULES[code][0] / name).read_text())
    fixed = run_torchlint(
        "fix",
        "--isolated",
        "--select",
        select,
        "--unsafe-fixes",
        "--apply",
        "before.py",
        cwd=folder,
    )
    assert fixed.returncode in (0, 1), fixed.stderr
    assert check_json("before.py", select=select, cwd=folder) == []
    before, after = (folder / "before.py").read_text(), (folder / "after.py").read_text()
    if exact:
        assert _without_docstring(before) == _without_docstring(after)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    ran = subprocess.run(
        [sys.executable, "before.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    # torch's warning about converting a tensor that requires grad (TL104) is gone
    assert "requires_grad" not in ran.stderr


@pytest.mark.parametrize("code", ["TL105", "TL108"])
def test_display_only_rules_offer_no_edits(code):
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        code,
        "--output-format",
        "json",
        "before.py",
        cwd=FIXTURES / RULES[code][0],
    )
    findings = json.loads(result.stdout)
    assert findings
    for finding in findings:
        assert finding["fix"]["applicability"] == "display-only" and finding["fix"]["edits"] == []
