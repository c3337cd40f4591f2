"""A parameter's default that no call of the project overrides fixes the branch that tests it.

A helper of a training codebase wraps the model for its distribution mode
(`def wrap_model(model, sync_bn=False, dist_mode="ddp")`, then `if dist_mode == "dp":` around
`nn.DataParallel`), and the project's only caller passes `sync_bn` but never `dist_mode`: the
`DataParallel` arm never runs. `DeadBranches` reads such a parameter as its default when the
project index finds calls of the function (in code, not in a comment) and none passes the
parameter, by keyword or by position, nor spreads `*args`/`**kwargs`, and nothing else names
the function (handed over, decorated, imported under another name). Code other projects may
call is not judged by this project's calls: a project that declares a distribution (setup.py,
setup.cfg, pyproject.toml) keeps its public functions' branches live; only `_private` ones are
read so there. An attribute the constructor sets from such a parameter (`self.individual =
individual`) keeps that value in the class's other methods while no other file may write it
(`ProjectIndex.attribute_set_only_in`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

from torchlint.analysis.project_index import ProjectIndex

RULES = ("TL004",)

_WRAP = """\
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap_model(model, sync_bn=False, dist_mode="ddp", verbose=0):
    if torch.distributed.is_initialized():
        rank = torch.distributed.get_rank()
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model) if sync_bn else model
        if dist_mode == "dp":
            model = nn.DataParallel(model, device_ids=[rank])MARK
        elif dist_mode in ("ddp", "fsdp"):
            model = DDP(model, device_ids=[rank])
    if verbose:
        print(model)
    return model
"""
_FOUND = "  # TL004: nn.DataParallel(model, device_ids=[rank])"


def _wrap(found: bool) -> str:
    return _WRAP.replace("MARK", _FOUND if found else "")


_SOLVER = """\
from misc import dist_utils


class Solver:
    def setup(self, model, cfg):
        self.model = dist_utils.wrap_model(model.cuda(), sync_bn=cfg.sync_bn, verbose=1)
"""

_NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, c, depth=2, pooling="mean"):
        super().__init__()
        self.pooling = pooling
        if self.pooling == "attention":
            self.pool = nn.Sequential(nn.Linear(c, 2 * c), nn.BatchNorm1d(2 * c), nn.ReLU())MARK
        else:
            self.pool = None
        self.layers = nn.ModuleList(nn.Linear(c, c) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
"""
_NET_FOUND = "  # TL005: nn.Linear(c, 2 * c)"

_HEAD = """\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, c, individual=False):
        super().__init__()
        self.individual = individual
        self.proj = nn.Linear(c, 4)

    def forward(self, x):
        if self.individual:
            out = torch.zeros(x.size(0), 4).to(x.device)MARK
            return out + self.proj(x)
        return self.proj(x)
"""
_HEAD_FOUND = "  # TL103: torch.zeros(x.size(0), 4).to(x.device)"
_HEAD_MAIN = "from head import Head\n\nmodel = Head(64).cuda()\n"
_OTHER_BLOCK = (
    "class Block:\n    def __init__(self, individual):\n        self.individual = individual\n"
)

