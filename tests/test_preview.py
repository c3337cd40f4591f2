"""Preview mode through the installed command: preview rules run only with `--preview` or
`preview = true`, whatever the selection, and every place that shows rules says which are."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, listed_rules, run_torchlint

from torchlint.registry import all_rules
from torchlint.rule_docs import readme_table, with_readme_table
from torchlint.verify.fixtures import expected_verdict

PREVIEW = sorted(rule.code for rule in all_rules() if rule.preview)
# A CUDA training script in float32 without TF32: TL112 and TL113 both flag it.
SCRIPT = """\
import torch

model = torch.nn.Linear(2048, 2048).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
"""


def _codes(*args: str, cwd) -> list[str]:
    result = run_torchlint("check", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return sorted({d["code"] for d in json.loads(result.stdout)})


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def test_the_preview_rules_are_marked_in_the_catalogue():
    assert {"TL112", "TL113", "TL114"} <= set(PREVIEW)


def test_a_preview_rule_is_silent_without_preview_and_reports_with_it(project):
    assert _codes("--no-cache", "train.py", cwd=project) == []
    assert _codes("--no-cache", "--preview", "train.py", cwd=project) == ["TL112", "TL113"]


def test_preview_true_in_the_config_runs_them_and_no_preview_turns_it_off(project):
    (project / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    assert _codes("--no-cache", "train.py", cwd=project) == ["TL112", "TL113"]
    assert _codes("--no-cache", "--no-preview", "train.py", cwd=project) == []


def test_a_subproject_config_with_preview_applies_to_its_files(project):
    sub = project / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    (sub / "train.py").write_text(SCRIPT)
    result = run_torchlint("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    found = sorted((d["filename"], d["code"]) for d in json.loads(result.stdout))
    assert found == [("sub/train.py", "TL112"), ("sub/train.py", "TL113")]


def test_select_all_runs_them_only_in_preview_mode(project):
    assert "TL112" in _codes("--no-cache", "--preview", "--select", "ALL", "train.py", cwd=project)
    assert "TL112" not in _codes("--no-cache", "--select", "ALL", "train.py", cwd=project)
    prefix = _codes("--no-cache", "--select", "TL1", "train.py", cwd=project)
    assert prefix and not set(prefix) & set(PREVIEW)  # TL109 reports; the preview rules do not


def test_an_exact_selector_without_preview_has_no_effect_and_says_so(project):
    result = run_torchlint("check", "--no-cache", "--select", "TL112", "train.py", cwd=project)
    assert result.returncode == 0, result.stdout
    assert "'TL112' has no effect" in result.stderr and "--preview" in result.stderr
    by_name = run_torchlint(
        "check",
        "--no-cache",
        "--extend-select",
        "fp32-matmul-without-tf32",
        "train.py",
        cwd=project,
    )
    assert "has no effect" in by_name.stderr
    quiet = run_torchlint("check", "--no-cache", "--select", "TL1", "train.py", cwd=project)
    assert "has no effect" not in quiet.stderr  # a prefix leaves them out without a word
    chosen = _codes("--no-cache", "--preview", "--select", "TL112", "train.py", cwd=project)
    assert chosen == ["TL112"]


def test_fix_takes_the_flag_too(project):
    result = run_torchlint(
        "fix",
        "--preview",
        "--select",
        "TL112",
        "--unsafe-fixes",
        "--apply",
        "train.py",
        cwd=project,
    )
    assert result.returncode in (0, 1), result.stderr
    assert 'torch.set_float32_matmul_precision("high")' in (project / "train.py").read_text()


def test_the_cache_keeps_runs_with_and_without_preview_apart(project):
    assert _codes("train.py", cwd=project) == []
    assert _codes("--preview", "train.py", cwd=project) == ["TL112", "TL113"]
    assert _codes("train.py", cwd=project) == []


def test_show_settings_says_whether_preview_is_on(project):
    off = run_torchlint("check", "--show-settings", "train.py", cwd=project).stdout
    on = run_torchlint("check", "--preview", "--show-settings", "train.py", cwd=project).stdout
    assert "preview: off" in off and "TL112" not in off
    assert "preview: on" in on and "TL112" in on


def test_a_bad_preview_value_is_a_config_error(project):
    (project / "pyproject.toml").write_text('[tool.torchlint]\npreview = "yes"\n')
    result = run_torchlint("check", "train.py", cwd=project)
    assert result.returncode == 2
    assert "preview: expected true or false" in result.stderr


def test_rules_lists_and_marks_them():
    listed = listed_rules()
    assert [code for code, row in listed.items() if row["preview"]] == PREVIEW
    text = run_torchlint("rules").stdout
    line = next(row for row in text.splitlines() if row.startswith("TL112"))
    assert "(preview)" in line
    assert "--preview" in text


def test_rule_page_says_it_is_in_preview_and_how_to_enable_it():
    page = run_torchlint("rule", "TL112").stdout
    assert "**Preview:**" in page and "`--preview`" in page and "preview = true" in page
    assert "**Preview:**" not in run_torchlint("rule", "TL004").stdout
    index = (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    assert "| on (preview) |" in index


def test_the_readme_table_is_generated_from_the_rules():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_readme_table(readme, all_rules()) == readme, "run `python -m torchlint.rule_docs`"
    assert "| TL112 | `fp32-matmul-without-tf32` | on (preview) |" in readme_table(all_rules())


def test_a_fixture_may_expect_divergence_on_one_device_only():
    text = "x = 1\n# torchlint-verify: expect diverged on cuda\n"
    assert expected_verdict(text, "cuda") == "diverged"
    assert expected_verdict(text, "cpu") == "equivalent"
    assert expected_verdict("# torchlint-verify: expect diverged\n", "cpu") == "diverged"
    assert expected_verdict("x = 1\n", None) == "equivalent"


def test_the_language_server_takes_preview_from_the_config_and_the_editor(project):
    from torchlint.lsp.settings import ProjectSettings, parse_client_settings

    (project / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    settings, problem = ProjectSettings().for_directory(project)
    assert problem is None and settings.preview
    assert "TL112" in [r.code for r in settings.enabled_rules()]
    editor, problems = parse_client_settings({"torchlint": {"preview": False}})
    assert problems == [] and not editor.apply(settings).preview
    _, bad = parse_client_settings({"preview": "yes"})
    assert bad == ["setting 'preview': expected true or false"]
