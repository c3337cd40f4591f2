"""TL001 false-alarm classes of production code: each an invented multi-file project.

The classes were seen on a held-out batch of production repositories (docs/precision.md,
"Now"); the snippets below are invented and copy nothing. Each case marks the findings it
expects (`# TL001: text`, see `test_production_cases.Case`); a case without marks pins that
TL001 stays silent, and the script-like cases beside them pin that true findings remain.
All cases are checked once by the installed `torchlint` command.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    # --- 1. an object with `.eval()` whose class holds no parameters or submodules ---
    Case(
        "parameterless-module-with-eval",
        {
            "readers.py": """\
import os

import torch
from omegaconf import OmegaConf
from torch import nn


class Reader(nn.Module):
    def __init__(self, conf):
        super().__init__()
        self.conf = OmegaConf.create(conf)


class FeatureCache(Reader):
    '''Reads features computed earlier from disk: nothing to train.'''

    def __init__(self, root, suffix=".pt"):
        super().__init__({"pad": 0})
        self.root = root
        self.suffix = suffix
        self.opened = {}

    def forward(self, names):
        pad = self.conf.pad
        return torch.stack([torch.load(os.path.join(self.root, n + self.suffix)) for n in names]) + pad
""",
            "extract.py": """\
import torch

from readers import FeatureCache


def gather(loader):
    cache = FeatureCache("features/").eval()
    return [cache(names).mean(0) for names in loader]


def gather_val(loader):
    reader = FeatureCache("features/")
    reader.eval()
    for names in loader:
        yield reader(names)
""",
        },
    ),
    Case(
        # A feature transform holding only registered buffers (a window, a filter bank): no
        # parameter, so its forward records nothing, in a loop or not.
        "buffer-only-module",
        {
            "features.py": """\
import torch
from torch import nn


class Spectrogram(nn.Module):
    def __init__(self, n_fft=1024):
        super().__init__()
        self.register_buffer("window", torch.hann_window(n_fft).float())
        self.n_fft = n_fft

    def forward(self, audio):
        return torch.stft(audio, self.n_fft, window=self.window, return_complex=True).abs()
""",
            "train.py": """\
import torch

from features import Spectrogram


def dump(test_loader):
    spec = Spectrogram().cuda()
    spec.eval()
    return [spec(x.cuda()).detach() for x in test_loader]
""",
        },
    ),
    Case(
        # A buffer beside a parameter: the forward records the parameter's graph.
        "buffer-and-parameter-module-still-found",
        {
            "features.py": """\
import torch
from torch import nn


class LearnedSpectrogram(nn.Module):
    def __init__(self, n_fft=1024):
        super().__init__()
        self.register_buffer("window", torch.hann_window(n_fft).float())
        self.scale = nn.Parameter(torch.ones(1))
        self.n_fft = n_fft

    def forward(self, audio):
        return self.scale * torch.stft(audio, self.n_fft, window=self.window).abs()
""",
            "train.py": """\
import torch

from features import LearnedSpectrogram


def dump(test_loader):
    spec = LearnedSpectrogram().cuda()
    spec.eval()
    return [spec(x.cuda()).detach() for x in test_loader]  # TL001: spec(x.cuda())
""",
        },
    ),
    Case(
        "module-with-submodules-and-eval-still-found",
        {
            "nets.py": """\
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)
""",
            "score.py": """\
import torch

from nets import Encoder


def score_all(loader):
    enc = Encoder(64).eval()
    total = 0.0
    for x, y in loader:
        total += (enc(x).argmax(1) == y).sum().item()  # TL001: enc(x)
    return total
""",
        },
    ),
    Case(
        "module-with-a-factory-built-submodule-still-found",
        {
            "nets.py": """\
import torch
from torch import nn

from blocks import make_layers


class Classifier(nn.Module):
    def __init__(self, cfg, root="ckpt/"):
        super().__init__()
        self.root = root
        self.layers = make_layers(cfg)

    def forward(self, x):
        return self.layers(x)


def score_all(loader, cfg):
    net = Classifier(cfg).eval()
    return [net(x).argmax(1) for x, _ in loader]  # TL001: net(x)
""",
            "blocks.py": """\
from torch import nn


def make_layers(cfg):
    return nn.Sequential(*[nn.Linear(cfg, cfg) for _ in range(3)])
