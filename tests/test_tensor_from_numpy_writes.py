"""TL003 and later in-place writes: sharing memory with the array must not change results.

`torch.from_numpy` and `torch.as_tensor` share the array's memory, so where the array or the
new tensor is written in place after the call, `torch.tensor`'s copy is what the program
needs: no finding, so no fix. Checked through the installed command; the program whose
printed result the old fix changed is run before and after `--fix --unsafe-fixes`.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import run_torchlint

HEAD = "import numpy as np\nimport torch\n\n"

# Each program writes into the array or the tensor after `torch.tensor`: none may be flagged.
WRITTEN = {
    "item_store": "a = np.load('a.npy')\nt = torch.tensor(a)\na[0] = 1\n",
    "slice_store": "a = np.load('a.npy')\nt = torch.tensor(a[:, 0])\na[:, 0] = 1\n",
    "augmented": "a = np.zeros(3)\nt = torch.tensor(a)\na += 1\n",
    "array_method": "a = np.load('a.npy')\nt = torch.tensor(a)\na.sort()\n",
    "array_fill": "a = np.load('a.npy')\nt = torch.tensor(a)\na.fill(0)\n",
    "numpy_out": "a = np.zeros(3)\nt = torch.tensor(a)\nnp.add(a, 1, out=a)\n",
    "numpy_copyto": "a = np.zeros(3)\nt = torch.tensor(a)\nnp.copyto(a, np.ones(3))\n",
    "ufunc_at": "a = np.zeros(3)\nt = torch.tensor(a)\nnp.add.at(a, [0, 1], 1)\n",
    "shuffle": "a = np.load('a.npy')\nt = torch.tensor(a)\nnp.random.shuffle(a)\n",
    "tensor_method": "a = np.load('a.npy')\nt = torch.tensor(a)\nt.add_(1)\n",
    "tensor_chain": "a = np.load('a.npy')\nt = torch.tensor(a).float()\nt.data.fill_(0)\n",
    "tensor_store": "a = np.load('a.npy')\nt = torch.tensor(a)\nt[0] = 5\n",
    "tensor_out": "a = np.zeros(3)\nt = torch.tensor(a)\ntorch.mul(t, 2, out=t)\n",
    "tensor_init": "a = np.zeros(3)\nw = torch.tensor(a)\ntorch.nn.init.normal_(w)\n",
    # a buffer refilled before each copy: the loop's next pass writes after this pass's call
    "refilled_buffer": (
        "buf = np.zeros(4)\nout = []\nfor i in range(3):\n"
        "    buf[:] = i\n    out.append(torch.tensor(buf))\n"
    ),
    # a method of the class writes the attribute the copy is made from
    "attribute": (
        "class Frames:\n    def __init__(self):\n        self.frames = np.load('f.npy')\n\n"
        "    def get(self, i):\n        return torch.tensor(self.frames[i])\n\n"
        "    def clear(self):\n        self.frames[:] = 0\n"
    ),
    # a function writes the module's array whenever it is called
    "function_writes_global": (
        "a = np.load('a.npy')\nt = torch.tensor(a)\n\ndef reset():\n    a[:] = 0\n"
    ),
}

# Writes that cannot reach the shared memory after the call: still flagged.
NOT_WRITTEN = {
    "write_before": "a = np.load('a.npy')\na[a < 0] = 0\nt = torch.tensor(a)\n",
    "rebound": "a = np.load('a.npy')\nt = torch.tensor(a)\na = np.zeros(3)\n",
    "requires_grad": "a = np.load('a.npy')\nt = torch.tensor(a)\nt.requires_grad_()\n",
    "other_array": "a = np.load('a.npy')\nb = np.zeros(3)\nt = torch.tensor(a)\nb[0] = 1\n",
    "init_writes": (
        "class Frames:\n    def __init__(self):\n        self.frames = np.load('f.npy')\n"
        "        self.frames[self.frames < 0] = 0\n\n"
        "    def get(self, i):\n        return torch.tensor(self.frames[i])\n"
    ),
}


def _flagged(tmp_path, programs: dict[str, str]) -> set[str]:
    for name, body in programs.items():
        (tmp_path / f"{name}.py").write_text(HEAD + body)
    result = run_torchlint(
        "check", "--isolated", "--no-cache", "--select", "TL003", "--output-format", "json", ".",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return {d["filename"].removesuffix(".py") for d in json.loads(result.stdout)}


def test_a_later_write_into_the_array_or_the_tensor_keeps_the_copy(tmp_path):
    assert _flagged(tmp_path, WRITTEN) == set()


def test_writes_that_cannot_reach_the_shared_memory_do_not_hide_the_finding(tmp_path):
    assert _flagged(tmp_path, NOT_WRITTEN) == set(NOT_WRITTEN)


def test_a_later_notebook_cell_that_writes_into_the_array_keeps_the_copy(tmp_path):
    cells = [
        "import numpy as np\nimport torch",
        "counts = np.load('counts.npy')\nsnapshot = torch.tensor(counts)",
        "counts += 1",
    ]
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
             "outputs": [], "source": source}
            for i, source in enumerate(cells)
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    (tmp_path / "counts.ipynb").write_text(json.dumps(notebook))
    result = run_torchlint(
        "check", "--isolated", "--no-cache", "--select", "TL003", ".", cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_fixed_program_prints_what_the_original_printed_and_it_runs(tmp_path):
    """The program the old fix changed: `from_numpy` would have printed [1.0, 1.0, 1.0]. Next to
    it a program with no later write, whose fix must still be applied and keep its result. Both
    copy in a function called in a loop: a copy that runs once is not flagged at all."""
    written = tmp_path / "written.py"
    written.write_text(
        HEAD + "def snapshot(n):\n    counts = np.zeros(n)\n    snap = torch.tensor(counts)\n"
        "    counts += 1\n    return snap\n\nfor n in (3,):\n    print(snapshot(n).tolist())\n"
    )
    unwritten = tmp_path / "unwritten.py"
    unwritten.write_text(
        HEAD + "def snapshot(n):\n    counts = np.zeros(n)\n    counts += 1\n"
        "    return torch.tensor(counts)\n\nfor n in (3,):\n    print(snapshot(n).tolist())\n"
    )
    before = {p: _run(p) for p in (written, unwritten)}
    original = written.read_text()
    fixed = run_torchlint(
        "check", "--isolated", "--no-cache", "--select", "TL003", "--fix", "--unsafe-fixes", ".",
        cwd=tmp_path,
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert written.read_text() == original
    assert "torch.from_numpy(counts)" in unwritten.read_text()
    assert {p: _run(p) for p in (written, unwritten)} == before
    assert before[written] == "[0.0, 0.0, 0.0]\n"


def _run(path) -> str:
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout
