"""Notebook fixes work within cells: a fix whose code spans cells is rewritten to stay in one
cell (TL001's wrap: one `with torch.no_grad():` per cell), `check` announces only fixes that
`--fix` applies, and a folder of such notebooks is fixed with exit 0, never 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_torchlint

# After `model.eval()`, evaluation loops in two later cells: one evaluation region across cells.
ACROSS_CELLS = [
    "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\n"
    "model.load_state_dict(torch.load('w.pt'))\n",
    "model.eval()\nfor x in torch.ones(3, 2):\n    out = model(x)\n",
    "# a second probe\nfor y in torch.zeros(3, 2):\n    out2 = model(y)\nprint(out, out2)\n",
]
# No torch import: the fix's import lands in the first cell, its wrap in others.
IMPORT_ELSEWHERE = [
    "from torch import nn\nmodel = nn.Linear(2, 2)\nmodel.eval()\n",
    "for x in xs:\n    a = model(x)\n",
    "for y in ys:\n    b = model(y)\n",
]


def _notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": number,
                    "metadata": {},
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
                    "source": source.splitlines(keepends=True),
                }
                for number, source in enumerate(cells, start=1)
            ],
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "n"\ndependencies = ["torch"]\n')
    (tmp_path / "across.ipynb").write_text(_notebook(ACROSS_CELLS))
    (tmp_path / "elsewhere.ipynb").write_text(_notebook(IMPORT_ELSEWHERE))
    return tmp_path


def _cells(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]


def test_check_announces_the_fixes_that_fix_then_applies_in_every_cell(folder):
    checked = run_torchlint("check", ".", "--unsafe-fixes", "--no-cache", cwd=folder)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "[*] 2 fixable with `torchlint check --fix --unsafe-fixes`." in checked.stdout
    fixed = run_torchlint("check", ".", "--fix", "--unsafe-fixes", cwd=folder)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "TL999" not in fixed.stdout + fixed.stderr
    across = _cells(folder / "across.ipynb")
    assert across[0] == ACROSS_CELLS[0]
    assert across[1] == (
        "model.eval()\nwith torch.no_grad():\n    for x in torch.ones(3, 2):\n        out = model(x)\n"
    )
    assert across[2] == (
        "# a second probe\nwith torch.no_grad():\n    for y in torch.zeros(3, 2):\n"
        "        out2 = model(y)\nprint(out, out2)\n"
    )
    elsewhere = _cells(folder / "elsewhere.ipynb")
    assert "import torch\n" in elsewhere[0]
    assert elsewhere[1:] == [
        "with torch.no_grad():\n    for x in xs:\n        a = model(x)\n",
        "with torch.no_grad():\n    for y in ys:\n        b = model(y)\n",
    ]
    for cell in across + elsewhere:
        compile(cell, "cell", "exec")  # each cell is whole Python on its own
    outputs = json.loads((folder / "across.ipynb").read_text())["cells"][2]["outputs"]
    assert outputs == [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]


def test_fix_apply_on_the_same_folder_exits_zero(folder):
    result = run_torchlint("fix", ".", "--apply", "--unsafe-fixes", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    again = run_torchlint("check", ".", "--unsafe-fixes", "--no-cache", cwd=folder)
    assert again.returncode == 0, again.stdout