""",
        },
    ),
    # --- 2. a one-off warm-up forward on an inline constant tensor, outside any loop ---
    Case(
        "warm-up-forward-on-inline-tensor",
        {
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self, model, loader, optimizer, size):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer
        self.size = size

    def before_train(self):
        self.model.eval()
        self.model(torch.ones(1, 3, self.size, self.size).cuda())
        self.model(torch.zeros(2, 3, self.size, self.size, device="cuda"))
        self.model.train()

    def train(self, epochs):
        self.before_train()
        for epoch in range(epochs):
            for x, y in self.loader:
                loss = self.model(x.cuda(), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
""",
        },
    ),
    Case(
        "forward-on-a-sized-dummy-counts-flops",
        {
            "complexity.py": """\
import torch


def complexity(model, shape):
    counted = add_counters(model)
    counted.eval()
    batch = torch.FloatTensor(1, *shape)
    hooks[0](batch)
    counted(batch)
    return counted.total()
""",
        },
    ),
    Case(
        "forward-on-a-filled-zeros-tensor-still-found",
        {
            "fit.py": """\
import torch


def fit(net, optimizer, loader, x, n):
    for epoch in range(10):
        for xb, yb in loader:
            loss = ((net(xb) - yb) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    features = torch.zeros(n, 4)
    for i in range(4):
        features[:, i] = x[i : n + i]
    return net(features)  # TL001: net(features)
""",
        },
    ),
    # --- 3. a prediction-named method that is the training forward of another module ---
    Case(
        "prediction-named-training-forward",
        {
            "solvers/__init__.py": "",
            "solvers/base.py": """\
import torch


class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def compute_predictions(self, batch):
        return self.model(batch["x"])

    def predict(self, x):
        return self.model(x)
""",
            "solvers/regression.py": """\
import torch
import torch.nn.functional as F

from solvers.base import Solver


class RegressionSolver(Solver):
    def run_epoch(self, loader):
        for batch in loader:
            self.step(batch)

    def step(self, batch):
        preds = self.compute_predictions(batch)
        loss = F.mse_loss(preds, batch["y"]) + F.mse_loss(self.predict(batch["x"]), batch["y"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
        },
    ),
    Case(
        "evaluation-called-between-training-loops-still-found",
        {
            "evaluation.py": """\
import torch


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()  # TL001: model(x)
    return correct
""",
            "train.py": """\
import torch

from evaluation import evaluate


def train(model, optimizer, train_loader, val_loader, epochs):
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate(model, val_loader))
""",
        },
    ),
    # --- a decorated method of a class a package re-exports, inherited by the class used ---
    Case(
        "decorated-method-through-package-reexport-and-base",
        {
            "seqlib/__init__.py": "from seqlib.models import Seq2Seq\n",
            "seqlib/base.py": """\
import torch
from torch import nn


class Generator(nn.Module):
    @torch.no_grad()
    def generate(self, src, steps):
        out = src
        for _ in range(steps):
            out = self(out)
        return out
""",
            "seqlib/models.py": """\
from torch import nn

from seqlib.base import Generator


class Seq2Seq(Generator):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)

    def forward(self, x):
        return self.net(x)
""",
            "train.py": """\
import torch

from seqlib import Seq2Seq

model = Seq2Seq()
opt = torch.optim.Adam(model.parameters())
for i, (src, tgt) in enumerate(loader):
    loss = ((model(src) - tgt) ** 2).mean()
    loss.backward()
    opt.step()
    if i % 100 == 0:
        model.eval()
        print(model.generate(src[:1], 10))
        model.train()
""",
        },
    ),
    # --- 4. a base solver in another module runs the evaluate stage under no_grad ---
    Case(
        "base-solver-runs-evaluate-under-no-grad",
        {
            "base.py": """\
import torch


class BaseSolver:
    def run_stage(self, name, method, *args):
        print("stage", name)
        return method(*args)

    def run_epoch(self):
        self.run_stage("train", self.train_epoch)
        with torch.no_grad():
            self.run_stage("valid", self.valid)
        with torch.no_grad():
            self.run_stage("evaluate", self.evaluate)
        with torch.no_grad():
            metrics = self.generate()
        return metrics

    def run(self, epochs):
        for epoch in range(epochs):
            self.run_epoch()
""",
            "music.py": """\
import torch

from base import BaseSolver


