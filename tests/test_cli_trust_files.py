"""Trust: the crafted inputs of the attack review, each through the installed command.

Nothing outside the project is read, shown or written; one bad input never stops the run;
every refusal is one line, and no traceback reaches the user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_torchlint

SLOW = "import torch\nfrom torch import nn\nmodel = nn.DataParallel(model)\n"
FIXABLE = "import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n"  # TL106, a safe fix


def _no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr


def _json(result: subprocess.CompletedProcess) -> dict[str, list[str]]:
    _no_traceback(result)
    table: dict[str, list[str]] = {}
    for finding in json.loads(result.stdout or "[]"):
        table.setdefault(Path(finding["filename"]).name, []).append(finding["code"])
    return table


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """`proj/` with a git-less pyproject, beside an `outside/` folder holding a victim file."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "outside").mkdir()
    return proj


# -- 1. nothing outside the project is rewritten or shown ------------------------------------
def test_fix_never_rewrites_a_symlink_target_outside_the_project(project):
    victim = project.parent / "outside" / "victim.py"
    victim.write_text(FIXABLE)
    os.symlink("../outside/victim.py", project / "x.py")
    (project / "own.py").write_text(FIXABLE)
    for args in (
        ("fix", ".", "--apply", "--unsafe-fixes"),
        ("fix", "x.py", "--apply", "--unsafe-fixes"),
    ):
        result = run_torchlint(*args, "--select", "ALL", cwd=project)
        _no_traceback(result)
        assert victim.read_text() == FIXABLE
        assert "outside the project" in result.stdout + result.stderr
    assert (project / "own.py").read_text() != FIXABLE  # the project's own file was fixed


def test_check_never_prints_the_source_of_a_file_outside_the_project(project):
    secret = project.parent / "outside" / "secret.py"
    secret.write_text("API_TOKEN = 'hunter2'\n" + SLOW)
    os.symlink("../outside/secret.py", project / "leak.py")
    result = run_torchlint("check", ".", "--no-cache", cwd=project)
    _no_traceback(result)
    assert "hunter2" not in result.stdout + result.stderr
    assert "outside the project" in result.stdout


def test_cache_is_never_written_through_planted_symlinks(project):
    (project / "a.py").write_text(SLOW)
    elsewhere = project.parent / "outside"
    cache = project / ".torchlint_cache"
    cache.mkdir()
    target = elsewhere / "config" / "ignore"
    os.symlink(target, cache / ".gitignore")  # dangling: writing it would create the target
    os.symlink(elsewhere / "tag", cache / "CACHEDIR.TAG")
    for prefix in "0123456789abcdef":
        for suffix in "0123456789abcdef":
            os.symlink(elsewhere, cache / f"{prefix}{suffix}")
    first = run_torchlint("check", ".", "--output-format", "concise", cwd=project)
    second = run_torchlint("check", ".", "--output-format", "concise", cwd=project)
    assert _json_codes(first) == _json_codes(second) == ["TL004"]
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert not target.exists()


def test_a_symlinked_cache_folder_is_not_used(project):
    (project / "a.py").write_text(SLOW)
    os.symlink(project.parent / "outside", project / ".torchlint_cache")
    result = run_torchlint("check", ".", cwd=project)
    assert "TL004" in result.stdout
    assert list((project.parent / "outside").iterdir()) == []


def _json_codes(result: subprocess.CompletedProcess) -> list[str]:
    """The codes of a concise run's findings."""
    _no_traceback(result)
    return [line.split()[1] for line in result.stdout.splitlines() if ": TL" in line]


