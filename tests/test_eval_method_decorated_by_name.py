"""`model.recognize(x)` on a receiver whose class the file cannot see (a parameter; a model a
builder function returns) runs without grad when every project class that defines
`recognize` decorates it `@torch.no_grad()`: whichever of them the caller passes, the method
turns autograd off itself (kospeech's speech models). One undecorated definition, or a method no
project class defines, leaves the call a finding."""

from __future__ import annotations

from conftest import check_json

MODELS = """\
import torch
from torch import nn


class Listener(nn.Module):
    {first}
    def recognize(self, inputs, lengths):
        return self.decoder(self.encoder(inputs, lengths)).argmax(-1)


class Conformer(nn.Module):
    @torch.no_grad()
    def recognize(self, inputs, lengths):
        return self.fc(self.encoder(inputs, lengths)).argmax(-1)
"""
EVALUATOR = """\
import torch


def evaluate(model, loader, device):
    model.eval()
    for inputs, targets, lengths in loader:
        y_hats = model.{method}(inputs.to(device), lengths)
        print((y_hats == targets.to(device)).float().mean())
"""


def _findings(tmp_path, first: str, method: str = "recognize") -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "models.py").write_text(MODELS.format(first=first))
    (tmp_path / "pkg" / "evaluator.py").write_text(EVALUATOR.format(method=method))
    found = check_json(".", select="TL001", cwd=tmp_path)
    return [(d["filename"], d["location"]["row"]) for d in found]


def test_every_definition_decorated_runs_without_grad(tmp_path):
    assert _findings(tmp_path, "@torch.no_grad()") == []


def test_one_undecorated_definition_keeps_the_finding(tmp_path):
    assert _findings(tmp_path, "") == [("pkg/evaluator.py", 7)]


def test_a_method_no_project_class_defines_stays_a_finding(tmp_path):
    assert _findings(tmp_path, "@torch.no_grad()", method="transcribe") == [("pkg/evaluator.py", 7)]
