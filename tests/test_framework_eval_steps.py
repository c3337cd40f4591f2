"""A framework's evaluation hooks run once per evaluation batch: their reads are per batch.

Lightning's `validation_step`, mmengine's `after_val_iter` and their peers (the table's
`per_eval_batch`) are the body of an evaluation loop nobody wrote, so TL002 reads them as it
reads a hand-written loop over validation data: a loss read for the log is a sync per batch,
predictions collected for a host metric over the set are the evaluation's product, and the
batch index the framework passes (`batch_idx`) counts batches, so `if batch_idx == 0:` runs
once per epoch. Each case is its own invented project, checked by the installed command.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "lightning-validation-step-reads",
        {
            "lit.py": """\
import numpy as np
import torch
import lightning as L
from sklearn.metrics import roc_auc_score


class Lit(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self.net(x), y)
        if batch_idx == 0:
            print("first batch", loss.item())
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        scores = self.net(x)
        loss = self.loss(scores, y)
        self.log("val_loss", loss.item())  # TL002: loss.item()
        if batch_idx == 0:
            self.logger.experiment.add_text("sample", str(scores[0].tolist()))
        self.scores.append(scores.sigmoid().cpu().numpy())
        self.labels.append(y.cpu().numpy())

    def on_validation_epoch_end(self):
        auc = roc_auc_score(np.concatenate(self.labels), np.concatenate(self.scores))
        self.log("auc", auc)
        self.scores.clear()
        self.labels.clear()

    def test_step(self, batch, batch_idx):
        return self._accuracy(batch)

    def _accuracy(self, batch):
        x, y = batch
        return (self.net(x).argmax(1) == y).float().mean().item()  # TL002: (self.net(x)
""",
        },
        rules=("TL002",),
    ),
    # A hook's counter is the parameter at the framework's position, whatever its name; another
    # parameter compared with 0 is no counter.
    Case(
        "mmengine-after-val-iter",
        {
            "hooks.py": """\
import torch
from mmengine.hooks import Hook


class LossMeter(Hook):
    def after_val_iter(self, runner, i, data_batch=None, outputs=None):
        if i == 0:
            print(outputs["loss"].item())
        self.total += outputs["loss"].item()  # TL002: outputs["loss"].item()

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.rank == 0:
            print(outputs["loss"].item())  # TL002: outputs["loss"].item()
""",
        },
        rules=("TL002",),
    ),
    # An evaluation class of a hand-written loop keeps its predictions on the object for a
    # host metric at the end: the copies are the evaluation's product there too.
    Case(
        "predictions-kept-on-the-evaluator",
        {
            "evaluate.py": """\
import numpy as np
import torch
from sklearn.metrics import f1_score


class Evaluator:
    def __init__(self):
        self.preds = []
        self.losses = []

    def add(self, logits, loss):
        self.losses.append(loss.item())  # TL002: loss.item()
        self.preds.append(logits.argmax(1).cpu().numpy())

    def f1(self, labels):
        return f1_score(labels, np.concatenate(self.preds), average="macro")


@torch.no_grad()
def evaluate(model, val_loader, labels):
    evaluator = Evaluator()
    model.eval()
    for x, y in val_loader:
        logits = model(x.cuda())
        evaluator.add(logits, torch.nn.functional.cross_entropy(logits, y.cuda()))
    return evaluator.f1(labels)
""",
        },
        rules=("TL002",),
    ),
    # What an evaluation hook returns goes to the framework (speechbrain averages each returned
    # loss with `float(loss)`; Lightning keeps the outputs for the epoch's end); a metric-stats
    # object's `append(ids=..., predict=...)` is no list's; audio written out is a host product;
    # `if batch_idx > 0: return` leaves the first batch's plots to one batch per epoch.
    Case(
        "evaluation-hooks-hand-their-outputs-on",
        {
            "enhance.py": """\
import torch
import speechbrain as sb
from speechbrain.dataio.dataio import write_audio


