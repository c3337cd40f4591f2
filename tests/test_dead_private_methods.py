"""A module class's private method that nothing calls never runs: its findings are dead code.

A backbone keeps a builder it no longer uses (`_make_head`, whose only call is commented out in
`__init__`): the `Conv2d` -> `BatchNorm2d` stacks it would build are never built, so TL005 (and
every performance rule) has nothing to say there (`DeadBranches.holds`, through
`ProjectIndex.private_method_unused`). The method is private (`_name`, not a dunder nor a
`_sunder_` protocol another library calls, `_repr_html_`), no file of the project writes its
name outside comments but for its own undecorated `def` (no call, no read, no string; a `#` in
a string opens no comment), no file of the class's lineage looks attributes up by computed name
(`getattr`), and the class derives only from project classes, `object` and `torch.nn.Module`,
under a name that is none of the module's own hooks (`_load_from_state_dict`). A public method
nothing calls is API; a framework base may call a private hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL005",)

_NET = """\
from torch import nn


class Net(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.stem = self._make_layer(3, channels)
        # self.head = self._make_head(channels)

    def _make_layer(self, cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3), nn.BatchNorm2d(cout))  # TL005: nn.Conv2d(cin, cout, 3)

    def _make_head(self, channels):
        return nn.Sequential(nn.Conv2d(channels, 64, 1), nn.BatchNorm2d(64))DEAD

    def _repr_html_(self):
        return nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))  # TL005: nn.Conv2d(3, 3, 1)

    def make_classifier(self, channels):
        return nn.Sequential(nn.Conv2d(channels, 10, 1), nn.BatchNorm2d(10))  # TL005: nn.Conv2d(channels, 10, 1)

    def forward(self, x):
        return self.stem(x)
"""
_FOUND = "  # TL005: nn.Conv2d(channels, 64, 1)"

CASES = [
    Case(
        "private-builder-never-called",
        files={"models/__init__.py": "", "models/net.py": _NET.replace("DEAD", "")},
        rules=RULES,
    ),
    Case(
        "private-builder-called-from-another-module",
        files={
            "models/__init__.py": "",
            "models/net.py": _NET.replace("DEAD", _FOUND),
            "train.py": "from models.net import Net\n\nnet = Net(8)\nnet.head = net._make_head(8)\n",
        },
        rules=RULES,
    ),
    Case(
        # A `#` in a string on the line opens no comment: the call runs.
        "private-builder-called-after-a-hash-in-a-string",
        files={
            "models/__init__.py": "",
            "models/net.py": _NET.replace("DEAD", _FOUND).replace(
                "# self.head = self._make_head(channels)",
                'print("# head", self._make_head(channels))',
            ),
        },
        rules=RULES,
    ),
    Case(
        "private-builder-looked-up-by-name",
        files={
            "models/__init__.py": "",
            "models/net.py": _NET.replace("DEAD", _FOUND).replace(
                "# self.head = self._make_head(channels)",
                'self.head = getattr(self, "_make_" + "head")(channels)',
            ),
        },
        rules=RULES,
    ),
    Case(
        "private-builder-of-a-framework-class",
        files={
            "models/__init__.py": "",
            "models/net.py": _NET.replace("DEAD", _FOUND)
            .replace("from torch import nn", "import lightning as L\nfrom torch import nn")
            .replace("class Net(nn.Module)", "class Net(L.LightningModule)"),
        },
        rules=RULES,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dead_methods")), CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_dead_private_method_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
