"""TL005 where the project trains its BatchNorms frozen ("partial BN").

A video or detection wrapper often overrides `train(mode)` so that, after switching its modules to
training, it walks its backbone (`self.base_model.modules()`) and puts every BatchNorm it finds
by `isinstance` back in eval mode with its weight and bias off the gradient. A BatchNorm in eval
mode normalises with its running statistics, and with its affine frozen nothing after it learns
a shift: the bias of the convolution before it is the layer's only trainable shift, not wasted
(`ProjectIndex.batchnorms_frozen`). Eval mode alone is not enough (the BatchNorm's own beta still
trains), a freezing helper nothing calls freezes nothing, and freezing another model's BatchNorms
says nothing of this one's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL005",)

_BACKBONE = """\
from torch import nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 7, stride=2, padding=3){mark1}
        self.bn = nn.BatchNorm2d(64)

    def forward(self, x):
        return self.bn(self.conv(x))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.block = nn.Sequential(nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64)){mark2}

    def forward(self, x):
        return self.block(self.stem(x))
"""
_MARK1 = "  # TL005: nn.Conv2d(3, 64, 7, stride=2, padding=3)"
_MARK2 = "  # TL005: nn.Conv2d(64, 64, 3)"
_FLAGGED = _BACKBONE.format(mark1=_MARK1, mark2=_MARK2)
_SILENT = _BACKBONE.format(mark1="", mark2="")

_FREEZE = """\
                if isinstance(m, nn.BatchNorm2d):
                    m.eval()
                    m.weight.requires_grad = False
                    m.bias.requires_grad = False
"""

_WRAPPER = """\
from torch import nn


class VideoNet(nn.Module):
    def __init__(self, partial_bn=True):
        super().__init__()
        from archs.backbone import Backbone

        self.base_model = Backbone()
        self._partial_bn = partial_bn

    def train(self, mode=True):
        super().train(mode)
        if self._partial_bn and mode:
            for m in self.base_model.modules():
FREEZE
    def forward(self, x):
        return self.base_model(x)
"""


def _wrapper(freeze: str = _FREEZE) -> str:
    return _WRAPPER.replace("FREEZE", freeze)


_ARCHS = {"archs/__init__.py": "", "ops/__init__.py": ""}

_OWN = (
    _SILENT + "\n    def train(self, mode=True):\n"
    "        super().train(mode)\n"
    "        for m in self.modules():\n"
    + _FREEZE.replace("                ", "            ")
    + "\n\nclass Head(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(64, 10)  # TL005: nn.Linear(64, 10)\n"
    "        self.bn = nn.BatchNorm1d(10)\n\n"
    "    def forward(self, x):\n"
    "        return self.bn(self.fc(x))\n"
)

CASES = [
    Case(
        # The wrapper's `train()` override walks the backbone it imports inside a method.
        "train-override-freezes-imported-backbone",
        files={**_ARCHS, "archs/backbone.py": _SILENT, "ops/models.py": _wrapper()},
        rules=RULES,
    ),
    Case(
        "requires-grad-off-through-the-module",
        files={
            **_ARCHS,
            "archs/backbone.py": _SILENT,
            "ops/models.py": _wrapper(
                _FREEZE.replace(
                    "m.weight.requires_grad = False\n                    m.bias.requires_grad = False",
                    "m.requires_grad_(False)",
                )
            ),
        },
        rules=RULES,
    ),
    Case(
        "requires-grad-off-through-its-parameters",
        files={
            **_ARCHS,
            "archs/backbone.py": _SILENT,
            "ops/models.py": _wrapper(
                _FREEZE.replace(
                    "m.weight.requires_grad = False\n                    m.bias.requires_grad = False",
                    "for p in m.parameters():\n                        p.requires_grad = False",
                )
            ),
        },
        rules=RULES,
    ),
    Case(
        # Eval mode alone: the BatchNorm's beta still trains and still makes the bias redundant.
        "eval-only-with-trainable-affine",
        files={
            **_ARCHS,
            "archs/backbone.py": _FLAGGED,
            "ops/models.py": _wrapper(
                _FREEZE.replace(
                    "                    m.weight.requires_grad = False\n"
                    "                    m.bias.requires_grad = False\n",
                    "",
                )
            ),
        },
        rules=RULES,
    ),
    Case(
        "only-the-weight-frozen",
        files={
            **_ARCHS,
            "archs/backbone.py": _FLAGGED,
            "ops/models.py": _wrapper(_FREEZE.replace("m.bias.requires_grad", "m.momentum")),
        },
        rules=RULES,
    ),
    Case(
        # The freeze waits on a further flag the eval does not: eval mode with a trainable beta.
        "freeze-under-a-further-condition",
        files={
            **_ARCHS,
            "archs/backbone.py": _FLAGGED,
            "ops/models.py": _wrapper(
                _FREEZE.replace(
                    "                    m.weight.requires_grad = False\n"
                    "                    m.bias.requires_grad = False\n",
                    "                    if self.bn_frozen:\n"
                    "                        m.requires_grad_(False)\n",
                )
            ),
        },
        rules=RULES,
    ),
    Case(
        # A helper given to `model.apply` where the model is built.
        "helper-applied-by-the-training-script",
        files={
            **_ARCHS,
            "archs/backbone.py": _SILENT,
            "train.py": (
                "from torch import nn\n"
                "from archs.backbone import Backbone\n\n\n"
                "def freeze_bn(m):\n"
                "    if isinstance(m, (nn.BatchNorm2d, nn.SyncBatchNorm)):\n"
                "        m.eval()\n"
                "        m.weight.requires_grad = False\n"
                "        m.bias.requires_grad = False\n\n\n"
                "model = Backbone()\n"
                "model.apply(freeze_bn)\n"
            ),
        },
        rules=RULES,
    ),
    Case(
        "helper-nothing-calls",
        files={
            **_ARCHS,
            "archs/backbone.py": _FLAGGED,
            "train.py": (
                "from torch import nn\n"
                "from archs.backbone import Backbone\n\n\n"
                "def freeze_bn(model):\n"
                "    for m in model.modules():\n"
                "        if isinstance(m, nn.BatchNorm2d):\n"
                "            m.eval()\n"
                "            m.requires_grad_(False)\n\n\n"
                "model = Backbone()\n"
            ),
        },
        rules=RULES,
    ),
    Case(
        # The training script freezes the BatchNorms of a model it builds from another package,
        # and never imports the backbone module.
        "freezes-a-different-models-batchnorms",
        files={
            **_ARCHS,
            "archs/backbone.py": _FLAGGED,
            "detector/__init__.py": "",
            "detector/resnet.py": "from torch import nn\n\n\nclass ResNet(nn.Module):\n    pass\n",
            "train.py": (
                "from torch import nn\n"
                "from detector.resnet import ResNet\n\n\n"
                "def freeze_bn(model):\n"
                "    for m in model.modules():\n"
                "        if isinstance(m, nn.BatchNorm2d):\n"
                "            m.eval()\n"
                "            m.requires_grad_(False)\n\n\n"
                "model = ResNet()\n"
                "freeze_bn(model)\n"
            ),
        },
        rules=RULES,
    ),
    Case(
        # A `train()` override over `self.modules()` covers its own class and those it builds,
        # not another class of the same file.
        "own-train-override-covers-what-the-class-builds",
        files={"net.py": _OWN},
        rules=RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("frozen_bn")), CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_frozen_batchnorm_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
