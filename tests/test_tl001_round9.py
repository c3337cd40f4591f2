"""TL001 recall classes from the pooled validate production misses (fix round 9), each an
invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- An imported name the file binds again to a value (`import net` then `net = net.Net(...)`,
  read in a function), or a parameter named like an imported module: the import table still
  names the module, but the call runs what the file bound, a module's forward. A module's own
  function called through an import that nothing rebinds stays no forward.
- A forward in a periodic branch of a per-batch training loop (`if i % log_every == 0:`) that
  needs no autograd itself and whose result reaches no backward: samples generated to plot, a
  metric logged between steps. Silent where the branch trains (a generator step every few
  critic steps), where its result feeds a later backward (also through `loss += ...`), and where the per-batch loop is a
  caller's (a module method's first-frame branch, `if i == 0:` in a loop over frames).
- A library module's method that runs its forward (the framework table's `forward_methods`: a
  diffusers autoencoder's `encode`/`decode`) is a forward pass at the call, on a name built by
  that library's class (`vae = AutoencoderKL.from_pretrained(...)`). A tokenizer's `decode`
  is not, and the same call under `no_grad` is silent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "imported_module_name_rebound_to_its_model",
        {
            "net.py": """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        return self.fc(x)
""",
            "main.py": """\
import torch
import net

net = net.Net(8)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def evaluate(chunks):
    net.eval()
    total = 0.0
    for x, y in chunks:
        out = net(x)  # TL001: net(x)
        total += ((out - y) ** 2).sum().item()
    return total


def train(chunks):
    net.train()
    for x, y in chunks:
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()


for epoch in range(10):
    train(train_chunks)
    print(evaluate(val_chunks))
""",
        },
        rules=("TL001",),
    ),
    Case(
        "parameter_named_like_an_imported_module",
        {
            "model.py": """\
import torch.nn as nn


def build(n):
    return nn.Linear(n, n)
""",
            "main.py": """\
import torch

import model


def validate(model, loader):
    model.eval()
    losses = []
    for x, y in loader:
        losses.append(((model(x) - y) ** 2).mean().item())  # TL001: model(x)
    return losses


print(validate(model.build(4), val_loader))
""",
        },
        rules=("TL001",),
    ),
    Case(
        "imported_module_function_not_rebound",
        {
            "metrics.py": """\
def score(pred, target):
    return float((pred == target).mean())
""",
            "main.py": """\
import torch

import metrics


def evaluate(net, loader):
    net.eval()
    total = 0.0
    for x, y in loader:
        total += metrics.score(net(x), y)  # TL001: net(x)
    return total
""",
        },
        rules=("TL001",),
    ),
    Case(
        "sample_generated_every_log_interval_in_the_training_loop",
        {
            "train.py": """\
import torch


def train(epoch, generator, opt, loader, writer):
    generator.train()
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        out = generator(x, y, gen=False)
        loss = out.mean()
        loss.backward()
        opt.step()
        if i % 100 == 0:
            sample = generator(x[:1], None, gen=True)  # TL001: generator(x[:1], None, gen=True)
            writer.add_image("sample", sample[0], epoch)
            writer.add_scalar("loss", loss.item(), epoch)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "periodic_branch_that_trains_the_generator",
        {
            "train.py": """\
import torch


def train(netG, netD, optG, optD, loader):
    for i, real in enumerate(loader):
        optD.zero_grad()
        fake = netG(torch.randn(real.size(0), 64))
        d_loss = netD(fake.detach()).mean() - netD(real).mean()
        d_loss.backward()
        optD.step()
        if i % 5 == 0:
            optG.zero_grad()
            g_loss = -netD(netG(torch.randn(real.size(0), 64))).mean()
            g_loss.backward()
            optG.step()
""",
        },
        rules=("TL001",),
    ),
    Case(
        "periodic_forward_feeding_a_later_backward",
        {
            "train.py": """\
import torch


def train(student, teacher, opt, loader):
    teacher_out = None
    for i, x in enumerate(loader):
        if i % 10 == 0:
            teacher_out = teacher(x)
        opt.zero_grad()
        loss = ((student(x) - teacher_out) ** 2).mean()
        loss.backward()
        opt.step()
""",
        },
        rules=("TL001",),
    ),
    Case(
        "periodic_adversarial_forward_added_to_the_loss",
        {
            "train.py": """\
import torch


def train(model, criterion, opt, loader, every):
    for it, (x, y) in enumerate(loader):
        opt.zero_grad()
        outputs = model(x)
        if it % every == 0:
            outputs_adv = model(x + 0.01 * torch.randn_like(x))
        loss = criterion(outputs, y)
        if it % every == 0:
            logits_adv, _ = outputs_adv
            loss += 0.5 * criterion(logits_adv, y)
        loss.backward()
        opt.step()
""",
        },
        rules=("TL001",),
    ),
    Case(
        "first_frame_branch_in_a_module_method_called_by_training",
        {
            "train.py": """\
import torch
import torch.nn as nn


class VideoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv3d(3, 8, 1)

    def encode(self, x):
        for i in range(x.shape[2]):
            if i == 0:
                out = self.encoder(x[:, :, :1])
            else:
                out = torch.cat([out, self.encoder(x[:, :, i : i + 1])], 2)
        return out


def train(model, loader, opt):
    for x in loader:
        loss = model.encode(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
        rules=("TL001",),
    ),
    Case(
        "library_autoencoder_decode_in_periodic_sampling",
        {
            "train.py": """\
import torch
from diffusers.models import AutoencoderKL
from transformers import AutoTokenizer

vae = AutoencoderKL.from_pretrained("some/vae").to("cuda")
tokenizer = AutoTokenizer.from_pretrained("some/tokenizer")


def train(model, opt, loader, writer):
    step = 0
    for x, ids in loader:
        with torch.no_grad():
            latents = vae.encode(x).latent_dist.sample()
        loss = model(latents).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 1000 == 0:
            images = vae.decode(latents / 0.18).sample  # TL001: vae.decode(latents / 0.18)
            writer.add_images("samples", images, step)
            writer.add_text("caption", tokenizer.decode(ids[0]), step)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl001_round9")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
