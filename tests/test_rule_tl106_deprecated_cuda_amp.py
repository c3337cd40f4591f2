"""TL106 deprecated-cuda-amp beyond its examples: the target torch version."""

from __future__ import annotations

from conftest import lint_source

AMP = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def test_deprecated_amp_follows_the_target_version():
    assert [d.code for d in lint_source("TL106", AMP, version="2.4")] == ["TL106"]
    assert lint_source("TL106", AMP, version="2.3") == []
