"""Each class of mistake in ../shared/real-code-cases.md is a test, so that no class is fixed by
matching its example and forgotten, and none comes back.

The file lists what the rules got wrong on real code nobody tuned them for, in classes, each with
small invented examples. Here each class has one small invented program of its own, written into
one project directory (one file per case) and checked ONCE by the installed `torchlint` command;
each case then compares its own file's findings, for the rule(s) it is about only, with the
(rule, line) pairs expected: none for a false-alarm class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from conftest import run_torchlint

ANY = ("*",)  # the case is about every rule: the file must have no finding at all


@dataclass(frozen=True)
class Case:
    id: str
    filename: str
    source: str
    rules: tuple[str, ...]
    expected: tuple[tuple[str, int], ...] = ()  # (rule, line); empty: nothing expected
    not_in_finding: str | None = None  # text the expected findings must not contain

    def param(self) -> object:
        return pytest.param(self, id=self.id)


# Other files of the project that some cases import from: they are not cases themselves.
SUPPORT = {
    "common.py": "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ndevice = torch.device('cuda')\n",
    "detector_base.py": (
        "import torch\nfrom torch import nn\n\n\nclass DenseDetector(nn.Module):\n"
        "    def forward(self, images):\n        return self.decode(self.head(self.backbone(images)))\n"
    ),
    "legacy/requirements.txt": "torch>=1.12,<2\n",  # a target before 2.0, for its own folder only
}


def notebook(*cells: str) -> str:
    """An .ipynb of code cells, as Jupyter writes it."""
    code = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"cell{i}",
            "metadata": {},
            "outputs": [],
            "source": c.splitlines(keepends=True),
        }
        for i, c in enumerate(cells)
    ]
    return (
        json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
        + "\n"
    )


CASES = [
    # --- Per-batch loops that are not recognised (TL002; TL101/TL103 decide differently) ---
    Case(
        "loop-over-helper-wrapped-loader",
        "det_eval.py",
        """\
import torch


def evaluate(model, data_loader, meter, device):
    model.eval()
    with torch.no_grad():
        for images, targets in meter.log_every(data_loader, 20, header="Test:"):
            scores = model(images.to(device))
            meter.update(acc=(scores.argmax(1) == targets.to(device)).float().mean().item())
""",
        ("TL002",),
        (("TL002", 9),),
    ),
    Case(
        "loader-passed-under-generic-name",
        "val_generic.py",
        """\
import torch
from torch.utils.data import DataLoader


@torch.no_grad()
def validate(model, iterator, device):
    total = 0.0
    for x, y in iterator:
        total += model(x.to(device)).sum().item()
    return total


validate(net, DataLoader(val_set, batch_size=64), "cuda")
""",
        ("TL002",),
        (("TL002", 9),),
    ),
    Case(
        "range-loop-with-batch-helper",
        "gpt_estimate.py",
        """\
import torch


@torch.no_grad()
def estimate_loss(model, data, eval_iters, device):
    losses = torch.zeros(eval_iters)
    for k in range(eval_iters):
        x, y = get_batch(data, k)
        _, loss = model(x.to(device), y.to(device))
        losses[k] = loss.item()
    return losses.mean()
""",
        ("TL002",),
        (("TL002", 10),),
    ),
    Case(
        "forward-reached-through-model-call",
        "tagger.py",
        """\
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence


class Tagger(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)

    def forward(self, tokens):
        lengths = (tokens != 0).sum(dim=1)
        packed = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        return self.rnn(packed)


model = Tagger(5000, 128).cuda()
optimizer = torch.optim.Adam(model.parameters())
for tokens, tags in train_loader:
    out, _ = model(tokens.cuda())
    loss = criterion(out.data, tags.cuda())
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
""",
        ("TL002",),
        (("TL002", 14),),
    ),
    Case(
        "closure-passed-to-optimizer-step",
        "lbfgs_fit.py",
        """\
import torch

optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5)
for inputs, targets in loader:
    inputs, targets = inputs.cuda(), targets.cuda()

    def closure():
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(inputs), targets)
        loss.backward()
        print("loss", loss.item())
        return loss

    optimizer.step(closure)
""",
        ("TL002",),
        (("TL002", 11),),
    ),
    Case(
        "def-test-is-an-evaluation-routine",
        "mnist_eval.py",
        """\
import torch


def test(model, loader, device):
    model.eval()
    correct = 0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        correct += (model(data).argmax(1) == target).sum().item()
    return correct / len(loader.dataset)
""",
        ("TL001", "TL002"),
        (("TL001", 9), ("TL002", 9)),
    ),
    # --- Branches that do not run every batch (TL002 false alarms) ---
    Case(
        "bounded-counter-guard-is-not-per-batch",
        "show_preds.py",
        """\
