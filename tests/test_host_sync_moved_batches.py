"""TL002 recall: a batch moved to the device in place, by a helper handed the batch and a device.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The class, from production code judges labelled as missed (validate production, round 10):
a recipe's loop hands each batch (a dict of tensors) to a utility of another module with the
device, `batch_to_device(batch, self._device)`, which moves its tensors in place and returns
nothing; the token count summed from `batch["labels"]` is then a device tensor, and so is the
logged loss divided by it, whose f-string syncs every step (torchtune's recipes, over a `for`
loop and over `batch = next(it)` inside a `try:` of a `while` loop). A field of such a batch,
named by a string key, is a device tensor (`tensors.py`, `_moved_field`).

The same holds for tensors moved by a list comprehension and unpacked from it, `tmp = [t if t
is None else t.cuda() for t in tmp]`, then `fc, att, labels = tmp`: each is an element the
comprehension moved (the arm a `t is None` test takes is None), so what the model computes from
them is on the device, and formatting its mean reward syncs (self-critical.pytorch's train loop).

Precision: a field read before the move is still the loader's host tensor (per-row slice
bounds read from `batch["lengths"]` ahead of `batch_to_device`); a helper handed the batch without
a device (`log_batch(batch, step)`) moves nothing, so the batch stays a host batch and the loop's reads stay silent; so does a
comprehension that only casts the host tensors (`[t.float() for t in tmp]`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_UTILS = """\
import torch


def batch_to_device(batch, device):
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            batch[key] = value.to(device)


def log_batch(batch, step):
    print(step, sorted(batch))
"""

_FOR = """\
import torch
from utils import batch_to_device, log_batch


class Recipe:
    def __init__(self, model, loader):
        self._device = torch.device("cuda")
        self._model = model.to(self._device)
        self._loader = loader
        self._optimizer = torch.optim.AdamW(model.parameters())

    def train(self):
        running_loss = 0
        num_tokens = 0
        for step, batch in enumerate(self._loader):
            {move}
            current = (batch["labels"] != -100).sum()
            num_tokens += current
            loss = self._model(batch["tokens"], batch["labels"]) * current
            running_loss += loss
            loss.backward()
            self._optimizer.step()
            self._optimizer.zero_grad()
            loss_to_log = running_loss.detach().item() / num_tokens{item}
            print(f"{{step}} loss {{loss_to_log}}"){fstring}
            running_loss = 0
            num_tokens = 0
"""

_WHILE = """\
import torch
from utils import batch_to_device


class Recipe:
    def __init__(self, model, loader, steps):
        self._device = torch.device("cuda")
        self._model = model.to(self._device)
        self._loader = loader
        self._steps = steps
        self._optimizer = torch.optim.AdamW(model.parameters())

    def train(self):
        running_loss = 0
        num_tokens = 0
        batches = iter(self._loader)
        step = 0
        while step < self._steps:
            try:
                batch = next(batches)
            except StopIteration:
                break
            batch_to_device(batch, self._device)
            current = (batch["labels"] != -100).sum()
            num_tokens += current
            loss = self._model(batch["tokens"], batch["labels"]) * current
            running_loss += loss
            loss.backward()
            self._optimizer.step()
            self._optimizer.zero_grad()
            step += 1
            loss_to_log = running_loss.detach().item() / num_tokens  # TL002: running_loss.detach
            print(f"{step} loss {loss_to_log}")  # TL002: loss_to_log}
            running_loss = 0
            num_tokens = 0
"""

_UNPACKED = """\
import torch


def train(model, loader, optimizer):
    for data in loader:
        tmp = [data["feats"], data["labels"], data["masks"]]
        tmp = [{element} for t in tmp]
        feats, labels, masks = tmp
        optimizer.zero_grad()
        out = model(feats, labels, masks, torch.arange(0, len(labels)))
        loss = out["loss"].mean()
        loss.backward()
        optimizer.step()
        print("reward {{:.3f}}".format(out["reward"].mean())){mark}
"""

_BEFORE_MOVE = """\
import torch
from utils import batch_to_device


class Recipe:
    def __init__(self, model, loader, steps):
        self._device = torch.device("cuda")
        self._model = model.to(self._device)
        self._loader = loader
        self._steps = steps
        self._optimizer = torch.optim.AdamW(model.parameters())

    def train(self):
        batches = iter(self._loader)
        step = 0
        while step < self._steps:
            try:
                batch = next(batches)
            except StopIteration:
                break
            lens = batch["lengths"]
            pieces = [batch["tokens"][i, : lens[i]] for i in range(len(lens))]
            batch_to_device(batch, self._device)
            loss = self._model(pieces, batch["labels"])
            loss.backward()
            self._optimizer.step()
            self._optimizer.zero_grad()
            step += 1
"""

CASES = [
    Case(
        "tensors-moved-by-a-comprehension-and-unpacked",
        {
            "train.py": _UNPACKED.format(
                element="t if t is None else t.cuda()", mark='  # TL002: out["reward"]'
            )
        },
    ),
    Case(
        "tensors-cast-by-a-comprehension-stay-on-the-host",
        {"train.py": _UNPACKED.format(element="t.float()", mark="")},
    ),
    Case(
        "for-loop-batch-moved-in-place-by-a-helper-of-another-module",
        {
            "utils.py": _UTILS,
            "recipe.py": _FOR.format(
                move="batch_to_device(batch, self._device)",
                item="  # TL002: running_loss.detach",
                fstring="  # TL002: loss_to_log}",
            ),
        },
    ),
    Case(
        "while-loop-batch-from-next-moved-in-place-by-a-helper",
        {"utils.py": _UTILS, "recipe.py": _WHILE},
    ),
    Case(
        "fields-read-before-the-batch-is-moved-stay-on-the-host",
        {"utils.py": _UTILS, "recipe.py": _BEFORE_MOVE},
    ),
    Case(
        "batch-handed-to-a-helper-without-a-device-stays-on-the-host",
        {
            "utils.py": _UTILS,
            # the model left where it is built: a module moved to the GPU computes there,
            # whatever it is fed (TensorFacts._on_moved_module)
            "recipe.py": _FOR.replace("model.to(self._device)", "model").format(
                move="log_batch(batch, step)", item="", fstring=""
            ),
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_moved_batches")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
