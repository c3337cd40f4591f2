"""TL002 in evaluation loops: per-batch loops the loop facts did not see, a device the file did
not show, and a bounded guard that runs a handful of times.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The classes, each from production code judges labelled (round 7):
- a loop over a loader whose body moves each element of its batch to the device in an inner loop
  (`for idx in range(len(features)): features[idx] = batch_to_device(features[idx], device)`):
  the inner loop stores into the batch it was given, it fetches no batch of its own, so it does
  not take the per-batch role from the loop around it;
- a loop that hands `next(loader)` straight to a step method (`outputs.append(
  self.validation_step(next(self.dataloader_val)))`) fetches one batch per iteration, as one
  that binds `batch = next(loader)` first does;
- a loop over a batching generator (`for users in minibatch(users, batch_size=bs):`) iterates
  batches: the call is told a batch size; they are slices of what it is handed (the device
  tensors of a training loop), not a loader's host batches;
- a loop over a loader-named object's iteration method (`data_iterator.iterate_ds_data()`)
  iterates its batches;
- an inference iterator built for a device (`infer_iter = build_dataset_iter(opt, vocabs,
  device_id=opt.gpu)`) yields batches on it; one built without a device yields host batches;
- a Hugging Face trainer's `get_eval_dataloader` hands out batches the trainer's accelerator
  places on the device, so a callback's evaluation loop over it runs there.

Precision: a guard that admits the first few iterations by a count the configuration names for
samples to show (`if idx < hp.log.num_audio:`) runs a handful of times per run, like `if idx <
3:`; a guard against a step limit (`if idx < hp.train.max_steps:`) stays per-batch. A chunking
helper told no batch size (`chunks(text, 100)`) and a store into a dict (`cache[k] =
get_batch_stats(...)`) stay what they were.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "batch-elements-moved-in-inner-loop",
        {
            "evaluator.py": """\
import torch


def batch_to_device(batch, device):
    return {k: v.to(device) for k, v in batch.items()}


class Evaluator:
    def __init__(self, dataloader):
        self.dataloader = dataloader

    def __call__(self, model):
        correct = 0
        for step, batch in enumerate(self.dataloader):
            features, labels = batch
            for idx in range(len(features)):
                features[idx] = batch_to_device(features[idx], model.device)
            labels = labels.to(model.device)
            with torch.no_grad():
                prediction = model(features)
            correct += prediction.argmax(1).eq(labels).sum().item()  # TL002: prediction.argmax
        return correct
"""
        },
    ),
    Case(
        "next-batch-handed-to-a-step",
        {
            "trainer.py": """\
import torch


class Trainer:
    def __init__(self, net, dataloader_val, device):
        self.net = net.to(device)
        self.dataloader_val = dataloader_val
        self.device = device

    def validation_step(self, batch):
        x = batch["data"].to(self.device)
        with torch.no_grad():
            loss = self.net(x).mean()
        return {"loss": loss.detach().cpu().numpy()}  # TL002: loss.detach().cpu()

    def run(self, n_val):
        outputs = []
        for _ in range(n_val):
            outputs.append(self.validation_step(next(self.dataloader_val)))
        return outputs
"""
        },
    ),
    Case(
        "batching-generator",
        {
            "procedure.py": """\
import torch


def minibatch(*tensors, batch_size):
    for i in range(0, len(tensors[0]), batch_size):
        yield tuple(x[i:i + batch_size] for x in tensors)


def chunks(text, size):
    for i in range(0, len(text), size):
        yield text[i:i + size]


def test(model, users, text, device, bs):
    total = 0.0
    for (batch_users,) in minibatch(users, batch_size=bs):
        x = torch.tensor(batch_users).to(device)
        with torch.no_grad():
            scores = model(x)
        total += scores.sum().item()  # TL002: scores.sum().item()
    for piece in chunks(text, 100):
        print(model.encode(piece).sum().item())
    return total


def fit(model, optimizer, users, items, device, bs):
    users = torch.from_numpy(users).to(device)
    items = torch.from_numpy(items).to(device)
    epoch_loss = 0.0
    for batch_user, batch_item in minibatch(users, items, batch_size=bs):
        loss = (model(batch_user) - batch_item).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()  # TL002: loss.item()
    return epoch_loss
"""
        },
    ),
    Case(
        "loader-iteration-method",
        {
            "validate.py": """\
import torch


def validate(model, data_iterator, device):
    total_loss = 0.0
    cache = {}
    for i, samples in enumerate(data_iterator.iterate_ds_data()):
        x = samples.to(device)
        cache[i] = get_batch_stats(x)
        with torch.no_grad():
            loss = model(x)
        total_loss += loss.item()  # TL002: loss.item()
    return total_loss, cache


def get_batch_stats(x):
    return x.shape
"""
        },
    ),
    Case(
        "trainer-eval-dataloader",
        {
            "finetune.py": """\
import torch
import transformers


def main(trainer, dataset):
    class EvalCallback(transformers.TrainerCallback):
        def on_evaluate(self, args, state, control, model, **kwargs):
            data_loader = trainer.get_eval_dataloader(dataset)
            total = 0
            for batch in data_loader:
                (loss, logits, labels) = trainer.prediction_step(trainer.model, batch, False)
                total += loss.item()  # TL002: loss.item()
            return total

    trainer.add_callback(EvalCallback())
"""
        },
    ),
    Case(
        "iterator-built-for-a-device",
        {
            "score.py": """\
import torch

from data import build_dataset_iter


def score(model, opt, vocabs):
    device = torch.device("cuda", opt.gpu)
    model.to(device)
    infer_iter = build_dataset_iter(opt, vocabs, device_id=opt.gpu)
    host_iter = build_dataset_iter(opt, vocabs)
    cumul_length = 0
    for i, batch in enumerate(infer_iter):
        out = model(batch["src"])
        cumul_length += batch["tgt"].ne(0).sum().cpu()  # TL002: batch["tgt"]
    for i, batch in enumerate(host_iter):
        cumul_length += batch["tgt"].ne(0).sum().cpu()
    return cumul_length
""",
            "data.py": """\
def build_dataset_iter(opt, vocabs, device_id=None):
    return iter([])
""",
        },
    ),
    Case(
        "bounded-sample-guard",
        {
            "validation.py": """\
import torch
import torch.nn.functional as F


def validate(hp, generator, valloader, writer, step, device):
    mel_loss = 0.0
    with torch.no_grad():
        for idx, (mel, audio) in enumerate(valloader):
            mel = mel.to(device)
            audio = audio.to(device)
            fake = generator(mel)
            mel_loss += F.l1_loss(fake, audio).item()  # TL002: F.l1_loss
            if idx < hp.log.num_audio:
                writer.log_audio(fake[0][0].cpu().detach().numpy(), idx, step)
            if idx < hp.train.max_steps:
                print(fake.mean().item())  # TL002: fake.mean().item()
    return mel_loss
"""
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_eval_loops")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
