"""TL105 grad-accumulation-broken beyond its examples: shapes met in real training code."""

from __future__ import annotations

from conftest import lint_source


def _found(code: str, text: str) -> list[int]:
    """Rows of `code`'s findings in `text`."""
    return [d.start.row for d in lint_source(code, text) if d.code == code]


def test_tl105_gradients_rescaled_at_the_step_leave_an_undivided_loss_alone():
    text = (
        "import torch\nfor idx, batch in enumerate(loader):\n    current_loss = torch.nn.functional.cross_entropy(model(batch['x']), batch['y'])\n"
        "    current_loss.backward()\n    if (idx + 1) % grad_accum == 0:\n        training.scale_grads(model, 1 / grad_accum)\n"
        "        optimizer.step()\n        optimizer.zero_grad(set_to_none=True)\n"
    )
    assert _found("TL105", text) == []


def test_tl105_zero_grad_after_a_skip_of_the_accumulating_iterations_is_clean():
    text = (
        "import torch\nfor i, (x, y) in enumerate(loader):\n    (criterion(model(x), y) / 4).backward()\n"
        "    if (i + 1) % 4 != 0:\n        continue\n    optimizer.step()\n    optimizer.zero_grad()\n"
    )
    assert _found("TL105", text) == []


def test_tl105_reports_each_zero_grad_once_and_skips_the_scaling_check():
    text = (
        "import torch\nimport torch.nn.functional as F\nfor i, (x, y) in enumerate(loader):\n    optimizer.zero_grad()\n"
        "    loss = F.cross_entropy(model(x), y)\n    loss.backward()\n    if i % 4 == 3:\n        optimizer.step()\n"
    )
    assert _found("TL105", text) == [4]
