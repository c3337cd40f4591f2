"""Cell magics in notebooks, through the installed command.

A cell that opens with a cell magic running Python (`%%time`, `%%timeit`, `%%capture`, `%%prun`,
`%%debug`) is Python below its first line: it is linted, rows stay cell-relative, and a fix keeps
the magic line. A cell magic that runs another language or writes text (`%%bash`, `%%writefile`,
`%%html`) makes the whole cell not Python: no finding and no syntax error there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_torchlint
from test_notebooks import code, nbformat_text, notebook

DATA_PARALLEL = "model = torch.nn.DataParallel(model)\n"


def _check(tmp_path: Path, *sources: str) -> list[tuple[str, int, int, int]]:
    nb = notebook(
        code("import torch\n", "imports"), *(code(s, f"c{i}") for i, s in enumerate(sources))
    )
    (tmp_path / "nb.ipynb").write_text(nbformat_text(nb), encoding="utf-8")
    result = run_torchlint(
        "check", "--isolated", "--select", "ALL", "--output-format", "json", "nb.ipynb",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return [
        (d["code"], d["cell"], d["location"]["row"], d["location"]["column"])
        for d in json.loads(result.stdout)
    ]


@pytest.mark.parametrize(
    "magic", ["%%time", "%%timeit -n 3 -r 1", "%%capture out", "%%prun", "%%debug"]
)
def test_a_python_cell_magic_cell_is_linted_below_its_magic(tmp_path: Path, magic: str) -> None:
    assert _check(tmp_path, f"{magic}\n{DATA_PARALLEL}") == [("TL004", 2, 2, 9)]


@pytest.mark.parametrize(
    "source",
    [
        f"%%bash\necho {DATA_PARALLEL}",
        f"%%writefile train.py\n{DATA_PARALLEL}x = (\n",
        "%%html\n<b>x = (</b>\n",
        f"%%script bash\n{DATA_PARALLEL}",
    ],
)
def test_a_cell_magic_of_another_language_is_not_python(tmp_path: Path, source: str) -> None:
    assert _check(tmp_path, source) == []


def test_line_magics_around_python_are_no_syntax_errors(tmp_path: Path) -> None:
    source = (
        "%matplotlib inline\n!pip install -q x\nfiles = !ls\n%timeit f()\n"
        f"for f in files:\n    !echo {{f}}\n    {DATA_PARALLEL}"
    )
    assert _check(tmp_path, source) == [("TL004", 2, 7, 13)]


def test_a_fix_in_a_timed_cell_keeps_the_magic_line(tmp_path: Path) -> None:
    cell = '%%time\nimport numpy as np\ngrid = np.load("grid.npy")\nx = torch.tensor(grid)\n'
    (tmp_path / "nb.ipynb").write_text(
        nbformat_text(notebook(code("import torch\n", "imports"), code(cell, "timed"))),
        encoding="utf-8",
    )
    result = run_torchlint(
        "fix",
        "--isolated",
        "--unsafe-fixes",
        "--apply",
        "--select",
        "TL003",
        "nb.ipynb",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = "".join(json.loads((tmp_path / "nb.ipynb").read_text())["cells"][1]["source"])
    assert fixed == cell.replace("torch.tensor(grid)", "torch.from_numpy(grid)")
