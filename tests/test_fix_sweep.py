"""`torchlint fix --apply --unsafe-fixes --select ALL` over real code nobody here wrote.

Every .py file of the installed torch package and of pinned PyPI wheels with training code
(`tests/sweep/trees.py`) is copied to a scratch directory, checked, fixed, and fixed again: no
internal error, every changed file still parses and compiles, and the second pass changes
nothing (`tests/sweep/run.py`). The wheels share the development set's download cache; without
network and without a warm cache the test fails, as the development set's does. `pytest -s`
prints one summary line per tree: files swept, findings, fixes applied, files changed, failures.

Behaviour is checked too: the fixtures' fixed scripts run in tests/test_fix_command.py, and here
pytorch-tabnet, fixed with every fix, trains on synthetic data and predicts exactly as before.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import run_torchlint
from sweep.run import SELECTION, sweep
from sweep.trees import PACKAGES, torch_tree, wheel_trees


@pytest.fixture(scope="module")
def wheels():
    return wheel_trees()


def _report(result) -> None:
    print(f"\n{result.summary()}")
    assert result.failures == [], "\n".join(result.failures)


def test_fix_sweep_over_torch(tmp_path):
    tree = torch_tree()
    assert len(tree.files) > 1000, (
        "the installed torch has too few .py files to be the real package"
    )
    _report(sweep(tree, tmp_path))


@pytest.mark.parametrize("name", [p["name"] for p in PACKAGES])
def test_fix_sweep_over_pypi_package(name, wheels, tmp_path):
    tree = wheels[name]
    assert tree.files, f"{tree.name} has no .py file"
    _report(sweep(tree, tmp_path))


# A small script of ours driving a real library's training loop on synthetic data; it saves the
# trained model's predictions. The library's fit, predict and data loading are its own code.
TABNET_DRIVER = """\
import sys

import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)
from pytorch_tabnet.tab_model import TabNetClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(512, 8)).astype(np.float32)
y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
model = TabNetClassifier(seed=0, verbose=0, device_name="cpu")
model.fit(X[:384], y[:384], eval_set=[(X[384:], y[384:])], max_epochs=3, batch_size=128, virtual_batch_size=64)
np.save(sys.argv[1], model.predict_proba(X[384:]))
"""


def test_fixed_real_training_code_trains_the_same(wheels, tmp_path):
    """Every fix, unsafe ones included, applied to pytorch-tabnet's own training code: the fixed
    library trains and predicts exactly as the original on CPU."""
    import numpy as np

    tree = wheels["pytorch-tabnet"]
    for version in ("original", "fixed"):
        for name, data in tree.files.items():
            (tmp_path / version / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / version / name).write_bytes(data)
    fixed = run_torchlint(
        "fix",
        *SELECTION,
        "--unsafe-fixes",
        "--apply",
        "--target-torch-version",
        tree.target,
        ".",
        cwd=tmp_path / "fixed",
        timeout=600,
    )
    assert fixed.returncode in (0, 1), fixed.stderr
    changed = [n for n, data in tree.files.items() if (tmp_path / "fixed" / n).read_bytes() != data]
    assert changed, "no fix applied: the test would prove nothing"
    (tmp_path / "drive.py").write_text(TABNET_DRIVER)
    for version in ("original", "fixed"):
        env = {**os.environ, "PYTHONPATH": str(tmp_path / version), "OMP_NUM_THREADS": "1"}
        run = subprocess.run(
            [sys.executable, "drive.py", f"{version}.npy"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-3000:]
    assert np.array_equal(np.load(tmp_path / "original.npy"), np.load(tmp_path / "fixed.npy")), (
        changed
    )
