"""A module whose top-level import asks its own project's package for what it lacks never runs.

Invented projects, checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL005: text` expects that finding there; every
other finding of the case's rules fails). A stale example script imports names its project's
package `__init__.py` no longer provides, or submodules that no longer exist (two import
statements or more: the API it was written for is gone): the script fails on its first import,
even when run as a script, so its performance findings are dropped. Each kept case gives the
package a way to provide the name, so the finding stays.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_NET = """\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)){mark}

    def forward(self, x):
        return self.body(x)


def step(model, loader, optimizer):
    for x in loader:
        pad = torch.zeros(8).cuda(){mark6}
        (model(x.cuda()).sum() + pad.sum()).backward()
        optimizer.step()


if __name__ == "__main__":
    step(Head(), [], None)
"""
_SILENT = _NET.format(mark="", mark6="")
_KEPT = _NET.format(mark="  # TL005: nn.Conv2d(3, 8, 3)", mark6="  # TL103: torch.zeros(8).cuda()")
_RULES = ("TL005", "TL103")
_PKG = {
    "speech/__init__.py": "from pathlib import Path\n\n__version__ = '1.0'\n",
    "speech/problem/__init__.py": "from .base import Problem\n",
    "speech/problem/base.py": "class Problem:\n    pass\n",
}


def _script(imports: str, body: str) -> str:
    return imports + "\n" + body


# A submodule the package does not have: beside each kept case's import, so that the import the
# case is about decides it (one missing import alone is not enough).
_GONE = "from speech.sampler import Wrapper\n"

CASES = [
    # The package's `__init__.py` defines none of the names the script asks it for, and the
    # script imports from a submodule the package does not have.
    Case(
        "names-and-submodule-the-package-lacks",
        files={**_PKG, "example/train.py": _script(_GONE + "from speech import Logs\n", _SILENT)},
        rules=_RULES,
    ),
    # A subpackage's `__init__.py` lacks the name (`problem` exists, `Task` is nowhere), and a
    # plain import names a submodule path that is gone.
    Case(
        "name-a-subpackage-lacks",
        files={
            **_PKG,
            "example/train.py": _script(
                "import speech.superb.asr\nfrom speech.problem import Task\n", _SILENT
            ),
        },
        rules=_RULES,
    ),
    # One missing import alone may be a file moved or never committed: the code is taken as live.
    Case(
        "one-missing-import-alone",
        files={**_PKG, "example/train.py": _script(_GONE, _KEPT)},
        rules=_RULES,
    ),
    # Two names missing from one statement are still one statement.
    Case(
        "one-statement-two-names",
        files={**_PKG, "example/train.py": _script("from speech import Logs, Output\n", _KEPT)},
        rules=_RULES,
    ),
    # Names the package provides: defined, imported, or a submodule file of that name.
    Case(
        "names-the-package-provides",
        files={
            **_PKG,
            "example/train.py": _script(
                _GONE + "from speech import Path, __version__, problem\n"
                "from speech.problem import Problem, base\n",
                _KEPT,
            ),
        },
        rules=_RULES,
    ),
    # A star import in the package may provide anything.
    Case(
        "package-star-import",
        files={
            **_PKG,
            "speech/__init__.py": "from .core import *\n",
            "speech/core.py": "Logs = 1\n",
            "example/train.py": _script(_GONE + "from speech import Logs\n", _KEPT),
        },
        rules=_RULES,
    ),
    # A module `__getattr__` provides names lazily.
    Case(
        "package-module-getattr",
        files={
            **_PKG,
            "speech/__init__.py": "def __getattr__(name):\n    return name\n",
            "example/train.py": _script(_GONE + "from speech import Logs\n", _KEPT),
        },
        rules=_RULES,
    ),
    # The import sits in a `try`: the script handles its failure.
    Case(
        "import-inside-try",
        files={
            **_PKG,
            "example/train.py": _script(
                _GONE + "try:\n    from speech import Logs\nexcept ImportError:\n    Logs = None\n",
                _KEPT,
            ),
        },
        rules=_RULES,
    ),
    # A name the build writes (`setup.py` names the extension `speech.ops`) is not in the tree.
    Case(
        "name-the-build-provides",
        files={
            **_PKG,
            "setup.py": "from setuptools import setup\n\nsetup(ext_modules=['speech.ops'])\n",
            "example/train.py": _script(_GONE + "from speech import ops\n", _KEPT),
        },
        rules=_RULES,
    ),
    # A compiled extension of that name sits in the package.
    Case(
        "compiled-extension-submodule",
        files={
            **_PKG,
            "speech/kernels.pyx": "def f():\n    pass\n",
            "example/train.py": _script(_GONE + "from speech.kernels import f\n", _KEPT),
        },
        rules=_RULES,
    ),
    # A folder beside the script holds its own `speech`, which the script's run finds first.
    Case(
        "package-shadowed-beside-the-script",
        files={
            **_PKG,
            "example/speech/__init__.py": "Logs = 1\n",
            "example/train.py": _script(_GONE + "from speech import Logs\n", _KEPT),
        },
        rules=_RULES,
    ),
    # `speech` is no package of the project (no `__init__.py`): it may be installed.
    Case(
        "namespace-folder-is-no-evidence",
        files={
            "speech/problem.py": "class Problem:\n    pass\n",
            "example/train.py": _script(_GONE + "from speech import Logs\n", _KEPT),
        },
        rules=_RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dead_imports")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_dead_code_import_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
