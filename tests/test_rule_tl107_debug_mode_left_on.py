"""TL107 debug-mode-left-on beyond its examples: test files and training scripts."""

from __future__ import annotations

import pytest
from conftest import lint_source

ANOMALY = "import torch\ntorch.autograd.set_detect_anomaly(True)\nfor x in loader:\n    model(x).sum().backward()\n    opt.step()\n"


@pytest.mark.parametrize("path", ["tests/train_loop.py", "test_train.py", "pkg/train_test.py"])
def test_debug_tools_in_tests_are_not_flagged(path):
    unit_test = ANOMALY + "\n\ndef test_trains():\n    pass\n"  # a test function: no script
    assert lint_source("TL107", unit_test, path=path) == []


def test_debug_tools_in_training_scripts_are_flagged():
    assert [d.code for d in lint_source("TL107", ANOMALY, path="scripts/train.py")] == ["TL107"]
