"""A project's own context manager that turns grad off (`@contextmanager` yielding inside
`with torch.no_grad():`, as MONAI's `eval_mode`) turns it off for the body of a `with` that
enters it, whether defined in the same module or in another module of the project: TL001 is
silent on the evaluation there. One that yields outside its no_grad block leaves grad on."""

from __future__ import annotations

from conftest import check_json

CONTEXTS = '''\
from contextlib import contextmanager

import torch


@contextmanager
def eval_mode(*nets):
    """Nets in eval mode, grad off."""
    training = [n for n in nets if n.training]
    try:
        with torch.no_grad():
            yield [n.eval() for n in nets]
    finally:
        for n in training:
            n.train()


@contextmanager
def timed(*nets):
    with torch.no_grad():
        pass
    yield nets
'''
VALIDATE = """\
import torch
{imports}

def validate(model, loader):
    total = 0.0
    with {context}(model):
        for x in loader:
            total += model(x).sum().item()
    return total
"""


def _rows(tmp_path, files: dict[str, str]) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = check_json(".", select="TL001", cwd=tmp_path)
    return [(d["filename"], d["location"]["row"]) for d in found]


def _project(context: str) -> dict[str, str]:
    run = VALIDATE.format(imports="from pkg.utils import eval_mode, timed\n", context=context)
    return {"pkg/__init__.py": "", "pkg/utils.py": CONTEXTS, "pkg/run.py": run}


def test_context_manager_of_another_module_turns_grad_off(tmp_path):
    assert _rows(tmp_path, _project("eval_mode")) == []


def test_context_manager_yielding_outside_no_grad_leaves_grad_on(tmp_path):
    assert _rows(tmp_path, _project("timed")) == [("pkg/run.py", 9)]


def test_context_manager_of_the_same_module(tmp_path):
    text = CONTEXTS + "\n\n" + VALIDATE.format(imports="", context="eval_mode")
    assert _rows(tmp_path, {"run.py": text}) == []
