"""Invented multi-file projects checked once by the installed `torchlint`, each case its own
project root, with the findings it expects marked in its sources (the scheme of
`test_production_cases.py`: a line ending in `# TL103: text` expects a TL103 finding there, at
the column where `text` starts; every other finding of the case's rules is a failure)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_torchlint
from test_production_cases import Case

__all__ = ["Case", "check_projects", "case_findings"]


def check_projects(root: Path, cases: list[Case]) -> list[dict]:
    """Write every case into its own folder under `root` and check them all in one run."""
    for case in cases:
        folder = root / case.id
        folder.mkdir()
        (folder / "pyproject.toml").write_text("[tool.torchlint]\n")
        for name, text in case.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    rules = sorted({rule for case in cases for rule in case.rules})
    result = run_torchlint(
        "check", "--output-format", "json", "--no-cache", "--select", ",".join(rules), ".", cwd=root
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def case_findings(case: Case, findings: list[dict]) -> list[tuple[str, str, int, int]]:
    """(file, code, row, column) of the case's findings of its rules, as `Case.expected` lists them."""
    prefix = case.id + "/"
    return sorted(
        (
            d["filename"].replace("\\", "/")[len(prefix) :],
            d["code"],
            d["location"]["row"],
            d["location"]["column"],
        )
        for d in findings
        if d["filename"].replace("\\", "/").startswith(prefix) and d["code"] in case.rules
    )