class Enhance(sb.Brain):
    def evaluate_batch(self, batch, stage):
        clean = batch.clean_sig.to(self.device)
        with torch.no_grad():
            pred = self.modules.model(batch.noisy_sig.to(self.device))
            loss = torch.mean((pred - clean) ** 2)
        print(f"{loss.item():.3f}")  # TL002: loss.item()
        pred = pred.clamp(-1, 1)
        self.pesq_metric.append(ids=batch.id, predict=pred.cpu(), target=clean.cpu())
        for i in range(len(batch.id)):
            write_audio(f"{batch.id[i]}.wav", pred[i].cpu(), 16000)
        return loss.detach().cpu()
""",
            "lit.py": """\
import matplotlib.pyplot as plt
import torch
import lightning as L


class Lit(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        loss = self.loss(logits, y)
        preds = logits.argmax(1).cpu().numpy()
        targets = y.cpu().numpy()
        self.plot_first(x, logits, batch_idx)
        return {"val_loss": loss.cpu(), "pred": preds, "target": targets}

    def plot_first(self, x, logits, batch_idx):
        if self.current_epoch == 0 or batch_idx > 0:
            return
        plt.imshow(x[0].cpu().numpy())
        plt.title(str(logits[0].argmax().item()))


trainer = L.Trainer(accelerator="gpu")
""",
        },
        rules=("TL002",),
    ),
    # A step that decodes autoregressively waits for the device after every token by design:
    # one more read for a metric there waits on nothing new. A `generate` told no decoding
    # settings (a GAN's `G.generate(z)`) is one forward, and paces nothing.
    Case(
        "generation-paces-the-evaluation-step",
        {
            "trainer.py": """\
import torch
from transformers import Trainer


class GenTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        completions = self._complete(model, inputs)
        self.metrics["length"].append(completions.ne(0).sum(1).float().mean().item())
        return None, completions, None

    def _complete(self, model, inputs):
        return model.generate(**inputs, max_new_tokens=64, do_sample=True)
""",
            "gan.py": """\
import torch


def validate(G, D, val_loader):
    for z in val_loader:
        fake = G.generate(z.cuda())
        print(D(fake).mean().item())  # TL002: D(fake).mean().item()
""",
        },
        rules=("TL002",),
    ),
    # From an independent review of the first version: decoding in a helper that a training
    # loop runs too (without decoding) paces no loop; a counter that resets, or counts epochs,
    # leaves every batch of a stretch, so `>` on it is no first-batch test; a Lightning
    # `Callback`'s batch hooks take `(trainer, pl_module, ...)` first; and a batch index handed
    # to a helper is still one.
    Case(
        "decoding-helper-shared-with-training",
        {
            "train.py": """\
import torch


def run_batch(model, batch, decode):
    ids = batch["ids"].cuda()
    out = model(ids, labels=ids)
    if decode:
        model.generate(ids, max_new_tokens=32)
    return out.loss


def train(model, loader, val_loader, opt):
    for batch in loader:
        loss = run_batch(model, batch, False)
        loss.backward()
        opt.step()
        opt.zero_grad()
        print("train", loss.item())  # TL002: loss.item()


@torch.no_grad()
def validate(model, val_loader):
    for batch in val_loader:
        loss = run_batch(model, batch, True)
        print("val", loss.item())  # TL002: loss.item()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "counters-that-reset-or-count-epochs",
        {
            "train.py": """\
import torch


def train(model, loader, opt, epochs):
    count = 0
    running = []
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            count += 1
            if count >= 4:
                opt.step()
                opt.zero_grad()
                count = 0
            else:
                running.append(loss.item())  # TL002: loss.item()
            if epoch > 0:
                continue
            print(loss.item())  # TL002: loss.item()
""",
        },
        rules=("TL002",),
    ),
    Case(
        "lightning-callback-and-helper-batch-index",
        {
            "cb.py": """\
import torch
import lightning as L


class ImageLogger(L.Callback):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        if batch_idx == 0:
            trainer.logger.log_image("val", [outputs["pred"][0].cpu().numpy()])


class Lit(L.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if batch_idx == 0:
            self.logger.log_image("val", [outputs["pred"][0].cpu().numpy()])

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.show_first(logits, batch_idx)
        if batch_idx > 0:
            return logits
        print("inline", logits[0].argmax().item())
        return logits

    def show_first(self, logits, k):
        if k > 0:
            return
        print("helper", logits[0].argmax().item())


trainer = L.Trainer(accelerator="gpu")
""",
        },
        rules=("TL002",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("framework_eval_steps")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_framework_eval_step(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