import torch

shown = 0
with torch.no_grad():
    for x, y in val_loader:
        pred = model(x.cuda()).argmax(1)
        for i in range(len(pred)):
            if shown < 3:
                shown += 1
                print("pred=%d" % pred[i].item())
""",
        ("TL002",),
    ),
    Case(
        "run-mode-flag-is-not-a-periodic-guard",
        "train_flag.py",
        """\
import torch
import torch.nn.functional as F


def train(args, model, train_loader, optimizer):
    train_acc = 0.0
    for step, (x, y) in enumerate(train_loader):
        x, y = x.cuda(), y.cuda()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if args.do_eval:
            train_acc += (logits.argmax(1) == y).float().mean().item()
    return train_acc
""",
        ("TL002",),
        (("TL002", 15),),
    ),
    Case(
        "modulo-held-in-a-variable-is-periodic",
        "train_mod.py",
        """\
import torch
import torch.nn.functional as F


def train(args, model, train_loader, optimizer):
    for step, (x, y) in enumerate(train_loader):
        loss = F.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        n = step % args.log_every
        if n == 0:
            print(f"step {step}: loss {loss.item():.4f}")
""",
        ("TL002",),
    ),
    Case(
        "cpu-only-device-binding",
        "cpu_train.py",
        """\
import torch
import torch.nn.functional as F

device = torch.device("cpu")
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
running = 0.0
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    running += loss.item()
""",
        ("TL002",),
    ),
    # --- Evaluation that is not recognised (TL001 misses) ---
    Case(
        "eval-chained-on-construction",
        "caption.py",
        """\
import torch


def main(args):
    enc = Encoder(args.dim).eval().to("cuda")
    for path in args.paths:
        feats = enc(load_image(path).to("cuda"))
        print(feats.shape)
""",
        ("TL001",),
        (("TL001", 7),),
    ),
    Case(
        "forward-through-another-module-method",
        "play_policy.py",
        """\
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, n_actions))

    def forward(self, obs):
        return self.net(obs)

    def act(self, obs):
        return self(obs).argmax(-1)


def play(env, policy, episodes):
    policy.eval()
    for _ in range(episodes):
        obs, done = env.reset(), False
        while not done:
            action = policy.act(torch.as_tensor(obs, device="cuda"))
            obs, done = env.step(int(action))
""",
        ("TL001",),
        (("TL001", 22),),
    ),
    Case(
        "forward-on-test-data-in-a-training-loop",
        "fit_and_peek.py",
        """\
import torch

