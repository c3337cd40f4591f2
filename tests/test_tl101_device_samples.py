"""TL101 leaves alone loaders over samples built on the GPU before the dataset.

A production class: a script tokenises every text into `torch.tensor(ids, device=device)`,
appends them to lists and wraps the lists in its own `Dataset` (or a `random_split` of one).
Worker processes cannot use those CUDA tensors (a forked worker cannot touch CUDA), so the fix
that adds `num_workers` would break the run, and pinning has no host batch to serve. The same
dataset built from host tensors is still a finding.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_HEAD = """\
import torch
from torch.utils.data import DataLoader, Dataset, random_split


class Texts(Dataset):
    def __init__(self, xs, ys):
        self.xs, self.ys = xs, ys

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i], self.ys[i]


"""

CASES = [
    Case(
        "samples-made-on-the-gpu",
        rules=("TL101",),
        files={
            "train.py": _HEAD
            + """\
def train(model, opt, texts, labels, tokenizer):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    xs, ys = [], []
    for text, label in zip(texts, labels):
        seq = torch.tensor(tokenizer.encode(text), device=device, dtype=torch.long)
        xs.append(seq)
        ys.append(label)
    full = Texts(xs, ys)
    train_set, test_set = random_split(full, [0.9, 0.1])
    loader = DataLoader(train_set, batch_size=32, shuffle=True)
    for x, y in loader:
        model(x.to(device), y.to(device)).backward()
        opt.step()
""",
        },
    ),
    Case(
        "gpu-samples-from-either-branch-through-a-helper",
        rules=("TL101",),
        files={
            "train.py": _HEAD
            + """\
def cache(dataset, encoder, device):
    loader = DataLoader(dataset, batch_size=32)
    return [encoder(x.to(device)) for x, _ in loader]


def train(model, opt, texts, tokenizer, kind, device):
    if kind == "sst":
        xs = [torch.tensor(tokenizer.encode(t), device=device) for t in texts]
        data = Texts(xs, [0] * len(xs))
    else:
        seqs = []
        for t in texts:
            seqs.append(torch.tensor(tokenizer.encode(t), device=device))
        data = Texts(seqs, [1] * len(seqs))
    feats = cache(data, model.encoder, device)
    loader = DataLoader(data, batch_size=32, shuffle=True)
    for x, y in loader:
        model(x.to(device), y.to(device)).backward()
        opt.step()
""",
        },
    ),
    Case(
        "samples-made-on-the-host",
        rules=("TL101",),
        files={
            "train.py": _HEAD
            + """\
def train(model, opt, texts, labels, tokenizer):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    xs, ys = [], []
    for text, label in zip(texts, labels):
        seq = torch.tensor(tokenizer.encode(text), dtype=torch.long)
        xs.append(seq)
        ys.append(label)
    full = Texts(xs, ys)
    loader = DataLoader(full, batch_size=32, shuffle=True)  # TL101: DataLoader(full, batch_size=32, shuffle=True)
    for x, y in loader:
        model(x.to(device), y.to(device)).backward()
        opt.step()
""",
        },
    ),
    # A `collate_fn` of the file that builds part of each batch on the GPU (mel spectrograms
    # computed on CUDA while collating, F5-TTS's benchmark: a judged FP): `pin_memory=True`
    # raises on the CUDA tensors of such a batch, and forked workers cannot run the collate.
    # The same collate building its batch on the host is still a finding.
    Case(
        "collate-builds-on-the-gpu",
        rules=("TL101",),
        files={
            "bench.py": """\
import torch
from torch.utils.data import DataLoader


def collate(items, scale):
    feats = [torch.log1p(torch.as_tensor(i["wave"]).to("cuda") * scale) for i in items]
    lens = torch.LongTensor([f.shape[-1] for f in feats])
    return {"feats": torch.nn.utils.rnn.pad_sequence(feats), "lens": lens}


def run(model, dataset, workers):
    loader = DataLoader(
        dataset, batch_size=8, num_workers=workers, collate_fn=lambda b: collate(b, 2.0)
    )
    for batch in loader:
        model(batch["feats"], batch["lens"].to("cuda"))
""",
        },
    ),
    Case(
        "collate-builds-on-the-host",
        rules=("TL101",),
        files={
            "bench.py": """\
import torch
from torch.utils.data import DataLoader


def collate(items, scale):
    feats = [torch.log1p(torch.as_tensor(i["wave"]) * scale) for i in items]
    lens = torch.LongTensor([f.shape[-1] for f in feats])
    return {"feats": torch.nn.utils.rnn.pad_sequence(feats), "lens": lens}


def run(model, dataset, workers):
    loader = DataLoader(  # TL101: DataLoader(
        dataset, batch_size=8, num_workers=workers, collate_fn=lambda b: collate(b, 2.0)
    )
    for batch in loader:
        model(batch["feats"].to("cuda"), batch["lens"].to("cuda"))
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl101_device_samples"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl101_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
