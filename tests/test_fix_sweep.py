"""`torchlint fix --apply --unsafe-fixes --select ALL` over real code nobody here wrote.

Every .py file of the installed torch package and of pinned PyPI wheels with training code
(`tests/sweep/trees.py`) is copied to a scratch directory, checked, fixed, and fixed again: no
internal error, every changed file still parses and compiles, and the second pass changes
nothing (`tests/sweep/run.py`). The wheels share the development set's download cache; without
network and without a warm cache the test fails, as the development set's does. `pytest -s`
prints one summary line per tree: files swept, findings, fixes applied, files changed, failures.
"""

from __future__ import annotations

import pytest

from sweep.run import sweep
from sweep.trees import PACKAGES, torch_tree, wheel_trees


@pytest.fixture(scope="module")
def wheels():
    return wheel_trees()


def _report(result) -> None:
    print(f"\n{result.summary()}")
    assert result.failures == [], "\n".join(result.failures)


def test_fix_sweep_over_torch(tmp_path):
    tree = torch_tree()
    assert len(tree.files) > 1000, "the installed torch has too few .py files to be the real package"
    _report(sweep(tree, tmp_path))


@pytest.mark.parametrize("name", [p["name"] for p in PACKAGES])
def test_fix_sweep_over_pypi_package(name, wheels, tmp_path):
    tree = wheels[name]
    assert tree.files, f"{tree.name} has no .py file"
    _report(sweep(tree, tmp_path))
