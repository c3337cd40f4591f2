"""TL103 tensor-created-then-moved beyond its examples: fix safety, random factories, multi-line creations, the prefilter."""

from __future__ import annotations

import pytest
from conftest import fixed_source, lint_source

from torchlint.diagnostics import Applicability
from torchlint.registry import find_rule


@pytest.mark.parametrize(
    ("creation", "applicability"),
    [
        ("torch.zeros(n)", Applicability.SAFE),
        ("torch.arange(1, n)", Applicability.SAFE),
        ("torch.arange(0, n, 2)", Applicability.UNSAFE),
        ("torch.linspace(0, 1, n)", Applicability.UNSAFE),
        ("torch.ones(n, requires_grad=True)", Applicability.UNSAFE),
    ],
)
def test_fix_safety_follows_whether_the_values_can_change(creation, applicability):
    found = lint_source(
        "TL103", f"import torch\n\n\ndef forward(x, n):\n    return x + {creation}.to(device)\n"
    )  # every step
    assert len(found) == 1 and found[0].fix.applicability is applicability


def test_random_factories_are_flagged_only_where_they_run_every_step():
    once = "import torch\nw = torch.randn(8, 8).to(device)\n"
    assert lint_source("TL103", once) == []
    looped = "import torch\nfor x in loader:\n    noise = torch.rand(x.shape).cuda()\n    model(x.cuda() + noise).sum().backward()\n"
    found = lint_source("TL103", looped)
    assert len(found) == 1 and found[0].fix.applicability is Applicability.UNSAFE
    assert fixed_source("TL103", looped, unsafe=False) == looped


def test_fix_keeps_an_indented_multi_line_creation_intact():
    text = (
        "import torch\n\n\ndef forward(x):\n    if x is not None:\n        m = torch.zeros(\n            x.shape[0],\n"
        "            dtype=torch.bool,  # the mask\n        ).to(x.device)\n    return m\n"
    )
    assert fixed_source("TL103", text, unsafe=False) == (
        "import torch\n\n\ndef forward(x):\n    if x is not None:\n        m = torch.zeros(\n            x.shape[0],\n"
        "            dtype=torch.bool, device=x.device,  # the mask\n        )\n    return m\n"
    )


@pytest.mark.parametrize(
    "spacing",
    [
        "torch.zeros(3) .cuda()",
        "(torch.zeros(3)\n .to(device))",
        "torch.zeros(3).\\\n    to(device)",
    ],
)
def test_prefilter_admits_unusual_spacing(spacing):
    text = f"import torch\n\n\ndef forward(x):\n    y = {spacing}\n    return x + y\n"
    assert find_rule("TL103").may_match(text)
    assert [d.code for d in lint_source("TL103", text)] == ["TL103"]
