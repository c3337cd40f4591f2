"""TL002 on host products copied one element or chunk at a time, and ids a project helper
decodes to text.

Each case is a small project checked by the installed `torchlint` command and marked as in
`test_production_cases.py`: a line ending in `# TL002: text` expects a finding there, and every
other TL002 finding in the case is a failure.

An evaluation that renders in chunks and copies each chunk's output to the host to write the
images and compute host metrics, or that writes each image of a batch to a PNG and draws it
with matplotlib, copies what the host needs: the files and figures are the loop's work. One
number read per element of an inner loop (`int(counts[b])`) stays a finding: one read of the
whole tensor before that loop would do. An evaluation loop inside the epoch loop, under
`no_grad`, whose copies (`pred.cpu().data.numpy()`) feed a numpy metric copies a host product
too. A project helper named for decoding token ids to text
(`utils.decode_sequence(vocab, seq)`), called in an evaluation, reads ids the host needs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "chunks-rendered-then-written",
        {
            "render.py": """\
import imageio
import numpy as np
import torch


def render(net, loader, rays_per_chunk):
    net.cuda()
    with torch.no_grad():
        for index, rays in enumerate(loader):
            chunks = []
            for part in torch.split(rays.cuda(), rays_per_chunk):
                rgb = net(part[None])
                chunks.append(rgb[0].cpu())
            image = torch.cat(chunks).numpy()
            imageio.imwrite(f"{index}.png", (image * 255).astype(np.uint8))
""",
        },
    ),
    Case(
        "one-number-per-element",
        {
            "render.py": """\
import torch


def render(net, loader):
    net.cuda()
    with torch.no_grad():
        for rays in loader:
            counts = net(rays.cuda())
            sizes = []
            for b in range(len(counts)):
                sizes.append(torch.zeros(int(counts[b])))  # TL002: int(counts[b])
            print(len(sizes))
""",
        },
    ),
    Case(
        "images-written-and-drawn-one-by-one",
        {
            "validate.py": """\
import matplotlib.pyplot as plt
import numpy as np
import torch
from PIL import Image


def validate(model, loader, save_results):
    model.cuda()
    index = 0
    with torch.no_grad():
        for images, labels in loader:
            images = images.cuda()
            outputs = model(images)
            if save_results:
                for i in range(len(images)):
                    image = images[i].detach().cpu().numpy()
                    image = (image * 255).transpose(1, 2, 0).astype(np.uint8)
                    Image.fromarray(image).save("results/%d_image.png" % index)
                    plt.imshow(image)
                    plt.savefig("results/%d_overlay.png" % index)
                    plt.close()
                    index += 1
""",
        },
    ),
    Case(
        "evaluation-in-the-epoch-loop-copies-through-data",
        {
            "train.py": """\
import numpy as np
import torch


def train(model, train_loader, test_loader, optimizer, epochs):
    model.cuda()
    for epoch in range(epochs):
        for points, target in train_loader:
            optimizer.zero_grad()
            loss = model(points.cuda(), target.cuda())
            loss.backward()
            optimizer.step()
            print(loss.item())  # TL002: loss.item()
        with torch.no_grad():
            hits = np.zeros(10)
            for points, target in test_loader:
                pred = model(points.cuda())
                pred_val = pred.contiguous().cpu().data.numpy()
                pred_val = np.argmax(pred_val, 2)
                hits += np.bincount(pred_val.ravel(), minlength=10)
        print(hits)
""",
        },
    ),
    Case(
        "ids-decoded-by-a-project-helper",
        {
            "utils.py": """\
def decode_sequence(vocab, seq):
    return [" ".join(vocab[str(ix)] for ix in row) for row in seq.tolist()]
""",
            "evaluate.py": """\
import torch

import utils


def evaluate(model, loader):
    model.cuda()
    predictions = []
    with torch.no_grad():
        for feats in loader:
            seq = model(feats.cuda())
            predictions.extend(utils.decode_sequence(model.vocab, seq))
    return predictions
""",
        },
    ),
    Case(
        "ids-handed-to-a-project-helper-named-otherwise",
        {
            "utils.py": """\
def summarize(vocab, seq):
    return [" ".join(vocab[str(ix)] for ix in row) for row in seq.tolist()]
""",
            "evaluate.py": """\
import torch

import utils


def evaluate(model, loader):
    model.cuda()
    predictions = []
    with torch.no_grad():
        for feats in loader:
            seq = model(feats.cuda())
            predictions.extend(utils.summarize(model.vocab, seq))  # TL002: utils.summarize(model.vocab, seq)
    return predictions
""",
        },
    ),
]


# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_products")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
