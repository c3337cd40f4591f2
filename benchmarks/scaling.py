"""Cost must stay proportional to the code read. Two sweeps, each against libcst's bare parse
of the same input timed in the same run:

  1. one synthetic training script grown from 1k to 64k lines: time per line must stay flat;
  2. a directory of 10 to 2,000 such files (100 lines each), through the `torchlint` command.

    python benchmarks/scaling.py
"""

from __future__ import annotations

import shutil
import tempfile
import time
from functools import partial
from pathlib import Path

import libcst as cst
from _common import timed, torchlint_command

from torchlint.config import Settings
from torchlint.engine.lint import lint_text

BLOCK = """
def train_epoch_{i}(model, loader, optimizer, criterion, device):
    model.train()
    running_loss = 0.0
    for step, (inputs, targets) in enumerate(loader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if step % 100 == 0:
            print(f"step {{step}} loss {{running_loss / (step + 1):.3f}}")
    return running_loss


def evaluate_{i}(model, val_loader, device):
    model.eval()
    correct = 0
    for inputs, targets in val_loader:
        outputs = model(inputs.to(device))
        correct += (outputs.argmax(1) == targets.to(device)).sum().item()
    return correct


class Block{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))
"""
HEADER = "import numpy as np\nimport torch\nfrom torch import nn\n\ndevice = torch.device('cuda')\n"


def script(lines: int) -> str:
    parts, i = [HEADER], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(BLOCK.format(i=i))
        i += 1
    return "".join(parts)


def best_of(repeats: int, work) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def file_sweep() -> None:
    settings = Settings()
    rules = settings.enabled_rules()
    # libcst's parse itself is not linear in the size of one file, so the per-line cost of what
    # torchlint adds to it (lint minus parse) is shown on its own too.
    print(
        "lines   torchlint µs/line  parse µs/line  ratio to parse   per line vs 1k: torchlint  parse  torchlint minus parse"
    )
    base = None
    for lines in (1_000, 4_000, 16_000, 64_000):
        text = script(lines)
        n = text.count("\n")
        lint = best_of(3, partial(lint_text, "s.py", text, rules, settings))
        parse = best_of(3, partial(cst.parse_module, text))
        row = (lint / n, parse / n, (lint - parse) / n)
        base = base or row
        growth = "  ".join(f"{now / then:5.2f}x" for now, then in zip(row, base))
        print(
            f"{n:>6}   {1e6 * row[0]:12.1f}   {1e6 * row[1]:12.1f}   {lint / parse:10.2f}x         {growth}"
        )


def directory_sweep() -> None:
    print("\nfiles   torchlint s   parse s   ratio to parse")
    text = script(100)
    for count in (10, 100, 500, 2_000):
        work = Path(tempfile.mkdtemp(prefix="torchlint-scale-"))
        for i in range(count):
            (work / f"train_{i:04d}.py").write_text(text)
        start = time.perf_counter()
        for path in sorted(work.glob("*.py")):
            cst.parse_module(path.read_text())
        parse = time.perf_counter() - start
        seconds, _ = timed(
            torchlint_command()
            + ["check", ".", "--isolated", "--no-cache", "--jobs", "1", "-q", "--exit-zero"],
            cwd=work,
        )
        print(f"{count:>5}   {seconds:10.2f}   {parse:7.2f}   {seconds / parse:6.2f}x")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    file_sweep()
    directory_sweep()
