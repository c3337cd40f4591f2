"""In a notebook, a line number quoted inside a message is counted the way the location is:
within the cell, with the cell named when it is another than the finding's."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_torchlint

CELLS = [
    "import numpy as np\nimport torch\nfrom torch import nn\n",
    "x = 1\ny = 2\ninverse = np.load(path)\n",
    "t = torch.tensor(inverse)\n",
    "net = nn.Sequential(\n    nn.Conv2d(3, 8, 3),\n    nn.BatchNorm2d(8),\n)\n",
]


def _notebook(cells: list[str]) -> str:
    """A markdown title first, so cell numbers (which count every cell) differ from code cells'."""
    code = [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": source.splitlines(keepends=True),
        }
        for source in cells
    ]
    return json.dumps(
        {
            "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]}, *code],
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def _messages(result) -> dict[str, tuple[int | None, int, str]]:
    """Code -> (cell, row, message) of a JSON run's findings."""
    assert "Traceback" not in result.stderr, result.stderr
    return {
        f["code"]: (f.get("cell"), f["location"]["row"], f["message"])
        for f in json.loads(result.stdout)
    }


def test_a_quoted_line_uses_the_cell_numbers_of_the_location(tmp_path: Path):
    (tmp_path / "m.ipynb").write_text(_notebook(CELLS))
    args = ("check", "m.ipynb", "--select", "TL003,TL005", "--output-format", "json")
    for attempt in ("first", "cached"):
        found = _messages(run_torchlint(*args, cwd=tmp_path))
        assert found["TL003"][:2] == (4, 1), attempt
        assert "copies numpy array `inverse` (cell 3, line 3);" in found["TL003"][2], attempt
        assert found["TL005"][:2] == (5, 2), attempt
        assert "feeds straight into `BatchNorm2d` (line 3)," in found["TL005"][2], attempt


def test_the_same_code_as_a_python_file_quotes_its_own_rows(tmp_path: Path):
    (tmp_path / "m.py").write_text("".join(CELLS))
    args = ("check", "m.py", "--select", "TL003,TL005", "--output-format", "json")
    found = _messages(run_torchlint(*args, cwd=tmp_path))
    assert "copies numpy array `inverse` (line 6);" in found["TL003"][2]
    assert "feeds straight into `BatchNorm2d` (line 10)," in found["TL005"][2]