for step, (x, y) in enumerate(train_loader):
    loss = crit(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 100 == 0:
        acc = (net(test_x).argmax(1) == test_y).float().mean()
        print(step, acc)
""",
        ("TL001",),
        (("TL001", 9),),
    ),
    Case(
        "eval-helper-result-leaves-autograd",
        "linreg.py",
        """\
import torch


def fit(w, loader, val_x, val_y, history):
    def val_loss():
        return ((val_x @ w - val_y) ** 2).mean().item()

    for i, (x, y) in enumerate(loader):
        ((x @ w - y) ** 2).mean().backward()
        sgd_step(w)
        if i % 100 == 0:
            history.append(val_loss())
""",
        ("TL001",),
        (("TL001", 6),),
    ),
    Case(
        "eval-done-by-the-caller",
        "predict_caller.py",
        """\
import torch


def predict(model, images):
    return model(images.cuda()).softmax(-1)


def main(paths):
    model = build_model()
    model.load_state_dict(torch.load("ckpt.pt"))
    model.cuda().eval()
    for images in batches(paths):
        save(predict(model, images))
""",
        ("TL001",),
        (("TL001", 5),),
    ),
    Case(
        "eval-at-module-level-in-a-script",
        "classify_script.py",
        """\
import torch
import torchvision

model = torchvision.models.resnet18(weights="DEFAULT").cuda()
model.eval()


def classify(path):
    return model(load(path).cuda()).argmax(1)


for path in paths:
    print(path, classify(path))
""",
        ("TL001",),
        (("TL001", 9),),
    ),
    Case(
        "torch-only-through-a-star-import",
        "star_infer.py",
        """\
from common import *

model = Net().to(device)
model.load_state_dict(torch.load("net.pt"))
model.eval()
predictions = []
for x, _ in test_loader:
    out = model(x.to(device))
    predictions.append(out.argmax(1))
""",
        ("TL001",),
        (("TL001", 8),),
    ),
    # --- Evaluation that is not there (TL001 false alarms) ---
    Case(
        "http-call-named-like-a-model",
        "llm_judge.py",
        """\
import requests
import torch

URL = "http://localhost:11434/api/generate"


def query_model(prompt, model="llama3"):
    return requests.post(URL, json={"model": model, "prompt": prompt}).json()


def evaluate(questions):
    answers = []
    for q in questions:
        answers.append(query_model(q["prompt"])["response"])
    return answers
""",
        ("TL001",),
    ),
    Case(
        "parameter-swap-runs-no-forward",
        "ema_swap.py",
        """\
import torch


def swap_models(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        p.data, q.data = q.data, p.data


def validate(model, ema_model, loader):
    swap_models(model, ema_model)
    model.eval()
    with torch.no_grad():
        correct = sum((model(x.cuda()).argmax(1) == y.cuda()).sum() for x, y in loader)
    swap_models(model, ema_model)
    return correct
""",
        ("TL001",),
    ),
    Case(
        "base-class-from-another-project-file",
        "retina_head.py",
        """\
import torch
from detector_base import DenseDetector


class RetinaHead(DenseDetector):
    def inference(self, images):
        features = self.backbone(images)
        return self.decode(self.head(features))
""",
        ("TL001",),
    ),
    Case(
        "framework-hook-lightning-validation-step",
        "lit_classifier.py",
        """\
import pytorch_lightning as pl
import torch


class LitClassifier(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self.model(x).argmax(1) == y).float().mean()
        self.log("val_acc", acc)
""",
        ("TL001",),
    ),
    Case(
        "framework-hook-fairseq-valid-step",
        "my_task.py",
        """\
import torch
from fairseq.tasks import FairseqTask


class SpeechTask(FairseqTask):
    def valid_step(self, sample, model, criterion):
        model.eval()
        loss, sample_size, logging_output = criterion(model, sample)
        return loss, sample_size, logging_output
""",
        ("TL001",),
    ),
    Case(
        "framework-hook-hf-prediction-step",
        "my_trainer.py",
        """\
import torch
from transformers import Trainer


class DistillTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        model.eval()
        outputs = model(**inputs)
        return outputs.loss, outputs.logits, inputs["labels"]
""",
        ("TL001",),
    ),
    # --- Tensor creation (TL103, TL003) ---
    Case(
        "tensor-from-host-data-then-moved",
        "collate_rows.py",
        """\
import torch

for rows in row_batches:
    x = torch.tensor(rows).to(device)
    model(x).sum().backward()
""",
        ("TL103",),
    ),
    Case(
        "legacy-constructor-filled-then-moved",
        "mask_build.py",
        """\
import torch

for batch in loader:
    n = batch.size(0)
    mask = torch.LongTensor(n, 8).fill_(0).to(device)
    model(batch.to(device), mask).sum().backward()
""",
        ("TL103",),
        (("TL103", 5),),
    ),
    Case(
        "dtype-method-between-factory-and-move",
        "zeros_float.py",
        """\
import torch

for batch in loader:
    n = batch.size(0)
    offsets = torch.zeros(n, 3).float().to(device)
    model(batch.to(device) + offsets).sum().backward()
""",
        ("TL103",),
        (("TL103", 5),),
    ),
    Case(
        "one-off-creation-outside-any-loop",
        "shuffle_once.py",
        """\
import torch


def shuffled(data, device):
    perm = torch.randperm(data.size(0)).to(device)
    return data.to(device)[perm]
""",
        ("TL103",),
    ),
    Case(
        "float-tensor-of-float64-converts-anyway",
        "float64_feats.py",
        """\
import numpy as np
import torch

feats = np.random.rand(1000, 16)
x = torch.FloatTensor(feats)
""",
        ("TL003",),
    ),
    Case(
        "numpy-from-tuple-unpacking",
        "relabel.py",
        """\
import numpy as np
import torch

def relabel(labels):
    _, inverse = np.unique(labels, return_inverse=True)
    return torch.tensor(inverse)
""",
        ("TL003",),
        (("TL003", 6),),
    ),
    Case(
        "constructor-under-a-local-alias",
        "alias_ctor.py",
        """\
import numpy as np
import torch

Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
to_tensor = torch.tensor
noise = Tensor(np.random.normal(0, 1, (64, 100)))  # float64 to float32: a copy either way
frames = [to_tensor(np.zeros((64, 64), dtype=np.float32)) for _ in range(8)]
""",
        ("TL003",),
        (("TL003", 7),),
    ),
    Case(
        "arrays-from-opencv-and-scipy",
        "load_inputs.py",
        """\
import cv2
import scipy.io
import torch

for path in paths:
    image = cv2.imread(path)
    img = torch.tensor(image)
mat = scipy.io.loadmat("features.mat")["X"]
feats = torch.tensor(mat)
""",
        ("TL003",),
        (("TL003", 7), ("TL003", 9)),
    ),
    # --- Losses and gradients (TL104, TL006) ---
    Case(
        "criterion-tuple-only-first-is-a-loss",
        "fairseq_like.py",
        """\
import torch

total_loss, total_size = 0.0, 0
for batch in loader:
    loss, sample_size, logs = criterion(model, batch)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    total_loss += loss
    total_size += sample_size
""",
        ("TL104",),
        (("TL104", 9),),
    ),
    Case(
        "manual-sgd-zeroes-a-leaf-grad",
        "manual_sgd.py",
        """\
import torch

w = torch.randn(512, 10, device="cuda", requires_grad=True)
for x, y in loader:
    ((x.cuda() @ w - y.cuda()) ** 2).mean().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
""",
        ("TL006",),
        (("TL006", 8),),
    ),
    Case(
        "grads-read-after-backward-before-torch-2",
        "legacy/train_gnorm.py",
        """\
import torch
import torch.nn.functional as F

for step, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    writer.add_scalar("gnorm", model.head.weight.grad.norm(), step)
""",
        ("TL006",),
        (("TL006", 5),),
    ),
    # --- DataLoader (TL101) ---
    Case(
        "single-batch-in-memory-loader",
        "full_batch.py",
        """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(xs, ys), batch_size=len(xs))
for epoch in range(500):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
""",
        ("TL101",),
    ),
    Case(
        "move-whose-result-is-discarded",
        "discarded_move.py",
        """\
import torch
from torch.utils.data import DataLoader

loader = DataLoader(dataset, batch_size=32, shuffle=True)
for x, y in loader:
    x.to(device)
    y.to(device)
    loss = criterion(model(x), y)
    loss.backward()
""",
        ("TL101",),
    ),
    Case(
        "notebook-gets-no-main-guard-advice",
        "train_nb.ipynb",
        notebook(
            "import torch\nfrom torch.utils.data import DataLoader",
            "loader = DataLoader(dataset, batch_size=64, shuffle=True)\nfor x, y in loader:\n"
            "    x, y = x.to('cuda'), y.to('cuda')\n    model(x).sum().backward()",
        ),
        ("TL101",),
        (("TL101", 1),),
        not_in_finding="__main__",
    ),
    # --- Unit tests of the library itself (TL004, TL005 and every performance rule) ---
    Case(
        "test-of-data-parallel-support",
        "test_parallel.py",
        """\
import pytest
import torch
from torch import nn


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_data_parallel_forward():
    model = nn.DataParallel(nn.Linear(4, 2).cuda())
    out = model(torch.randn(8, 4, device="cuda"))
    assert out.shape == (8, 2)
""",
        ANY,
    ),
    Case(
        "test-fixture-conv-bias-batchnorm",
        "test_fusion.py",
        """\
import pytest
import torch
from torch import nn


@pytest.fixture
def conv_bn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, bias=True), nn.BatchNorm2d(8), nn.ReLU()).cuda()


