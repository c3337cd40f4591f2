"""TL111 adam-with-weight-decay beyond its examples: a value bound twice."""

from __future__ import annotations

from conftest import lint_source


def test_weight_decay_bound_twice_is_not_known():
    text = "import torch\nwd = 1e-4\nif small:\n    wd = 0\nopt = torch.optim.Adam(model.parameters(), weight_decay=wd)\n"
    assert lint_source("TL111", text) == []
