"""Ruff habits through the installed command: fix flags on `check`, honest fix counts,
statistics, stdin, -V, --show-files, colour, context, --add-noqa, unused-noqa, -o links."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from conftest import run_torchlint

# TL003 (unsafe fix) twice and TL004 (display-only) once.
SCRIPT = """import numpy as np
import torch
import torch.nn as nn

model = nn.DataParallel(nn.Linear(3, 3))
arr = np.load(path)
a = torch.tensor(arr)
b = torch.tensor(arr)
"""
FIXABLE = re.compile(r"^\[\*\] (\d+) fixable with `torchlint check --fix( --unsafe-fixes)?`")
FIXED = re.compile(r"^Found \d+ findings? \((\d+) fixed, (\d+) remaining\)\.$", re.MULTILINE)


def _project(tmp_path: Path, text: str = SCRIPT) -> Path:
    (tmp_path / "train.py").write_text(text)
    return tmp_path


def test_unsafe_fixes_are_hidden_not_counted_as_fixable(tmp_path):
    result = run_torchlint("check", "--isolated", "train.py", cwd=_project(tmp_path))
    assert result.returncode == 1
    assert "[*]" not in result.stdout
    assert result.stdout.endswith(
        "Found 3 findings in 1 file.\nNo fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option).\n"
    )


@pytest.mark.parametrize("unsafe", [[], ["--unsafe-fixes"]])
def test_the_fixable_count_is_what_check_fix_then_fixes(tmp_path, unsafe):
    _project(tmp_path)
    before = run_torchlint(
        "check", "--isolated", *unsafe, "--output-format", "concise", "train.py", cwd=tmp_path
    )
    promised = [
        int(m.group(1)) for line in before.stdout.splitlines() if (m := FIXABLE.match(line))
    ]
    marked = before.stdout.count(" [*] ")
    fixed = run_torchlint("check", "--isolated", *unsafe, "--fix", "train.py", cwd=tmp_path)
    done, remaining = map(int, FIXED.search(fixed.stdout).groups())
    assert done == marked == (promised[0] if promised else 0) == (2 if unsafe else 0)
    assert remaining == 3 - done
    ast.parse((tmp_path / "train.py").read_text())


def test_check_diff_writes_nothing_and_fix_only_reports_nothing_left(tmp_path):
    _project(tmp_path)
    diff = run_torchlint(
        "check", "--isolated", "--unsafe-fixes", "--diff", "train.py", cwd=tmp_path
    )
    assert diff.returncode == 1 and "+a = torch.from_numpy(arr)" in diff.stdout
    assert (tmp_path / "train.py").read_text() == SCRIPT
    only = run_torchlint(
        "check", "--isolated", "--unsafe-fixes", "--fix-only", "train.py", cwd=tmp_path
    )
    assert (only.returncode, only.stdout) == (0, "Fixed 2 findings.\n")
    (tmp_path / "train.py").write_text(SCRIPT)
    strict = run_torchlint(
        "check",
        "--isolated",
        "--unsafe-fixes",
        "--fix-only",
        "--exit-non-zero-on-fix",
        "train.py",
        cwd=tmp_path,
    )
    assert strict.returncode == 1


def test_show_fixes_lists_what_was_fixed(tmp_path):
    result = run_torchlint(
        "check",
        "--isolated",
        "--unsafe-fixes",
        "--fix",
        "--show-fixes",
        "train.py",
        cwd=_project(tmp_path),
    )
    assert (
        "Fixed 2 findings in 1 file:\n  train.py:\n      2  TL003 tensor-from-numpy\n"
        in result.stdout
    )


def test_fix_takes_every_check_flag(tmp_path):
    _project(tmp_path)
    flags = [
        "-q",
        "--output-format",
        "json",
        "--exit-zero",
        "-j",
        "1",
        "--no-cache",
        "--unsafe-fixes",
        "--apply",
    ]
    result = run_torchlint("fix", "--isolated", *flags, "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [d["code"] for d in json.loads(result.stdout)] == ["TL004"]
    assert not (tmp_path / ".torchlint_cache").exists()


def test_statistics_have_a_total_a_legend_and_json(tmp_path):
    _project(tmp_path)
    text = run_torchlint(
        "check", "--isolated", "--unsafe-fixes", "--statistics", "train.py", cwd=tmp_path
    ).stdout.splitlines()
    assert text[:3] == [
        "    2  TL003  [*] tensor-from-numpy",
        "    1  TL004  [ ] data-parallel",
        "    3  total",
    ]
    assert text[-1].startswith("[*] ")
    rows = json.loads(
        run_torchlint(
            "check",
            "--isolated",
            "--statistics",
            "--output-format",
            "json",
            "train.py",
            cwd=tmp_path,
        ).stdout
    )
    assert rows == [
        {"code": "TL003", "name": "tensor-from-numpy", "count": 2, "fixable": 0},
        {"code": "TL004", "name": "data-parallel", "count": 1, "fixable": 0},
    ]


def test_stdin_uses_the_filename_for_per_file_ignores_and_fix_prints_the_fixed_text(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nper-file-ignores = {"scripts/*" = ["TL004"]}\n'
    )
    checked = run_torchlint(
        "check",
        "-",
        "--stdin-filename",
        "scripts/t.py",
        "--output-format",
        "concise",
        cwd=tmp_path,
        input=SCRIPT,
    )
    assert checked.returncode == 1
    assert {
        line.split()[1] for line in checked.stdout.splitlines() if line.startswith("scripts/t.py:")
    } == {"TL003"}
    fixed = run_torchlint(
        "fix",
        "-",
        "--unsafe-fixes",
        "--apply",
        "--stdin-filename",
        "t.py",
        cwd=tmp_path,
        input=SCRIPT,
    )
    assert fixed.stdout == SCRIPT.replace("torch.tensor(arr)", "torch.from_numpy(arr)")
    assert "1 remaining finding" in fixed.stderr


def test_version_alias_and_show_files(tmp_path):
    assert run_torchlint("-V").stdout == run_torchlint("--version").stdout != ""
    _project(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("x")
    result = run_torchlint("check", "--show-files", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "sub/b.py\ntrain.py\n")


@pytest.mark.parametrize(
    ("flags", "env", "coloured"),
    [
        ([], {}, False),
        (["--color", "always"], {}, True),
        ([], {"FORCE_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_follows_the_flag_and_the_environment(tmp_path, monkeypatch, flags, env, coloured):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = run_torchlint("check", "--isolated", *flags, "train.py", cwd=_project(tmp_path))
    assert ("\x1b[" in result.stdout) is coloured


def test_full_output_shows_two_lines_of_context_with_a_gutter(tmp_path):
    lines = run_torchlint(
        "check", "--isolated", "--select", "TL004", "train.py", cwd=_project(tmp_path)
    ).stdout.splitlines()
    assert lines[1:7] == [
        "3 | import torch.nn as nn",
        "4 |",
        "5 | model = nn.DataParallel(nn.Linear(3, 3))",
        "  |         " + "^" * len("nn.DataParallel(nn.Linear(3, 3))"),
        "6 | arr = np.load(path)",
        "7 | a = torch.tensor(arr)",
    ]


def test_add_noqa_is_idempotent_extends_comments_and_keeps_code_valid(tmp_path):
    text = (
        SCRIPT
        + "c = torch.tensor(arr)  # noqa: E501\nd = nn.DataParallel(\n    m)\ns = f'''{nn.DataParallel(m)}\n'''\n"
    )
    _project(tmp_path, text)
    first = run_torchlint("check", "--isolated", "--add-noqa", "train.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout
        == "Added 5 noqa comments to 1 file (1 finding on rows that cannot take a comment).\n"
    )
    new = (tmp_path / "train.py").read_text()
    ast.parse(new)
    assert "c = torch.tensor(arr)  # noqa: E501, TL003\n" in new
    assert "d = nn.DataParallel(  # noqa: TL004\n" in new
    again = run_torchlint("check", "--isolated", "--add-noqa", "train.py", cwd=tmp_path)
    assert (tmp_path / "train.py").read_text() == new
    assert again.stdout.startswith("Added 0 noqa comments")
    remaining = run_torchlint(
        "check", "--isolated", "--output-format", "json", "train.py", cwd=tmp_path
    )
    assert [d["location"]["row"] for d in json.loads(remaining.stdout)] == [
        12
    ]  # the one inside the f-string


def test_unused_noqa_is_opt_in_reports_enabled_rules_only_and_fixes_safely(tmp_path):
    text = "import torch\nm = torch.nn.DataParallel(m)  # noqa: TL004\nx = 1  # noqa: TL004, E501\ny = 2  # noqa: TL003\nz = 3  # noqa: TL107\n"
    _project(tmp_path, text)
    assert run_torchlint("check", "--isolated", "train.py", cwd=tmp_path).returncode == 0
    found = run_torchlint(
        "check",
        "--isolated",
        "--extend-select",
        "TL100",
        "--ignore",
        "TL107",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    assert [(d["code"], d["location"]["row"]) for d in json.loads(found.stdout)] == [
        ("TL100", 3),
        ("TL100", 4),
    ]
    fixed = run_torchlint(
        "check",
        "--isolated",
        "--extend-select",
        "TL100",
        "--ignore",
        "TL107",
        "--fix",
        "train.py",
        cwd=tmp_path,
    )
    assert fixed.returncode == 0, fixed.stdout
    assert (tmp_path / "train.py").read_text() == text.replace(
        "# noqa: TL004, E501", "# noqa: E501"
    ).replace("y = 2  # noqa: TL003", "y = 2")


def test_output_file_is_never_written_through_a_link_out_of_the_project(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep")
    _project(project)
    (project / "report.sarif").symlink_to(victim)
    result = run_torchlint("check", "--isolated", "-o", "report.sarif", "train.py", cwd=project)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "symbolic link" in result.stderr
    assert victim.read_text() == "keep"
    inside = project / "real.txt"
    inside.write_text("")
    (project / "ok.txt").symlink_to(inside)
    assert (
        run_torchlint("check", "--isolated", "-o", "ok.txt", "train.py", cwd=project).returncode
        == 1
    )
    assert "Found 3 findings" in inside.read_text()


def test_every_rules_messages_stay_under_100_characters():
    from torchlint.config import Settings, parse_version
    from torchlint.engine.lint import lint_text
    from torchlint.registry import all_rules
    from torchlint.rule import Invalid

    too_long = set()
    for rule in all_rules():
        for example in rule.invalid:
            example = example if isinstance(example, Invalid) else Invalid(example)
            version = (
                parse_version(example.target_torch_version, "example")
                if example.target_torch_version
                else None
            )
            for d in lint_text(
                "example.py", example.code, [rule], Settings(target_torch_version=version)
            ):
                if len(d.message) >= 100:
                    too_long.add(d.code)
    assert sorted(too_long) == []


def test_fix_accepts_every_flag_check_does():
    def flags(command: str) -> set[str]:
        return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", run_torchlint(command, "--help").stdout))

    assert flags("check") - flags("fix") == set()
