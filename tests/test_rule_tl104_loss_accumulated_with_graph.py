"""TL104 loss-accumulated-with-graph beyond its examples: shapes met in real training code."""

from __future__ import annotations

from conftest import lint_source


def _found(code: str, text: str) -> list[int]:
    """Rows of `code`'s findings in `text`."""
    return [d.start.row for d in lint_source(code, text) if d.code == code]


def test_tl104_a_value_detached_on_the_host_before_it_is_added_is_clean():
    text = (
        "def pass_epoch(model, loss_fn, loader, optimizer):\n    loss = 0\n    for x, y in loader:\n        loss_batch = loss_fn(model(x), y)\n"
        "        if model.training:\n            loss_batch.backward()\n            optimizer.step()\n"
        "        loss_batch = loss_batch.detach().cpu()\n        loss += loss_batch\n    return loss\n"
    )
    assert _found("TL104", text) == []


def test_tl104_token_counts_multiplied_into_the_loss_carry_no_graph():
    text = (
        "import torch\nrunning_loss, num_tokens = 0, 0\nfor idx, batch in enumerate(loader):\n"
        "    n = (batch['labels'] != -100).sum()\n    num_tokens += n\n    current_loss = loss_step(batch) * n\n"
        "    running_loss += current_loss\n    current_loss.backward()\n"
        "    if (idx + 1) % accum == 0:\n        optimizer.step()\n        running_loss = 0\n        num_tokens = 0\n"
    )
    # Reset with the optimizer step that ends each accumulation group: bare graph nodes of one
    # update, each backward having freed its activations; not a finding.
    assert _found("TL104", text) == []
    # Reset now and then, apart from the update: every step's graph piles up until then.
    kept = text.replace(
        "    if (idx + 1) % accum == 0:\n        optimizer.step()\n",
        "    optimizer.step()\n    if idx % 100 == 0:\n",
    )
    assert _found("TL104", kept) == [7]


def test_tl104_list_of_losses_for_the_epoch_mean_is_flagged_and_a_dict_of_floats_is_not():
    text = (
        "import torch\nlosses, scores = [], {}\nfor x, y in train_loader:\n    loss = criterion(net(x), y)\n    optimizer.zero_grad()\n"
        "    loss.backward()\n    optimizer.step()\n    losses.append(loss)\n    scores['loss'] = loss.item()\n"
        "epoch_loss = torch.mean(torch.stack(losses)).item()\n"
    )
    assert _found("TL104", text) == [8]


def test_tl104_under_a_grad_disabled_helper_is_clean():
    text = (
        "import torch\n@torch.no_grad()\ndef evaluate(model, loader):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n        total += loss\n    return total\n"
        "def train(model, loader, optimizer):\n    for x, y in loader:\n        criterion(model(x), y).backward()\n        optimizer.step()\n"
    )
    assert _found("TL104", text) == []
