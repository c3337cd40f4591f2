"""TL101 leaves `pin_memory` alone where the code chose it or where pinning cannot show: issue 24,
fix round 6 (classes (b), (c) and (d) of the judged production sample).

- (b) A loader built in each branch of an `if`, pinned in one branch only (`if workers > 0:
  DataLoader(..., pin_memory=True) else: DataLoader(...)`), says `pin_memory=workers > 0` in
  two statements: a choice, as `pin_memory=` given an expression is.
- (c) A one-off inference pass (teacher outputs before training) of a file that trains, whose
  loader already has workers: pinning would shave one pageable copy per batch of a single pass,
  hidden behind the workers, nothing measurable over the run. A tool whose whole run is that
  pass (a feature-statistics script that trains nothing) is still asked.
- (d) A loader with workers whose every batch is followed by autoregressive generation
  (`model.generate(...)`): seconds of decoding per batch against microseconds of copy.
- An in-memory dataset's loader whose only `non_blocking` copy sits in a loop that takes one
  batch (`for x, y in loader: ...; break`, a data-dependent initialization): that copy runs once,
  so pinning has nothing per batch to overlap (`DataLoaders.copies_per_batch`).

Each case is an invented project, checked once by the installed `torchlint`; a line ending in
`# TL101: text` expects a finding there, every other TL101 finding is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

RULES = ("TL101",)

CASES = [
    Case(
        "pinned-in-the-branch-with-workers",
        rules=RULES,
        files={
            "trainer.py": """\
import torch
from torch.utils.data import DataLoader


class Trainer:
    def run_epoch(self, data, config):
        if config.num_workers > 0:
            loader = DataLoader(
                data, batch_size=config.batch_size, pin_memory=True, num_workers=config.num_workers
            )
        else:
            loader = DataLoader(data, batch_size=config.batch_size, num_workers=config.num_workers)
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.model(x, y).backward()
            self.optimizer.step()
""",
        },
    ),
    # the branches differ in something else: pinning was not chosen, both are asked
    Case(
        "branches-without-pinning",
        rules=RULES,
        files={
            "trainer.py": """\
import torch
from torch.utils.data import DataLoader


class Trainer:
    def run_epoch(self, data, config):
        if config.shuffle:
            self.fit(DataLoader(data, shuffle=True, num_workers=config.num_workers))  # TL101: DataLoader(
        else:
            self.fit(DataLoader(data, num_workers=config.num_workers))  # TL101: DataLoader(

    def fit(self, loader):
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.model(x, y).backward()
            self.optimizer.step()
""",
        },
    ),
    Case(
        "one-off-pass-before-training",
        rules=RULES,
        files={
            "noisy_student.py": """\
import torch
from torch.utils.data import DataLoader


def teacher_outputs(teacher, unlabeled, args):
    loader = DataLoader(unlabeled, batch_size=args.batch_size, num_workers=args.workers)
    outputs = []
    with torch.no_grad():
        for images, _ in loader:
            outputs.append(teacher(images.cuda()).cpu())
    return torch.cat(outputs)


def main(args):
    teacher, student, unlabeled, labeled, optimizer = build(args)
    targets = teacher_outputs(teacher, unlabeled, args)
    train_loader = DataLoader(labeled, batch_size=64, num_workers=args.workers, pin_memory=True)
    for epoch in range(args.epochs):
        for images, labels in train_loader:
            loss = student(images.cuda(), labels.cuda(), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main(parse())
""",
        },
    ),
    # a tool whose whole run is the pass: pinning shows in its run time, so it is asked
    Case(
        "one-off-pass-of-a-tool",
        rules=RULES,
        files={
            "calc_features.py": """\
import torch
from torch.utils.data import DataLoader


def extract(loader, net):
    features = []
    for images in loader:
        features.append(net(images.cuda()).cpu())
    return torch.cat(features)


def main(args):
    net, data = build(args)
    loader = DataLoader(data, batch_size=args.batch, num_workers=4)  # TL101: DataLoader(
    with torch.no_grad():
        torch.save(extract(loader, net), args.out)


if __name__ == "__main__":
    main(parse())
""",
        },
    ),
    Case(
        "generation-per-batch",
        rules=RULES,
        files={
            "answer.py": """\
import torch
from torch.utils.data import DataLoader


def main(args, model, tokenizer, dataset, out):
    loader = DataLoader(dataset, batch_size=1, num_workers=4)
    for input_ids, images in loader:
        with torch.inference_mode():
            output_ids = model.generate(
                input_ids.to("cuda"), images=images.to("cuda"), max_new_tokens=128
            )
        out.write(tokenizer.batch_decode(output_ids)[0])


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    # generation now and then in a training loop: the training copies are asked about
    Case(
        "generation-now-and-then",
        rules=RULES,
        files={
            "train.py": """\
import torch
from torch.utils.data import DataLoader


def main(args, model, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=8, num_workers=4)  # TL101: DataLoader(
    for step, (ids, labels) in enumerate(loader):
        loss = model(ids.to("cuda"), labels=labels.to("cuda")).loss
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            print(model.generate(ids[:1].to("cuda"), max_new_tokens=20))


if __name__ == "__main__":
    main(*setup())
""",
        },
    ),
    Case(
        "in-memory-loader-copied-asynchronously-once",
        rules=RULES,
        files={
            "init.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(xs, ys), batch_size=16)
for x, y in loader:
    model(x.to(device, non_blocking=True), calibrate=True)
    break
"""
        },
    ),
    Case(
        "in-memory-loader-copied-asynchronously-every-batch",
        rules=RULES,
        files={
            "train.py": """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(xs, ys), batch_size=16)  # TL101: DataLoader(
for x, y in loader:
    model(x.to(device, non_blocking=True)).sum().backward()
    if stop:
        break
"""
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("pin_choices")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_pin_choices(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
