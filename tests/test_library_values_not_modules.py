"""Attributes of what a library that builds no nn.Module returns are no modules, whatever their
names say: `spec.loader.exec_module(module)` on `spec = importlib.util.spec_from_file_location(...)`
imports a file, it runs no forward pass. The model's own evaluation beside it stays a finding."""

from __future__ import annotations

from conftest import check_json

SCRIPT = """\
import importlib.util
import sys

import torch


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


model = torch.load("m.pt")
model.eval()
for path in ["a.py", "b.py"]:
    prompts = load("p", path)
    print(model(prompts.x))
"""


def test_importlib_loader_runs_no_forward(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "run.py").write_text(SCRIPT)
    found = check_json(".", select="TL001", cwd=tmp_path)
    assert [d["location"]["row"] for d in found] == [19]
