"""TL004 in invented projects: a DataParallel wrap that never runs is no finding.

Production repositories vendor whole libraries (a pix2pix generator and its builder, a minGPT
trainer) of which the project uses a part; a wrap inside a class that no code of the project
builds, except functions that are never called themselves, never runs. The project index says
so from the calls it already summarises. A function that nothing calls but its package's
`__init__.py` exports is API, and a name handed over (`mp.spawn(main_worker)`), registered by a decorator or called
through a module attribute is not followed, so their wraps stay findings.

A loader of a checkpoint saved from a wrapped model wraps, loads, and returns the wrapper
(`model = nn.DataParallel(Net()).to(device)`, `return model`); when every caller of the loader
in the file binds the result to a name that it only unwraps (`model.module.forward(x)`), itself
or through a function of the file it hands the name to, the wrapper's forward never runs. A
caller that calls the wrapper itself, or returns it on, keeps the finding, and so does a loader
that other files import, or whose result reaches a parameter the file cannot map (a callback's
through `partial`, an instance's `forward`, a positional-only one). Checked once by the
installed `torchlint`.
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

GEN = """\
import torch


class Gen(torch.nn.Module):
    def __init__(self, model):
        super(Gen, self).__init__()
        self.model = torch.nn.DataParallel(model)  # TL004: torch.nn.DataParallel(model)
"""

# A predictor that keeps its wrap on the instance and feeds it one image in `one`.
_PREDICTOR = """\
import torch
from torch import nn


