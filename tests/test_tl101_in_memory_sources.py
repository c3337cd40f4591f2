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


# Round 9: built by a function of another module of the project (`ProjectIndex`).
_LOADERS_MODULE = """\
import os

import torch
from torch.utils.data import TensorDataset


def load_and_cache(args, split):
    examples = read_examples(args, split)
    cache = os.path.join(args.cache_dir, split)
    if os.path.exists(cache):
        data = torch.load(cache)
    else:
        ids = torch.tensor([e.ids for e in examples], dtype=torch.long)
        if split == "test":
            data = TensorDataset(ids)
        else:
            data = TensorDataset(ids, torch.tensor([e.label for e in examples]))
        torch.save(data, cache)
    return examples, data


def token_dataset(args):
    _, data = load_and_cache(args, "train")
    return data


def image_folder(root):
    return ImageFolder(root)


def examples_only(args, data):
    return read_examples(args, "train"), data


def cached_with_collate(args):
    def collate(batch):
        return batch

    data = torch.load(args.cache)
    return data
"""

CASES += [
    # unpacked from the tuple another module's function returns: nothing for workers to load
    Case(
        "other-module-tuple",
        rules=RULES,
        files={
            "data_utils.py": _LOADERS_MODULE,
            "run_cls.py": """\
import torch
from torch.utils.data import DataLoader, RandomSampler

from data_utils import load_and_cache


def main(args, model, optimizer):
    train_examples, train_data = load_and_cache(args, "train")
    loader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=32)
    for batch in loader:
        ids, labels = tuple(t.to(args.device) for t in batch)
        loss = model(ids, labels)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    # a module attribute, the dataset returned whole through another of that module's
    # functions; the copy is non_blocking and overlaps the step, so pinning alone is asked
    Case(
        "other-module-whole",
        rules=RULES,
        files={
            "data_utils.py": _LOADERS_MODULE,
            "run_pin.py": """\
import torch
from torch.utils.data import DataLoader

import data_utils


def main(args, model, optimizer):
    loader = DataLoader(data_utils.token_dataset(args), batch_size=32)  # TL101: DataLoader(
    for ids, labels in loader:
        loss = model(ids.to(args.device, non_blocking=True), labels.to(args.device))
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    # the returns of a function nested in the loading function are not the loader's
    Case(
        "other-module-nested-def",
        rules=RULES,
        files={
            "data_utils.py": _LOADERS_MODULE,
            "run_cached.py": """\
import torch
from torch.utils.data import DataLoader

from data_utils import cached_with_collate


def main(args, model, optimizer):
    loader = DataLoader(cached_with_collate(args), batch_size=32)
    for ids, labels in loader:
        loss = model(ids.to(args.device), labels.to(args.device))
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    # another module's function that returns a dataset of files, or what it was handed: the
    # workers are asked as before
    Case(
        "other-module-not-in-memory",
        rules=RULES,
        files={
            "data_utils.py": _LOADERS_MODULE,
            "run_img.py": """\
import torch
from torch.utils.data import DataLoader

from data_utils import examples_only, image_folder


def main(args, model, optimizer, dataset):
    images = DataLoader(image_folder(args.root), batch_size=64)  # TL101: DataLoader(
    _, handed = examples_only(args, dataset)
    passed = DataLoader(handed, batch_size=64)  # TL101: DataLoader(
    for x, y in images:
        model(x.cuda(), y.cuda()).backward()
        optimizer.step()
    for x, y in passed:
        model(x.cuda(), y.cuda()).backward()
        optimizer.step()


if __name__ == "__main__":
    main(*setup())
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


def test_other_module_dataset_asks_for_pinning_alone(findings: list[dict]) -> None:
    (found,) = [f for f in findings if f["filename"].startswith("other-module-whole/")]
    assert found["message"] == "`DataLoader` feeding a device loop without `pin_memory`"