def test_fuse_keeps_output(conv_bn):
    x = torch.randn(2, 3, 16, 16, device="cuda")
    assert torch.allclose(fuse(conv_bn.eval())(x), conv_bn(x), atol=1e-5)
""",
        ANY,
    ),
    Case(
        "test-that-trains-a-few-steps",
        "test_training.py",
        """\
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def test_loss_goes_down():
    loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
    model = nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
""",
        ANY,
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case and support file in one project, checked once with every default rule and
    the opt-in rules some cases are about (TL101, TL102, TL108)."""
    root = tmp_path_factory.mktemp("real_cases")
    for name, text in {**SUPPORT, **{c.filename: c.source for c in CASES}}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    result = run_torchlint(
        "check",
        "--extend-select",
        "TL101,TL102,TL108",
        "--output-format",
        "json",
        "--no-cache",
        ".",
        cwd=root,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_each_case_has_its_own_file() -> None:
    assert (
        len({c.filename for c in CASES}) == len(CASES)
        and not {c.filename for c in CASES} & SUPPORT.keys()
    )


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_real_code_case(case: Case, findings: list[dict]) -> None:
    mine = [
        d
        for d in findings
        if d["filename"] == case.filename and (case.rules == ANY or d["code"] in case.rules)
    ]
    assert sorted((d["code"], d["location"]["row"]) for d in mine) == sorted(case.expected), mine
    if case.not_in_finding:
        assert all(case.not_in_finding not in json.dumps(d) for d in mine), mine
