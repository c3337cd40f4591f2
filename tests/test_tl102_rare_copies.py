"""TL102 leaves alone copies that run only now and then.

A training loop that keeps its metrics behind `if i % args.print_freq == 0:` copies the labels
again there to measure accuracy, and reads the results on the host with a timer's
`torch.cuda.synchronize()` right after: that block syncs on purpose, once every `print_freq`
steps, and a blocking copy in it costs nothing per step (judges reject these findings). The same
holds for a copy behind an early `continue` off the period, and in a helper of the file that
only such a guarded call runs. The copies each step makes stay findings, and so does a copy
under a branch that is no period (`if args.gpu is not None:`), or one a helper makes that an
unguarded call also runs.

A loop whose body always ends in a `break` takes one batch (a data-dependent initialization,
`for x, y in loader: ...; break`): its copies run once per run, not per batch
(`LoopFacts.first_pass_only`), unless a per-batch loop runs that loop again. A `break` under an
`if` may never come, and leaves the loop per batch.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_HEAD = "import time\n\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"

CASES = [
    Case(
        "copy-under-the-print-guard",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, meter, args):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for i, (x, y) in enumerate(loader):
        out = model(x.cuda())  # TL102: x.cuda()
        loss = torch.nn.functional.cross_entropy(out, y.cuda())  # TL102: y.cuda()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i % args.print_freq == 0:
            prec1, = accuracy(out.data, y.cuda(), topk=(1,))
            meter.update(to_python_float(prec1), x.size(0))
            torch.cuda.synchronize()
            print(i, time.time())
""",
        },
    ),
    Case(
        "copy-after-an-off-period-continue",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, writer, log_every):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for step, (x, y) in enumerate(loader):
        model(x.to("cuda")).sum().backward()  # TL102: x.to("cuda")
        opt.step()
        if step % log_every != 0:
            continue
        writer.add_histogram("logits", model(x.to("cuda")), step)
""",
        },
    ),
    Case(
        "helper-run-only-under-the-guard",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
class Trainer:
    def show(self, images):
        grid = images.cuda()
        self.writer.add_images("batch", grid)

    def place(self, images):
        return images.cuda()  # TL102: images.cuda()

    def fit(self, data):
        loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
        for i, (x, y) in enumerate(loader):
            self.model(self.place(x)).sum().backward()
            self.opt.step()
            if i % 500 == 0:
                self.show(x)
                print(self.place(y))
""",
        },
    ),
    Case(
        "branches-that-are-no-period",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, args):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for i, (x, y) in enumerate(loader):
        if args.gpu is not None:
            x = x.cuda(args.gpu)  # TL102: x.cuda(args.gpu)
        y = y.cuda() if torch.cuda.is_available() else y  # TL102: y.cuda()
        model(x, y).backward()
        opt.step()
""",
        },
    ),
    # A loop whose iteration only copies batches to the device and keeps them (a prefetch
    # before a ranking pass: ViLT's text prefetch, judged FPs) queues no device work for a
    # non_blocking copy to overlap. A loop that also runs something, a forward, keeps its
    # findings.
    Case(
        "prefetch-loop-only-copies",
        rules=("TL102",),
        files={
            "rank.py": _HEAD
            + """\
def prefetch(data, device):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    kept = []
    for batch in loader:
        kept.append(
            {
                "ids": batch["ids"].to(device),
                "masks": batch["masks"].to(device),
                "index": batch["index"],
            }
        )
    return kept
""",
        },
    ),
    Case(
        "data-dependent-init-takes-one-batch",
        rules=("TL102",),
        files={
            "init.py": _HEAD
            + """\
def initialize(model, data):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for i, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        model(x, y, calibrate=True)
        break
    torch.save(model.state_dict(), "init.pt")


def train(model, data, opt):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for x, y in loader:
        out = model(x.cuda())  # TL102: x.cuda()
        loss = torch.nn.functional.cross_entropy(out, y.cuda())  # TL102: y.cuda()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
    ),
    Case(
        "break-under-a-branch-leaves-the-loop-per-batch",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, args):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for i, (x, y) in enumerate(loader):
        out = model(x.cuda())  # TL102: x.cuda()
        loss = torch.nn.functional.cross_entropy(out, y.cuda())  # TL102: y.cuda()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i == args.max_steps:
            break
""",
        },
    ),
    Case(
        "one-batch-loop-inside-every-step",
        rules=("TL102",),
        files={
            "train.py": _HEAD
            + """\
def train(model, data, opt, steps):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    for step in range(steps):
        for x, y in loader:
            x = normalize(x.cuda())  # TL102: x.cuda()
            break
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
    ),
    Case(
        "prefetch-loop-also-embeds",
        rules=("TL102",),
        files={
            "rank.py": _HEAD
            + """\
def prefetch(data, device, model):
    loader = DataLoader(data, batch_size=64, num_workers=4, pin_memory=True)
    kept = []
    for batch in loader:
        ids = batch["ids"].to(device)  # TL102: batch["ids"].to(device)
        kept.append(model.embed(ids))
    return kept
""",
        },
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl102_rare"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl102_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
