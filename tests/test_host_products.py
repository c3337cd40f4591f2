"""TL002 on copies that are the code's product: inference and render scripts, numpy APIs.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

- A rendered frame written with an image writer (`media.write_image(path, frame)`): the host
  needs the frame, one copy per image.
- A function whose product is a host array (`encode()` collects each batch's `.cpu()` copy and
  returns the list as numpy, under `no_grad`): the copy is what it returns, made per batch on
  purpose to keep the device free; a training loop that collects `loss.cpu()` the same way is
  still a finding, and so is an evaluation loop whose function returns only a numpy mean of
  what it collected (`np.average(losses)`: the mean could be kept on the device).
- An inference loop (it trains nothing) handing each batch to a helper of another module that
  reads it on the host and writes files (`synth_samples(batch, output, ...)` saving a plot per
  utterance), or renders it as an image (`tensor2im` returning `Image.fromarray(...)`): the
  host needs what the helper outputs. The same helper called from a training loop is still a
  finding at the call.

And one recall class: a trainer subclass in a module that never imports torch (its base
class's module does) still runs on the GPU when it moves the batch there itself (`imgs.cuda()`),
so its per-step `loss.item()` is a finding. So is a module's `net.parameters()` handed every
step to a grad-norm helper of another module that reads each parameter's norm with `.item()`
(the helper's own line, found before, stays: its read goes through a local, not the parameter
itself, so the call's line does not take it over).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "render-frames-written-as-images",
        {
            "render.py": """\
import mediapy as media
import numpy as np
import torch


def render(model, loader, out_dir, raw):
    model.cuda().eval()
    for idx, (camera, batch) in enumerate(loader):
        with torch.no_grad():
            outputs = model(camera.cuda())
        image = outputs["rgb"]
        if raw:
            image = image.cpu().numpy()
        else:
            image = image.detach().cpu().numpy()
        if raw:
            np.save(out_dir / f"{idx:05d}.npy", image)
        else:
            media.write_image(out_dir / f"{idx:05d}.png", image, fmt="png")
""",
        },
    ),
    Case(
        "encode-returns-numpy",
        {
            "encoder.py": """\
import numpy as np
import torch


class Encoder(torch.nn.Module):
    def encode(self, batches, convert_to_numpy=True):
        self.cuda()
        all_embeddings = []
        for features in batches:
            with torch.no_grad():
                embeddings = self.forward(features.cuda())
                embeddings = embeddings.detach()
                if convert_to_numpy:
                    embeddings = embeddings.cpu()
            all_embeddings.extend(embeddings)
        if convert_to_numpy:
            all_embeddings = np.asarray([emb.numpy() for emb in all_embeddings])
        return all_embeddings
""",
        },
    ),
    Case(
        # A helper that renders its argument as an image (`Image.fromarray`) for the caller to
        # collect: the same output helper, though it writes no file itself.
        "inference-hands-each-image-to-a-renderer",
        {
            "common.py": """\
from PIL import Image


def tensor2im(var):
    var = var.cpu().detach().permute(1, 2, 0).numpy()
    return Image.fromarray(((var + 1) * 127.5).clip(0, 255).astype("uint8"))
""",
            "inference.py": """\
import torch

from common import tensor2im


def render(net, loader):
    net.cuda().eval()
    images = []
    for x in loader:
        with torch.no_grad():
            y = net(x.cuda())
        for i in range(y.shape[0]):
            images.append(tensor2im(y[i]))
    return images
""",
        },
    ),
    Case(
        # An image log the training loop runs only every few hundred steps and the validation
        # loop on every batch: per batch only where nothing trains, and its helper hands each
        # image to a renderer, so it outputs what it reads.
        "an-image-log-periodic-in-training-per-batch-in-validation",
        {
            "common.py": """\
from PIL import Image


def tensor2im(var):
    var = var.cpu().detach().permute(1, 2, 0).numpy()
    return Image.fromarray(((var + 1) * 127.5).clip(0, 255).astype("uint8"))


def log_input_image(x, opts):
    return tensor2im(x)
""",
            "coach.py": """\
import torch

import common


