"""TL101 asks for `pin_memory` alone only where pinning can pay: issue 24, fix round 3.

A DataLoader without workers pins each batch in the main process, right before the loop copies
it: one more host copy (pageable into pinned memory) in place of the one the CUDA driver makes
through its own staging buffer, so a synchronous copy gains nothing. Pinning pays where it runs
off the training thread (the pin-memory thread of a loader with workers) or where the pinned
copy overlaps compute (`non_blocking=True`). An in-memory dataset (`TensorDataset`, a list of
samples) is asked for no workers, so for it `pin_memory` alone is asked only with a
`non_blocking` copy, also where the dataset reaches the loader through a parameter every caller
passes one, or through a function of the file that returns one. Each case is an invented
project, checked once by the installed `torchlint`; a line ending in `# TL101: text` expects a
finding there, every other TL101 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL101",)

CASES = [
    # token ids in memory, copied synchronously: pinning in the main process gains nothing
    Case(
        "in-memory-token-ids-through-parameter",
        rules=RULES,
        files={
            "run_glue.py": """\
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def load_examples(features):
    ids = torch.tensor([f.ids for f in features], dtype=torch.long)
    labels = torch.tensor([f.label for f in features], dtype=torch.long)
    dataset = TensorDataset(ids, labels)
    return dataset


def train(args, train_dataset, model):
    loader = DataLoader(train_dataset, sampler=RandomSampler(train_dataset), batch_size=8)
    for batch in loader:
        batch = tuple(t.to(args.device) for t in batch)
        model(*batch).loss.backward()


def main(args, model, features):
    train_dataset = load_examples(features)
    train(args, train_dataset, model)


if __name__ == "__main__":
    main(parse(), build(), read())
""",
        },
    ),
    # bound in each branch of an `if`, each an in-memory dataset
    Case(
        "in-memory-in-both-branches",
        rules=RULES,
        files={
            "run_swag.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def load(features, evaluate):
    ids = torch.tensor([f.ids for f in features], dtype=torch.long)
    if evaluate:
        dataset = TensorDataset(ids)
    else:
        dataset = TensorDataset(ids, torch.tensor([f.label for f in features]))
    return dataset


def train(model, features, device):
    for batch in DataLoader(load(features, False), batch_size=16):
        model(*(t.to(device) for t in batch)).loss.backward()
""",
        },
    ),
    Case(
        "in-memory-tensor-dataset-same-function",
        rules=RULES,
        files={
            "fit.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def predict(model, x, device):
    loader = DataLoader(TensorDataset(torch.from_numpy(x)), batch_size=256, shuffle=False)
    out = []
    for (xb,) in loader:
        out.append(model(xb.to(device).float()).cpu())
    return out
""",
        },
    ),
    # the copy is non_blocking: a pinned batch's copy overlaps compute, so pinning pays
    Case(
        "in-memory-non-blocking-copy",
        rules=RULES,
        files={
            "fit.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def fit(model, xs, ys):
    loader = DataLoader(TensorDataset(xs, ys), batch_size=512)  # TL101: DataLoader(
    for x, y in loader:
        x = x.to("cuda", non_blocking=True)
        y = y.cuda(non_blocking=True)
        model(x, y).backward()
""",
        },
    ),
    # workers given: the pin-memory thread pins off the training thread, so pinning is asked
    Case(
        "in-memory-with-workers",
        rules=RULES,
        files={
            "fit.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def fit(model, xs, ys):
    loader = DataLoader(TensorDataset(xs, ys), batch_size=64, num_workers=2)  # TL101: DataLoader(
    for x, y in loader:
        model(x.cuda(), y.cuda()).backward()
""",
        },
    ),
    # a dataset that loads from files: workers and pinning both asked, as before
    Case(
        "files-without-workers",
        rules=RULES,
        files={
            "train.py": """\
import torch
from torch.utils.data import DataLoader
from torchvision import datasets


def main():
    data = datasets.ImageFolder("images")
    loader = DataLoader(data, batch_size=64)  # TL101: DataLoader(
    for x, y in loader:
        model(x.cuda()).sum().backward()


if __name__ == "__main__":
    main()
""",
        },
    ),
    # a parameter one caller passes something unknown: not known to be in memory, both asked
    Case(
        "parameter-not-always-in-memory",
        rules=RULES,
        files={
            "train.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def train(dataset):
    for x in DataLoader(dataset, batch_size=8):  # TL101: DataLoader(
        model(x.cuda()).sum().backward()


def main():
    train(TensorDataset(xs))
    train(load_images())


if __name__ == "__main__":
    main()
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("pinning_cost")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_pinning_cost(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
