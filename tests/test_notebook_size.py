"""Notebooks are as large as their code: the size limit counts the code cells, for a path and
for stdin alike, while stdin is read with a cap so nothing unbounded is read into memory."""

from __future__ import annotations

import base64
import json
import os
import random
from pathlib import Path

import pytest
from conftest import run_torchlint

FIXABLE = "import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n"  # TL106, a safe fix
FIXED = 'with torch.amp.autocast("cuda"):'


def _notebook(cells: list[str], image_bytes: int) -> str:
    """nbformat 4 JSON: each code cell with a PNG-like output of `image_bytes` random bytes."""
    image = base64.b64encode(random.Random(0).randbytes(image_bytes)).decode()
    output = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": image, "text/plain": ["<Figure size 640x480>"]},
    }
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": number,
                    "id": f"cell-{number}",
                    "metadata": {},
                    "source": source.splitlines(keepends=True),
                    "outputs": [output],
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
def big(tmp_path: Path) -> Path:
    """A 4 MB notebook holding about 10 KB of code, the rest image outputs."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "n"\ndependencies = ["torch>=2.4"]\n'
    )
    code = [FIXABLE] + [f"values_{i} = [{', '.join(map(str, range(120)))}]\n" for i in range(20)]
    path = tmp_path / "plots.ipynb"
    path.write_text(_notebook(code, 145_000))
    assert 4_000_000 < path.stat().st_size < 4_400_000
    assert 9_000 < sum(map(len, code)) < 11_000
    return path


def test_a_large_notebook_of_little_code_is_analysed_and_fixed_through_its_path(big):
    result = run_torchlint("check", big.name, "--no-cache", cwd=big.parent)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cell 1:2:6: TL106" in result.stdout, result.stdout
    fixed = run_torchlint("check", big.name, "--fix", cwd=big.parent)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    cells = json.loads(big.read_text())["cells"]
    assert FIXED in "".join(cells[0]["source"])
    assert cells[0]["outputs"][0]["data"]["image/png"]  # outputs kept


def test_a_large_notebook_of_little_code_is_analysed_and_fixed_through_stdin(big):
    raw = big.read_text()
    args = ("-", "--stdin-filename", big.name)
    result = run_torchlint("check", *args, cwd=big.parent, input=raw)
    assert result.returncode == 1 and "cell 1:2:6: TL106" in result.stdout, result.stderr
    fixed = run_torchlint("check", *args, "--fix", cwd=big.parent, input=raw)
    assert fixed.returncode == 0, fixed.stderr
    cells = json.loads(fixed.stdout)["cells"]
    assert FIXED in "".join(cells[0]["source"])
    assert len(fixed.stdout) > 4_000_000


def test_a_notebook_of_too_much_code_is_one_line_through_path_and_stdin(tmp_path):
    path = tmp_path / "generated.ipynb"
    path.write_text(_notebook([f"x_{i} = {i}\n" * 5000 for i in range(50)], 16))
    assert path.stat().st_size < 16 * 2**20
    expected = "notebook code too large to analyse"
    for args, feed in (
        (("check", path.name), None),
        (("check", "-", "--stdin-filename", path.name), path.read_text()),
    ):
        result = run_torchlint(*args, cwd=tmp_path, input=feed)
        lines = [line for line in result.stdout.splitlines() if "TL998" in line]
        assert len(lines) == 1 and expected in lines[0], result.stdout + result.stderr
        assert result.returncode == 1


def test_stdin_is_read_with_a_cap(tmp_path):
    """3 MB of Python on stdin is one TL998 line, as the same file would be; `--fix` passes the
    input through unchanged, since stdout stands for the fixed file."""
    source = "x = 1\n" * 500_000
    result = run_torchlint("check", "-", cwd=tmp_path, input=source)
    assert result.returncode == 1
    assert "-:1:1: TL998 [io-error] file too large to analyse (over 2 MiB)" in result.stdout
    passed = run_torchlint("check", "-", "--fix", cwd=tmp_path, input=source)
    assert passed.stdout == source
    assert passed.returncode == 1 and "too large" in passed.stderr


def test_a_notebook_over_the_json_ceiling_is_refused_unread(tmp_path):
    path = tmp_path / "huge.ipynb"
    path.write_bytes(b"")
    os.truncate(path, 65 * 2**20)
    result = run_torchlint("check", path.name, cwd=tmp_path)
    assert "TL998 [io-error] file too large to analyse (65.0 MiB > 64 MiB)" in result.stdout
