"""TL004, TL005 and TL103 in invented projects: code in a class the project never builds.

Production repositories keep losses, blocks and encoders that nothing uses any more (a ranking
loss beside the one the trainer builds, a gating block the models replaced, a decoder of a VAE
only its encoder is taken from). A finding there is about code that never runs, so the rules
about how modules are built and what a forward computes leave it (`DeadBranches.unbuilt`,
asking `ProjectIndex.never_built`): the module-level, undecorated class is built by no code of
the project but functions that never run themselves, is never handed over, registered, derived
from or called through a module; no notebook that imports its module, nor configuration file
of the project, names it or a function that builds it (a YAML `type: Name`, a demo notebook
calling the builder), and no module looks names up from text (`eval(name)`, `getattr(models,
name)`) in a module of the project or a name it cannot tell. So is a module-level function
whose every caller is such dead code, or that nothing calls, in a module other modules import; one of a
module nothing imports, or that its package's `__init__.py` exports, is an entry point or API
and keeps its findings. Checked once by the installed `torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_BLOCKS = """\
import torch
from torch import nn


class Used(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3)  # TL005: nn.Conv2d(c, c, 3)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return self.bn(self.conv(x))


class Unused(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3){mark}
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return self.bn(self.conv(x))
"""
DEAD = _BLOCKS.format(mark="")
LIVE = _BLOCKS.format(mark="  # TL005: nn.Conv2d(c, c, 3)")

_TRAIN = """\
import torch
from blocks import Used

model = Used(8).cuda()
for x in loader:
    model(x.cuda()).sum().backward()
"""

_LOSSES = """\
import torch


def drop_mask(x):
    return torch.rand(x.shape).cuda() > 0.1


class Focal(torch.nn.Module):
    def forward(self, pred, target):
        weight = torch.ones(pred.shape[0]).cuda()  # TL103: torch.ones(pred.shape[0]).cuda()
        return (weight * (pred - target) ** 2).mean()


class RankSort(torch.nn.Module):
    def forward(self, pred, target):
        weight = torch.ones(pred.shape[0]).cuda()
        return (weight * drop_mask(pred) * (pred - target) ** 2).mean()
"""

_FIT = """\
import torch
from losses import Focal

