"""TL004 in invented projects: a DataParallel wrap that never runs is no finding.

Production repositories vendor whole libraries (a pix2pix generator builder, a minGPT trainer, a
synchronised-BatchNorm helper) of which the project uses a part; a wrap inside a function or
class that no code of the project calls, except code that is never called itself, never builds
the wrapper. The project index says so from the calls it already summarises; a name handed over
(`mp.spawn(main_worker)`), registered by a decorator or called through a module attribute is
not followed, so its wrap stays a finding. Checked once by the installed `torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_TRAIN = """\
import torch
from nets import Net

model = Net()
for x in loader:
    model(x).sum().backward()
"""

CASES = [
    Case(
        "vendored-builder-never-called",
        rules=("TL004",),
        files={
            "nets.py": """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return x


class Generator(nn.Module):
    def __init__(self, gpu_ids):
        super(Generator, self).__init__()
        self.gpu_ids = gpu_ids

    def forward(self, x):
        return nn.parallel.data_parallel(self.body, x, self.gpu_ids)


def define_G(gpu_ids):
    return Generator(gpu_ids)
""",
            "train.py": _TRAIN,
        },
    ),
    Case(
        "vendored-helper-exported-recursive",
        rules=("TL004",),
        files={
            "sync/__init__.py": "from .batchnorm import convert_model\n",
            "sync/batchnorm.py": """\
import torch

__all__ = ["SyncBN", "convert_model"]


def convert_model(module):
    if isinstance(module, torch.nn.DataParallel):
        mod = convert_model(module.module)
        return torch.nn.DataParallel(mod, device_ids=module.device_ids)
    for name, child in module.named_children():
        module.add_module(name, convert_model(child))
    return module
""",
            "nets.py": "import torch\n\nclass Net(torch.nn.Module):\n    pass\n",
            "train.py": _TRAIN,
        },
    ),
    Case(
        "vendored-trainer-class-never-built",
        rules=("TL004",),
        files={
            "mingpt/trainer.py": """\
import torch


class TrainerConfig:
    lr = 1e-3


class Trainer:
    def __init__(self, model, config):
        self.model = torch.nn.DataParallel(model).cuda()
""",
            "nets.py": """\
import torch
from mingpt.trainer import TrainerConfig

class Net(torch.nn.Module):
    config = TrainerConfig()
""",
            "train.py": _TRAIN,
        },
    ),
    # Reached: called from a main, handed over, decorated, called through the module.
    Case(
        "builder-called-from-main",
        rules=("TL004",),
        files={
            "nets.py": """\
import torch


def build(model):
    return torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
""",
            "train.py": """\
from nets import build


def main():
    model = build(Net())
    model(x)


if __name__ == "__main__":
    main()
""",
        },
    ),
    Case(
        "worker-handed-to-spawn",
        rules=("TL004",),
        files={
            "train.py": """\
import torch
import torch.multiprocessing as mp


def worker(rank, model):
    model = torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
    model(x)


def main():
    mp.spawn(worker, nprocs=2)
""",
        },
    ),
    Case(
        "registered-builder",
        rules=("TL004",),
        files={
            "nets.py": """\
import torch


@MODELS.register()
class Wrapped(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
""",
        },
    ),
    Case(
        "builder-called-through-module",
        rules=("TL004",),
        files={
            "nets.py": """\
import torch


def build(model):
    return torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
""",
            "train.py": """\
import models.nets as nets

model = nets.build(Net())
""",
        },
    ),
    Case(
        "builder-fetched-by-name",
        rules=("TL004",),
        files={
            "nets.py": """\
import torch


def build(model):
    return torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
""",
            "train.py": """\
import nets

model = getattr(nets, "build")(Net())
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl004")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_data_parallel_project_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