CASES = [
    Case(
        "default-no-caller-overrides",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(False),
            "solver.py": _SOLVER,
        },
        rules=RULES,
    ),
    Case(
        "a-caller-passes-the-mode-by-keyword",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(True),
            "solver.py": _SOLVER,
            "legacy.py": "from misc.dist_utils import wrap_model\n\n"
            "net = wrap_model(build(), dist_mode=args.mode)\n",
        },
        rules=RULES,
    ),
    Case(
        "a-caller-passes-it-by-position-or-spreads-arguments",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(True),
            "solver.py": _SOLVER,
            "a.py": "from misc import dist_utils\n\nnet = dist_utils.wrap_model(m, True, 'dp')\n",
        },
        rules=RULES,
    ),
    Case(
        "spread-keywords",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(True),
            "solver.py": _SOLVER,
            "b.py": "from misc import dist_utils\n\nnet = dist_utils.wrap_model(m, **cfg.dist)\n",
        },
        rules=RULES,
    ),
    Case(
        # A call written only in a comment is no call: nothing calls the imported module's
        # helper, so it never runs (`ProjectIndex.never_built`).
        "called-only-in-a-comment",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(False),
            "solver.py": _SOLVER.replace(
                "self.model = dist_utils", "pass  # self.model = dist_utils"
            ),
        },
        rules=RULES,
    ),
    Case(
        "handed-over-not-called",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(True),
            "solver.py": _SOLVER,
            "c.py": "import functools\n\nfrom misc import dist_utils\n\n"
            "wrap = functools.partial(dist_utils.wrap_model, dist_mode='dp')\n",
        },
        rules=RULES,
    ),
    Case(
        "a-distribution-may-be-called-from-outside",
        files={
            "setup.py": "from setuptools import setup\n\nsetup(name='misc')\n",
            "misc/__init__.py": "",
            "misc/dist_utils.py": _wrap(True)
            + """

def _wrap_private(model, dist_mode="ddp"):
    if dist_mode == "dp":
        model = nn.DataParallel(model)
    return model


def build(model):
    return _wrap_private(model)
""",
            "solver.py": _SOLVER,
        },
        rules=RULES,
    ),
    Case(
        "a-method-or-a-rebound-parameter-stays-live",
        files={
            "misc/__init__.py": "",
            "misc/dist_utils.py": """\
from torch import nn


def wrap(model, dist_mode="ddp"):
    if model.big:
        dist_mode = "dp"
    if dist_mode == "dp":
        model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
    return model


class Wrapper:
    def wrap(self, model, parallel=False):
        if parallel:
            model = nn.DataParallel(model)  # TL004: nn.DataParallel(model)
        return model
""",
            "solver.py": "from misc import dist_utils\n\n"
            "net = dist_utils.wrap(m)\nw = dist_utils.Wrapper().wrap(m)\n",
        },
        rules=RULES,
    ),
    Case(
        # `find_packages()` ships packages (folders with an `__init__.py`); an example script's
        # folder without one is not installed, so only the project's own calls reach it.
        "an-example-outside-the-distribution",
        files={
            "setup.py": "from setuptools import find_packages, setup\n\n"
            "setup(name='misc', packages=find_packages(exclude=['examples']))\n",
            "misc/__init__.py": "",
            "misc/core.py": "def helper():\n    return 1\n",
            "examples/train/dist_utils.py": _wrap(False),
            "examples/train/solver.py": _SOLVER.replace(
                "from misc import dist_utils", "import dist_utils"
            ),
        },
        rules=RULES,
    ),
    Case(
        # The same distribution with a namespace package finder may ship any folder.
        "a-namespace-distribution-may-ship-the-folder",
        files={
            "setup.py": "from setuptools import find_namespace_packages, setup\n\n"
            "setup(name='misc', packages=find_namespace_packages())\n",
            "tools/dist_utils.py": _wrap(True),
            "tools/solver.py": _SOLVER.replace("from misc import dist_utils", "import dist_utils"),
        },
        rules=RULES,
    ),
    Case(
        # A constructor's parameter, kept on `self` and tested there: every `Net(...)` of the
        # project leaves `pooling` at "mean", so the attention head is never built.
        "a-constructor-default-kept-on-self",
        files={
            "gnn.py": _NET.replace("MARK", ""),
            "main.py": "from gnn import Net\n\nmodel = Net(64, depth=3).cuda()\n",
        },
        rules=("TL005",),
    ),
    Case(
        # Words in comments and messages are no mentions, and a sibling example folder's own
        # `Net`, whose calls pass `pooling`, is another class.
        "a-sibling-folder-defines-its-own-class",
        files={
            "examples/a/gnn.py": _NET.replace("MARK", "").replace(
                "        super().__init__()\n",
                "        super().__init__()  # Net of example a\n"
                "        if depth < 1:\n            raise ValueError('Net needs a layer')\n",
            ),
            "examples/a/main.py": "from gnn import Net\n\nmodel = Net(64, depth=3).cuda()\n",
            "examples/b/gnn.py": _NET.replace("MARK", _NET_FOUND),
            "examples/b/main.py": "from gnn import Net\n\nmodel = Net(64, **cfg)\n",
        },
        rules=("TL005",),
    ),
    Case(
        # A package that re-exports the class passes its name on: a caller importing it from
        # the package overrides the default.
        "a-re-exported-class-keeps-its-callers",
        files={
            "nets/__init__.py": "from .gnn import Net\n",
            "nets/gnn.py": _NET.replace("MARK", _NET_FOUND),
            "main.py": "from nets import Net\n\nmodel = Net(64, pooling='attention')\n",
        },
        rules=("TL005",),
    ),
    Case(
        # A configuration file that names the class may build it with other arguments
        # (`target: gnn.Net`): the default is unknown, the branch stays live.
        "a-configuration-names-the-class",
        files={
            "gnn.py": _NET.replace("MARK", _NET_FOUND),
            "main.py": "from gnn import Net\n\nmodel = Net(64, depth=3).cuda()\n",
            "configs/model.yaml": "model:\n  target: gnn.Net\n  params: {c: 64}\n",
        },
        rules=("TL005",),
    ),
    Case(
        "a-constructor-default-passed-by-a-caller",
        files={
            "gnn.py": _NET.replace("MARK", _NET_FOUND),
            "main.py": "from gnn import Net\n\nmodel = Net(64, depth=3, pooling=args.pool)\n",
        },
        rules=("TL005",),
    ),
    Case(
        "a-constructor-default-passed-by-position",
        files={
            "gnn.py": _NET.replace("MARK", _NET_FOUND),
            "main.py": "from gnn import Net\n\nmodel = Net(64, 3, 'attention')\n",
        },
        rules=("TL005",),
    ),
    Case(
        # A subclass may hand its own value to `super().__init__`, and a second write of the
        # attribute may change it before the test: both keep the branch live.
        "a-subclass-or-a-second-write-keeps-it-live",
        files={
            "gnn.py": _NET.replace("MARK", _NET_FOUND),
            "big.py": "from gnn import Net\n\n\nclass Big(Net):\n    pass\n",
            "main.py": "from gnn import Net\n\nmodel = Net(64, depth=3)\n",
        },
        rules=("TL005",),
    ),
    Case(
        # Set by the constructor from a default no call overrides, read in `forward`; another
        # class's own `self.individual` is not this one's.
        "a-constructor-default-read-in-another-method",
        files={
            "head.py": _HEAD.replace("MARK", ""),
            "block.py": _OTHER_BLOCK,
            "main.py": _HEAD_MAIN,
        },
        rules=("TL103",),
    ),
    Case(
        # Code elsewhere may set it on the object after the constructor ran.
        "the-attribute-set-from-outside-keeps-it-live",
        files={
            "head.py": _HEAD.replace("MARK", _HEAD_FOUND),
            "main.py": _HEAD_MAIN + "model.individual = True\n",
        },
        rules=("TL103",),
    ),
    Case(
        "a-subclass-elsewhere-may-set-it",
        files={
            "head.py": _HEAD.replace("MARK", _HEAD_FOUND),
            "wide.py": "from head import Head\n\n\nclass Wide(Head):\n    def grow(self):\n        self.individual = True\n",
            "main.py": _HEAD_MAIN,
        },
        rules=("TL103",),
    ),
    Case(
        "a-second-write-of-the-attribute",
        files={
            "gnn.py": _NET.replace("MARK", _NET_FOUND).replace(
                "        self.pooling = pooling\n",
                "        self.pooling = pooling\n        if depth > 8:\n            self.pooling = 'attention'\n",
            ),
            "main.py": "from gnn import Net\n\nmodel = Net(64, depth=3)\n",
        },
        rules=("TL005",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("dead_defaults")), CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_dead_default_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)


def test_configuration_files_are_read_once_per_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each class-default question asks whether a configuration names the class: the
    project's configuration files are read once, not once per question."""
    (tmp_path / "gnn.py").write_text(_NET.replace("MARK", ""))
    (tmp_path / "head.py").write_text(_NET.replace("MARK", "").replace("Net", "Head"))
    (tmp_path / "main.py").write_text(
        "from gnn import Net\nfrom head import Head\n\nm = Net(64)\nh = Head(64)\n"
    )
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text("model:\n  target: head.Head\n")
    (tmp_path / "configs" / "b.json").write_text('{"optimizer": "SGD"}\n')
    reads: list[str] = []
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        if self.suffix in (".yaml", ".json"):
            reads.append(self.name)
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    index = ProjectIndex(tmp_path)
    gnn, head = (tmp_path / "gnn.py").absolute(), (tmp_path / "head.py").absolute()
    assert not index.default_never_overridden(head, "Head", "pooling", 2)  # `target: head.Head`
    assert index.default_never_overridden(gnn, "Net", "pooling", 2)
    assert index.default_never_overridden(gnn, "Net", "depth", 1)
    assert sorted(reads) == ["a.yaml", "b.json"]
