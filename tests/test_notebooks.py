"""Jupyter notebooks through the installed command: check, fix, and byte-exact write-back.

The notebooks are written the way Jupyter writes them (nbformat: JSON with one-space
indentation, sorted keys, literal non-ASCII, a final newline) or deliberately otherwise, and
the expected files are built the same way, so a byte comparison shows that only the fixed
cells' sources changed.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_torchlint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlint.notebook import parse
from torchlint.output import FORMATS


def code(source: str, cell_id: str, outputs: list | None = None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": 3,
        "id": cell_id,
        "metadata": {"tags": ["train"]},
        "outputs": outputs or [],
        "source": source.splitlines(keepends=True),
    }


def markdown(source: str, cell_id: str) -> dict:
    return {
        "cell_type": "markdown",
        "id": cell_id,
        "metadata": {},
        "source": source.splitlines(keepends=True),
    }


def notebook(*cells: dict) -> dict:
    metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return {"cells": list(cells), "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def nbformat_text(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


STREAM = [{"name": "stdout", "output_type": "stream", "text": ["épocha 1: loss 0.25\n"]}]
IMPORTS = "%matplotlib inline\nimport numpy as np\nfrom torch import tensor, nn"
TRAIN = (
    "!pip install -q tqdm\n"
    "files = !ls data\n"
    "grid = np.load(files[0])\n"
    "np.load?\n"
    "note = '''is this a magic?\n"
    "%no, it is text\n"
    "'''\n"
    "total = (len(files)\n"
    "         % 7)\n"
    "for step in range(3):\n"
    "    %time batch = tensor(grid)\n"
    "    x = tensor(grid)"
)
BASH = (
    "%%bash\nfor f in *.npy; do echo $f; done\npython -c 'import torch; torch.tensor(np.zeros(3))'"
)
LATER = "y = tensor(grid * 2)  # grid comes from cell 3\nmodel = nn.DataParallel(model)\n"


def slow_notebook() -> dict:
    return notebook(
        code(IMPORTS, "imports"),
        markdown("# Training\nUses `%timeit` and `!ls` in prose.", "prose"),
        code(TRAIN, "train", STREAM),
        code(BASH, "shell"),
        code(LATER, "later"),
    )


def fixed_notebook() -> dict:
    nb = slow_notebook()
    nb["cells"][0]["source"] = (
        IMPORTS.replace("from torch import tensor, nn", "from torch import tensor, nn\n")
        + "import torch"
    ).splitlines(keepends=True)
    nb["cells"][2]["source"] = TRAIN.replace(
        "    x = tensor(grid)", "    x = torch.from_numpy(grid)"
    ).splitlines(keepends=True)
    nb["cells"][4]["source"] = LATER.replace(
        "tensor(grid * 2)", "torch.as_tensor(grid * 2)"
    ).splitlines(keepends=True)
    return nb


@pytest.fixture
def slow(tmp_path):
    path = tmp_path / "slow_training.ipynb"
    path.write_text(nbformat_text(slow_notebook()), encoding="utf-8")
    return path


def test_check_reports_cells_and_cell_relative_rows(slow):
    result = run_torchlint(
        "check", "--isolated", "--output-format", "json", slow.name, cwd=slow.parent
    )
    found = [
        (d["code"], d["cell"], d["location"]["row"], d["location"]["column"])
        for d in json.loads(result.stdout)
    ]
    # `grid` is bound in cell 3 and known in cell 5; the magic line's tensor is not analysed;
    # the shell cell and the prose are not Python.
    assert found == [("TL003", 3, 12, 9), ("TL003", 5, 1, 5), ("TL004", 5, 2, 9)]
    assert result.returncode == 1


@pytest.mark.parametrize("output_format", sorted(FORMATS))
def test_every_output_format_shows_the_cell(slow, output_format):
    result = run_torchlint(
        "check",
        "--isolated",
        "--select",
        "TL004",
        "--output-format",
        output_format,
        slow.name,
        cwd=slow.parent,
    )
    assert result.returncode == 1, result.stderr
    assert re.search(r'cell"?:?\s*5\b', result.stdout), result.stdout


def test_full_output_shows_the_cells_own_line(slow):
    result = run_torchlint("check", "--isolated", "--select", "TL004", slow.name, cwd=slow.parent)
    assert "slow_training.ipynb:cell 5:2:9: TL004 [data-parallel]" in result.stdout
    assert "2 | model = nn.DataParallel(model)\n" in result.stdout


def test_a_directory_walk_includes_notebooks_but_not_checkpoints(slow):
    checkpoints = slow.parent / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "slow_training-checkpoint.ipynb").write_text(slow.read_text())
    result = run_torchlint(
        "check", "--isolated", "--output-format", "concise", ".", cwd=slow.parent
    )
    assert result.stdout.count("slow_training.ipynb:cell ") == 3
    assert "checkpoint" not in result.stdout


def test_dry_run_shows_cell_diffs_and_writes_nothing(slow):
    before = slow.read_bytes()
    result = run_torchlint("fix", "--isolated", "--unsafe-fixes", slow.name, cwd=slow.parent)
    assert slow.read_bytes() == before
    assert result.returncode == 1
    assert "--- a/slow_training.ipynb:cell 3\n+++ b/slow_training.ipynb:cell 3\n" in result.stdout
    assert "-    x = tensor(grid)\n" in result.stdout
    assert "+    x = torch.from_numpy(grid)\n" in result.stdout
    assert "cell 2" not in result.stdout and "cell 4" not in result.stdout
    assert result.stdout.endswith("Would fix 2 findings in 1 file (1 not fixable).\n")


def test_apply_rewrites_only_the_fixed_cells_byte_for_byte(slow):
    result = run_torchlint(
        "fix", "--isolated", "--unsafe-fixes", "--apply", slow.name, cwd=slow.parent
    )
    assert result.returncode == 1, result.stderr  # the DataParallel finding remains
    assert slow.read_text(encoding="utf-8") == nbformat_text(fixed_notebook())
    assert "slow_training.ipynb:cell 5:2:9: TL004" in result.stdout
    again = run_torchlint(
        "fix", "--isolated", "--unsafe-fixes", "--apply", slow.name, cwd=slow.parent
    )
    assert slow.read_text(encoding="utf-8") == nbformat_text(fixed_notebook())
    assert "Fixed" not in again.stdout


def test_a_fix_that_reindents_a_block_keeps_its_magics(tmp_path):
    source = "net.eval()\nfor x in xs:\n    %time a = net(x)\n    b = net(x)\n    !echo done"
    nb = notebook(
        code("from torch import nn\nnet = nn.Linear(4, 2)", "model"), code(source, "eval")
    )
    path = tmp_path / "evaluate.ipynb"
    path.write_text(nbformat_text(nb))
    run_torchlint(
        "fix",
        "--isolated",
        "--unsafe-fixes",
        "--apply",
        "--select",
        "TL001",
        path.name,
        cwd=tmp_path,
    )
    cells = json.loads(path.read_text())["cells"]
    assert (
        "".join(cells[0]["source"]) == "from torch import nn\nimport torch\nnet = nn.Linear(4, 2)"
    )
    assert "".join(cells[1]["source"]) == (
        "net.eval()\nwith torch.no_grad():\n    for x in xs:\n        %time a = net(x)\n        b = net(x)\n        !echo done"
    )


def test_other_json_layouts_are_kept(tmp_path):
    # Two-space indentation, unsorted keys, a source stored as one string, no final newline.
    raw = (
        '{\n  "nbformat": 4,\n  "nbformat_minor": 4,\n  "metadata": {},\n  "cells": [\n'
        '    {\n      "source": "import numpy as np\\nfrom torch import tensor\\nx = tensor(np.load(path))",\n'
        '      "cell_type": "code",\n      "outputs": [],\n      "metadata": {},\n      "execution_count": null\n    },\n'
        '    {\n      "source": [\n        "y = tensor(np.load(other))\\n",\n        "z = 1"\n      ],\n'
        '      "cell_type": "code",\n      "outputs": [],\n      "metadata": {},\n      "execution_count": null\n    }\n  ]\n}'
    )
    path = tmp_path / "layout.ipynb"
    path.write_text(raw)
    run_torchlint("fix", "--isolated", "--unsafe-fixes", "--apply", path.name, cwd=tmp_path)
    expected = raw.replace(
        "from torch import tensor\\nx = tensor(np.load(path))",
        "import torch\\nx = torch.from_numpy(np.load(path))",  # its last use rewritten, the import goes
    ).replace('"y = tensor(np.load(other))\\n"', '"y = torch.from_numpy(np.load(other))\\n"')
    assert path.read_text() == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cells": [', "invalid notebook: Expecting value (line 1, column 12)"),
        ('{"cells": 3}', "invalid notebook: no list of cells (nbformat 4 expected)"),
        (
            '{"cells": [{"cell_type": "code", "source": 7}]}',
            "invalid notebook: cell 1 source is not text",
        ),
        ("[]", "invalid notebook: no list of cells (nbformat 4 expected)"),
    ],
)
def test_an_invalid_notebook_is_a_one_line_error(tmp_path, content, message):
    (tmp_path / "broken.ipynb").write_text(content)
    check = run_torchlint(
        "check", "--isolated", "--output-format", "concise", "broken.ipynb", cwd=tmp_path
    )
    assert check.stdout.startswith(f"broken.ipynb:1:1: TL000 {message}\n")
    fix = run_torchlint(
        "fix", "--isolated", "--unsafe-fixes", "--apply", "broken.ipynb", cwd=tmp_path
    )
    assert f"broken.ipynb:1:1: TL000 [syntax-error] {message}\n" in fix.stdout
    dry = run_torchlint("fix", "--isolated", "broken.ipynb", cwd=tmp_path)
    assert f"broken.ipynb:1:1: TL000 {message}" in dry.stderr
    for result in (check, fix, dry):
        assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (tmp_path / "broken.ipynb").read_text() == content


def test_a_notebook_in_another_language_is_not_linted(tmp_path):
    nb = notebook(code("x <- tensor(grid)", "r"))
    nb["metadata"] = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    (tmp_path / "analysis.ipynb").write_text(nbformat_text(nb))
    result = run_torchlint("check", "--isolated", "analysis.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout


_LINES = [
    "import torch",
    "x = model(batch)",
    "%matplotlib inline",
    "!pip install -q tqdm",
    "files = !ls",
    "np.load?",
    "%%time",
    "    %time y = f(x)",
    "for i in range(3):",
    "    pass",
    "s = '''text?",
    "%not a magic'''",
    "total = (a",
    "  % b)",
    "",
    "# --- torchlint: cell boundary ---",
    "café = 'é'",
    "!echo \\",
    "  continued",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_LINES), max_size=6),
            st.sampled_from(["\n", "\r\n"]),
            st.booleans(),
        ),
        max_size=5,
    )
)
def test_the_adapter_round_trips_any_notebook_unchanged(cells):
    """Masking and restoring IPython syntax, splitting the virtual module and dumping are exact."""
    sources = [
        newline.join(lines) + (newline if final and lines else "")
        for lines, newline, final in cells
    ]
    raw = nbformat_text(notebook(*(code(source, f"c{i}") for i, source in enumerate(sources))))
    nb = parse(raw)
    assert nb.sources(nb.text) == [cell.source for cell in nb.cells]
    assert nb.dump([cell.source for cell in nb.cells]) == raw
    assert nb.dump(nb.sources(nb.text)) == raw
