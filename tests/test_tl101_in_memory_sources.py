"""TL101 knows more datasets to be in memory: issue 24, fix round 6 (class (a) of the judged
production sample, the legacy Hugging Face examples of microsoft/LoRA).

An in-memory dataset is asked for no workers, and for `pin_memory` only where pinning can pay
(workers, or a `non_blocking` copy). Such a dataset often reaches its loader through a loading
function that builds it in either branch of an `if`, returns it alone or with extras
(`return dataset, examples, features` under a flag, unpacked by the evaluation caller), loads it
from a cache written with `torch.save` (`torch.load` deserializes it whole into memory), or has
a library build it (`squad_convert_examples_to_features(..., return_dataset="pt")` returns a
`TensorDataset` second). Each case is an invented project, checked once by the installed
`torchlint`; a line ending in `# TL101: text` expects a finding there, every other TL101 finding
is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL101",)

CASES = [
    # built in either branch, returned alone or with extras by a flag
    Case(
        "branches-and-extras",
        rules=RULES,
        files={
            "run_choice.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset


def load_examples(args, evaluate=False, output_examples=False):
    features = read(args, evaluate)
    ids = torch.tensor([f.ids for f in features], dtype=torch.long)
    labels = torch.tensor([f.label for f in features], dtype=torch.long)
    if evaluate:
        dataset = TensorDataset(ids)
    else:
        dataset = TensorDataset(ids, labels)
    if output_examples:
        return dataset, features
    return dataset


def train(args, train_dataset, model):
    loader = DataLoader(train_dataset, batch_size=8)
    for batch in loader:
        batch = tuple(t.to(args.device) for t in batch)
        model(*batch).loss.backward()


def evaluate(args, model):
    dataset, features = load_examples(args, evaluate=True, output_examples=True)
    loader = DataLoader(dataset, batch_size=8)
    for batch in loader:
        batch = tuple(t.to(args.device) for t in batch)
        model(*batch)


def main(args, model):
    train_dataset = load_examples(args)
    train(args, train_dataset, model)
    evaluate(args, model)


if __name__ == "__main__":
    main(parse(), build())
""",
        },
    ),
    # loaded from a torch.save cache, or built by the library as a TensorDataset
    Case(
        "cache-or-library",
        rules=RULES,
        files={
            "run_qa.py": """\
import os

import torch
from torch.utils.data import DataLoader
from transformers import squad_convert_examples_to_features


def load_examples(args, tokenizer, examples):
    if os.path.exists(args.cache):
        cached = torch.load(args.cache)
        features, dataset = cached["features"], cached["dataset"]
    else:
        features, dataset = squad_convert_examples_to_features(
            examples=examples, tokenizer=tokenizer, return_dataset="pt"
        )
        torch.save({"features": features, "dataset": dataset}, args.cache)
    return dataset


def train(args, model, tokenizer, examples):
    loader = DataLoader(load_examples(args, tokenizer, examples), batch_size=8)
    for batch in loader:
        batch = tuple(t.to(args.device) for t in batch)
        model(*batch).loss.backward()


if __name__ == "__main__":
    train(*setup())
""",
        },
    ),
    # the library asked for another kind of dataset: not known to be in memory, both asked
    Case(
        "library-other-kind",
        rules=RULES,
        files={
            "run_qa.py": """\
import torch
from torch.utils.data import DataLoader
from transformers import squad_convert_examples_to_features


def train(args, model, tokenizer, examples):
    features, dataset = squad_convert_examples_to_features(
        examples=examples, tokenizer=tokenizer, return_dataset=args.kind
    )
    loader = DataLoader(dataset, batch_size=8)  # TL101: DataLoader(
    for batch in loader:
        model(*(t.to(args.device) for t in batch)).loss.backward()


if __name__ == "__main__":
    train(*setup())
""",
        },
    ),
    # an image dataset returned with extras: it loads files, so workers and pinning are asked
    Case(
        "files-with-extras",
        rules=RULES,
        files={
            "train.py": """\
import torch
from torch.utils.data import DataLoader
from torchvision import datasets


def load(root, with_classes=False):
    data = datasets.ImageFolder(root)
    if with_classes:
        return data, data.classes
    return data


def main(model):
    data, classes = load("images", with_classes=True)
    loader = DataLoader(data, batch_size=64)  # TL101: DataLoader(
    for x, y in loader:
        model(x.cuda()).sum().backward()


if __name__ == "__main__":
    main(build())
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("in_memory_sources")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_in_memory_sources(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
