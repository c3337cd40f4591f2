"""TL006 on torch < 2.0: a bare `zero_grad()` run once per epoch, beside the per-batch loop that
zeroes or backpropagates on every step, costs one memset per epoch and is not reported; the
per-step calls are, and so is the only `zero_grad()` of full-batch training (one step per epoch)."""

from __future__ import annotations

import json
import textwrap

from conftest import run_torchlint


def _rows(tmp_path, source: str) -> list[int]:
    (tmp_path / "train.py").write_text(textwrap.dedent(source).lstrip("\n"))
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "1.13"\n')
    result = run_torchlint(
        "check",
        "--no-cache",
        "--select",
        "TL006",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    return sorted(d["location"]["row"] for d in json.loads(result.stdout))


def test_epoch_top_zero_grad_is_silent_beside_per_batch_calls(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch

        def train(model, loader, optimizer, epochs):
            for epoch in range(epochs):
                optimizer.zero_grad()
                for x, y in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
        """,
    )
    assert rows == [7]


def test_epoch_function_zero_grad_is_silent_when_backward_is_per_batch(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch

        def train_epoch(model, loader, optimizer):
            model.zero_grad()
            for i, (x, y) in enumerate(loader):
                torch.nn.functional.mse_loss(model(x), y).backward()
                if (i + 1) % 4 == 0:
                    optimizer.step()
                    optimizer.zero_grad()

        for epoch in range(10):
            train_epoch(net, train_loader, opt)
        """,
    )
    assert rows == [9]


def test_training_step_called_per_batch_stays_flagged(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch

        def step(model, optimizer, x, y):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()

        def train(model, loader, optimizer, epochs):
            for epoch in range(epochs):
                optimizer.zero_grad()
                for x, y in loader:
                    step(model, optimizer, x, y)
        """,
    )
    assert rows == [4]


def test_full_batch_training_zero_grad_stays_flagged(tmp_path):
    rows = _rows(
        tmp_path,
        """
        import torch

        for epoch in range(200):
            optimizer.zero_grad()
            loss = torch.nn.functional.nll_loss(model(features, adj)[idx], labels[idx])
            loss.backward()
            optimizer.step()
        """,
    )
    assert rows == [4]
