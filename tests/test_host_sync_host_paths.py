"""TL002 precision: per-batch reads that run only off CUDA, or whose copy is the host product.

Each case is a small project of its own, checked once by the installed `torchlint` command and
marked as in `test_production_cases.py`: a line ending in `# TL002: text` expects a finding on
that line at the column where `text` starts, and every other TL002 finding is a failure.

The classes, each from production code judges labelled as false positives:
- the `else` of a test of a tensor's device type (`if x.device.type in ["cuda", "npu"]:`,
  `if x.is_cuda:`) runs only where that tensor is not on CUDA: a loop-heavy CPU path, where a
  read costs no device sync; the branch that runs on CUDA is still read;
- a helper that copies a tensor to a numpy array (`_from_device`), whose product a caller hands
  back in a tuple to a loop that writes it into a numpy buffer it allocated (`ya[bslc] = y0`):
  the copy is the product the code assembles on the host, tile by tile;
- an `embed()` that collects each batch's numpy copy in a dict of lists and returns the lists
  stacked into numpy arrays (`{k: np.stack(v) for k, v in found.items()}`): its product is the
  host array, as for the list an `encode()` returns as one.

- a sample read straight from a dataset (`dataset.get(i).tolist()`, `dataset[i]`) built by a
  call that hands it no device tensor is host data: a dataset serves samples from files or
  memory, and only one whose class of the file moves samples to the device, or a
  `TensorDataset` of device tensors, serves them from the device.

Precision kept: the same numpy helper called on a training loss that is printed, and the dict of
per-batch copies reduced to means (a mean could be kept on the device), are still findings, and so is a row of a `TensorDataset` built from CUDA tensors.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "device-type-else-branch",
        {
            "cluster.py": """\
import torch


def communities(embeddings, threshold, batch_size):
    threshold = torch.tensor(threshold, device=embeddings.device)
    found = []
    for start in range(0, len(embeddings), batch_size):
        scores = embeddings[start:start + batch_size] @ embeddings.T
        if embeddings.device.type in ["cuda", "npu"]:
            counts = (scores >= threshold).sum(1)
            found.append(counts.max().item())  # TL002: counts.max().item()
        else:
            top, _ = scores.topk(k=10)
            for i in range(len(top)):
                if top[i][-1] >= threshold:
                    values, indices = scores[i].topk(k=20)
                    while values[-1] > threshold and len(values) < len(embeddings):
                        values, indices = scores[i].topk(k=2 * len(values))
                    found.append(indices[values >= threshold].tolist())
    return found


def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        if loss.is_cuda:
            print(loss.item())  # TL002: loss.item()
        else:
            print(loss.item())
        if x.device.type != "cuda":
            print(float(loss))
""",
        },
    ),
    Case(
        "numpy-helper-into-a-host-buffer",
        {
            "core.py": """\
import numpy as np
import torch


def _to_device(x, device):
    return torch.from_numpy(x).to(device)


def _from_device(t):
    x = t.detach().cpu().to(torch.float32).numpy()
    return x


def _forward(net, x):
    xt = _to_device(x, net.device)
    with torch.no_grad():
        y, style = net(xt)[:2]
    y = _from_device(y)
    style = _from_device(style)
    return y, style


def run_net(net, tiles, batch_size):
    for j in range(0, tiles.shape[0], batch_size):
        y0, style0 = _forward(net, tiles[j:j + batch_size])
        if j == 0:
            out = np.zeros((tiles.shape[0], y0.shape[1]), "float32")
            styles = np.zeros((tiles.shape[0], 256), "float32")
        out[j:j + batch_size] = y0
        styles[j:j + batch_size] = style0
    return out, styles
""",
        },
    ),
    Case(
        "numpy-helper-on-a-logged-loss",
        {
            "train.py": """\
import torch


def to_numpy(t):
    return t.detach().cpu().numpy()  # TL002: t.detach().cpu()


def train(model, loader, optimizer):
    for x, y in loader:
        loss = ((model(x.cuda()) - y.cuda()) ** 2).mean()
        loss.backward()
        optimizer.step()
        print(to_numpy(loss))
""",
        },
    ),
    Case(
        "dict-of-batches-stacked-into-arrays",
        {
            "linking.py": """\
import numpy as np
import torch


class Linker:
    def embed(self, names):
        found = {"dense": []}
        with torch.no_grad():
            for start in range(0, len(names), self.batch_size):
                batch = names[start:start + self.batch_size]
                self.encoder.embed(batch)
                for sentence in batch:
                    emb = sentence.get_embedding()
                    found["dense"].append(emb.cpu().numpy())
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
        return {k: np.stack(v, axis=0) for k, v in found.items()}

    def scores(self, names):
        found = {"dense": []}
        with torch.no_grad():
            for start in range(0, len(names), self.batch_size):
                batch = names[start:start + self.batch_size]
                self.encoder.embed(batch)
                for sentence in batch:
                    emb = sentence.get_embedding()
                    found["dense"].append(emb.cpu().numpy())  # TL002: emb.cpu()
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
        return {k: np.mean(v) for k, v in found.items()}
""",
        },
    ),
    Case(
        "tokens-read-from-a-dataset",
        {
            "data.py": """\
import numpy as np


class TokenDataset:
    def __init__(self, path):
        self.tokens = np.load(path)

    def get(self, i):
        return self.tokens[i]


def make_dataset(path):
    return TokenDataset(path)
""",
            "generate.py": """\
import torch
from torch.utils.data import TensorDataset

from data import make_dataset


def get_batch(tokens):
    return tokens, tokens != 0


def precompute(model, paths, batch_size):
    for path in paths:
        dataset = make_dataset(path)
        i = 0
        while i < len(dataset):
            model.clear_cache()
            tokens = [dataset.get(j % len(dataset)).tolist() for j in range(i, i + batch_size)]
            i += batch_size
            with torch.no_grad():
                tokens, mask = get_batch(torch.cuda.LongTensor(tokens))
                logits = model(tokens, mask)
            print(logits.float().mean().item())  # TL002: logits.float().mean().item()


def replay(model, x, y, optimizer, batch_size):
    dataset = TensorDataset(x.cuda(), y.cuda())
    for start in range(0, len(dataset), batch_size):
        ids = dataset[start][0].tolist()  # TL002: dataset[start][0].tolist()
        loss = model(x[start:start + batch_size], ids).mean()
        loss.backward()
        optimizer.step()
""",
        },
    ),
]

# Each case pins TL002 alone.
CASES = [replace(case, rules=("TL002",)) for case in CASES]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("host_sync_host_paths")), CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_host_sync_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
