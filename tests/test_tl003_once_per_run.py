"""TL003 leaves copies that cannot share memory, and copies that run once per run wherever the
project calls them from (production classes of issue 24, fix round 5; the snippets are invented).

- A read-only array (`np.frombuffer` over a `bytes` object) makes `torch.from_numpy` warn and
  gives a tensor that must not be written: `torch.tensor`'s copy is what makes it writable.
- A method that another module of the project calls only from code that runs once (a dataset's
  augmentation step reached from the base class's `build()`, a calibrator's `fit` called once
  at the end of a prediction run) copies once per run, whatever its own file shows. A copy in a
  loop of such a method is still the one pass the method makes, but the rule keeps it out of
  this fact: only the method's straight-line code is taken for once.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from project_cases import Case, case_findings, check_projects

CASES = [
    Case(
        "read-only-buffer",
        {
            "index.py": """\
import numpy as np
import torch


def load_parts(blobs):
    parts = []
    for blob in blobs:
        parts.append(torch.tensor(np.frombuffer(blob, dtype=np.uint8)))
        codes = np.frombuffer(blob, dtype=np.uint8).reshape(-1, 16)
        parts.append(torch.tensor(codes))
        parts.append(torch.tensor(np.frombuffer(blob, dtype=np.uint8) + 1))  # TL003: torch.tensor(np.frombuffer(blob, dtype=np.uint8) + 1)
    return parts
""",
        },
        rules=("TL003",),
    ),
    Case(
        "augmentation-reached-from-the-base-build",
        {
            "base.py": """\
from torch.utils.data import Dataset


class Interactions(Dataset):
    def __init__(self, config):
        self.config = config

    def build(self):
        self._change_format()
        return self

    def _change_format(self):
        pass


def prepare(config):
    dataset = Interactions(config)
    return dataset.build()
""",
            "run.py": """\
from base import prepare


def main(config):
    data = prepare(config)
    return data


if __name__ == "__main__":
    main({"sessions": []})
""",
            "sequential.py": """\
import numpy as np
import torch

from base import Interactions


class Sequences(Interactions):
    def _change_format(self):
        super()._change_format()
        self.augment()

    def augment(self):
        lengths = np.array([len(s) for s in self.config["sessions"]])
        self.lengths = torch.tensor(lengths)
        self.rows = [torch.tensor(np.array(s)) for s in self.config["sessions"]]  # TL003: torch.tensor(np.array(s))

    def __getitem__(self, i):
        return torch.tensor(np.array(self.config["sessions"][i]))  # TL003: torch.tensor(np.array(self.config["sessions"][i]))
""",
        },
        rules=("TL003",),
    ),
    Case(
        "calibrator-fit-once-per-prediction-run",
        {
            "calibrate.py": """\
import numpy as np
import torch


class Scaling:
    def fit(self, uncs, targets):
        scales = np.std(uncs.numpy(), axis=0)
        self.scales = torch.tensor(scales)
        return self

    def apply(self, uncs):  # once per model, not per batch: no evidence that it repeats
        return torch.tensor(np.sqrt(uncs.numpy())) * self.scales
""",
            "predict.py": """\
from calibrate import Scaling


def main(args, models, cal_uncs, cal_targets, test_uncs):
    calibrator = Scaling()
    calibrator.fit(cal_uncs, cal_targets)
    for i in range(len(models)):
        test_uncs[i] = calibrator.apply(test_uncs[i])
    return test_uncs


if __name__ == "__main__":
    main(None, [], None, None, [])
""",
        },
        rules=("TL003",),
    ),
    Case(
        "fit-called-every-step-stays",
        {
            "calibrate.py": """\
import numpy as np
import torch


class Scaling:
    def fit(self, uncs):
        scales = np.std(uncs.numpy(), axis=0)
        self.scales = torch.tensor(scales)  # TL003: torch.tensor(scales)
        return self
""",
            "train.py": """\
from calibrate import Scaling


def train(model, loader, opt):
    calibrator = Scaling()
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        opt.step()
        calibrator.fit(loss.detach().cpu())
