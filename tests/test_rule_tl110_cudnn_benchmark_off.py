"""TL110 cudnn-benchmark-off beyond its examples: where the fix puts the line, seeding helpers."""

from __future__ import annotations

from conftest import fixed_source, lint_source

CONV = (
    "model = nn.Conv2d(3, 8, 3).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x in loader:\n    model(x).sum().backward()\n    opt.step()"
)


def _fixed(code: str, text: str) -> str:
    """The fixed text, which the rule no longer flags."""
    fixed = fixed_source(code, text)
    assert lint_source(code, fixed) == []
    return fixed


def test_benchmark_goes_after_imports_guarded_by_try():
    text = (
        "import torch\ntry:\n    from torch import nn\nexcept ImportError:\n    raise\nSEED = 0\n"
        + CONV
        + "\n"
    )
    assert _fixed("TL110", text).startswith(
        "import torch\ntry:\n    from torch import nn\nexcept ImportError:\n    raise\ntorch.backends.cudnn.benchmark = True\nSEED = 0\n"
    )


def test_benchmark_line_is_added_to_a_file_without_final_newline():
    text = "import torch\nfrom torch import nn\n" + CONV
    assert _fixed("TL110", text).startswith(
        "import torch\nfrom torch import nn\ntorch.backends.cudnn.benchmark = True\nmodel ="
    )


def test_benchmark_insertion_ignores_imports_inside_the_main_guard():
    text = "import torch\nfrom torch import nn\n" + CONV.replace("\n", "\n    ").replace(
        "model = ", "def main():\n    model = ", 1
    )
    text += "\n\nif __name__ == '__main__':\n    import sys\n    main()\n"
    assert "from torch import nn\ntorch.backends.cudnn.benchmark = True\ndef main():" in _fixed(
        "TL110", text
    )


def test_plain_seeding_does_not_hide_the_missing_benchmark():
    text = (
        "import random\nimport numpy as np\nimport torch\nfrom torch import nn\nrandom.seed(0)\nnp.random.seed(0)\ntorch.manual_seed(0)\n"
        + CONV
        + "\n"
    )
    assert [d.code for d in lint_source("TL110", text)] == ["TL110"]
    helper = text.replace(
        "import random\n", "import random\nfrom utils import init_seeds\n"
    ).replace("random.seed(0)\n", "init_seeds(0)\n")
    assert lint_source("TL110", helper) == []
