"""TL001 across a package's `__init__.py`: callers that import a function from the package that
re-exports it are its callers.

A library keeps `count_flops` in `pkg/utils/complexity.py` and re-exports it from
`pkg/utils/__init__.py` (`from .complexity import count_flops`); the training scripts write
`from pkg.utils import count_flops`. The project index follows such an import to the module that
defines the name (`ProjectIndex._passed_on`), so the function's callers are known: called once
from a `main`, its single forward on random input, whose output it measures, runs once and is no
finding; called every epoch, it evaluates every epoch with autograd on and is one. (A forward
whose result is dropped, hooks counting FLOPs, evaluates nothing wherever it runs.) Invented projects,
checked once by the installed `torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_COMPLEXITY = """\
import torch


def count_flops(model, shape):
    model.eval()
    x = torch.rand(shape)
    out = model(x){mark}
    return out.numel()
"""

_INIT = "from .complexity import count_flops\n"


def _main(call: str) -> str:
    return f"""\
import torch
from pkg.utils import count_flops


def main(model, loader, optimizer):
{call}


if __name__ == "__main__":
    main(torch.nn.Linear(8, 8), [], None)
"""


_ONCE = "    print(count_flops(model, (1, 8)))"
_EVERY_EPOCH = """\
    for epoch in range(10):
        for x in loader:
            model.train()
            model(x).sum().backward()
            optimizer.step()
        print(count_flops(model, (1, 8)))"""


def _project(mark: str, call: str) -> dict[str, str]:
    """The package re-exporting the helper, its module (marked or not) and the script."""
    return {
        "pkg/__init__.py": "",
        "pkg/utils/__init__.py": _INIT,
        "pkg/utils/complexity.py": _COMPLEXITY.format(mark=mark),
        "main.py": _main(call),
    }


CASES = [
    Case("reexported-helper-called-once", files=_project("", _ONCE), rules=("TL001",)),
    Case(
        "reexported-helper-called-every-epoch",
        files=_project("  # TL001: model(x)", _EVERY_EPOCH),
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("reexported_functions")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_reexported_function_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
