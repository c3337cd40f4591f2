"""TL109 optimizer-not-fused beyond its examples: the target torch version."""

from __future__ import annotations

from conftest import lint_source

SGD = "import torch\nmodel.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in loader:\n    model(x).sum().backward()\n    opt.step()\n"


def test_fused_sgd_needs_torch_2_3():
    assert [d.code for d in lint_source("TL109", SGD, version="2.3")] == ["TL109"]
    assert lint_source("TL109", SGD, version="2.2") == []
