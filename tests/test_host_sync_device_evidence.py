"""TL002 recall: a file whose tensors go to the GPU in ways the device facts did not read.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The classes, from production code judges labelled as missed (validate production, round 6):
- a project helper that moves its argument to the GPU (`gpu(tensor, use_cuda)` returning
  `tensor.cuda()`, spotlight's `torch_utils.gpu`): the file that calls it puts its tensors on a
  device, as one calling `.cuda()` itself does;
- CUDA mixed precision (`torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`): the loop it
  wraps runs on a GPU (OpenPCDet's `train_one_epoch`, whose caller's `model_func` moves the
  batch);
- a device string built by formatting (`"cuda:{}".format(rank)`, `"cuda:%d" % rank`, OpenPrompt's
  trainer): it names a GPU as `"cuda:0"` does.

Precision: a project helper that moves nothing (`def as_float(t): return t.float()`) says
nothing of the device, nor does one that moves to the device it is given (`to_device(x,
device)`, `x.to(device)`) called without one (`.to(None)` keeps the tensor where it is); and
`"cpu:{}".format(i)` names no GPU: those files' reads stay silent.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

from torchlint.analysis.project_index import (
    ProjectIndex,
    _device_movers,
    _may_move,
    digest_of,
)

_UTILS = """\
import torch


def gpu(tensor, gpu=False):
    if gpu:
        return tensor.cuda()
    return tensor


def to_device(tensor, device=None):
    return tensor.to(device)


def as_float(tensor):
    return tensor.float()
"""

_FIT = """\
import torch
from utils import {helper}


class Model:
    def __init__(self, net, use_cuda=False, device=None):
        self._net = net
        self._use_cuda = use_cuda
        self._device = device
        self._optimizer = torch.optim.Adam(net.parameters())

    def fit(self, users, batches):
        for epoch in range(10):
            ids = {helper}(torch.from_numpy(users){flag})
            epoch_loss = 0.0
            for batch in batches:
                self._optimizer.zero_grad()
                loss = self._net(ids, batch).mean()
                epoch_loss += loss.item(){mark}
                loss.backward()
                self._optimizer.step()
            print(epoch_loss)
"""

_AMP = """\
import torch


def train_one_epoch(model, model_func, optimizer, loader, meter, use_amp=False):
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    for batch in loader:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=use_amp):
            loss = model_func(model, batch)  # the caller's function moves the batch
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        meter.update(loss.item())  # TL002: loss.item()
"""

_FORMATTED = """\
import torch


class Trainer:
    def __init__(self, model, optimizer, rank):
        self.model = model
        self.optimizer = optimizer
        self.rank = rank

    def train_epoch(self, loader):
        total = 0.0
        for batch in loader:
            batch = batch.to({device})
            loss = self.model(batch).mean()
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            total += loss.item(){mark}
        return total
"""

CASES = [
    Case(
        "helper-of-another-module-moves-its-argument-to-the-gpu",
        {
            "utils.py": _UTILS,
            "model.py": _FIT.format(
                helper="gpu", flag=", self._use_cuda", mark="  # TL002: loss.item()"
            ),
        },
    ),
    Case(
        "helper-of-another-module-moves-its-argument-to-the-device-given",
        {
            "utils.py": _UTILS,
            "model.py": _FIT.format(
                helper="to_device", flag=", device=self._device", mark="  # TL002: loss.item()"
            ),
        },
    ),
    Case(
        "helper-of-another-module-called-without-its-device",
        {"utils.py": _UTILS, "model.py": _FIT.format(helper="to_device", flag="", mark="")},
    ),
    Case(
        "helper-of-another-module-that-moves-nothing",
        {"utils.py": _UTILS, "model.py": _FIT.format(helper="as_float", flag="", mark="")},
    ),
    Case("cuda-mixed-precision-wraps-the-loop", {"train.py": _AMP}),
    Case(
        "device-string-formatted-with-str-format",
        {
            "trainer.py": _FORMATTED.format(
                device='"cuda:{}".format(self.rank)', mark="  # TL002: loss.item()"
            )
        },
    ),
    Case(
        "device-string-formatted-with-percent",
        {
            "trainer.py": _FORMATTED.format(
                device='"cuda:%d" % self.rank', mark="  # TL002: loss.item()"
            )
        },
    ),
    Case(
        "cpu-string-formatted",
        {"trainer.py": _FORMATTED.format(device='"cpu:{}".format(self.rank)', mark="")},
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_device_evidence")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)


_CASTS = """\
import torch


def as_half(tensor):
    return tensor.to(torch.float16)


def to_host(tensor, other):
    return tensor.to("cpu"), tensor.to(other.device), tensor.to(dtype=other.dtype)


class Wrapper:
    def place(self, device):
        self.net.to(device)
        return batch[0].to("cuda")
"""

_MOVERS = """\
def gpu(tensor, device):
    return (tensor  # moved where the caller says
            .to(device, non_blocking=True))
"""


def test_a_module_whose_moves_take_no_gpu_is_not_parsed(tmp_path: Path) -> None:
    """A helper module whose `.to(` calls move no parameter to a GPU (a dtype, the CPU, an
    attribute's move, a subscript's) says nothing of the device: its text alone says so, and
    it is not parsed to learn it. A module that may move one still is."""
    (tmp_path / "casts.py").write_text(_CASTS)
    (tmp_path / "movers.py").write_text(_MOVERS)
    train = tmp_path / "train.py"
    train.write_text("from casts import as_half\nfrom movers import gpu\n")
    index = ProjectIndex(tmp_path)
    assert index.moves_to_gpu(train, "as_half") is None
    assert index.moves_to_gpu(train, "gpu") == (1, "device")
    assert digest_of(tmp_path / "casts.py") not in index._summaries


@pytest.mark.parametrize(
    "text",
    [
        "def f(t):\n    return t.cuda()\n",
        "def f(t):\n    return ( ( t ) ) . cuda ()\n",
        "def f(t):\n    return t \\\n        .to(torch.device('cuda'))\n",
        "def f(t, c):\n    return t.to('cpu' if c else 'cuda:0')\n",
        "def f(a, b, dev):\n    a, b = a.to(dev), b.to(dev)\n    return a, b\n",
        "def f(t, my_DEVICE):\n    return t.to(\n        my_DEVICE,  # given\n    )\n",
        "def f(t):\n    return t.to(u'xpu')\n",
        "def f(té):\n    return té.cuda()\n",
    ],
)
def test_every_written_move_passes_the_text_test(text: str) -> None:
    """The text test is a superset of what parsing finds: every move `_device_movers` reads
    passes it, in any spacing."""
    assert _device_movers(ast.parse(text))
    assert _may_move(text.encode())