# -- 2. fix has the guards check has ------------------------------------------------------------
def test_fix_refuses_fifo_device_and_huge_files_with_one_line_each(project):
    (project / "good.py").write_text(FIXABLE)
    os.mkfifo(project / "pipe.py")
    (project / "huge.py").write_bytes(b"")
    os.truncate(project / "huge.py", 50 * 2**20)
    os.symlink("/dev/zero", project / "zero.py")
    result = run_torchlint("fix", ".", "--select", "ALL", cwd=project, timeout=60)
    _no_traceback(result)
    lines = (result.stdout + result.stderr).splitlines()
    for name, why in (
        ("pipe.py", "not a regular file"),
        ("huge.py", "too large"),
        ("zero.py", "outside the project"),
    ):
        assert sum(name in line and "TL998" in line and why in line for line in lines) == 1, (
            result.stdout + result.stderr
        )
    assert "good.py" in result.stdout  # its diff is still shown
    assert (
        result.returncode == 1
    )  # unreadable files are findings, as in check; 2 is for usage and internal errors


def test_fix_survives_a_symlink_loop(project):
    (project / "good.py").write_text(FIXABLE)
    os.symlink("loop_b.py", project / "loop_a.py")
    os.symlink("loop_a.py", project / "loop_b.py")
    result = run_torchlint("fix", ".", "--apply", "--select", "ALL", cwd=project, timeout=60)
    _no_traceback(result)
    assert "loop_a.py" in result.stdout and "loop_b.py" in result.stdout
    assert (project / "good.py").read_text() != FIXABLE


