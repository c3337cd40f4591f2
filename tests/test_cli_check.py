"""`torchlint check` flags, exit codes and summary, through the installed command."""

from __future__ import annotations

import json
import re
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import ROOT, run_torchlint

from torchlint.registry import all_rules
from torchlint.rule import Invalid

# Any registered rule but data-parallel, for selections that leave TL004 out.
OTHER = next(rule.code for rule in all_rules() if rule.code != "TL004")
DP = "import torch\nmodel = torch.nn.DataParallel(model)\n"  # one TL004 finding on row 2
CLEAN = "import torch\nx = torch.ones(3)\n"
SUMMARY = re.compile(r"^Found (\d+) findings? in (\d+) files?\.$")
FIXABLE = re.compile(r"^\[\*\] (\d+) fixable with `torchlint check --fix --unsafe-fixes`\.$")


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_torchlint("check", *args, cwd=cwd)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def _codes(cwd: Path, *args: str) -> list[tuple[str, str]]:
    """(file, code) of every finding, from the JSON output."""
    result = _check(cwd, "--output-format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return [(item["filename"], item["code"]) for item in json.loads(result.stdout)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Three TL004 findings in two files, and a clean file."""
    (tmp_path / "a.py").write_text(DP + "other = torch.nn.DataParallel(other)\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(DP)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


# -- exit codes and the summary ----------------------------------------------------------


def test_findings_exit_1_with_the_summary_line(project):
    result = _check(project, "--isolated")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "Found 3 findings in 2 files."
    assert result.stderr == ""


def test_clean_run_exits_0_and_says_so(tmp_path):
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "also.py").write_text(CLEAN)
    result = _check(tmp_path, "--isolated")
    assert (result.returncode, result.stdout) == (0, "All checks passed (2 files checked).\n")


def test_summary_uses_singular_forms(tmp_path):
    (tmp_path / "a.py").write_text(DP)
    assert _check(tmp_path, "--isolated", "--output-format", "concise").stdout.splitlines()[-1] == (
        "Found 1 finding in 1 file."
    )


def test_summary_counts_fixable_findings(tmp_path):
    examples = [
        (rule.code, ex.code)
        for rule in all_rules()
        for ex in rule.invalid
        if isinstance(ex, Invalid) and ex.fixed and ex.target_torch_version is None
    ]
    if not examples:
        pytest.skip("no registered rule has an example with a fix")
    code, source = examples[0]
    (tmp_path / "t.py").write_text(source)
    (tmp_path / "dp.py").write_text(DP)
    result = _check(
        tmp_path,
        "--isolated",
        "--unsafe-fixes",
        "--select",
        f"{code},TL004",
        "--output-format",
        "concise",
    )
    found, files = map(int, SUMMARY.match(result.stdout.splitlines()[-2]).groups())
    fixable = int(FIXABLE.match(result.stdout.splitlines()[-1]).group(1))
    rows = [line for line in result.stdout.splitlines()[:-2] if line.startswith("t.py:")]
    assert (files, found) == (2, len(rows) + 1)
    assert fixable == sum("[*]" in line for line in rows) >= 1


def test_usage_errors_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(DP)
    for args in (
        ["--output-format", "xml"],
        ["--no-such-flag"],
        ["--select", "TL9"],
        ["--ignore", "no-such-rule"],
    ):
        result = _check(tmp_path, *args)
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert result.stderr.strip(), args


def test_unknown_selector_is_named_in_one_line(tmp_path):
    (tmp_path / "a.py").write_text(DP)
    result = _check(tmp_path, "--extend-select", "not-a-rule")
    assert result.returncode == 2
    assert (
        result.stderr == "torchlint: error: --extend-select: unknown rule selector 'not-a-rule'\n"
    )


def test_exit_zero_keeps_the_findings(project):
    result = _check(project, "--isolated", "--exit-zero", "--output-format", "concise")
    assert result.returncode == 0
    assert sum(" TL004 " in line for line in result.stdout.splitlines()) == 3


def test_quiet_prints_findings_without_the_summary(project):
    result = _check(project, "--isolated", "-q", "--output-format", "concise")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all(" TL004 " in line for line in lines)
    clean = project / "clean.py"
    assert _check(project, "--isolated", "--quiet", str(clean)).stdout == ""


def test_version(tmp_path):
    result = run_torchlint("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("torchlint")
    assert version("torchlint") in result.stdout


def test_paths_default_to_the_current_directory(project):
    assert sorted(_codes(project, "--isolated")) == [
        ("a.py", "TL004"),
        ("a.py", "TL004"),
        ("pkg/b.py", "TL004"),
    ]
    assert _codes(project, "--isolated", "pkg") == [("pkg/b.py", "TL004")]


# -- -o / --statistics -------------------------------------------------------------------


def test_output_file_receives_the_report(project):
    out = project / "report.json"
    result = _check(project, "--isolated", "--output-format", "json", "-o", str(out))
    assert (result.returncode, result.stdout) == (1, "")
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 3
    long_form = project / "report.txt"
    _check(project, "--isolated", "--output-file", str(long_form))
    assert long_form.read_text(encoding="utf-8").splitlines()[-1] == "Found 3 findings in 2 files."


def test_output_file_that_cannot_be_written_exits_2(project):
    result = _check(project, "--isolated", "-o", str(project / "missing-dir" / "out.txt"))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "out.txt" in result.stderr


def test_statistics_counts_findings_per_rule(project):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    result = _check(project, "--isolated", "--statistics")
    assert result.returncode == 1
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[:3] == [
        ["3", "TL004", "[", "]", "data-parallel"],
        ["1", "TL000", "[", "]", "syntax-error"],
        ["4", "total"],
    ]


# -- rule selection ----------------------------------------------------------------------


@pytest.mark.parametrize("selector", ["TL004", "TL0", "TL", "data-parallel", "tl004", "ALL"])
def test_select_takes_codes_prefixes_and_names(project, selector):
    assert len(_codes(project, "--isolated", "--select", selector)) == 3


@pytest.mark.parametrize("selector", ["TL004", "TL0", "data-parallel"])
def test_ignore_takes_codes_prefixes_and_names(project, selector):
    assert _codes(project, "--isolated", "--ignore", selector) == []


def test_select_of_another_rule_leaves_data_parallel_out(project):
    assert _codes(project, "--isolated", "--select", OTHER) == []


def test_extend_select_adds_to_the_selection(project):
    assert _codes(project, "--isolated", "--select", OTHER, "--extend-select", "TL004") != []
    assert _codes(project, "--isolated", "--select", f"{OTHER},TL004", "--ignore", "TL004") == []


def test_comma_separated_and_repeated_selectors(project):
    assert len(_codes(project, "--isolated", "--select", f"{OTHER},TL004")) == 3
    assert len(_codes(project, "--isolated", "--select", OTHER, "--select", "data-parallel")) == 3


# -- configuration flags -----------------------------------------------------------------


def test_config_flag_uses_that_file(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("cfg") / "custom.toml"
    elsewhere.write_text('ignore = ["TL004"]\n')
    assert _codes(project, "--config", str(elsewhere)) == []
    elsewhere.write_text('[tool.torchlint]\nignore = ["data-parallel"]\n')
    assert _codes(project, "--config", str(elsewhere)) == []


def test_config_flag_with_a_missing_file_exits_2(project):
    result = _check(project, "--config", "nope.toml")
    assert result.returncode == 2
    assert result.stderr == "torchlint: error: nope.toml: config file not found\n"


def test_isolated_ignores_the_project_config(project):
    (project / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL004"]\n')
    assert _codes(project) == []
    assert len(_codes(project, "--isolated")) == 3


def test_isolated_ignores_even_a_broken_config(project):
    (project / "torchlint.toml").write_text("this is = = not toml\n")
    assert _check(project).returncode == 2
    assert _check(project, "--isolated").returncode == 1


@pytest.mark.parametrize("value", ["2.1", "1.13", "2.13.0"])
def test_target_torch_version_accepts_versions(project, value):
    assert len(_codes(project, "--isolated", "--target-torch-version", value)) == 3


@pytest.mark.parametrize("value", ["two", "v2"])
def test_target_torch_version_rejects_non_versions(project, value):
    result = _check(project, "--isolated", "--target-torch-version", value)
    assert result.returncode == 2
    assert result.stderr.startswith("torchlint: error: --target-torch-version: ")
    assert len(result.stderr.splitlines()) == 1


def test_clean_removes_the_projects_result_cache(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
    )
    run_torchlint("check", "a.py", cwd=tmp_path)
    assert (tmp_path / ".torchlint_cache").is_dir()
    result = run_torchlint("clean", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / ".torchlint_cache").exists()


def test_every_fixtures_fixed_version_is_clean_under_the_default_rules():
    after = sorted(str(p) for p in (ROOT / "fixtures").glob("*/after.py"))
    assert len(after) >= 15
    result = run_torchlint("check", "--no-cache", "--output-format", "concise", *after, cwd=ROOT)
    assert result.returncode == 0, result.stdout
