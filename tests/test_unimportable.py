"""Code the project cannot import never runs: performance findings there are dropped.

Invented projects, checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL005: text` expects that finding there; every
other finding of the case's rules fails). The silent cases vendor a copy of another project
that still imports itself by its old top-level name; each kept case changes one piece of the
evidence, so the finding stays.
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
"""
_SILENT = _NET.format(mark="", mark6="")
_KEPT = _NET.format(mark="  # TL005: nn.Conv2d(3, 8, 3)", mark6="  # TL103: torch.zeros(8).cuda()")
_MLSD_INIT = """\
from .models.net import Head
from annotator.util import ckpt_path
"""
_RULES = ("TL005", "TL103")

CASES = [
    # A vendored annotator under a regular package imports itself as `annotator`: the package's
    # `__init__.py` fails, so nothing below it can be imported.
    Case(
        "vendored-package-init-names-old-root",
        files={
            "pkg/__init__.py": "",
            "pkg/common/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/common/annotator/mlsd/__init__.py": _MLSD_INIT,
            "pkg/common/annotator/mlsd/models/__init__.py": "",
            "pkg/common/annotator/mlsd/models/net.py": _SILENT,
        },
        rules=_RULES,
    ),
    # The module itself imports its copy by the old root.
    Case(
        "vendored-module-names-old-root",
        files={
            "pkg/__init__.py": "",
            "pkg/third/annotator/__init__.py": "",
            "pkg/third/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/third/annotator/net.py": "from annotator.util import ckpt_path\n" + _SILENT,
        },
        rules=_RULES,
    ),
    # A script of the project puts the folder holding `annotator` on the path: the import works.
    Case(
        "folder-put-on-the-path",
        files={
            "pkg/__init__.py": "",
            "pkg/common/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/common/annotator/mlsd/__init__.py": _MLSD_INIT,
            "pkg/common/annotator/mlsd/models/__init__.py": "",
            "pkg/common/annotator/mlsd/models/net.py": _KEPT,
            "tools/run.py": (
                "import os\nimport sys\n\n"
                "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'pkg', 'common'))\n"
            ),
        },
        rules=_RULES,
    ),
    # The same tree imported by the project's own name: it runs.
    Case(
        "vendored-package-imported-by-project-name",
        files={
            "pkg/__init__.py": "",
            "pkg/common/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/common/annotator/mlsd/__init__.py": _MLSD_INIT.replace(
                "from annotator.util", "from pkg.common.annotator.util"
            ),
            "pkg/common/annotator/mlsd/models/__init__.py": "",
            "pkg/common/annotator/mlsd/models/net.py": _KEPT,
        },
        rules=_RULES,
    ),
    # `annotator` is a top-level package of the project: the import finds it.
    Case(
        "old-root-is-findable",
        files={
            "annotator/__init__.py": "",
            "annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/__init__.py": "",
            "pkg/annotator/__init__.py": "",
            "pkg/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/annotator/net.py": "from annotator.util import ckpt_path\n" + _KEPT,
        },
        rules=_RULES,
    ),
    # A source root (no regular package above it): an installer maps `python/annotator` to
    # `annotator`, so the import may well work.
    Case(
        "source-root-package",
        files={
            "python/annotator/__init__.py": "",
            "python/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "python/annotator/net.py": "from annotator.util import ckpt_path\n" + _KEPT,
        },
        rules=_RULES,
    ),
    # The import is guarded: a failure is caught, the module still loads.
    Case(
        "guarded-import",
        files={
            "pkg/__init__.py": "",
            "pkg/common/annotator/__init__.py": "",
            "pkg/common/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/common/annotator/net.py": (
                "try:\n    from annotator.util import ckpt_path\nexcept ImportError:\n"
                "    ckpt_path = None\n" + _KEPT
            ),
        },
        rules=_RULES,
    ),
    # An installed package of the same name: the copy does not hold what the import names.
    Case(
        "import-names-what-the-copy-lacks",
        files={
            "pkg/__init__.py": "",
            "pkg/mmcv/__init__.py": "",
            "pkg/mmcv/net.py": "from mmcv.runner import Hook\n" + _KEPT,
        },
        rules=_RULES,
    ),
    # `pkg/torch/` holds a `distributions.py`, but the project imports torch outside it: the
    # installed torch is what `torch.distributions` names.
    Case(
        "installed-package-named-like-a-folder",
        files={
            "pkg/__init__.py": "",
            "pkg/core.py": "import torch\n",
            "pkg/torch/__init__.py": "",
            "pkg/torch/distributions.py": "class TanhNormal:\n    pass\n",
            "pkg/torch/vae.py": "from torch.distributions import Normal\n" + _KEPT,
        },
        rules=_RULES,
    ),
    # A standard-library name: `pkg/json/` is not what `json.decoder` names.
    Case(
        "standard-library-name",
        files={
            "pkg/__init__.py": "",
            "pkg/json/__init__.py": "",
            "pkg/json/decoder.py": "",
            "pkg/json/net.py": "from json.decoder import JSONDecoder\n" + _KEPT,
        },
        rules=_RULES,
    ),
    # A script in the vendored tree runs without its packages' `__init__.py`.
    Case(
        "vendored-script",
        files={
            "pkg/__init__.py": "",
            "pkg/common/annotator/util.py": "ckpt_path = 'ckpts'\n",
            "pkg/common/annotator/mlsd/__init__.py": _MLSD_INIT,
            "pkg/common/annotator/mlsd/train.py": _KEPT
            + "\nif __name__ == '__main__':\n    pass\n",
        },
        rules=_RULES,
    ),
    # A file named so that no import statement reaches it, which runs nothing when run.
    Case(
        "file-name-no-import-reaches",
        files={"models/__init__.py": "", "models/ head copy.py": _SILENT},
        rules=_RULES,
    ),
    # Such a file that builds something at its top is a script.
    Case(
        "file-name-of-a-script",
        files={"train model.py": _KEPT + "\nmodel = Head()\n"},
        rules=_RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("unimportable")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_unimportable_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