class MusicSolver(BaseSolver):
    def train_epoch(self):
        for x in self.loaders["train"]:
            self.model(x).mean().backward()
            self.optimizer.step()

    def valid(self):
        self.model.eval()
        return [self.model(x) for x in self.loaders["valid"]]

    def evaluate(self):
        self.model.eval()
        return [self.model(x).mean().item() for x in self.loaders["evaluate"]]

    def generate(self):
        self.model.eval()
        return [self.model(x) for x in self.loaders["generate"]]
""",
        },
    ),
    # --- 5. a one-off debug check before the training loop ---
    Case(
        "one-off-debug-check-before-training",
        {
            "fit.py": """\
import torch


def fit(model, loader, optimizer, epochs):
    model.eval()
    x, _ = next(iter(loader))
    print("output shape", model(x).shape)
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
        },
    ),
    Case(
        "evaluation-after-training-in-the-same-function-still-found",
        {
            "fit.py": """\
import torch


def fit(model, loader, optimizer, epochs, test_x):
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return model(test_x).argmax(1)  # TL001: model(test_x)
""",
        },
    ),
    # --- 6. Lightning callbacks' evaluation hooks run under the evaluation loop's no_grad ---
    Case(
        "lightning-callback-evaluation-hooks",
        {
            "callbacks.py": """\
import torch
import lightning as L


class SampleLogger(L.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module.eval()
        for x in self.samples:
            self.log_image(pl_module(x.to(pl_module.device)))

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pl_module.eval()
        for x in batch:
            self.show(pl_module(x))

    def on_test_epoch_end(self, trainer, pl_module):
        for x in self.samples:
            self.log_image(self.render(pl_module, x))

    def render(self, pl_module, x):
        pl_module.eval()
        return pl_module(x)

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pl_module.eval()
        for x in batch:
            self.show(pl_module(x))
""",
        },
    ),
    Case(
        "lightning-callback-training-hook-still-found",
        {
            "callbacks.py": """\
import torch
import lightning as L


class Probe(L.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.eval()
        for x in self.samples:
            self.log_image(pl_module(x))  # TL001: pl_module(x)
""",
        },
    ),
    # --- issue 24, batch 14 and validate classes: warm-ups on fills through casts and tuples,
    # a nested `inference` helper of a training forward, TensorFlow models, hubconf demos ---
    # A warm-up whose input is a constant fill through a tensor method chain
    # (`torch.zeros(...).to(d).type_as(w)`), or a tuple of constant fills and None: it
    # evaluates no data, whatever the code around it does.
    Case(
        "constant-input-through-chain-and-tuple",
        {
            "tools.py": """\
import torch


def evaluate(model, loaders, device):
    model.eval()
    model(torch.zeros(1, 3, 64, 64).to(device).type_as(next(model.parameters())))
    for loader in loaders:
        for x, y in loader:
            out = model(x.to(device))  # TL001: model(x.to(device))
            print((out.argmax(1) == y).float().mean())


def test_step(model):
    x = torch.ones(2, 64, dtype=torch.long).to("cuda")
    batch = (x, None)
    y, _ = model(batch)
    print(y.shape)
""",
        },
    ),
    # A nested helper named `inference` that its enclosing function (neither evaluation nor
    # training) runs: it is a step of that function's computation, which training calls with
    # grad on and backpropagates through; the name says nothing of the grad mode. A training
    # function's nested `eval_loss` is still its evaluation.
    Case(
        "nested-inference-helper-of-a-training-forward",
        {
            "rendering.py": """\
import torch


def render_rays(model, rays, chunk=1024):
    def inference(xyz):
        chunks = []
        for i in range(0, xyz.shape[0], chunk):
            chunks += [model(xyz[i : i + chunk])]
        return torch.cat(chunks, 0)

    return inference(rays).sum(1)


def evaluate(model, loader):
    model.eval()
    for rays, target in loader:
        out = model(rays.cuda())  # TL001: model(rays.cuda())
        print((out - target.cuda()).abs().mean())


def fit(model, loader, features, labels):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def eval_loss():
        return (model(features) - labels).pow(2).mean()  # TL001: model(features)

    losses = [eval_loss()]
    for i, (x, y) in enumerate(loader):
        loss = (model(x) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i % 10 == 0:
            losses.append(eval_loss())
    return losses
""",
            "train.py": """\
import torch
from torch.utils.data import DataLoader

from rendering import evaluate, render_rays


def main(model, dataset, val_loader):
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        for rays, target in DataLoader(dataset, batch_size=64):
            loss = (render_rays(model, rays.cuda()) - target.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate(model, val_loader)
""",
        },
    ),
    # A TensorFlow/Keras model (`tf_model(inputs, training=False)`) called beside the torch
    # model it is compared with: torch autograd does not apply to it. The torch model's forward
    # in the same loop still records.
    Case(
        "tensorflow-model-is-no-torch-module",
        {
            "convert.py": """\
import numpy as np
import torch


def compare(tf_class, pt_class, config, paths):
    for path in paths:
        pt_model = pt_class.from_pretrained(path)
        pt_model.eval()
        tf_model = load_pytorch_weights_in_tf2_model(tf_class(config), path)
        tfo = tf_model(tf_model.dummy_inputs, training=False)
        pto = pt_model(**pt_model.dummy_inputs)  # TL001: pt_model(**pt_model.dummy_inputs)
        print(np.amax(np.abs(pto[0].detach().numpy() - tfo[0].numpy())))
""",
        },
    ),
    # torch.hub imports a repository's `hubconf.py`: it is a library module, and its
    # `__main__` block is a demo like any imported module's, not the project's evaluation.
    Case(
        "hubconf-main-block-is-a-demo",
        {
            "hubconf.py": """\
import numpy as np
import torch

from models import Model


def custom(path):
    checkpoint = torch.load(path, map_location="cpu")
    hub_model = Model(checkpoint["cfg"])
    hub_model.load_state_dict(checkpoint["state"])
    hub_model.eval()
    return hub_model


if __name__ == "__main__":
    model = custom("weights.pt")
    results = model([np.zeros((640, 480, 3))])
    print(results)
""",
            "models.py": """\
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)

    def forward(self, x):
        return self.conv(x)
""",
            "detect.py": """\
import torch

from models import Model


def predict(paths):
    model = Model(None).cuda().eval()
    for path in paths:
        image = torch.load(path).cuda()
        print(model(image))  # TL001: model(image)
""",
        },
    ),
    # A helper training shares with evaluation (`_process_one_batch`) runs the forward: its
    # own forward is no evaluation, but each evaluation call of it records a graph for
    # nothing. Under `no_grad` at the call, it records none; an API method's one call of it,
    # outside any loop, is left to that method's callers.
    Case(
        "shared-batch-helper-called-by-evaluation",
        {
            "exp.py": """\
import numpy as np
import torch
from torch import nn, optim


class Exp:
    def __init__(self, model):
        self.model = model

    def _process_one_batch(self, batch_x, batch_y):
        outputs = self.model(batch_x.cuda())
        return outputs, batch_y.cuda()

    def vali(self, loader, criterion):
        self.model.eval()
        total = []
        for batch_x, batch_y in loader:
            pred, true = self._process_one_batch(batch_x, batch_y)  # TL001: self._process_one_batch(batch_x, batch_y)
            total.append(criterion(pred.detach().cpu(), true.detach().cpu()))
        self.model.train()
        return np.average(total)

    def train(self, train_loader, vali_loader):
        opt = optim.Adam(self.model.parameters())
        criterion = nn.MSELoss()
        for epoch in range(10):
            for batch_x, batch_y in train_loader:
                opt.zero_grad()
                pred, true = self._process_one_batch(batch_x, batch_y)
                loss = criterion(pred, true)
                loss.backward()
                opt.step()
            print(self.vali(vali_loader, criterion))

    def predict(self, loader):
        self.model.eval()
        preds = []
        for batch_x, batch_y in loader:
            with torch.no_grad():
                pred, _ = self._process_one_batch(batch_x, batch_y)
            preds.append(pred.cpu().numpy())
        return np.array(preds)

    def to_prediction(self, batch_x):
        return self._process_one_batch(batch_x, batch_x)[0].argmax(-1)
""",
        },
    ),
    # A module's own method named for prediction is its API, which training calls: a
    # `float("nan")` fill in it takes nothing out of autograd. A method that returns a list
    # of labels does.
    Case(
        "module-api-with-a-constant-float-fill",
        {
            "lm.py": """\
import torch
from torch import nn


class LM(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.proj = nn.Linear(dim, vocab)

    def forward(self, x):
        return self.proj(x)

    def compute_predictions(self, x, mask):
        logits = self(x)
        return logits.masked_fill(mask, float("nan"))

    def predict_labels(self, x):
        return self(x).argmax(-1).tolist()  # TL001: self(x)
""",
        },
    ),
]


# Each case pins TL001 alone.
CASES = [replace(case, rules=("TL001",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_production")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_production_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
