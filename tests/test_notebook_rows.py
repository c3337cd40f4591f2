"""Notebook findings in the formats that annotate the file point at the .ipynb line holding the
source line, keep their cell, and carry SARIF fixes only where the edits map onto the JSON text."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import run_torchlint

CELLS = [
    ("markdown", "# Training\nfast()\n"),
    ("code", "import numpy as np\nimport torch\nfrom torch import nn"),
    (
        "code",
        "%time data = np.zeros(4)\nx = torch.tensor(np.load(path))  # copy\nmodel = nn.DataParallel(nn.Linear(2, 2))",
    ),
]


def notebook_text(cells) -> str:
    nb = {
        "cells": [
            {
                "cell_type": kind,
                "id": f"c{i}",
                "metadata": {},
                "source": src.splitlines(keepends=True),
                **({"execution_count": None, "outputs": []} if kind == "code" else {}),
            }
            for i, (kind, src) in enumerate(cells)
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1, sort_keys=True) + "\n"  # nbformat's own layout


@pytest.fixture
def notebook(tmp_path):
    (tmp_path / "explore.ipynb").write_text(notebook_text(CELLS))
    return tmp_path


def _run(cwd, fmt: str) -> str:
    result = run_torchlint(
        "check", "--isolated", "--no-cache", "--output-format", fmt, "explore.ipynb", cwd=cwd
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


def _file_line(cwd, row: int) -> str:
    return (cwd / "explore.ipynb").read_text().splitlines()[row - 1]


SOURCE = {"TL003": "x = torch.tensor(np.load(path))", "TL004": "model = nn.DataParallel"}


def _rows(cwd, fmt: str) -> dict[str, int]:
    out = _run(cwd, fmt)
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert all(r["properties"]["cell"] == 3 for r in results)
        return {
            r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
            for r in results
        }
    if fmt == "github":
        return {
            re.search(r"\(TL\d+\)", line).group(0)[1:-1]: int(
                re.search(r"line=(\d+)", line).group(1)
            )
            for line in out.splitlines()
        }
    if fmt == "junit":
        return {
            case.find("failure").get("type"): int(case.get("line"))
            for case in ET.fromstring(out).iter("testcase")
        }
    if fmt == "json-lines":
        found = [json.loads(line) for line in out.splitlines()]
        assert all(d["cell"] == 3 and d["cell_location"]["row"] in (2, 3) for d in found)
        return {d["code"]: d["location"]["row"] for d in found}
    if fmt == "gitlab":
        return {i["check_name"]: i["location"]["lines"]["begin"] for i in json.loads(out)}
    if fmt == "rdjson":
        return {
            d["code"]["value"]: d["location"]["range"]["start"]["line"]
            for d in json.loads(out)["diagnostics"]
        }
    if fmt == "pylint":
        return {
            re.search(r"\[(TL\d+)\(", line).group(1): int(line.split(":")[1])
            for line in out.splitlines()
        }
    return {
        re.search(r"code=(TL\d+)", line).group(1): int(
            re.search(r"linenumber=(\d+)", line).group(1)
        )
        for line in out.splitlines()
    }


@pytest.mark.parametrize(
    "fmt", ["sarif", "github", "junit", "json-lines", "gitlab", "rdjson", "pylint", "azure"]
)
def test_rows_point_at_the_notebook_line_that_holds_the_source(notebook, fmt):
    rows = _rows(notebook, fmt)
    assert set(rows) == set(SOURCE)
    for code, row in rows.items():
        assert SOURCE[code] in _file_line(notebook, row), (fmt, code, _file_line(notebook, row))


def test_json_keeps_cell_relative_rows(notebook):
    found = json.loads(_run(notebook, "json"))
    assert {(d["code"], d["cell"], d["location"]["row"]) for d in found} == {
        ("TL003", 3, 2),
        ("TL004", 3, 3),
    }


def _apply(text: str, replacements: list[dict]) -> str:
    lines = text.split("\n")
    for r in sorted(
        replacements,
        key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
        reverse=True,
    ):
        region = r["deletedRegion"]
        assert region["startLine"] == region["endLine"]
        line = lines[region["startLine"] - 1]
        lines[region["startLine"] - 1] = (
            line[: region["startColumn"] - 1]
            + r["insertedContent"]["text"]
            + line[region["endColumn"] - 1 :]
        )
    return "\n".join(lines)


def test_sarif_fixes_edit_the_notebook_json_exactly_or_are_left_out(notebook):
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--unsafe-fixes",
        "--output-format",
        "sarif",
        "explore.ipynb",
        cwd=notebook,
    )
    results = {r["ruleId"]: r for r in json.loads(result.stdout)["runs"][0]["results"]}
    [fix] = results["TL003"]["fixes"]
    edited = _apply(
        (notebook / "explore.ipynb").read_text(), fix["artifactChanges"][0]["replacements"]
    )
    run_torchlint(
        "fix",
        "--isolated",
        "--no-cache",
        "--unsafe-fixes",
        "--select",
        "TL003",
        "--apply",
        "explore.ipynb",
        cwd=notebook,
    )
    assert json.loads(edited) == json.loads((notebook / "explore.ipynb").read_text())
    assert "fixes" not in results["TL004"]  # advice only


def test_a_fix_that_adds_a_line_is_left_out_of_sarif(tmp_path):
    cells = [
        ("code", "import torch\n\ndef predict(model, x):\n    model.eval()\n    return model(x)")
    ]
    (tmp_path / "explore.ipynb").write_text(notebook_text(cells))
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--unsafe-fixes",
        "--output-format",
        "sarif",
        "explore.ipynb",
        cwd=tmp_path,
    )
    [found] = json.loads(result.stdout)["runs"][0]["results"]
    assert (
        found["ruleId"] == "TL001" and "fixes" not in found
    )  # the decorator would be a new source line
    row = found["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert "return model(x)" in _file_line(tmp_path, row)
