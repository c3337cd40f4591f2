"""`torchlint fix` through the installed command: diff, --apply, safety of writes, idempotence.

Real shipped rules provide the findings where one fits; the mechanics no shipped rule
exercises on purpose (a fix that never converges, one that breaks the parse, a display-only
fix that carries an edit) come from the probe rules in tests/fix_rules, which a subprocess
adds to the rule package's search path so the real registry discovers them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, run_torchlint

from torchlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.fixes.apply import MAX_PASSES, FixError, apply_fixes, fix_to_fixpoint
from torchlint.fixes.write import WriteRefused, snapshot, write_atomic
from torchlint.registry import all_rules
from torchlint.rule import Invalid

PROBES = ROOT / "tests" / "fix_rules"
_BOOT = (
    "import sys, torchlint.rules as pack; pack.__path__.append(sys.argv.pop(1)); "
    "from torchlint.cli import main; main(prog_name='torchlint')"
)

# TL003 (unsafe fix) and TL004 (display-only) from the shipped pack.
NUMPY_SCRIPT = (
    "import numpy as np\n"
    "from torch import tensor, nn\n"
    "grid = np.load(path)\n"
    "x = tensor(grid)  # keep this comment\n"
    "model = nn.DataParallel(model)\n"
)
NUMPY_FIXED = NUMPY_SCRIPT.replace(
    "from torch import tensor, nn\n",
    "from torch import nn\nimport torch\n",  # the import the fix leaves unused goes
).replace("tensor(grid)  #", "torch.from_numpy(grid)  #")


def probe(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command with the probe rules discoverable."""
    return subprocess.run(
        [sys.executable, "-c", _BOOT, str(PROBES), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode())
    return path


# -- dry run and --apply -----------------------------------------------------------------------
def test_dry_run_prints_a_diff_and_writes_nothing(tmp_path):
    script = write(tmp_path / "train.py", NUMPY_SCRIPT)
    before = script.stat().st_mtime_ns
    for flags in ([], ["--diff"]):
        result = run_torchlint(
            "fix", "--isolated", "--unsafe-fixes", *flags, "train.py", cwd=tmp_path
        )
        assert result.returncode == 1, result.stderr
        assert "--- a/train.py\n+++ b/train.py\n" in result.stdout
        assert "-x = tensor(grid)  # keep this comment\n" in result.stdout
        assert "+x = torch.from_numpy(grid)  # keep this comment\n" in result.stdout
        assert "+import torch\n" in result.stdout
        assert result.stdout.endswith("Would fix 1 finding in 1 file (1 not fixable).\n")
    assert script.read_text() == NUMPY_SCRIPT
    assert script.stat().st_mtime_ns == before


def test_summary_counts_what_would_be_fixed_held_back_and_left(tmp_path):
    write(tmp_path / "a.py", "slow()\nslow()\nrisky()\nshown()\n")
    write(tmp_path / "b.py", "slow()\nshown()\nshown()\n")
    result = probe("fix", "--isolated", "--select", "TL90", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.endswith(
        "Would fix 3 findings in 2 files (1 more with --unsafe-fixes, 3 not fixable).\n"
    )
    unsafe = probe("fix", "--isolated", "--select", "TL90", "--unsafe-fixes", ".", cwd=tmp_path)
    assert unsafe.stdout.endswith("Would fix 4 findings in 2 files (3 not fixable).\n")
    assert "+careful()\n" in unsafe.stdout and "+careful()" not in result.stdout


def test_apply_writes_fixes_and_reports_them_and_what_remains(tmp_path):
    script = write(tmp_path / "train.py", NUMPY_SCRIPT)
    result = run_torchlint(
        "fix", "--isolated", "--unsafe-fixes", "--apply", "train.py", cwd=tmp_path
    )
    assert script.read_text() == NUMPY_FIXED
    assert result.returncode == 1, result.stderr
    assert (
        "Fixed 1 finding in 1 file:\n  train.py:\n      1  TL003 tensor-from-numpy\n"
        in result.stdout
    )
    assert "train.py:6:9: TL004 [data-parallel]" in result.stdout  # what remains, at its new row
    assert result.stdout.endswith("Found 2 findings (1 fixed, 1 remaining).\n")
    check = run_torchlint(
        "check", "--isolated", "--output-format", "json", "train.py", cwd=tmp_path
    )
    assert '"code": "TL004"' in check.stdout and '"code": "TL003"' not in check.stdout


def test_apply_exits_zero_only_when_nothing_remains(tmp_path):
    script = write(tmp_path / "train.py", "slow(1)\nslow(2)\n")
    first = probe("fix", "--isolated", "--select", "TL901", "--apply", "train.py", cwd=tmp_path)
    assert (first.returncode, script.read_text()) == (0, "fast(1)\nfast(2)\n"), (
        first.stdout + first.stderr
    )
    assert first.stdout.endswith("Found 2 findings (2 fixed, 0 remaining).\n")
    again = probe("fix", "--isolated", "--select", "TL901", "train.py", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "Nothing to fix (1 file checked).\n")


def test_unsafe_fixes_only_with_the_flag_or_the_config(tmp_path):
    script = write(tmp_path / "train.py", NUMPY_SCRIPT)
    held = run_torchlint("fix", "--isolated", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == NUMPY_SCRIPT
    assert held.returncode == 1
    assert held.stdout.endswith(
        "Found 2 findings (0 fixed, 2 remaining).\nNo fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    )
    write(tmp_path / "pyproject.toml", "[tool.torchlint]\nunsafe-fixes = true\n")
    configured = run_torchlint("fix", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == NUMPY_FIXED, configured.stdout + configured.stderr


def test_display_only_fixes_are_never_applied(tmp_path):
    script = write(tmp_path / "train.py", "shown()\n")
    result = probe(
        "fix",
        "--isolated",
        "--select",
        "TL903",
        "--unsafe-fixes",
        "--apply",
        "train.py",
        cwd=tmp_path,
    )
    assert script.read_text() == "shown()\n"
    assert result.returncode == 1
    assert result.stdout.endswith("Found 1 finding (0 fixed, 1 remaining).\n")


def test_selection_flags_limit_what_is_fixed(tmp_path):
    script = write(tmp_path / "train.py", "slow()\nrisky()\n")
    probe(
        "fix",
        "--isolated",
        "--select",
        "TL90",
        "--ignore",
        "TL901",
        "--unsafe-fixes",
        "--apply",
        "train.py",
        cwd=tmp_path,
    )
    assert script.read_text() == "slow()\ncareful()\n"
    config = write(tmp_path / "lint.toml", "select = ['TL901']\n")
    probe("fix", "--config", str(config), "--apply", "--unsafe-fixes", "train.py", cwd=tmp_path)
    assert script.read_text() == "fast()\ncareful()\n"


def test_apply_and_diff_together_is_a_usage_error(tmp_path):
    write(tmp_path / "train.py", NUMPY_SCRIPT)
    result = run_torchlint("fix", "--apply", "--diff", "train.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "torchlint: error: --apply and --diff cannot be used together"


def test_a_needed_import_is_added_once_with_the_files_alias(tmp_path):
    plain = write(tmp_path / "plain.py", '"""Doc."""\nimport os\n\ngrad_off()\ngrad_off()\n')
    aliased = write(tmp_path / "aliased.py", "import torch as T\ngrad_off()\n")
    probe("fix", "--isolated", "--select", "TL906", "--apply", ".", cwd=tmp_path)
    assert (
        plain.read_text()
        == '"""Doc."""\nimport os\nimport torch\n\ntorch.no_grad()\ntorch.no_grad()\n'
    )
    assert aliased.read_text() == "import torch as T\nT.no_grad()\n"


# -- what a fix may not do -------------------------------------------------------------------------
def test_a_fix_that_does_not_parse_is_dropped_and_reported_with_its_rule(tmp_path):
    script = write(tmp_path / "train.py", "broken()\nslow()\n")
    result = probe("fix", "--isolated", "--select", "TL90", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == "broken()\nfast()\n"
    assert result.returncode == 2
    assert (
        "TL999" in result.stderr
        and "the fix for TL905 (probe-breaking) produced code that does not parse" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_fixes_that_never_converge_leave_the_file_unchanged(tmp_path):
    script = write(tmp_path / "train.py", "forever()\nslow()\n")
    result = probe("fix", "--isolated", "--select", "TL90", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == "forever()\nslow()\n"
    assert result.returncode == 2
    assert (
        f"fixes did not converge after {MAX_PASSES} passes; the file was not changed"
        in result.stderr
    )
    assert "Traceback" not in result.stderr


# -- writing -------------------------------------------------------------------------------------
def test_crlf_line_endings_are_kept_including_in_added_lines(tmp_path):
    script = write(tmp_path / "train.py", NUMPY_SCRIPT, newline="\r\n")
    run_torchlint("fix", "--isolated", "--unsafe-fixes", "--apply", "train.py", cwd=tmp_path)
    data = script.read_bytes()
    assert data == NUMPY_FIXED.replace("\n", "\r\n").encode()


def test_crlf_kept_when_a_fix_rewrites_several_lines(tmp_path):
    source = "from torch import nn\n\nnet = nn.Linear(4, 2)\nnet.eval()\nfor x in xs:\n    y = net(x)  # c\n"
    script = write(tmp_path / "evaluate.py", source, newline="\r\n")
    run_torchlint(
        "fix",
        "--isolated",
        "--unsafe-fixes",
        "--apply",
        "--select",
        "TL001",
        "evaluate.py",
        cwd=tmp_path,
    )
    data = script.read_bytes()
    assert b"with torch.no_grad():\r\n    for x in xs:\r\n        y = net(x)  # c\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")


def test_a_missing_final_newline_stays_missing(tmp_path):
    script = write(tmp_path / "train.py", "slow()\nslow()")
    probe("fix", "--isolated", "--select", "TL901", "--apply", "train.py", cwd=tmp_path)
    assert script.read_bytes() == b"fast()\nfast()"


def test_encoding_and_byte_order_mark_are_kept(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\n# café\nslow()\n".encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf# caf\xc3\xa9\nslow()\n")
    probe("fix", "--isolated", "--select", "TL901", "--apply", ".", cwd=tmp_path)
    assert latin.read_bytes() == "# -*- coding: latin-1 -*-\n# café\nfast()\n".encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbf# caf\xc3\xa9\nfast()\n"


def test_permission_bits_are_kept(tmp_path):
    script = write(tmp_path / "train.py", "slow()\n")
    script.chmod(0o751)
    probe("fix", "--isolated", "--select", "TL901", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == "fast()\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir() if p.name != ".torchlint_cache"] == [
        "train.py"
    ]  # no temporary file left


def test_a_symlink_stays_a_link_and_its_target_is_fixed(tmp_path):
    target = write(tmp_path / "real.py", "slow()\n")
    link = tmp_path / "link.py"
    link.symlink_to(target.name)
    probe("fix", "--isolated", "--select", "TL901", "--apply", "link.py", cwd=tmp_path)
    assert link.is_symlink() and target.read_text() == "fast()\n"


def test_a_read_only_file_is_reported_not_overwritten(tmp_path):
    script = write(tmp_path / "train.py", "slow()\n")
    script.chmod(0o444)
    other = write(tmp_path / "other.py", "slow()\n")
    result = probe("fix", "--isolated", "--select", "TL901", "--apply", ".", cwd=tmp_path)
    assert script.read_text() == "slow()\n" and other.read_text() == "fast()\n"
    assert result.returncode == 2
    assert (
        "torchlint: error: train.py:1:1: TL998 the file is read-only; not written" in result.stderr
    )
    assert "Fixed 1 finding in 1 file:\n  other.py:" in result.stdout


def test_a_file_changed_on_disk_after_it_was_read_is_not_overwritten(tmp_path):
    path = write(tmp_path / "train.py", "slow()\n")
    original = snapshot(path, tmp_path, notebook=False)
    path.write_text("slow()  # edited meanwhile\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_atomic(original, b"fast()\n")
    assert path.read_text() == "slow()  # edited meanwhile\n"


def test_a_file_that_does_not_parse_is_left_alone(tmp_path):
    script = write(tmp_path / "train.py", "slow(\n")
    result = probe("fix", "--isolated", "--select", "TL901", "--apply", "train.py", cwd=tmp_path)
    assert script.read_text() == "slow(\n"
    assert result.returncode == 1 and "TL000" in result.stdout


# -- the fix loop itself -----------------------------------------------------------------------------
def _finding(
    row: int, start: int, end: int, content: str, applicability=Applicability.SAFE, code="TL901"
) -> Diagnostic:
    edit = Edit(Position(row, start), Position(row, end), content)
    at = Position(row, start)
    return Diagnostic(code, "probe", "probe", "x.py", at, at, Fix("probe", applicability, (edit,)))


def test_overlapping_fixes_wait_for_the_next_pass():
    def lint(text: str) -> list[Diagnostic]:
        found = []
        if "aaaa" in text:  # replace the whole name
            found.append(_finding(1, 1, 5, "bbbb"))
        if text.startswith("aa"):  # replace its first half: overlaps the fix above
            found.append(_finding(1, 1, 3, "cc"))
        return found

    outcome = fix_to_fixpoint("aaaa = 1\n", lint, unsafe=False)
    assert outcome.text == "bbbb = 1\n"
    assert [d.fix.edits[0].content for d in outcome.applied] == ["bbbb"]
    assert outcome.remaining == []


def test_identical_edits_of_different_fixes_are_applied_once():
    shared = Edit(Position(1, 1), Position(1, 1), "import torch\n")
    fixes = [
        Fix("a", Applicability.SAFE, (shared, Edit(Position(1, 1), Position(1, 2), "y"))),
        Fix("b", Applicability.SAFE, (shared, Edit(Position(1, 5), Position(1, 6), "2"))),
    ]
    assert apply_fixes("x = 1\n", fixes) == ("import torch\ny = 2\n", fixes)


def test_a_display_only_fix_with_edits_is_not_applied():
    outcome = fix_to_fixpoint(
        "x = 1\n", lambda text: [_finding(1, 1, 2, "y", Applicability.DISPLAY_ONLY)], unsafe=True
    )
    assert outcome.text == "x = 1\n" and len(outcome.remaining) == 1


def test_non_convergence_raises():
    with pytest.raises(FixError, match=f"did not converge after {MAX_PASSES} passes"):
        fix_to_fixpoint("x = 1\n", lambda text: [_finding(1, 1, 1, "x")], unsafe=False)


def _star(name: str, code: str):
    """A fix that makes parameter `name` of `def f(a, b)` a star parameter."""

    def lint(text: str) -> list[Diagnostic]:
        at = text.find(f"{name},") if f"{name}," in text else text.find(f"{name})")
        if at < 0 or text[at - 1] == "*":
            return []
        return [_finding(1, at + 1, at + 2, f"*{name}", code=code)]

    return lint


def test_a_fix_that_breaks_the_parse_only_next_to_another_waits_then_is_dropped():
    first, second = _star("a", "TL901"), _star("b", "TL902")
    outcome = fix_to_fixpoint(
        "def f(a, b): pass\n", lambda text: first(text) + second(text), unsafe=False
    )
    # Either star alone parses, both together do not: the first goes in, the second waits for
    # the next pass, where on its own it no longer parses and is dropped.
    assert outcome.text == "def f(*a, b): pass\n"
    assert [d.code for d in outcome.applied] == ["TL901"]
    assert [d.code for d in outcome.broken] == ["TL902"]


def test_fixes_judged_by_the_parse_of_their_combined_result():
    def lint(text: str) -> list[Diagnostic]:
        return (
            [_finding(1, 6, 7, "(a"), _finding(1, 9, 10, "c)", code="TL902")]
            if text == "x = [a, c]\n"
            else []
        )

    # Each alone would leave a bracket open; together they parse, so the pass stands.
    outcome = fix_to_fixpoint("x = [a, c]\n", lint, unsafe=False)
    assert outcome.text == "x = [(a, c)]\n"
    assert outcome.broken == []


# -- idempotence on every fixture and every rule's invalid examples ---------------------------------
FIXTURE_SCRIPTS = sorted(FIXTURES.glob("*/before.py"))


@pytest.mark.parametrize("before", FIXTURE_SCRIPTS, ids=[p.parent.name for p in FIXTURE_SCRIPTS])
def test_fixing_a_fixture_twice_changes_nothing_the_second_time_and_it_still_runs(before, tmp_path):
    folder = tmp_path / before.parent.name
    shutil.copytree(before.parent, folder)
    script = folder / "before.py"
    every_rule = ["--isolated", "--select", "ALL"]
    first = run_torchlint("fix", *every_rule, "--unsafe-fixes", "--apply", "before.py", cwd=folder)
    assert first.returncode in (0, 1), first.stdout + first.stderr
    fixed = script.read_bytes()
    again = run_torchlint("fix", *every_rule, "--unsafe-fixes", "--apply", "before.py", cwd=folder)
    assert script.read_bytes() == fixed
    assert "Fixed" not in again.stdout
    remaining = json.loads(
        run_torchlint(
            "check", *every_rule, "--output-format", "json", "before.py", cwd=folder
        ).stdout
    )
    fixable = [
        d
        for d in remaining
        if d["fix"] and d["fix"]["edits"] and d["fix"]["applicability"] != "display-only"
    ]
    assert fixable == []
    if fixed == before.read_bytes():
        return  # nothing was fixed: running the fixture itself is `torchlint verify`'s test
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    ran = subprocess.run(
        [sys.executable, "before.py", "--scale", "1"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]


def _invalid_examples():
    for rule in all_rules():
        examples = [e if isinstance(e, Invalid) else Invalid(e) for e in rule.invalid]
        if any(e.fixed is not None for e in examples):
            yield pytest.param(rule, examples, id=rule.code)


@pytest.mark.parametrize(("rule", "examples"), list(_invalid_examples()))
def test_fixing_a_rules_invalid_examples_twice_changes_nothing(rule, examples, tmp_path):
    versions = sorted({e.target_torch_version or "" for e in examples})
    for version in versions:
        folder = tmp_path / (version or "default")
        folder.mkdir()
        chosen = [
            (i, e) for i, e in enumerate(examples) if (e.target_torch_version or "") == version
        ]
        for i, example in chosen:
            (folder / f"example_{i}.py").write_text(example.code)
        flags = ["--isolated", "--preview", "--select", rule.code, "--unsafe-fixes", "--apply", "."]
        flags += ["--target-torch-version", version] if version else []
        run_torchlint("fix", *flags, cwd=folder)
        for i, example in chosen:
            if example.fixed is not None:
                assert (folder / f"example_{i}.py").read_text() == example.fixed, (
                    f"{rule.code} example {i}"
                )
        fixed = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        again = run_torchlint("fix", *flags, cwd=folder)
        assert "Fixed" not in again.stdout, again.stdout
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == fixed
