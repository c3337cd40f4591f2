"""Configuration, suppression comments and file discovery, through the installed command
(and torch-version inference, which no rule-independent output shows, as a function)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_torchlint

from torchlint.config import load_settings
from torchlint.registry import all_rules
from torchlint.rule import Invalid
from torchlint.torch_target import NEWEST_TORCH, declared_in

# Any registered rule but data-parallel, for selections that leave TL004 out.
OTHER = next(rule.code for rule in all_rules() if rule.code != "TL004")
DP_LINE = "model = torch.nn.DataParallel(model)"
DP = f"import torch\n{DP_LINE}\n"


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_torchlint("check", "--output-format", "json", *args, cwd=cwd)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def _found(cwd: Path, *args: str) -> list[tuple[str, int]]:
    """(file, row) of every TL004 finding."""
    result = _run(cwd, *args)
    assert result.returncode in (0, 1), result.stderr
    return [
        (i["filename"], i["location"]["row"])
        for i in json.loads(result.stdout)
        if i["code"] == "TL004"
    ]


def _error(cwd: Path, *args: str) -> str:
    """The one-line error of a run that must fail with exit 2."""
    result = _run(cwd, *args)
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("torchlint: error: ")
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(DP)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run_train.py").write_text(DP)
    return tmp_path


def _pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n[tool.torchlint]\n{body}\n")


# -- where the configuration comes from ---------------------------------------------------


def test_pyproject_tool_table_is_read(project):
    assert len(_found(project)) == 2
    _pyproject(project, 'ignore = ["TL004"]')
    assert _found(project) == []


def test_torchlint_toml_is_read_and_wins_over_pyproject(project):
    (project / "torchlint.toml").write_text('ignore = ["data-parallel"]\n')
    _pyproject(project, 'select = ["TL004"]')
    assert _found(project) == []


def test_pyproject_without_a_torchlint_table_is_not_a_config(project):
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.other]\nx = 1\n")
    assert len(_found(project)) == 2


def test_nearest_config_above_the_checked_path_applies(project):
    _pyproject(project, 'ignore = ["TL004"]')
    (project / "scripts" / "torchlint.toml").write_text('select = ["TL004"]\n')
    assert _found(project / "scripts") == [("run_train.py", 2)]
    assert _found(project, "train.py") == []


# -- each key ----------------------------------------------------------------------------


def test_select_key(project):
    _pyproject(project, f'select = ["{OTHER}"]')
    assert _found(project) == []
    _pyproject(project, 'select = ["TL0"]')
    assert len(_found(project)) == 2


def test_extend_select_key(project):
    _pyproject(project, f'select = ["{OTHER}"]\nextend-select = ["data-parallel"]')
    assert len(_found(project)) == 2


def test_per_file_ignores_key(project):
    _pyproject(project, '[tool.torchlint.per-file-ignores]\n"scripts/*" = ["TL004"]')
    assert _found(project) == [("train.py", 2)]
    _pyproject(project, '[tool.torchlint.per-file-ignores]\n"train.py" = ["data-parallel"]')
    assert _found(project) == [("scripts/run_train.py", 2)]


def test_exclude_key_skips_what_a_walk_finds_but_not_named_files(project):
    _pyproject(project, 'exclude = ["scripts"]')
    assert _found(project) == [("train.py", 2)]
    assert _found(project, "scripts/run_train.py") == [("scripts/run_train.py", 2)]


def test_extend_exclude_keeps_the_default_exclusions(project):
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text(DP)
    assert ("build/gen.py", 2) not in _found(project)
    _pyproject(project, 'extend-exclude = ["run_*.py"]')
    assert _found(project) == [("train.py", 2)]


def test_target_torch_version_key(project):
    _pyproject(project, 'target-torch-version = "2.1"')
    assert len(_found(project)) == 2
    _pyproject(project, 'target-torch-version = "latest"')
    line = _error(project)
    assert "pyproject.toml" in line and "target-torch-version" in line


def test_unsafe_fixes_key_lets_fix_apply_unsafe_fixes(tmp_path):
    unsafe = [
        (rule.code, ex.code)
        for rule in all_rules()
        if rule.fix_availability == "unsafe"
        for ex in rule.invalid
        if isinstance(ex, Invalid) and ex.fixed and ex.target_torch_version is None
    ]
    if not unsafe:
        pytest.skip("no registered rule has an unsafe fix")
    code, source = unsafe[0]
    (tmp_path / "t.py").write_text(source)
    _pyproject(tmp_path, f'select = ["{code}"]\nunsafe-fixes = false')
    held_back = run_torchlint("fix", "t.py", cwd=tmp_path)
    assert "+++ " not in held_back.stdout
    _pyproject(tmp_path, f'select = ["{code}"]\nunsafe-fixes = true')
    shown = run_torchlint("fix", "t.py", cwd=tmp_path)
    assert "+++ " in shown.stdout
    assert (tmp_path / "t.py").read_text() == source  # the diff mode writes nothing


# -- the command line over the configuration ---------------------------------------------


def test_cli_select_overrides_config_ignore(project):
    _pyproject(project, 'ignore = ["TL004"]')
    assert len(_found(project, "--select", "TL004")) == 2


def test_cli_extend_select_re_enables_a_rule_the_config_ignores(project):
    _pyproject(project, 'ignore = ["data-parallel"]')
    assert len(_found(project, "--extend-select", "TL004")) == 2


def test_cli_ignore_adds_to_config_select(project):
    _pyproject(project, 'select = ["TL004"]')
    assert _found(project, "--ignore", "TL004") == []


def test_cli_target_torch_version_is_validated_over_a_valid_config(project):
    _pyproject(project, 'target-torch-version = "2.1"')
    assert "--target-torch-version" in _error(project, "--target-torch-version", "new")


# -- configuration errors: exit 2, one line naming file and key ---------------------------


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("colour = true", "colour"),
        ('select = "TL004"', "select"),
        ('ignore = ["TL9"]', "ignore"),
        ('extend-select = ["nope"]', "extend-select"),
        ("exclude = [1]", "exclude"),
        ('extend-exclude = "x"', "extend-exclude"),
        ('per-file-ignores = ["x"]', "per-file-ignores"),
        ('unsafe-fixes = "yes"', "unsafe-fixes"),
        ("target-torch-version = 2.1", "target-torch-version"),
        ("[tool.torchlint.data-parallel]\nno-such-option = 1", "data-parallel"),
    ],
)
def test_bad_key_or_value_names_the_file_and_key(project, body, key):
    _pyproject(project, body)
    line = _error(project)
    assert str(project / "pyproject.toml") in line
    assert key in line


def test_unknown_key_in_torchlint_toml(project):
    (project / "torchlint.toml").write_text('select = ["TL004"]\nselcet = ["TL004"]\n')
    line = _error(project)
    assert "torchlint.toml" in line and "'selcet'" in line


def test_unparsable_toml_names_the_file(project):
    (project / "pyproject.toml").write_text("[tool.torchlint\nselect = [\n")
    line = _error(project)
    assert str(project / "pyproject.toml") in line
    assert "TOML" in line


def test_tool_torchlint_that_is_not_a_table(project):
    (project / "pyproject.toml").write_text("[tool]\ntorchlint = 3\n")
    assert "[tool.torchlint]" in _error(project)


# -- torch version inference --------------------------------------------------------------


def _declared(folder):
    found = declared_in(folder)
    return found.version if found else None


@pytest.mark.parametrize(
    ("dependencies", "expected"),
    [
        (['"torch>=2.1"'], (2, 1)),
        (['"numpy"', '"torch==1.13.1"'], (1, 13)),
        (["\"torch[opt-einsum] >=2.2, <3 ; python_version >= '3.9'\""], (2, 2)),
        (['"torch~=2.4.0"'], (2, 4)),
        (['"torch<2"'], (1, 13)),
        (['"torchvision>=0.15"'], None),
        (['"torch"'], NEWEST_TORCH),
        ([], None),
    ],
)
def test_infer_torch_version_from_pyproject_dependencies(tmp_path, dependencies, expected):
    (tmp_path / "pyproject.toml").write_text(
        f"[project]\nname = 'x'\ndependencies = [{', '.join(dependencies)}]\n"
    )
    assert _declared(tmp_path) == expected


def test_infer_torch_version_from_requirements_files(tmp_path):
    (tmp_path / "requirements.txt").write_text("# pinned\nnumpy==1.26\ntorchaudio==2.0\n")
    assert _declared(tmp_path) is None
    (tmp_path / "requirements-train.txt").write_text("torch==2.0.1  # cuda 11.8\n")
    assert _declared(tmp_path) == (2, 0)


def test_config_version_wins_over_inference_and_newest_is_the_fallback(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=1.12\n")
    assert load_settings(start=tmp_path).torch_version == (1, 12)
    (tmp_path / "torchlint.toml").write_text('target-torch-version = "2.3"\n')
    assert load_settings(start=tmp_path).torch_version == (2, 3)
    bare = tmp_path / "bare"
    bare.mkdir()
    assert load_settings(start=bare, isolated=True).torch_version == (
        1,
        12,
    )  # the nearest declaration
    (bare / ".git").mkdir()  # its own repository: the search stops at its root
    assert load_settings(start=bare, isolated=True).torch_version == NEWEST_TORCH


def test_unparsable_pyproject_gives_no_inference_but_no_crash(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\n")
    assert _declared(tmp_path) is None


# -- suppression comments ----------------------------------------------------------------


# One run over a directory of cases (a subprocess per case would cost more than the check).
SUPPRESSED = {
    "bare_noqa": f"import torch\n{DP_LINE}  # noqa\n",
    "noqa_code": f"import torch\n{DP_LINE}  # noqa: TL004\n",
    "noqa_list": f"import torch\n{DP_LINE}  # noqa: TL001, TL004\n",
    "noqa_name": f"import torch\n{DP_LINE}  # noqa: data-parallel\n",
    "noqa_lower_case": f"import torch\n{DP_LINE}  # NOQA: tl004\n",
    "ignore_code": f"import torch\n{DP_LINE}  # torchlint: ignore[TL004]\n",
    "ignore_name": f"import torch\n{DP_LINE}  # torchlint: ignore[data-parallel]\n",
    "ignore_line_above": f"import torch\n# torchlint: ignore[TL004]\n{DP_LINE}\n",
    "file_noqa_top": f"# torchlint: noqa\nimport torch\n{DP_LINE}\n",
    "file_noqa_bottom": f"import torch\n\n{DP_LINE}\n# torchlint: noqa\n",
    "multiline_first_line": "import torch\nmodel = (  # noqa: TL004\n    torch.nn.DataParallel(\n        model,\n    )\n)\n",
    "multiline_two_findings": (
        "import torch\nmodels = [  # torchlint: ignore[TL004]\n    torch.nn.DataParallel(a),\n    torch.nn.DataParallel(b),\n]\n"
    ),
    "after_form_feed": f"import torch\n\x0c\n{DP_LINE}  # noqa\n",
    "cr_line_ends": f"import torch\r{DP_LINE}  # noqa: TL004\r",
}
NOT_SUPPRESSED = {
    "other_code": f"import torch\n{DP_LINE}  # noqa: TL001\n",
    "other_name": f"import torch\n{DP_LINE}  # torchlint: ignore[host-sync-in-loop]\n",
    "noqa_line_above": f"import torch\n# noqa: TL004\n{DP_LINE}\n",  # noqa covers its own line only
    "other_line": f"import torch\n{DP_LINE}\nx = 1  # noqa\n",
    "file_noqa_inline": f"import torch\n{DP_LINE}  # torchlint: noqa\n",  # file-wide only on its own line
    "file_noqa_in_string": f'import torch\n{DP_LINE}\ns = """\n# torchlint: noqa\n"""\n',
    "noqa_in_string": 'import torch\nmodel = torch.nn.DataParallel(model, tag="# noqa")\n',
}


