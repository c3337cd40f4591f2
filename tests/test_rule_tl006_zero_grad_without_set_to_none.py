"""TL006 zero-grad-without-set-to-none beyond its examples: the configured torch version."""

from __future__ import annotations

import json

from conftest import run_torchlint


def test_bare_zero_grad_follows_the_configured_torch_version(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n\ndef step(opt, loss):\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "1.13"\n')
    old = run_torchlint(
        "check",
        "--no-cache",
        "--select",
        "TL006",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    assert [d["location"]["row"] for d in json.loads(old.stdout)] == [4]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "2.1"\n')
    new = run_torchlint(
        "check",
        "--no-cache",
        "--select",
        "TL006",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    assert new.returncode == 0 and json.loads(new.stdout) == []