def _without_privileges() -> list[str]:
    """A command prefix that drops root's power to read every directory whatever its mode."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]


def test_unreadable_directory_is_reported_not_passed_over(tmp_path):
    (tmp_path / "good.py").write_text(SLOW)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(SLOW)
    locked.chmod(0)
    try:
        command = [
            *_without_privileges(),
            str(Path(sys.executable).parent / "torchlint"),
            "check",
            ".",
            "--no-cache",
        ]
        result = subprocess.run(
            [*command, "--output-format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        table = _json(result)
        assert table["good.py"] == ["TL004"]
        assert table["locked"] == ["TL998"]
        assert result.returncode == 1
        human = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert "All checks passed" not in human.stdout and "cannot read directory" in human.stdout
    finally:
        locked.chmod(0o700)


# -- 3. one input never kills the run -----------------------------------------------------------
def test_notebook_nested_100k_deep_is_one_finding_in_a_pool(tmp_path):
    (tmp_path / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    for i in range(9):
        (tmp_path / f"m{i}.py").write_text(SLOW)
    result = run_torchlint(
        "check", ".", "--no-cache", "--jobs", "2", "--output-format", "json", cwd=tmp_path
    )
    table = _json(result)
    assert table["deep.ipynb"] == ["TL000"]
    assert all(table[f"m{i}.py"] == ["TL004"] for i in range(9))
    assert result.returncode == 1


@pytest.mark.parametrize("line", ["build\\", "!", "\\"])
def test_invalid_gitignore_line_is_skipped_with_a_warning(tmp_path, line):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text(f"ignored.py\n{line}\n")
    (tmp_path / "sub" / "ignored.py").write_text(SLOW)
    (tmp_path / "sub" / "kept.py").write_text(FIXABLE)
    warning = f"torchlint: warning: sub/.gitignore: skipped invalid pattern {line!r}\n"
    check = run_torchlint("check", ".", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert check.stderr == warning
    assert [row.split(":")[0] for row in check.stdout.splitlines() if ": TL" in row] == [
        "sub/kept.py"
    ]
    fix = run_torchlint("fix", ".", cwd=tmp_path)
    assert fix.stderr == warning
    assert "+++ b/sub/kept.py" in fix.stdout and "ignored.py" not in fix.stdout


# -- 4. small files never cost minutes ----------------------------------------------------------
DEEP = {
    "lambdas.py": "f = " + "lambda: " * 10_000 + "0\n",
    "sum.py": "x = " + " + ".join(["1"] * 10_000) + "\n",
    "attributes.py": "x = a" + ".b" * 8_000 + "\n",
    "brackets.py": "x = " + "(" * 3_000 + ")" * 3_000 + "\n",
}


@pytest.mark.parametrize("name", DEEP)
def test_nesting_python_cannot_compile_is_refused_at_once(tmp_path, name):
    """A hang guard, not a timing: libcst took minutes and gigabytes on each of these."""
    (tmp_path / name).write_text(
        "import torch\nfor x in loader:\n    loss.backward()\n    opt.step()\n" + DEEP[name] + SLOW
    )
    result = run_torchlint(
        "check", name, "--no-cache", "--output-format", "json", cwd=tmp_path, timeout=60
    )
    assert _json(result) == {name: ["TL000"]}


def test_file_with_more_tokens_than_the_budget_is_refused(tmp_path):
    rows = "".join(f"    {i}, {i * 7 % 13}, 'x',\n" for i in range(60_000))
    (tmp_path / "data.py").write_text(
        SLOW + "for x in loader:\n    loss.backward()\n    opt.step()\nROWS = [\n" + rows + "]\n"
    )
    result = run_torchlint(
        "check", "data.py", "--no-cache", "--output-format", "json", cwd=tmp_path, timeout=60
    )
    findings = json.loads(result.stdout)
    assert [f["code"] for f in findings] == ["TL998"]
    assert "tokens" in findings[0]["message"]


# -- 5. config: one line, exit 2 ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("pyproject", "says"),
    [
        ("x = " + "[" * 5_000 + "]" * 5_000 + "\n[tool.torchlint]\n", "nested too deeply"),
        ('[tool.torchlint]\nexclude = ["!"]\n', "invalid pattern '!'"),
        ('[tool.torchlint]\nextend-exclude = ["\\\\"]\n', "invalid pattern"),
        ("project = 5\n[tool.torchlint]\n", "[project] must be a table"),
        ('[project]\ndependencies = "torch"\n[tool.torchlint]\n', "dependencies must be a list"),
        ("[tool.torchlint]\nselect = 5\n", "expected a list of strings"),
        ("[tool.torchlint]\nunknown-key = 1\n", "unknown key 'unknown-key'"),
        ("[tool.torchlint]\ntarget-torch-version = [2]\n", "expected a version"),
        ("[tool.torchlint\n", "invalid TOML"),
    ],
)
@pytest.mark.parametrize("command", ["check", "fix"])
def test_bad_config_is_one_line_and_exit_2(tmp_path, pyproject, says, command):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "a.py").write_text(SLOW)
    result = run_torchlint(command, ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    _no_traceback(result)


# -- 6. cache integrity ---------------------------------------------------------------------------
def test_tampered_cache_entries_are_recomputed(tmp_path):
    (tmp_path / "a.py").write_text(SLOW)
    first = run_torchlint("check", ".", "--output-format", "json", cwd=tmp_path)
    entries = list((tmp_path / ".torchlint_cache").rglob("*.json"))
    assert entries
    for tampered in ("[]", '{"checksum": "0", "findings": []}', "not json"):
        for entry in entries:
            entry.write_text(tampered)
        again = run_torchlint("check", ".", "--output-format", "json", cwd=tmp_path)
        assert json.loads(again.stdout) == json.loads(first.stdout)


# -- 7. python -m torchlint in a project with its own click.py / json.py ----------------------
def test_python_m_does_not_import_the_projects_own_modules(tmp_path):
    for name in ("click", "json", "libcst"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('imported the project copy')\n")
    (tmp_path / "a.py").write_text(SLOW)
    result = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "a.py", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "imported the project copy" not in result.stdout + result.stderr
    assert "TL004" in result.stdout


# -- 8. control characters in paths never forge output lines ------------------------------------
@pytest.mark.parametrize("output_format", ["full", "concise", "github", "json-lines", "grouped"])
def test_newline_in_a_file_name_cannot_forge_output_lines(tmp_path, output_format):
    name = "evil\n::error file=x.py,line=1::forged\n.py"
    (tmp_path / name).write_text(SLOW)
    result = run_torchlint(
        "check", ".", "--no-cache", "--output-format", output_format, cwd=tmp_path
    )
    _no_traceback(result)
    assert not any(line.startswith("::error file=x.py") for line in result.stdout.splitlines())
    assert "evil\\" in result.stdout  # the name is there, its newline escaped