class Predictor:
    def __init__(self, net, gpus):
        self.model = torch.nn.DataParallel(net, device_ids=gpus)  # TL004: torch.nn.DataParallel(net, device_ids=gpus)

    def one(self, image):
        with torch.no_grad():
            return self.model(image.unsqueeze(0).cuda())
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
    # A function nothing calls that its package exports is API: its users call it.
    Case(
        "uncalled-function-is-api",
        rules=("TL004",),
        files={
            "sync/__init__.py": "from .batchnorm import convert_model\n",
            "sync/batchnorm.py": """\
import torch

__all__ = ["SyncBN", "convert_model"]


def convert_model(module):
    if isinstance(module, torch.nn.DataParallel):
        mod = convert_model(module.module)
        return torch.nn.DataParallel(mod, device_ids=module.device_ids)  # TL004: torch.nn.DataParallel(mod, device_ids=module.device_ids)
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
    # Reached: built by a function a main calls, handed over, decorated, built through the
    # module, fetched by name, derived from.
    Case(
        "class-built-from-main",
        rules=("TL004",),
        files={
            "nets.py": GEN,
            "train.py": """\
from nets import Gen


def build(model):
    return Gen(model)


def main():
    build(Net())(x)


if __name__ == "__main__":
    main()
""",
        },
    ),
    Case(
        "class-handed-to-a-registry",
        rules=("TL004",),
        files={"nets.py": GEN, "train.py": "from nets import Gen\n\nMODELS = {'gen': Gen}\n"},
    ),
    Case(
        "registered-class",
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
        "class-built-through-module",
        rules=("TL004",),
        files={
            "nets.py": GEN,
            "train.py": "import models.nets as nets\n\nmodel = nets.Gen(Net())\n",
        },
    ),
    Case(
        "class-fetched-by-name",
        rules=("TL004",),
        files={"nets.py": GEN, "train.py": 'import nets\n\nmodel = getattr(nets, "Gen")(Net())\n'},
    ),
    Case(
        "class-derived-from",
        rules=("TL004",),
        files={
            "nets.py": GEN,
            "train.py": "from nets import Gen\n\nclass Big(Gen):\n    pass\n\nBig(m)\n",
        },
    ),
    Case(
        # A predict script that feeds the wrapper one image at a time (a batch of one, made
        # with `unsqueeze(0)` and moved to the device): DataParallel splits a batch along its
        # first dimension, so a batch of one runs on one GPU and the wrapper is a pass-through.
        "predict-one-image-at-a-time",
        rules=("TL004",),
        files={
            "predict.py": """\
import torch
from torch import nn
from PIL import Image


def main(net, paths, transform, ckpt, device):
    if ckpt is not None:
        net.load_state_dict(torch.load(ckpt)["model_state"])
        model = nn.DataParallel(net)
        model.to(device)
    else:
        model = nn.DataParallel(net)
        model.to(device)
    with torch.no_grad():
        model = model.eval()
        for path in paths:
            img = transform(Image.open(path).convert("RGB")).unsqueeze(0)
            img = img.to(device)
            pred = model(img).max(1)[1].cpu().numpy()[0]
            Image.fromarray(pred.astype("uint8")).save(path + ".png")
""",
        },
    ),
    Case(
        # The same script over batches of a loader: each batch is split across the GPUs.
        "predict-batches-stays",
        rules=("TL004",),
        files={
            "predict.py": """\
import torch
from torch import nn


def main(net, loader, device):
    model = nn.DataParallel(net)  # TL004: nn.DataParallel(net)
    model.to(device)
    with torch.no_grad():
        model = model.eval()
        for img in loader:
            img = img.to(device)
            pred = model(img).max(1)[1].cpu().numpy()
            print(pred)
""",
        },
    ),
    Case(
        # One forward on a batch of one, another on a whole batch: the wrapper splits the latter.
        "one-forward-on-a-batch-stays",
        rules=("TL004",),
        files={
            "predict.py": """\
import torch
from torch import nn


def main(net, image, batch, device):
    model = nn.DataParallel(net)  # TL004: nn.DataParallel(net)
    with torch.no_grad():
        first = model(image.unsqueeze(0).to(device))
        rest = model(batch.to(device))
    return first, rest
""",
        },
    ),
    Case(
        # Handed to a helper: what the helper feeds it is not known here.
        "handed-to-a-helper-stays",
        rules=("TL004",),
        files={
            "predict.py": """\
import torch
from torch import nn


def main(net, image, device, run):
    model = nn.DataParallel(net)  # TL004: nn.DataParallel(net)
    model.eval()
    with torch.no_grad():
        return run(model, image.unsqueeze(0).to(device))
""",
        },
    ),
    Case(
        # The same wrap stored on a predictor instance: every `self.model` of the class is the
        # wrap, a placement, or a forward on one image made a batch of one.
        "instance-wrapper-fed-one-image",
        rules=("TL004",),
        files={
            "inference.py": """\
import torch
from torch import nn

from heads.model import Wrapper


class Predictor:
    def __init__(self, net, ckpt, gpus):
        self.model = "unset"
        self.model = Wrapper(model=net)
        self.model.load_state_dict(torch.load(ckpt))
        self.model = torch.nn.DataParallel(self.model, device_ids=gpus)
        self.model.eval()

    def run(self, loader):
        with torch.no_grad():
            for image, _ in loader.dataset:
                image = image.unsqueeze(dim=0).cuda()
                output = self.model(image)
                print(output.argmax(1).item())


if __name__ == "__main__":
    Predictor(nn.Conv2d(3, 3, 1), "ckpt.pt", [0, 1]).run(None)
""",
        },
    ),
    Case(
        # Another method of the class feeds the instance's wrapper whole batches.
        "instance-wrapper-fed-batches-elsewhere-stays",
        rules=("TL004",),
        files={
            "inference.py": _PREDICTOR
            + """
    def many(self, loader):
        with torch.no_grad():
            return [self.model(batch.cuda()) for batch in loader]
""",
        },
    ),
    Case(
        # A subclass in the same file feeds the inherited wrapper whole batches.
        "instance-wrapper-fed-batches-by-a-subclass-stays",
        rules=("TL004",),
        files={
            "inference.py": _PREDICTOR
            + """

class BatchPredictor(Predictor):
    def many(self, loader):
        with torch.no_grad():
            return [self.model(batch.cuda()) for batch in loader]
""",
        },
    ),
    Case(
        # Code outside the class reaches the instance's wrapper: what it feeds is not known.
        "instance-wrapper-read-outside-the-class-stays",
        rules=("TL004",),
        files={
            "inference.py": _PREDICTOR
            + """

def run(predictor, loader):
    return [predictor.model(batch.cuda()) for batch in loader]
""",
        },
    ),
    Case(
        # One image repeated once per GPU, or joined with others: a batch of several, split.
        "one-image-repeated-per-gpu-stays",
        rules=("TL004",),
        files={
            "evaluate.py": """\
import torch
from torch import nn


def main(net, images, gpus, device):
    model = nn.DataParallel(net)  # TL004: nn.DataParallel(net)
    pair = nn.DataParallel(net)  # TL004: nn.DataParallel(net)
    model.eval()
    with torch.no_grad():
        for image in images:
            batch = image.unsqueeze(0).repeat(len(gpus), 1, 1, 1).to(device)
            out = model(batch)
            both = pair(torch.cat([image.unsqueeze(0), image.flip(-1).unsqueeze(0)]))
            print(out.mean().item(), both.mean().item())
""",
        },
    ),
    Case(
        "loader-returns-a-wrapper-its-callers-unwrap",
        rules=("TL004",),
        files={
            "synthesize.py": """\
import torch
from torch import nn

from nets import Net

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load(step):
    model = nn.DataParallel(Net()).to(device)
    model.load_state_dict(torch.load(f"checkpoint_{step}.pth")["model"])
    model.eval()
    return model


def synthesis(model, text):
    with torch.no_grad():
        return model.module.forward(text.cuda())


if __name__ == "__main__":
    model = load(100)
    for text in ["a", "b"]:
        mel = synthesis(model, torch.tensor([ord(text)]))
""",
        },
    ),
    Case(
        "loader-returns-a-wrapper-a-caller-runs",
        rules=("TL004",),
        files={
            "evaluate.py": """\
import torch
from torch import nn

from nets import Net


def load(step):
    model = nn.DataParallel(Net()).cuda()  # TL004: nn.DataParallel(Net())
    model.load_state_dict(torch.load(f"checkpoint_{step}.pth"))
    return model


def evaluate(model, loader):
    with torch.no_grad():
        return [model(x.cuda()) for x in loader]


def main(loader):
    model = load(100)
    print(model.module.num_layers)
    return evaluate(model, loader)
""",
        },
    ),
    Case(
        # Callers the file cannot see, and parameters the wrapper does not land in.
        "loader-returns-a-wrapper-reached-otherwise",
        rules=("TL004",),
        files={
            "ckpt.py": """\
import torch
from torch import nn

from nets import Net


def load(step):
    model = nn.DataParallel(Net()).cuda()  # TL004: nn.DataParallel(Net())
    model.load_state_dict(torch.load(f"checkpoint_{step}.pth"))
    return model


if __name__ == "__main__":
    print(load(1).module)
""",
            "evaluate.py": """\
import torch
from ckpt import load


def main(loader):
    model = load(100)
    with torch.no_grad():
        return [model(x.cuda()) for x in loader]
""",
            "handed.py": """\
import torch
from functools import partial
from torch import nn

from nets import Net


def load(step):
    model = nn.DataParallel(Net()).cuda()  # TL004: nn.DataParallel(Net())
    return model


def evaluate(net, model, batch):
    print(model.module.num_layers)
    return net(batch)


class Runner(nn.Module):
    def forward(self, net, batch):
        self.eval()
        return net(batch)


def first(net, /, model, batch):
    print(model.module.num_layers)
    return net(batch)


if __name__ == "__main__":
    model = load(100)
    run = partial(evaluate, model)
    print(run(None, torch.zeros(8, 3).cuda()), Runner()(model, torch.zeros(8, 3).cuda()))
    print(first(model, model, torch.zeros(8, 3).cuda()))
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