criterion = Focal()
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
"""

CASES = [
    Case("block-never-built", rules=("TL005",), files={"blocks.py": DEAD, "train.py": _TRAIN}),
    Case(
        "block-built-only-in-an-uncalled-builder",
        rules=("TL005",),
        files={
            "blocks.py": DEAD + "\n\ndef make_unused(c):\n    return Unused(c)\n",
            "train.py": _TRAIN,
        },
    ),
    Case(
        "loss-never-built-and-its-helper",
        rules=("TL103",),
        files={"losses.py": _LOSSES, "train.py": _FIT},
    ),
    # A configuration file or a notebook may build it.
    Case(
        "block-named-by-a-config-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE,
            "train.py": _TRAIN,
            "configs/model.yaml": "model:\n  type: Unused\n  channels: 8\n",
        },
    ),
    Case(
        "block-built-by-a-notebook-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE,
            "train.py": _TRAIN,
            "demo.ipynb": (
                '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                '"execution_count": null, "source": ["from blocks import Unused\\n", '
                '"net = Unused(8)\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
            ),
        },
    ),
    Case(
        # A tutorial notebook that defines a class of the same name builds its own: it never
        # imports the module, so it cannot reach the project's.
        "a-notebook-building-its-own-class-of-the-name",
        rules=("TL005",),
        files={
            "blocks.py": DEAD,
            "train.py": _TRAIN,
            "tutorial.ipynb": (
                '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                '"execution_count": null, "source": ["import torch\\n", '
                '"class Unused(torch.nn.Module):\\n", "    pass\\n", '
                '"net = Unused()\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
            ),
        },
    ),
    Case(
        "builder-called-by-a-notebook-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE + "\n\ndef make_unused(c):\n    return Unused(c)\n",
            "train.py": _TRAIN,
            "demo.ipynb": (
                '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], '
                '"execution_count": null, "source": ["from blocks import make_unused\\n", '
                '"net = make_unused(8)\\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
            ),
        },
    ),
    Case(
        "class-built-from-an-evaluated-name-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE,
            "train.py": (
                "import sys\nfrom blocks import *\n\n"
                "model = eval(sys.argv[1])(8).cuda()\nfor x in loader:\n"
                "    model(x.cuda()).sum().backward()\n"
            ),
        },
    ),
    Case(
        "class-fetched-from-a-module-by-a-computed-name-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE,
            "train.py": (
                "import sys\nimport blocks\n\n"
                "model = getattr(blocks, sys.argv[1])(8).cuda()\nfor x in loader:\n"
                "    model(x.cuda()).sum().backward()\n"
            ),
        },
    ),
    Case(
        "class-looked-up-in-a-module-dict-stays",
        rules=("TL005",),
        files={
            "blocks.py": LIVE,
            "train.py": (
                "import sys\nimport blocks\n\n"
                "model = blocks.__dict__[sys.argv[1]](8).cuda()\nfor x in loader:\n"
                "    model(x.cuda()).sum().backward()\n"
            ),
        },
    ),
    # A lookup in another library's module, or in a name the file never binds, builds none
    # of the project's classes.
    Case(
        "a-lookup-in-another-librarys-module",
        rules=("TL005",),
        files={
            "blocks.py": DEAD,
            "train.py": _TRAIN,
            "zoo.py": (
                "import torchvision.models as models\n\n\n"
                "def backbone(arch):\n    return models.__dict__[arch]()\n"
            ),
            "extract.py": "from zoo import backbone\n\nnet = backbone('resnet18')\n",
        },
    ),
    Case(
        "a-lookup-in-a-name-never-bound",
        rules=("TL005",),
        files={
            "blocks.py": DEAD,
            "train.py": _TRAIN,
            "resume.py": (
                "import torch\n\n\ndef load(path):\n    checkpoint = torch.load(path)\n"
                "    return models.__dict__[checkpoint['arch']]()\n"
            ),
        },
    ),
    # Modules of a package inside a code folder import each other from that folder, where
    # the scripts that import them run (`from nets.blocks import Used` in `code/nets/`).
    Case(
        "a-package-importing-itself-from-the-scripts-folder",
        rules=("TL005",),
        files={
            "code/nets/__init__.py": "",
            "code/nets/blocks.py": DEAD,
            "code/nets/factory.py": (
                "from nets.blocks import Used\n\n\ndef make(c):\n    return Used(c)\n"
            ),
            "code/train.py": (
                "import torch\nfrom nets.factory import make\n\nmodel = make(8).cuda()\n"
                "for x in loader:\n    model(x.cuda()).sum().backward()\n"
            ),
        },
    ),
    # A library's users build its public classes.
    Case(
        "public-class-of-a-library-stays",
        rules=("TL005",),
        files={
            "setup.py": "from setuptools import setup\n\nsetup(name='nets', py_modules=['blocks'])\n",
            "blocks.py": LIVE,
            "train.py": _TRAIN,
        },
    ),
    # A helper of an imported module that nothing calls never runs; a module no other module
    # imports is a script or API, and a name its package's `__init__.py` imports is API.
    Case(
        "uncalled-helper-of-an-imported-module",
        rules=("TL005",),
        files={
            "blocks.py": """\
from torch import nn


def conv_bn(c):
    return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))
""",
            "train.py": "import blocks\n",
        },
    ),
    Case(
        "uncalled-function-of-a-module-nobody-imports-stays",
        rules=("TL005",),
        files={
            "blocks.py": """\
from torch import nn


def conv_bn(c):
    return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))  # TL005: nn.Conv2d(c, c, 3)
""",
            "train.py": "import torch\n",
        },
    ),
    Case(
        "uncalled-function-a-package-exports-stays",
        rules=("TL005",),
        files={
            "nets/__init__.py": "from .blocks import conv_bn\n",
            "nets/blocks.py": """\
from torch import nn


def conv_bn(c):
    return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))  # TL005: nn.Conv2d(c, c, 3)
""",
            "train.py": "import nets\n",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("unbuilt_code")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_unbuilt_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
