"""`lint-tests` applies to every rule alike, and TL100 judges `noqa` comments by the same rules.

Test code (a file under tests/, named test_*.py, or importing pytest or unittest) gets no
performance findings unless `lint-tests = true`; then every rule reports there as anywhere
else. TL101 and TL109 used to keep their own test-file check, so `lint-tests` brought TL002
back but not them, and TL100 then called a `# noqa: TL101` there unused.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_torchlint

TRAIN = """\
import torch
from torch.utils.data import DataLoader


def main():
    model = Net().to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(ds, batch_size=32, shuffle=True){noqa}
    for x in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        print(loss.item())


if __name__ == "__main__":
    main()
"""
RULES = "TL002,TL100,TL101,TL109"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "train.py").write_text(TRAIN.format(noqa=""))
    (tmp_path / "tests" / "test_train.py").write_text(TRAIN.format(noqa=""))
    (tmp_path / "tests" / "test_quiet.py").write_text(TRAIN.format(noqa="  # noqa: TL101"))
    (tmp_path / "helpers.py").write_text("import unittest\n" + TRAIN.format(noqa=""))
    (tmp_path / "helpers_quiet.py").write_text(
        "import pytest\n" + TRAIN.format(noqa="  # noqa: TL101")
    )
    return tmp_path


def _codes(project, lint_tests: bool) -> dict[str, list[str]]:
    setting = "true" if lint_tests else "false"
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "p"\n\n[tool.torchlint]\nlint-tests = {setting}\n'
    )
    result = run_torchlint(
        "check", "--no-cache", "--select", RULES, "--output-format", "json", ".", cwd=project
    )
    assert result.returncode in (0, 1), result.stderr
    found: dict[str, list[str]] = {}
    for d in json.loads(result.stdout):
        found.setdefault(d["filename"], []).append(d["code"])
    return {name: sorted(codes) for name, codes in found.items()}


def test_lint_tests_brings_every_rule_back_and_tl100_agrees(project):
    every = ["TL002", "TL101", "TL109"]
    assert _codes(project, lint_tests=True) == {
        "train.py": every,
        "tests/test_train.py": every,
        "helpers.py": every,
        # the noqa suppresses TL101, so it is used: no TL100
        "tests/test_quiet.py": ["TL002", "TL109"],
        "helpers_quiet.py": ["TL002", "TL109"],
    }


def test_without_lint_tests_test_code_is_quiet_and_its_noqa_is_not_judged(project):
    assert _codes(project, lint_tests=False) == {"train.py": ["TL002", "TL101", "TL109"]}


def test_show_settings_agrees_on_a_file_that_imports_a_test_framework(project):
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
    shown = run_torchlint("check", "--show-settings", "helpers.py", cwd=project)
    assert shown.returncode == 0, shown.stderr
    lines = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    assert lines["test code"].startswith("yes")
    assert "TL002" not in lines["enabled rules"] and "TL106" in lines["enabled rules"]
