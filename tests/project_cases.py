"""Invented multi-file projects checked once by the installed `torchlint`, each case its own
project root, with the findings it expects marked in its sources (the scheme of
`test_production_cases.py`: a line ending in `# TL103: text` expects a TL103 finding there, at
the column where `text` starts; every other finding of the case's rules is a failure)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from conftest import run_torchlint

__all__ = ["Case", "check_projects", "case_findings", "shown"]

_MARK = re.compile(r"#\s*(TL\d{3}): (.+)$")


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, str]
    rules: tuple[str, ...] = ("TL001", "TL002")  # the rules whose findings the case pins

    def expected(self) -> list[tuple[str, str, int, int]]:
        """(file, code, row, column) of each marked line."""
        found = []
        for name, text in self.files.items():
            for row, line in enumerate(text.splitlines(), 1):
                mark = _MARK.search(line)
                if mark:
                    column = line.index(mark.group(2).strip()) + 1
                    found.append((name, mark.group(1), row, column))
        return sorted(found)


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


def shown(case: Case, findings: list[dict]) -> list[tuple[str, str, dict, str]]:
    """Every finding in the case's folder, as a failed case shows them."""
    return [
        (d["filename"], d["code"], d["location"], d["message"][:100])
        for d in findings
        if d["filename"].startswith(case.id + "/")
    ]
