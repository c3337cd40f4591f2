"""Each class of ../shared/production-code-cases.md that concerns TL001 and TL002 is a test.

Production code spreads training over modules, trainer classes, decorators and framework hooks,
so every case here is a small invented multi-file project of its own (its own folder with a
`[tool.torchlint]` table, so each is a project root), and all of them are checked ONCE by the
installed `torchlint` command. A case marks the findings it expects in its sources: a line
ending in `# TL002: text` expects a TL002 finding on that line, at the column where `text`
starts. Every other TL001/TL002 finding in the case's files is a failure, so a false-alarm
class is a case with no marks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL001", "TL002", "TL103", "TL107", "TL108", "TL109", "TL110")  # every rule some case pins


CASES = [
    # --- Grad mode set somewhere else (TL001 false alarms) ---
    Case(
        "decorated-generate-same-file",
        files={
            "lm.py": """\
import torch
from torch import nn


class LM(nn.Module):
    def forward(self, idx):
        return self.head(idx)

    @torch.inference_mode()
    def generate(self, idx, steps):
        for _ in range(steps):
            idx = torch.cat([idx, self(idx).argmax(-1)], 1)
        return idx

    @torch.no_grad
    def sample(self, idx):
        return self(idx)


lm = LM()
lm.load_state_dict(torch.load("lm.pt"))
lm.eval()
for prompt in prompts:
    print(lm.generate(prompt, 50), lm.sample(prompt))
""",
        },
    ),
    # A method whose only other "call sites" are its own body's `self.encoder.eval()` (another
    # object's `eval`, or a recursive call): those run in whatever mode the method runs in, so
    # the callers outside it decide (XLM's XNLI.eval, run only under `with torch.no_grad():`).
    Case(
        "method-named-eval-called-under-no-grad",
        files={
            "finetune.py": """\
import torch
from torch import nn