def test_suppression_comments(tmp_path):
    for name, source in {**SUPPRESSED, **NOT_SUPPRESSED}.items():
        (tmp_path / f"{name}.py").write_bytes(source.encode())
    for name, source in SUPPRESSED.items():  # the same file without its comment has the finding
        unsuppressed = (
            source.replace("noqa", "note")
            .replace("NOQA", "NOTE")
            .replace("torchlint: ignore", "todo: ignore")
        )
        (tmp_path / f"control_{name}.py").write_bytes(unsuppressed.encode())
    flagged = {Path(name).stem for name, _ in _found(tmp_path)}
    expected = set(NOT_SUPPRESSED) | {f"control_{name}" for name in SUPPRESSED}
    assert sorted(flagged - expected) == [], "not suppressed"
    assert sorted(expected - flagged) == [], "suppressed wrongly"


# -- which files a directory walk finds ----------------------------------------------------


def test_gitignore_is_honoured_in_directory_walks(project):
    (project / ".gitignore").write_text("# generated\nignored.py\ngen/\n")
    (project / "ignored.py").write_text(DP)
    (project / "gen").mkdir()
    (project / "gen" / "model.py").write_text(DP)
    (project / "scripts" / ".gitignore").write_text("run_*.py\n")
    assert _found(project) == [("train.py", 2)]
    assert _found(project, "ignored.py") == [
        ("ignored.py", 2)
    ]  # a file named explicitly is checked


def test_only_python_files_are_checked(project):
    (project / "notes.txt").write_text(DP)
    (project / "script").write_text(DP)
    assert sorted(name for name, _ in _found(project)) == ["scripts/run_train.py", "train.py"]