class Coach:
    def __init__(self, net, opts):
        self.net = net.cuda()
        self.opts = opts
        self.optimizer = torch.optim.Adam(self.net.parameters())
        self.logged = []

    def train(self, loader):
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(), y.cuda()
            y_hat = self.net(x)
            loss = torch.nn.functional.l1_loss(y_hat, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step % self.opts.image_interval == 0:
                self.log_images(x, y_hat)

    def validate(self, loader):
        self.net.eval()
        for x, y in loader:
            with torch.no_grad():
                y_hat = self.net(x.cuda())
            self.log_images(x, y_hat)
        self.net.train()

    def log_images(self, x, y_hat, display_count=2):
        for i in range(display_count):
            self.logged.append(
                {
                    "input": common.log_input_image(x[i], self.opts),
                    "output": common.tensor2im(y_hat[i]),
                }
            )
""",
        },
    ),
    Case(
        "inference-hands-batches-to-a-file-writer",
        {
            "tools.py": """\
import matplotlib.pyplot as plt


def synth_samples(targets, predictions, path):
    names = targets[0]
    for i in range(len(predictions[0])):
        length = predictions[1][i].item()
        mel = predictions[0][i, :length].cpu().numpy()
        plt.imshow(mel)
        plt.savefig(f"{path}/{names[i]}.png")
""",
            "synthesize.py": """\
import torch

from tools import synth_samples


def synthesize(model, batches, path):
    model.cuda().eval()
    for batch in batches:
        batch = [b.cuda() for b in batch]
        with torch.no_grad():
            output = model(*batch[2:])
            synth_samples(batch, output, path)
""",
            "train.py": """\
import torch

from tools import synth_samples


def train(model, loader, optimizer, path):
    model.cuda()
    for x, y in loader:
        output = model(x.cuda())
        loss = torch.nn.functional.mse_loss(output[0], y.cuda())
        loss.backward()
        optimizer.step()
        synth_samples(y, output, path)  # TL002: synth_samples(y, output, path)
""",
        },
    ),
    Case(
        "trainer-subclass-without-torch-import",
        {
            "engine.py": """\
import torch


class Engine:
    def train(self):
        for self.batch_idx, data in enumerate(self.train_loader):
            summary = self.forward_backward(data)
            self.meter.update(summary)

    def forward_backward(self, data):
        raise NotImplementedError
""",
            "softmax.py": """\
from engine import Engine


class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        imgs, pids = data
        imgs = imgs.cuda()
        pids = pids.cuda()
        outputs = self.model(imgs)
        loss = self.criterion(outputs, pids)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}  # TL002: loss.item()
""",
        },
    ),
    Case(
        "parameters-to-a-grad-norm-helper",
        {
            "commons.py": """\
def clip_grad_value_(parameters, clip_value):
    total_norm = 0
    for p in parameters:
        param_norm = p.grad.data.norm(2)
        total_norm += param_norm.item() ** 2  # TL002: param_norm.item()
        if clip_value is not None:
            p.grad.data.clamp_(min=-clip_value, max=clip_value)
    return total_norm**0.5
""",
            "train.py": """\
import torch

import commons


def train(net, loader, optimizer):
    net.cuda()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(net(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        grad_norm = commons.clip_grad_value_(net.parameters(), None)  # TL002: commons.clip_grad_value_(net.parameters(), None)
        optimizer.step()
""",
        },
    ),
    Case(
        "validation-mean-of-collected-losses-still-syncs",
        {
            "exp.py": """\
import numpy as np
import torch


def vali(model, loader, criterion):
    model.cuda().eval()
    total_loss = []
    with torch.no_grad():
        for x, y in loader:
            outputs = model(x.cuda())
            pred = outputs.detach().cpu()  # TL002: outputs.detach().cpu()
            loss = criterion(pred, y)
            total_loss.append(loss)
    total_loss = np.average(total_loss)
    return total_loss
""",
        },
    ),
    Case(
        "training-losses-collected-still-syncs",
        {
            "train.py": """\
import numpy as np
import torch


def train(model, loader, optimizer):
    model.cuda()
    losses = []
    for x, y in loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().cpu())  # TL002: loss.detach().cpu()
    losses = np.asarray([l.numpy() for l in losses])
    return losses
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_products")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_product_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