""",
        },
        rules=("TL003",),
    ),
    Case(
        # Image logging that a per-step hook runs only when a periodic helper of its class
        # answers yes, two modules away from the copy: a few caption images now and then.
        "copy-reached-only-under-a-periodic-guard",
        {
            "util.py": """\
import numpy as np
import torch


def captions_as_images(captions, width):
    rows = [np.full((3, 16, width), len(c) / 100.0) for c in captions]
    return torch.tensor(np.stack(rows))
""",
            "model.py": """\
import torch
from util import captions_as_images


class Generator(torch.nn.Module):
    def training_step(self, batch, batch_idx):
        return self(batch["image"]).mean()

    def log_images(self, batch):
        return {"captions": captions_as_images(batch["caption"], 64)}
""",
            "logging_cb.py": """\
import torch


class ImageLogger:
    def __init__(self, every):
        self.every = every

    def due(self, step):
        if step % self.every == 0 and step > 0:
            return True
        return False

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.log(module, batch, module.global_step)

    def log(self, module, batch, step):
        if self.due(step) and hasattr(module, "log_images"):
            with torch.no_grad():
                images = module.log_images(batch)
            trainer_save(images)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "copy-reached-on-every-step-stays",
        {
            "util.py": """\
import numpy as np
import torch


def captions_as_images(captions, width):
    rows = [np.full((3, 16, width), len(c) / 100.0) for c in captions]
    return torch.tensor(np.stack(rows))  # TL003: torch.tensor(np.stack(rows))
""",
            "model.py": """\
import torch
from util import captions_as_images


class Generator(torch.nn.Module):
    def training_step(self, batch, batch_idx):
        return self(batch["image"]).mean()

    def log_images(self, batch):
        return {"captions": captions_as_images(batch["caption"], 64)}
""",
            "logging_cb.py": """\
import torch


class ImageLogger:
    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        with torch.no_grad():
            images = module.log_images(batch)
        trainer_save(images)
""",
        },
        rules=("TL003",),
    ),
    Case(
        # A loop inside the guard repeats the call: a periodic pass over the whole validation
        # set copies per batch in it.
        "a-loop-inside-the-guard-repeats-it",
        {
            "util.py": """\
import numpy as np
import torch


def to_batch(images):
    return torch.tensor(np.stack(images))  # TL003: torch.tensor(np.stack(images))
""",
            "train.py": """\
from util import to_batch


def train(model, loader, val_sets, opt, every):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        opt.step()
        if step % every == 0:
            for images in val_sets:
                model(to_batch(images))
""",
        },
        rules=("TL003",),
    ),
    Case(
        # A cache's miss: the branch that builds what the class stores under the key runs
        # once per key (a record built in the constructor, then served from the cache).
        "cache-miss-builds-once-per-key",
        {
            "shapes.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Shapes(Dataset):
    def __init__(self, names, root):
        self.names = names
        self.root = root
        self.cache = {}
        for i, name in enumerate(names):
            self.cache[name] = self.load(i)

    def load(self, i):
        name = self.names[i]
        if name in self.cache:
            return dict(self.cache[name])
        points = np.loadtxt(f"{self.root}/{name}.txt", delimiter=",").astype(np.float32)
        return {"points": torch.tensor(points)}

    def __getitem__(self, i):
        return self.load(i)

    def __len__(self):
        return len(self.names)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "cache-filled-in-the-miss-branch",
        {
            "shapes.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Shapes(Dataset):
    def __init__(self, names, root):
        self.names = names
        self.root = root
        self.cache = {}

    def __getitem__(self, i):
        name = self.names[i]
        if name not in self.cache:
            points = np.loadtxt(f"{self.root}/{name}.txt", delimiter=",").astype(np.float32)
            self.cache[name] = torch.tensor(points)
        return self.cache[name]

    def __len__(self):
        return len(self.names)
""",
        },
        rules=("TL003",),
    ),
    Case(
        # A cache that evicts (a bounded one) or is emptied after construction misses again.
        "an-evicting-cache-stays",
        {
            "shapes.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Shapes(Dataset):
    def __init__(self, names, root, size):
        self.names = names
        self.root = root
        self.size = size
        self.cache = {}

    def __getitem__(self, i):
        name = self.names[i]
        if name not in self.cache:
            if len(self.cache) >= self.size:
                self.cache.pop(next(iter(self.cache)))
            points = np.loadtxt(f"{self.root}/{name}.txt", delimiter=",").astype(np.float32)
            self.cache[name] = torch.tensor(points)  # TL003: torch.tensor(points)
        return self.cache[name]

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return len(self.names)
""",
        },
        rules=("TL003",),
    ),
    Case(
        "membership-in-a-mapping-never-filled-stays",
        {
            "shapes.py": """\
import numpy as np
import torch
from torch.utils.data import Dataset


class Shapes(Dataset):
    def __init__(self, names, root, skip):
        self.names = names
        self.root = root
        self.skip = skip

    def __getitem__(self, i):
        name = self.names[i]
        if name in self.skip:
            return None
        points = np.loadtxt(f"{self.root}/{name}.txt", delimiter=",").astype(np.float32)
        return torch.tensor(points)  # TL003: torch.tensor(points)

    def __len__(self):
        return len(self.names)
""",
        },
        rules=("TL003",),
    ),
    Case(
        # Set-up code of a training run: the function that calls it runs a whole training
        # itself (an epoch loop over a loader that steps the optimizer), so the call runs
        # once per run, even where a hyperparameter search calls that function in a loop.
        "setup-called-once-per-training-run-of-a-search",
        {
            "anchors.py": """\
import numpy as np
import torch


def check_anchors(dataset, model, thr=4.0):
    shapes = dataset.shapes / dataset.shapes.max(1, keepdims=True)
    wh = torch.tensor(np.concatenate([l[:, 3:5] * s for s, l in zip(shapes, dataset.labels)]))
    return (wh.max(1)[0] > 1.0 / thr).float().mean()
""",
            "train.py": """\
from anchors import check_anchors


def train(hyp, model, dataset, loader, optimizer, epochs):
    if hyp["autoanchor"]:
        check_anchors(dataset, model, thr=hyp["anchor_t"])
    for epoch in range(epochs):
        for i, (imgs, targets) in enumerate(loader):
            loss = model(imgs, targets)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    return model


if __name__ == "__main__":
    for trial in range(300):
        train({"autoanchor": True, "anchor_t": 4.0}, None, None, [], None, 3)
""",
        },
        rules=("TL003",),
    ),
    Case(
        # A helper with its own inner gradient loop (an adversarial perturbation) is no training
        # run: called on every batch, what it calls before its loop runs on every batch too.
        "setup-of-an-inner-gradient-loop-per-batch-stays",
        {
            "noise.py": """\
import numpy as np
import torch


def start_noise(shape, eps):
    return torch.tensor(np.random.uniform(-eps, eps, shape))  # TL003: torch.tensor(np.random.uniform(-eps, eps, shape))
""",
            "attack.py": """\
from noise import start_noise


def perturb(model, x, y, eps, steps):
    delta = start_noise(x.shape, eps).requires_grad_()
    for _ in range(steps):
        loss = model(x + delta, y)
        loss.backward()
        delta = (delta + delta.grad.sign() * eps / steps).detach().requires_grad_()
    return delta.detach()
""",
            "train.py": """\
from attack import perturb


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            delta = perturb(model, x, y, 0.03, 7)
            loss = model(x + delta, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    for trial in range(3):
        train(None, [], None, 1)
""",
        },
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl003once")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl003_once_per_run_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()


def test_read_only_buffer_cannot_be_shared() -> None:
    """Why the rule is silent on `np.frombuffer(bytes)`: the array is read-only, `from_numpy`
    warns and hands back a tensor whose writes are undefined; `torch.tensor` copies it into
    writable memory without a warning."""
    array = np.frombuffer(bytes(range(16)), dtype=np.uint8)
    assert not array.flags.writeable
    with pytest.warns(UserWarning, match="not writable"):
        torch.from_numpy(array)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copied = torch.tensor(array)
    copied += 1
    assert copied.tolist() == [v + 1 for v in range(16)]