class Finetuner:
    def __init__(self, encoder, data):
        self.encoder = encoder
        self.head = nn.Linear(512, 3)
        self.data = data
        self.optimizer = torch.optim.Adam(self.head.parameters())

    def run(self, epochs):
        for _ in range(epochs):
            self.train()
            with torch.no_grad():
                print(self.eval())

    def train(self):
        self.encoder.train()
        self.head.train()
        for x, y in self.data["train"]:
            loss = nn.functional.cross_entropy(self.head(self.encoder(x)), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def eval(self):
        self.encoder.eval()
        self.head.eval()
        correct = 0
        for x, y in self.data["valid"]:
            output = self.head(self.encoder(x))
            correct += output.argmax(1).eq(y).sum().item()
        return correct
""",
            "unwrapped.py": """\
import torch
from torch import nn


class Finetuner:
    def __init__(self, encoder, data):
        self.encoder = encoder
        self.head = nn.Linear(512, 3)
        self.data = data
        self.optimizer = torch.optim.Adam(self.head.parameters())

    def run(self, epochs):
        for _ in range(epochs):
            self.train()
            print(self.eval())

    def train(self):
        self.encoder.train()
        self.head.train()
        for x, y in self.data["train"]:
            loss = nn.functional.cross_entropy(self.head(self.encoder(x)), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def eval(self):
        self.encoder.eval()
        self.head.eval()
        correct = 0
        for x, y in self.data["valid"]:
            output = self.head(self.encoder(x))  # TL001: self.encoder(x)
            correct += output.argmax(1).eq(y).sum().item()
        return correct
""",
        },
    ),
    # A Hugging Face model built inside a helper of the file and handed back (in a tuple with
    # its tokenizer, or alone): its `generate` turns grad off itself (trlx's summarize example).
    Case(
        "framework-generate-through-a-helper-return",
        files={
            "infer.py": """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def load_model(path):
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def inference(model, tokenizer, posts):
    model.to("cuda")
    model.eval()
    summaries = []
    for post in posts:
        tokens = tokenizer(post, return_tensors="pt")["input_ids"].cuda()
        summaries.append(tokenizer.batch_decode(model.generate(tokens, max_new_tokens=50)))
    return summaries


if __name__ == "__main__":
    model, tokenizer = load_model("ckpt")
    print(inference(model, tokenizer, ["a post"]))
""",
            "single.py": """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def load_model(path):
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer.pad_token = tokenizer.eos_token
    return model


def inference(model, tokenizer, posts):
    model.to("cuda")
    model.eval()
    summaries = []
    for post in posts:
        tokens = tokenizer(post, return_tensors="pt")["input_ids"].cuda()
        summaries.append(tokenizer.batch_decode(model.generate(tokens, max_new_tokens=50)))
    return summaries


if __name__ == "__main__":
    model = load_model("ckpt")
    tokenizer = AutoTokenizer.from_pretrained("ckpt")
    print(inference(model, tokenizer, ["a post"]))
""",
        },
    ),
    Case(
        "decorated-callee-in-another-module",
        files={
            "models/__init__.py": "",
            "models/lm.py": """\
import torch
from torch import nn


class LM(nn.Module):
    def forward(self, idx):
        return self.head(idx)

    @torch.no_grad()
    def generate(self, idx, steps):
        for _ in range(steps):
            idx = self(idx)
        return idx
""",
            "sample.py": """\
import torch
from models.lm import LM

lm = LM()
lm.load_state_dict(torch.load("lm.pt"))
lm.eval()
for prompt in prompts:
    print(lm.generate(prompt.cuda(), 50))
""",
        },
    ),
    Case(
        "every-caller-decorated-in-another-module",
        {
            "evaluation.py": """\
import torch


def evaluate(model, loader):
    model.eval()
    total = 0
    for x, y in loader:
        total += (model(x).argmax(1) == y).sum()
    return total
""",
            "train.py": """\
import torch
from evaluation import evaluate


@torch.no_grad()
def report(model, loader):
    return evaluate(model, loader)


@torch.inference_mode
def final(model, loader):
    return evaluate(model, loader)
""",
        },
    ),
    Case(
        "hugging-face-generate",
        files={
            "chat.py": """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("gpt2")
hf_model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
hf_model.eval()
for question in questions:
    inputs = tok(question, return_tensors="pt").to("cuda")
    text = hf_model.generate(**inputs, max_new_tokens=20)
""",
        },
    ),
    Case(
        "method-called-without-grad-through-a-base-class",
        files={
            "datasets/__init__.py": "",
            "datasets/base.py": """\
import torch.nn.functional as F
from torch.utils.data import Dataset


class BaseDataset(Dataset):
    def inference(self, model, image):
        return model(image)

    def multi_scale_inference(self, model, image, scales):
        preds = []
        for scale in scales:
            preds.append(self.inference(model, F.interpolate(image, scale_factor=scale)))
        return preds
""",
            "datasets/lip.py": """\
import torch

from .base import BaseDataset


class LIP(BaseDataset):
    def inference(self, model, image):
        pred = model(image)
        return pred.softmax(1)
""",
            "evaluate.py": """\
import torch


def testval(dataset, loader, model):
    model.eval()
    with torch.no_grad():
        for image in loader:
            pred = dataset.multi_scale_inference(model, image, [0.5, 1.0])
""",
        },
    ),
    Case(
        "method-called-with-grad-somewhere-is-still-flagged",
        files={
            "datasets/__init__.py": "",
            "datasets/base.py": """\
import torch.nn.functional as F
from torch.utils.data import Dataset


class BaseDataset(Dataset):
    def inference(self, model, image):
        return model(image)

    def multi_scale_inference(self, model, image, scales):
        preds = []
        for scale in scales:
            preds.append(self.inference(model, F.interpolate(image, scale_factor=scale)))
        return preds
""",
            "datasets/lip.py": """\
import torch

from .base import BaseDataset


class LIP(BaseDataset):
    def inference(self, model, image):
        pred = model(image)  # TL001: model(image)
        return pred.softmax(1)
""",
            "evaluate.py": """\
def testval(dataset, loader, model):
    model.eval()
    for image in loader:
        pred = dataset.multi_scale_inference(model, image, [0.5, 1.0])
""",
        },
    ),
    Case(
        "summary-forward-run-once-from-a-tool-main",
        files={
            "utils/__init__.py": "",
            "utils/summary.py": """\
import torch


def model_summary(model, *inputs):
    rows = []
    hooks = [m.register_forward_hook(lambda m, i, o: rows.append(o.shape)) for m in model.children()]
    model.eval()
    model(*inputs)
    for hook in hooks:
        hook.remove()
    return rows
""",
            "tools/test.py": """\
import torch
from torch import nn
from utils.summary import model_summary


def main():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    print(model_summary(model, torch.randn(1, 4)))


if __name__ == "__main__":
    main()
""",
        },
    ),
    Case(
        "summary-forward-run-once-from-a-folder-put-on-sys-path",
        files={
            "lib/utils/__init__.py": "",
            "lib/utils/summary.py": """\
import torch


def model_summary(model, *inputs):
    rows = []
    hooks = [m.register_forward_hook(lambda m, i, o: rows.append(o.shape)) for m in model.children()]
    model.eval()
    model(*inputs)
    for hook in hooks:
        hook.remove()
    return rows
""",
            "tools/test.py": """\
import sys

sys.path.insert(0, "lib")
import torch
from torch import nn
from utils.summary import model_summary


def main():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    print(model_summary(model, torch.randn(1, 4)))


if __name__ == "__main__":
    main()
""",
        },
    ),
    Case(
        "summary-forward-imported-and-run-inside-main",
        files={
            "utils/__init__.py": "",
            "utils/flops.py": """\
import torch


def count_flops(model, shape):
    model.eval()
    return model(torch.zeros(1, *shape))
""",
            "run.py": """\
from torch import nn


def main(show_summary=True):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    if show_summary:
        from utils.flops import count_flops

        print(count_flops(model, (4,)))


if __name__ == "__main__":
    main()
""",
        },
    ),
    Case(
        "summary-forward-run-every-epoch-is-flagged",
        files={
            "utils/__init__.py": "",
            "utils/summary.py": """\
import torch


def model_summary(model, *inputs):
    rows = []
    hooks = [m.register_forward_hook(lambda m, i, o: rows.append(o.shape)) for m in model.children()]
    model.eval()
    model(*inputs)  # TL001: model(*inputs)
    for hook in hooks:
        hook.remove()
    return rows
""",
            "tools/train.py": """\
import torch
from torch import nn
from utils.summary import model_summary


def main():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    for epoch in range(10):
        print(model_summary(model, torch.randn(1, 4)))


if __name__ == "__main__":
    main()
""",
        },
    ),
    # --- Calls that are not forward passes (TL001) ---
    Case(
        "calls-that-are-not-forwards",
        {
            "ema.py": """\
import torch
from torch import nn


def swap_weights(model, ema_model):
    for p, q in zip(model.parameters(), ema_model.parameters()):
        p.data, q.data = q.data, p.data


def extract_backbone(model):
    return model.backbone


def validate(model, ema_model, loader):
    model.eval()
    swap_weights(model, ema_model)
    backbone = extract_backbone(model)
    with torch.no_grad():
        for x, y in loader:
            print(backbone(x).mean())
    swap_weights(model, ema_model)
""",
        },
    ),
    Case(
        "module-by-its-project-class-not-its-name",
        {
            "nets.py": """\
from torch import nn


class Scorer(nn.Module):
    def forward(self, x):
        return self.fc(x)


class Tokenizer:
    def __call__(self, text):
        return [ord(c) for c in text]
""",
            "score.py": """\
import torch
from nets import Scorer, Tokenizer

scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
scorer.eval()
encoder = Tokenizer()
for text, x in test_data:
    ids = encoder(text)
    print(ids, scorer(x.cuda()))  # TL001: scorer(x.cuda())
""",
        },
    ),
    Case(
        "single-forward-outside-any-loop",
        files={
            "demo.py": """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return self.fc(x)


def export(path):
    model = Net()
    model.load_state_dict(torch.load(path))
    model.eval()
    dummy = torch.randn(1, 3, 224, 224)
    model(dummy)
    torch.onnx.export(model, dummy, "net.onnx")


if __name__ == "__main__":
    net = Net()
    net.eval()
    print(net(torch.randn(2, 8)).shape)
""",
        },
    ),
    Case(
        "evaluation-that-repeats",
        {
            "loop.py": """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return self.fc(x)


def validate(model, val_loader):
    model.eval()
    for x, y in val_loader:
        print((model(x) == y).float().mean())  # TL001: model(x)


net = Net()
net.load_state_dict(torch.load("net.pt"))
net.eval()
for step in range(100):
    img = net(noise[step])  # TL001: net(noise[step])
""",
        },
    ),
    # --- Facts that live in another module of the project ---
    Case(
        "device-from-a-project-helper",
        files={
            "dist_util.py": """\
import torch


def dev():
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
""",
            "train.py": """\
import torch
from dist_util import dev


def train(model, loader, opt):
    for batch in loader:
        loss = model(batch.to(dev())).mean()
        loss.backward()
        opt.step()
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "meter-update-syncs-in-another-module",
        files={
            "meters.py": """\
import torch


class Meter:
    def __init__(self):
        self.sums = {}

    def update(self, **values):
        for k, v in values.items():
            self.sums[k] = self.sums.get(k, 0) + (v.item() if isinstance(v, torch.Tensor) else v)
""",
            "train.py": """\
import torch
from meters import Meter


def train(model, loader, opt):
    meter = Meter()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        meter.update(loss=loss)  # TL002: meter.update(loss=loss)
""",
        },
    ),
    Case(
        "method-through-an-attribute-set-in-a-subclass",
        {
            "models/__init__.py": "",
            "models/base_gan.py": """\
import torch


class BaseGAN:
    def __init__(self):
        self.device = torch.device("cuda:0")

    def optimize(self, batch):
        losses = {}
        self.opt_d.zero_grad()
        loss_d = self.net_d(batch.to(self.device)).mean()
        losses["d"] = loss_d.item()  # TL002: loss_d.item()
        loss_d.backward()
        self.opt_d.step()
        return losses
""",
            "models/dcgan.py": """\
from .base_gan import BaseGAN


class DCGAN(BaseGAN):
    def sample(self, n):
        return self.net_g(n)
""",
            "models/trainer/__init__.py": "",
            "models/trainer/base_trainer.py": """\
class BaseTrainer:
    def train_epoch(self, db_loader):
        for i, data in enumerate(db_loader):
            losses = self.model.optimize(data[0])
            self.running.append(losses)

    def __call__(self, steps):
        for step in steps:
            self(step - 1)
""",
            "models/trainer/dcgan_trainer.py": """\
from ..dcgan import DCGAN
from .base_trainer import BaseTrainer


class DCGANTrainer(BaseTrainer):
    def init_model(self):
        self.model = DCGAN()
""",
        },
    ),
    Case(
        "closure-from-a-factory-in-another-module",
        {
            "train_fns.py": """\
import torch


def make_train_fn(G, D, config):
    def train(x, y):
        D.optim.zero_grad()
        d_loss = D(G(x), y).mean()
        d_loss.backward()
        D.optim.step()
        return {"d_loss": float(d_loss.item())}  # TL002: d_loss.item()

    return train


def save_samples(G, path):
    torch.save(G(torch.randn(8, 128, device="cuda")).cpu(), path)
""",
            "train.py": """\
import train_fns


def main(G, D, loaders, config):
    train = train_fns.make_train_fn(G, D, config)
    for epoch in range(config["epochs"]):
        for i, (x, y) in enumerate(loaders[0]):
            metrics = train(x.cuda(), y.cuda())
            print(metrics)
        train_fns.save_samples(G, "samples.pt")
""",
        },
    ),
    Case(
        "metric-update-in-another-module-called-per-batch",
        {
            "metrics/__init__.py": "",
            "metrics/score.py": """\
import torch
import torch.nn.functional as F


class Score:
    def __init__(self, classifier):
        self.total = 0.0
        self.classifier = classifier.eval().cuda()

    def add_batch(self, images):
        y = self.classifier(images).detach()
        self.total += (F.softmax(y, 1) * F.log_softmax(y, 1)).sum().item()  # TL002: (F.softmax

    def result(self):
        return self.total
""",
            "evaluate.py": """\
import torch
from metrics.score import Score


def evaluate(classifier, generator, val_loader):
    score = Score(classifier)
    with torch.no_grad():
        for z, _ in val_loader:
            score.add_batch(generator(z.cuda()))
    return score.result()
""",
        },
    ),
    Case(
        "meter-update-syncs-in-the-same-file",
        {
            "train.py": """\
import torch


class Meter:
    def update(self, **values):
        for k, v in values.items():
            print(k, v.item())  # TL002: v.item()


def train(model, loader, opt):
    meter = Meter()
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        meter.update(loss=loss)
        meter.update(count=len(x))
""",
        },
    ),
    # --- Per-step code driven by a framework or a trainer class ---
    Case(
        "ignite-engine-process-function",
        {
            "train.py": """\
import torch
from ignite.engine import Engine, Events


def step(engine, batch):
    x, y = batch[0].cuda(), batch[1].cuda()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    return {"loss": loss.item()}  # TL002: loss.item()


trainer = Engine(step)


@trainer.on(Events.ITERATION_COMPLETED)
def log(engine):
    print(engine.state.output["loss"])


@trainer.on(Events.ITERATION_COMPLETED(every=100))
def log_now_and_then(engine):
    print(engine.state.batch[0].sum().item())


def log_batch(engine):
    print(engine.state.batch[0].sum().item())  # TL002: engine.state.batch[0]


trainer.add_event_handler(Events.ITERATION_COMPLETED, log_batch)
trainer.run(loader, max_epochs=10)
""",
        },
    ),
    Case(
        "ignite-epoch-handler-evaluates",
        {
            "gan.py": """\
import torch
from torch import nn
from ignite.engine import Engine, Events


class Generator(nn.Module):
    def forward(self, z):
        return self.net(z)


generator = Generator().cuda()


def step(engine, batch):
    loss = generator(batch.cuda()).mean()
    loss.backward()
    return loss


trainer = Engine(step)


@trainer.on(Events.EPOCH_COMPLETED)
def save_samples(engine):
    generator.eval()
    fake = generator(fixed_noise)  # TL001: generator(fixed_noise)
    save_image(fake, "fake.png")
""",
        },
    ),
    Case(
        "trainer-class-self-method-chain",
        {
            "trainer.py": """\
import torch


class Trainer:
    def run(self):
        while self.step < self.total:
            self.run_step(next(self.data))
            self.step += 1

    def run_step(self, batch):
        loss = self.model(batch.cuda()).mean()
        loss.backward()
        self.opt.step()
        self._log_grad_norm()

    def _log_grad_norm(self):
        total = 0.0
        for p in self.model.parameters():
            total += (p.grad ** 2).sum().item()  # TL002: (p.grad ** 2)
        return total
""",
        },
    ),
    Case(
        "lightning-hooks",
        {
            "lit.py": """\
import torch
import lightning as L


class Lit(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self.net(x), y)
        self.log("acc", (self.net(x).argmax(1) == y).float().mean().item())  # TL002: (self.net(x)
        return loss

    def validation_step(self, batch, batch_idx):
        self.net.eval()
        return self.net(batch[0])


trainer = L.Trainer(accelerator="gpu")
trainer.fit(Lit(), loader)
""",
        },
    ),
    Case(
        "lightning-base-class-in-another-module",
        {
            "models/__init__.py": "",
            "models/base.py": """\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def configure_optimizers(self):
        return self.opt
""",
            "models/net.py": """\
import torch
from models.base import Base


class Net(Base):
    def training_step(self, batch, batch_idx):
        loss = self.net(batch[0]).mean()
        self.log("loss", loss.item())  # TL002: loss.item()
        return loss

    def validation_step(self, batch, batch_idx):
        self.net.eval()
        return self.net(batch[0])
""",
        },
    ),
    Case(
        "lightning-base-class-two-hops-away",
        {
            "core/__init__.py": "",
            "core/base.py": """\
from lightning import LightningModule


class Base(LightningModule):
    pass
""",
            "core/mid.py": """\
from .base import Base


class Classifier(Base):
    def forward(self, x):
        return self.net(x)
""",
            "net.py": """\
import torch
from core import mid


class Net(mid.Classifier):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self(x), y)
        print(loss.item())  # TL002: loss.item()
        return loss

    def test_step(self, batch, batch_idx):
        self.eval()
        return self(batch[0])
""",
        },
    ),
    Case(
        "hugging-face-trainer-subclass",
        {
            "hf.py": """\
import torch
from transformers import Trainer


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        out = model(**inputs)
        print(out.loss.item())  # TL002: out.loss.item()
        return out.loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        model.eval()
        return model(**inputs)
""",
        },
    ),
    Case(
        "fairseq-mmengine-detectron2-hooks",
        {
            "hooks.py": """\
import torch
from fairseq.tasks import FairseqTask
from mmengine.hooks import Hook
from detectron2.engine import HookBase, SimpleTrainer


class Task(FairseqTask):
    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        loss, size, log = criterion(model, sample)
        optimizer.backward(loss)
        log["loss"] = loss.item()  # TL002: loss.item()
        return loss, size, log

    def valid_step(self, sample, model, criterion):
        model.eval()
        return criterion(model, sample)


class GradHook(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        print(outputs["loss"].item())  # TL002: outputs["loss"].item()


class Timer(HookBase):
    def after_step(self):
        print(self.trainer.storage.latest()["loss"].cpu())  # TL002: self.trainer.storage


class MyTrainer(SimpleTrainer):
    def run_step(self):
        losses = self.model(next(self._data_loader_iter))
        print(sum(losses.values()).item())  # TL002: sum(losses.values()).item()
""",
        },
    ),
    Case(
        "speechbrain-evaluation-hooks",
        {
            "tts.py": """\
import torch
import speechbrain as sb


class TTS(sb.Brain):
    def evaluate_batch(self, batch, stage):
        self.modules.eval()
        out = self.modules.model(batch)
        return self.compute_objectives(out, batch, stage)

    def on_stage_end(self, stage, stage_loss, epoch):
        if stage == sb.Stage.VALID and epoch % 10 == 0:
            self.valid_inference()
        elif stage != sb.Stage.TRAIN:
            self.test_inference()
        else:
            self.train_inference()

    def valid_inference(self):
        self.logger.save(self.hparams.model(self.last_batch[0]))

    def test_inference(self):
        self.logger.save(self.hparams.model(self.last_batch[0]))

    def train_inference(self):
        self.logger.save(self.hparams.model(self.last_batch[0]))  # TL001: self.hparams.model(
""",
        },
        rules=("TL001",),
    ),
    Case(
        "accelerate-backward-loop",
        {
            "acc.py": """\
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model, opt, loader = accelerator.prepare(model, opt, loader)
for batch in loader:
    loss = model(**batch).loss
    accelerator.backward(loss)
    opt.step()
    print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    # --- Periodic guards in compound forms (TL002 false alarms) ---
    # (The sample forward under the compound guard records autograd only to be printed: TL001.)
    Case(
        "periodic-guards-compound-and-flags",
        {
            "train.py": """\
import torch


def train(model, loader, eval_dls, opt, args):
    last = len(loader) - 1
    master = args.rank == 0
    for i, (x, y) in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        is_log_step = (i % args.log_every == 0) or i == last
        if is_log_step:
            print(loss.item())
        if master and (i % args.every == 0 or i == last) and args.sample:
            print(model(x.cuda()).mean().item())  # TL001: model(x.cuda())
        if i < 3:
            print(loss.item())
        if due(i, args.every):
            print(loss.item())
        if i == last or (i + 1) % args.eval_every == 0:
            with torch.no_grad():
                for length, eval_dl in eval_dls.items():
                    seq, labels = next(eval_dl)
                    wrong = (model(seq.cuda()).argmax(-1) != labels.cuda()).sum().item()
                    print(length, wrong)
        last_step = i == len(loader) - 1
        if master and (i % args.every == 0 or last_step) and args.sample:
            print(loss.item())


def due(step, every):
    return step % every == 0
""",
        },
    ),
    # --- Values the rules misread ---
    Case(
        "per-parameter-any-and-clip-norm",
        files={
            "train.py": """\
import torch
import torch.distributed as dist


def train(model, loader, opt, world):
    params = list(model.parameters())
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        if any(not torch.isfinite(p.grad).all() for p in params):  # TL002: torch.isfinite(p.grad)
            continue
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        print(f"norm {norm:.4f}")  # TL002: norm:.4f
        opt.step()
        dist.all_reduce(loss)
        loss /= world
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    Case(
        "plain-bools-numpy-and-after-the-loop",
        files={
            "eval.py": """\
import torch


def collect(model, loader):
    all_preds = []
    with torch.no_grad():
        for x, _ in loader:
            x = x.cuda()
            if x.is_xpu or x.is_cuda:
                pass
            out = model(x)
            feats = out.cpu().numpy()  # TL002: out.cpu()
            print(feats[0].item())
            all_preds.append(out)
    preds = torch.cat(all_preds).cpu().numpy()
    return preds
""",
        },
    ),
    Case(
        "truth-test-of-a-maybe-tensor",
        {
            "train.py": """\
import torch


def train(model, loader, opt):
    for x, y in loader:
        out = model(x.cuda())
        loss = (out - y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        acc = (out.argmax(1) == y.cuda()).float().mean() if y is not None else None
        if acc:  # TL002: acc
            print("ok")
""",
        },
    ),
    Case(
        "helper-called-only-under-a-periodic-guard",
        {
            "train.py": """\
import torch


def log_stats(loss, step):
    print(step, loss.item())


def train(model, loader, opt):
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            log_stats(loss, step)
""",
        },
    ),
    Case(
        "one-off-implementation-check",
        {
            "check.py": """\
import torch
from torch import nn


class RMSNorm(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


norm = RMSNorm()
norm.load_state_dict(torch.load("norm.pt"))
norm.eval()
x = torch.randn(4, 8)
assert torch.allclose(norm(x), x / x.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt())
""",
        },
    ),
    Case(
        "lightning-on-the-cpu",
        {
            "lit.py": """\
import torch
import lightning as L


class Lit(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.net(batch).mean()
        print(loss.item())
        return loss


L.Trainer(accelerator="cpu").fit(Lit(), loader)
""",
        },
    ),
    Case(
        "lazy-optimizer-state",
        rules=("TL103",),
        files={
            "opt.py": """\
import torch


class MyAdam(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["m"] = torch.zeros(p.shape).to(p.device)
                state["m"].mul_(0.9).add_(p.grad)


def train(model, loader, opt):
    for x, y in loader:
        model(x.cuda()).mean().backward()
        opt.step()
""",
        },
    ),
    # --- GPU or not, script or library (TL109, TL110) ---
    Case(
        "xla-run-is-not-a-gpu-run",
        rules=("TL109", "TL110"),
        files={
            "train_tpu.py": """\
import torch
import torch_xla.core.xla_model as xm
from torch import nn

device = xm.xla_device()
model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()).to(device)
opt = torch.optim.AdamW(model.parameters())

if __name__ == "__main__":
    for x, y in loader:
        loss = model(x.to(device)).mean()
        loss.backward()
        opt.step()
""",
        },
    ),
    Case(
        "gpu-script-is-flagged",
        rules=("TL109", "TL110"),
        files={
            "train_gpu.py": """\
import torch
from torch import nn

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()).to("cuda")  # TL110: nn.Conv2d
opt = torch.optim.AdamW(model.parameters())  # TL109: torch.optim.AdamW

if __name__ == "__main__":
    for x, y in loader:
        loss = model(x.to("cuda")).mean()
        loss.backward()
        opt.step()
""",
        },
    ),
    Case(
        "library-main-demo-is-not-a-training-script",
        rules=("TL110",),
        files={
            "layers.py": """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.conv(x)


def fit(model, loader, opt):
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    block = Block().cuda()
    print(block(torch.randn(1, 3, 8, 8, device="cuda")).shape)
""",
        },
    ),
    # A library function that its own demo runs and that training scripts import is no demo code
    Case(
        "library-function-its-demo-and-importers-call",
        rules=("TL001",),
        files={
            "evals/__init__.py": "",
            "evals/q_eval.py": """\
import torch


def evaluate(model, env, episodes=10):
    model.eval()
    obs = env.reset()
    returns = []
    while len(returns) < episodes:
        q = model(torch.as_tensor(obs))  # TL001: model(torch.as_tensor(obs))
        obs, done = env.step(q.argmax().item())
        if done:
            returns.append(1.0)
    return returns


if __name__ == "__main__":
    evaluate(torch.nn.Linear(4, 2), make_env())
""",
            "dqn.py": """\
import torch
from evals.q_eval import evaluate


def main(env):
    net = torch.nn.Linear(4, 2)
    print(evaluate(net, env))


if __name__ == "__main__":
    main(make_env())
""",
        },
    ),
    # --- Library `__main__` demos are not training or evaluation (TL001, TL002, TL107) ---
    Case(
        "library-main-demo-is-no-evaluation-and-no-step",
        rules=("TL001", "TL002", "TL107", "TL108"),
        files={
            "nets/__init__.py": "from .backbone import Backbone, build\nfrom .head import *\n",
            "nets/head.py": """\
import torch
from torch import nn


class Head(nn.Linear):
    pass


def head(pretrained=False):
    model = Head(8, 2)
    if pretrained:
        model.load_state_dict(torch.load("head.pt"))
    return model


if __name__ == "__main__":
    model = head(pretrained=True)
    print(model(torch.randn(1, 8)).shape)
""",
            "nets/backbone.py": """\
import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.conv(x)


def build(path=None):
    model = Backbone()
    if path:
        model.load_state_dict(torch.load(path))
    return model


def compare(model, x):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(x).mean()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        print(loss.item())


if __name__ == "__main__":
    model = build("weights.pt").cuda()
    x = torch.randn(2, 3, 32, 32, device="cuda")
    out = model(x)
    print(out.shape)
    torch.autograd.set_detect_anomaly(True)
    compare(model, x)
""",
            "train.py": """\
import torch
from nets import build


def main(loader):
    model = build().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        print(loss.item())  # TL002: loss.item()
    model.eval()
    for x, y in loader:
        print(model(x.cuda()).shape)  # TL001: model(x.cuda())


if __name__ == "__main__":
    main(torch.utils.data.DataLoader(range(8)))
""",
        },
    ),
    Case(
        "imported-training-script-keeps-its-findings",
        files={
            "train.py": """\
import torch
from torch import nn


def build_model():
    return nn.Linear(4, 2).cuda()


def main():
    model = build_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.randn(64, 4), batch_size=8)
    for x in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        opt.step()
        print(loss.item())  # TL002: loss.item()


if __name__ == "__main__":
    main()
""",
            "predict.py": """\
import torch
from train import build_model

model = build_model()
print(model(torch.randn(1, 4, device="cuda")))
""",
        },
    ),
    # --- Loops over batch numbers (TL002) ---
    Case(
        "range-loops-over-batch-numbers",
        files={
            "metrics/__init__.py": "",
            "metrics/score.py": """\
import torch


class Score:
    def __init__(self, classifier):
        self.classifier = classifier.eval()
        self.total = 0.0

    def update_with_batch(self, images):
        y = self.classifier(images).detach().to(images.device)  # TL001: self.classifier(images)
        self.total += y.softmax(1).sum().item()  # TL002: y.softmax(1).sum().item()
""",
            "evaluate.py": """\
import torch
from torch import nn
from metrics.score import Score


def inception(generator, classifier, n_batch=100):
    score = Score(classifier)
    for index in range(n_batch):
        with torch.no_grad():
            fake = generator(torch.randn(16, 8, device="cuda"))
        score.update_with_batch(fake)
    return score.total


def sliced(model, data, bs=32):
    total = 0.0
    for i in range(0, len(data), bs):
        xb = data[i : i + bs].cuda()
        with torch.no_grad():
            loss = model(xb).mean()
        total += loss.item()  # TL002: loss.item()
    for i in range(len(data)):
        total += data[i].sum().item()
    for j in range(bs):
        total += model.weight[j].sum().item()
    return total
""",
        },
    ),
    # --- Rare paths are not per step (TL002) ---
    Case(
        "rare-paths",
        files={
            "train.py": """\
import math
import sys
import torch


def train(model, loader, opt):
    for sample in loader:
        if sample is None:
            sample = dummy_batch()
            print(sample.sum().item())
        loss = model(sample.cuda()).mean()
        if not math.isfinite(loss.item()):  # an abort: the host needs the value
            print(loss.item())
            sys.exit(1)
        loss.backward()
        opt.step()
        for p in model.parameters():
            state = opt.state[p]
            if len(state) == 0:
                state["norm"] = p.norm()
                print(state["norm"].item())
""",
        },
    ),
    # --- Periodic guards that are updates: gradient accumulation (TL002) ---
    Case(
        "gradient-accumulation-guard-steps-the-optimizer",
        {
            "train.py": """\
import torch


def update(opt, sched):
    opt.step()
    sched.step()
    opt.zero_grad()


def train(model, loader, opt, sched, meter, args):
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda()).mean() / args.accum
        loss.backward()
        if (step + 1) % args.accum == 0:
            meter.update(loss.item() * args.accum)  # TL002: loss.item()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            if step % args.log_every == 0:
                print(loss.item())
        if step % 1000 == 0:
            sched.step()
            print(loss.item())


def train_through_a_helper(model, loader, opt, sched, accum):
    for step, x in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        if (step + 1) % accum == 0:
            print(loss.item())  # TL002: loss.item()
            update(opt, sched)


def train_with_a_skip(model, loader, opt, accum):
    for step, x in enumerate(loader):
        loss = model(x.cuda()).mean()
        loss.backward()
        if (step + 1) % accum != 0:
            continue
        print(loss.item())  # TL002: loss.item()
        opt.step()
""",
        },
    ),
    # --- A test behind a flag the loop latches (TL002) ---
    Case(
        "test-short-circuited-by-a-latched-flag",
        {
            "train.py": """\
import torch


def train(model, loader, opt, queue):
    use_queue = False
    for x in loader:
        out = model(x.cuda())
        if queue is not None:
            if use_queue or not torch.all(queue[-1] == 0):
                use_queue = True
                out = torch.cat((queue @ out.T, out))
        ready = False
        if ready or torch.all(out == 0):  # TL002: torch.all(out == 0)
            ready = True
        loss = out.mean()
        loss.backward()
        opt.step()
""",
        },
    ),
    # --- Tensors that never reached a device (TL002) ---
    Case(
        "debug-prints-of-batches-never-moved",
        {
            "train.py": """\
import torch


def unpack_batch(b):
    if args.packed:
        return unpack_packed(b, args.size)
    return b[0], b[1], torch.ones(b[1].size())


def train(model, loader, train_ld, opt):
    if args.debug:
        for j, batch in enumerate(train_ld):
            x, offsets, w = unpack_batch(batch)
            print(x.detach().cpu())
            print([o.detach().cpu() for o in offsets])
            print(w.sum().item())
    for j, batch in enumerate(loader):
        x, offsets, w = unpack_batch(batch)
        loss = (model(x.cuda(), offsets.cuda()) * w.cuda()).mean()
        loss.backward()
        opt.step()
        print(loss.item())  # TL002: loss.item()
""",
        },
    ),
    # --- Values that must reach the host: files and paths (TL002) ---
    Case(
        "values-written-to-files-and-paths",
        {
            "export.py": """\
import os

import numpy as np
import torch
from PIL import Image


def to_pillow(x):
    return Image.fromarray((255 * x.detach().cpu().numpy().transpose(1, 2, 0)).astype(np.uint8))


def segment(model, img):
    with torch.no_grad():
        seg = model(img).argmax(1, keepdim=True)
    return seg.detach().cpu()


def store(mask, path):
    Image.fromarray(mask.numpy().squeeze().astype(np.uint8)).save(path)


def export(model, loader, out_dir):
    for i, x in enumerate(loader):
        x = x.cuda()
        seg = segment(model, x)
        store(seg, os.path.join(out_dir, f"{i:06}.png"))
        out = model(x)
        label = out.argmax(1)[0].item()
        os.makedirs(os.path.join(out_dir, str(label)), exist_ok=True)
        to_pillow(out[0]).save(os.path.join(out_dir, str(label), f"{i:06}.png"))
        np.save(os.path.join(out_dir, f"{i}.npy"), out.cpu().numpy())
        score = out.max().item()  # TL002: out.max().item()
        print(f"{i}: {score}")
        pred = out.argmax(1)[1].item()  # TL002: out.argmax(1)[1].item()
        os.makedirs(os.path.join(out_dir, str(pred)), exist_ok=True)
        print(pred)
""",
        },
    ),
    # --- Forwards that record no graph: the module's parameters are frozen (TL001 false alarms) ---
    Case(
        "frozen-module-forwards",
        files={
            "metric.py": """\
import numpy as np
import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self, G):
        super().__init__()
        self.G = G

    def forward(self, c):
        return self.G(c)


def compute_distances(G, n, batch, device):
    sampler = Sampler(G)
    sampler.eval().requires_grad_(False).to(device)
    dist = []
    for start in range(0, n, batch):
        c = torch.from_numpy(np.random.randn(batch, 8)).to(device)
        dist.append(sampler(c))
    return torch.cat(dist)


def score(net, loader):
    net.eval()
    for p in net.parameters():
        p.requires_grad = False
    return [net(x) for x, _ in loader]
""",
            "projector.py": """\
import copy

import torch


def project(G, target, steps, device):
    G = copy.deepcopy(G).eval().requires_grad_(False).to(device)
    w = torch.zeros(1, 512, requires_grad=True, device=device)
    opt = torch.optim.Adam([w])
    for step in range(steps):
        loss = (G.synthesis(w) - target).square().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return G.synthesis(w.detach())
""",
        },
    ),
    # --- A model function its factory hands out, differentiated by a caller (TL001 false alarm) ---
    Case(
        "model-function-differentiated-by-caller",
        files={
            "models/__init__.py": "",
            "models/utils.py": """\
import torch


def get_model_fn(model, train=False):
    def model_fn(x, labels):
        if not train:
            model.eval()
            return model(x, labels)
        model.train()
        return model(x, labels)

    return model_fn


def get_score_fn(model, train=False):
    model_fn = get_model_fn(model, train=train)

    def score_fn(x, t):
        return -model_fn(x, t * 999)

    return score_fn
""",
            "likelihood.py": """\
import torch

from models import utils as mutils


def get_div_fn(fn):
    def div_fn(x, t, eps):
        with torch.enable_grad():
            x.requires_grad_(True)
            fn_eps = torch.sum(fn(x, t) * eps)
            grad_fn_eps = torch.autograd.grad(fn_eps, x)[0]
        x.requires_grad_(False)
        return torch.sum(grad_fn_eps * eps, dim=(1, 2, 3))

    return div_fn


def likelihood(model, batches):
    score_fn = mutils.get_score_fn(model, train=False)
    div_fn = get_div_fn(score_fn)
    return [div_fn(x, torch.rand(x.shape[0]), torch.randn_like(x)) for x in batches]
""",
        },
    ),
    # --- A network loaded in eval mode by a helper of the file, run over batches (TL001 miss) ---
    Case(
        "detector-loaded-by-a-helper",
        files={
            "metric_utils.py": """\
import torch

_detector_cache = dict()


def get_feature_detector(url, device=torch.device("cpu")):
    key = (url, device)
    if key not in _detector_cache:
        with open(url, "rb") as f:
            _detector_cache[key] = torch.jit.load(f).eval().to(device)
    return _detector_cache[key]


def compute_feature_stats(dataset, detector_url, device, batch_size=64):
    detector = get_feature_detector(detector_url, device=device)
    feats = []
    for images, _labels in torch.utils.data.DataLoader(dataset, batch_size=batch_size):
        feats.append(detector(images.to(device)))  # TL001: detector(images.to(device))
    return torch.cat(feats)
""",
        },
    ),
    # --- A network loaded in eval mode by a helper of another module, run over batches (TL001 miss) ---
    Case(
        "detector-loaded-by-another-module",
        files={
            "metrics/__init__.py": "",
            "metrics/metric_utils.py": """\
import torch

_detector_cache = dict()


def get_feature_detector(url, device=torch.device("cpu")):
    key = (url, device)
    if key not in _detector_cache:
        with open(url, "rb") as f:
            _detector_cache[key] = torch.jit.load(f).eval().to(device)
    return _detector_cache[key]
""",
            "metrics/ppl.py": """\
import torch

from . import metric_utils


def compute_ppl(sampler, n, batch, device, vgg_url):
    sampler.eval()
    vgg16 = metric_utils.get_feature_detector(vgg_url, device=device)
    dist = []
    for start in range(0, n, batch):
        images = sampler(torch.randn(batch, 512, device=device))
        dist.append(vgg16(images))  # TL001: vgg16(images)
    return torch.cat(dist)
""",
        },
    ),
    # --- A metric class's forward of a network it puts in eval mode, called per batch by another module (TL001 miss) ---
    Case(
        "metric-method-called-per-batch-elsewhere",
        files={
            "metrics/__init__.py": "",
            "metrics/inception_score.py": """\
import math

import torch
import torch.nn.functional as F


class InceptionScore:
    def __init__(self, classifier):
        self.sum_entropy = 0
        self.sum_softmax = None
        self.n_items = 0
        self.classifier = classifier.eval()

    def update(self, ref):
        y = self.classifier(ref).detach()  # TL001: self.classifier(ref)
        if self.sum_softmax is None:
            self.sum_softmax = torch.zeros(y.size(1), device=ref.device)
        self.sum_entropy += (F.softmax(y, dim=1) * F.log_softmax(y, dim=1)).sum()
        self.sum_softmax += F.softmax(y, dim=1).sum(dim=0)
        self.n_items += y.size(0)

    def score(self):
        x = self.sum_softmax
        return math.exp((self.sum_entropy - (x * torch.log(x / self.n_items)).sum()) / self.n_items)
""",
            "eval/__init__.py": "",
            "eval/inception.py": """\
import torch

from ..metrics.inception_score import InceptionScore


def run(model, classifier, n, batch):
    scorer = InceptionScore(classifier)
    for _ in range(n):
        with torch.no_grad():
            fake = model.generate(batch)
        scorer.update(fake)
    return scorer.score()
""",
        },
    ),
    # --- The same metric, called under no_grad by another module (no finding) ---
    Case(
        "metric-method-called-under-no-grad-elsewhere",
        files={
            "metrics/__init__.py": "",
            "metrics/inception_score.py": """\
import math

import torch
import torch.nn.functional as F


class InceptionScore:
    def __init__(self, classifier):
        self.sum_entropy = 0
        self.sum_softmax = None
        self.n_items = 0
        self.classifier = classifier.eval()

    def update(self, ref):
        y = self.classifier(ref).detach()
        if self.sum_softmax is None:
            self.sum_softmax = torch.zeros(y.size(1), device=ref.device)
        self.sum_entropy += (F.softmax(y, dim=1) * F.log_softmax(y, dim=1)).sum()
        self.sum_softmax += F.softmax(y, dim=1).sum(dim=0)
        self.n_items += y.size(0)

    def score(self):
        x = self.sum_softmax
        return math.exp((self.sum_entropy - (x * torch.log(x / self.n_items)).sum()) / self.n_items)
""",
            "eval/__init__.py": "",
            "eval/inception.py": """\
import torch

from ..metrics.inception_score import InceptionScore


def run(model, classifier, n, batch):
    scorer = InceptionScore(classifier)
    for _ in range(n):
        with torch.no_grad():
            fake = model.generate(batch)
        with torch.no_grad():
            scorer.update(fake)
    return scorer.score()
""",
        },
    ),
    # --- A PEFT wrapper's generate is the Hugging Face generate: no grad (TL001 false alarm) ---
    # A Hugging Face model wrapped by PEFT, handed to a helper as a parameter: its `generate`
    # delegates to the Hugging Face `generate`, which runs without grad itself. A plain forward
    # of the same model in the same helper still records.
    Case(
        "peft-generate-through-parameter",
        {
            "generate.py": """\
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("base")
model = AutoModelForCausalLM.from_pretrained("base")
model = PeftModel.from_pretrained(model, "adapter")
model.eval()


def generate(model, question):
    inputs = tokenizer(question, return_tensors="pt").to("cuda")
    out = model.generate(**inputs, max_new_tokens=64)
    return tokenizer.decode(out[0])


def score(model, question):
    inputs = tokenizer(question, return_tensors="pt").to("cuda")
    return model(**inputs).logits.softmax(-1)  # TL001: model(**inputs)


for question in ["a", "b", "c"]:
    print(generate(model, question), score(model, question))
""",
        },
        rules=("TL001",),
    ),
    # catalyst's `predict_loader` runs a runner's `predict_batch` under no_grad (batch 18).
    Case(
        "catalyst_predict_batch_runs_without_grad",
        {
            "runner.py": """\
import torch
from catalyst import dl


class CustomRunner(dl.Runner):
    def predict_batch(self, batch):
        return self.model(batch[0].to(self.engine.device))

    def handle_batch(self, batch):
        x, y = batch
        self.batch = {"features": x, "targets": y, "logits": self.model(x)}


def predict_all(runner, loader):
    return [p.cpu() for p in runner.predict_loader(loader=loader)]
""",
        },
        rules=("TL001",),
    ),
    # diffusers: an autoencoder's `encode`/`decode` run its forward with the caller's grad mode
    # (the table's `forward_methods`), so decoding the validation latents evaluates.
    Case(
        "diffusers_autoencoder_decode_in_validation_loop",
        {
            "reconstruct.py": """\
import torch
from diffusers import AutoencoderKL

vae = AutoencoderKL.from_pretrained("some/vae")


def validate(val_loader):
    errors = []
    for images in val_loader:
        latents = vae.encode(images).latent_dist.mean  # TL001: vae.encode(images)
        errors.append((vae.decode(latents).sample - images).abs().mean().item())
    return errors


def train(loader, opt):
    for images in loader:
        loss = (vae.decode(vae.encode(images).latent_dist.sample()).sample - images).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("production_cases")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_production_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)


def test_every_framework_of_the_table_has_a_case() -> None:
    """Adding a framework to `analysis/frameworks.py` is a table entry plus a case here."""
    from torchlint.analysis.frameworks import FRAMEWORKS

    sources = "\n".join(text for case in CASES for text in case.files.values())
    missing = [
        f.name
        for f in FRAMEWORKS
        if not any(re.search(rf"^(from|import) {p}\b", sources, re.M) for p in f.packages)
    ]
    assert not missing, missing
