"""Latency of `torchlint lsp` from an edit to its diagnostics, against libcst's bare parse.

    python benchmarks/lsp_latency.py [--edits 50] [--lines 1000]
    python benchmarks/lsp_latency.py --fix-all 5 [--lines 5000]

With `--fix-all N` it times instead N `source.fixAll` code actions on the script against N
runs of the CLI's `torchlint fix` on the same text (alternating), and prints the ratio of
their medians.

Starts the installed `torchlint lsp` over stdio, opens a synthetic ~1,000-line training
script, then sends one edit at a time (a whole-document didChange, as the server asks for)
and times until the publishDiagnostics for that version arrives. The debounce is set to 0
so the figures are the server's own work plus the round trip. Before each edit the same
text is parsed with libcst.parse_module and linted in process, so all three columns are
measured under the same machine load; it prints p50/p95 and their ratios to the parse.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst
from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import torchlint_command  # noqa: E402

from torchlint.config import load_settings  # noqa: E402
from torchlint.engine.lint import lint_text  # noqa: E402

HEADER = '''"""Synthetic training script for the LSP latency benchmark."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset
'''

BLOCK = '''

class Features{n}(Dataset):
    """Rows of a feature matrix with their labels."""

    def __init__(self, path: str, scale: float = {n}.0) -> None:
        self.rows = np.load(path)
        self.labels = np.zeros(len(self.rows))
        self.scale = scale

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int):
        x = torch.tensor(self.rows[index])  # copies the numpy row
        y = torch.as_tensor(self.labels[index], dtype=torch.long)
        return x * self.scale, y


class Block{n}(nn.Module):
    def __init__(self, width: int = 64, depth: int = {n} % 4 + 1) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = F.gelu(layer(x)) + x
        return self.head(self.norm(x))


def train_{n}(args: argparse.Namespace) -> float:
    data = Features{n}(os.path.join(args.data, "part{n}.npy"))
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True)
    model = nn.DataParallel(Block{n}())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    total = 0.0
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.detach()
            if step % args.log_every == 0:
                print(f"epoch {{epoch}} step {{step}} loss {{loss.item():.4f}}")
    return float(total) / max(1, math.prod([args.epochs, len(loader)]))


@torch.no_grad()
def evaluate_{n}(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = 0
    seen = 0
    for x, y in loader:
        predictions = model(x).argmax(dim=-1)
        correct += (predictions == y).sum().item()
        seen += y.numel()
    return correct / max(1, seen)
'''

FOOTER = """

def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=100)
    args = parser.parse_args()
    print(train_0(args))


if __name__ == "__main__":
    main()
"""


def training_script(lines: int) -> str:
    """A training script of about `lines` lines: datasets, models, loops, with findings."""
    blocks = []
    n = 0
    while (HEADER + "".join(blocks) + FOOTER).count("\n") < lines:
        blocks.append(BLOCK.format(n=n))
        n += 1
    return HEADER + "".join(blocks) + FOOTER


def edited(text: str, i: int) -> str:
    """The script after keystroke-sized edit `i`: one number changed, near the top or the bottom."""
    marker = "default=100)"
    if i % 2:
        return text.replace(marker, f"default={100 + i})", 1)
    return text.replace("lr=args.lr", f"lr=args.lr * {i}", 1)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def timed(work, text: str) -> float:
    started = time.perf_counter()
    work(text)
    return time.perf_counter() - started


async def measure(texts: list[str], path: Path) -> dict[str, list[float]]:
    """Per edit: the bare parse, the in-process lint, and didChange -> publishDiagnostics."""
    client = LanguageClient("lsp-latency", "1")
    arrived: dict[int, asyncio.Future] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        waiter = arrived.get(params.version)
        if waiter is not None and not waiter.done():
            waiter.set_result((time.perf_counter(), len(params.diagnostics)))

    command = torchlint_command()
    await client.start_io(command[0], *command[1:], "lsp")
    uri = path.as_uri()
    loop = asyncio.get_running_loop()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=path.parent.as_uri(),
            initialization_options={"debounceMs": 0},
        )
    )
    client.initialized(types.InitializedParams())
    arrived[1] = loop.create_future()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=texts[0])
        )
    )
    _, found = await asyncio.wait_for(arrived[1], 60)
    print(f"{found} diagnostics on the script")

    settings = load_settings(start=path.parent)
    rules = settings.enabled_rules()
    names = ("libcst.parse_module", "lint_text in process", "didChange -> diagnostics")
    samples: dict[str, list[float]] = {name: [] for name in names}
    for version, text in enumerate(texts[1:], start=2):
        samples["libcst.parse_module"].append(timed(cst.parse_module, text))
        samples["lint_text in process"].append(
            timed(lambda t: lint_text(str(path), t, rules, settings), text)
        )
        arrived[version] = loop.create_future()
        started = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        done, _ = await asyncio.wait_for(arrived[version], 60)
        samples["didChange -> diagnostics"].append(done - started)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return samples


async def measure_fix_all(text: str, path: Path, runs: int) -> dict[str, list[float]]:
    """Per run: `torchlint fix` of the file, then `source.fixAll` on the same open document (unsafe
    fixes on in both: the synthetic script's fixes are mostly unsafe)."""
    client = LanguageClient("lsp-latency", "1")
    published: asyncio.Future = asyncio.get_running_loop().create_future()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if not published.done():
            published.set_result(len(params.diagnostics))

    command = torchlint_command()
    await client.start_io(command[0], *command[1:], "lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=path.parent.as_uri(),
            initialization_options={"debounceMs": 0, "unsafeFixes": True},
        )
    )
    client.initialized(types.InitializedParams())
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    print(f"{await asyncio.wait_for(published, 120)} diagnostics on the script")
    samples: dict[str, list[float]] = {"torchlint fix (CLI)": [], "source.fixAll (LSP)": []}
    end = types.Position(line=text.count("\n"), character=0)
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [*command, "fix", "--diff", "--unsafe-fixes", str(path)],
            capture_output=True,
            check=False,
        )
        samples["torchlint fix (CLI)"].append(time.perf_counter() - started)
        started = time.perf_counter()
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(line=0, character=0), end=end),
                context=types.CodeActionContext(
                    diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
                ),
            )
        )
        samples["source.fixAll (LSP)"].append(time.perf_counter() - started)
        if not actions or actions[0].edit is None:
            sys.exit("fix-all returned no edit: the script has nothing to fix")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return samples


def fix_all_main(lines: int, runs: int) -> None:
    text = training_script(lines)
    path = Path(tempfile.mkdtemp(prefix="lsp-fix-all-")) / "train.py"
    path.write_text(text)  # the CLI reads the file; the server gets the same text from didOpen
    print(f"script: {text.count(chr(10))} lines, {len(text.encode())} bytes; {runs} runs each")
    samples = asyncio.run(measure_fix_all(text, path, runs))
    cli = statistics.median(samples["torchlint fix (CLI)"])
    print(f"\n{'':<24}{'median s':>10}{'max s':>8}{'/CLI':>7}")
    for name, values in samples.items():
        print(
            f"{name:<24}{statistics.median(values):>10.2f}{max(values):>8.2f}{statistics.median(values) / cli:>7.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument(
        "--lines", type=int, default=None, help="script length (1000, or 5000 with --fix-all)"
    )
    parser.add_argument(
        "--fix-all",
        type=int,
        default=0,
        metavar="N",
        help="time N fix-all actions against N CLI fixes",
    )
    args = parser.parse_args()
    if args.fix_all:
        fix_all_main(args.lines or 5000, args.fix_all)
        return
    args.lines = args.lines or 1000

    base = training_script(args.lines)
    texts = [base] + [edited(base, i) for i in range(1, args.edits + 1)]
    print(f"script: {base.count(chr(10))} lines, {len(base.encode())} bytes; {args.edits} edits")
    # Never written: the server lints the editor's text. A fresh directory has no config.
    path = Path(tempfile.mkdtemp(prefix="lsp-latency-")) / "train.py"

    samples = asyncio.run(measure(texts, path))
    parse_p50, parse_p95 = percentiles(samples["libcst.parse_module"])
    print(f"\n{'':<26}{'p50 ms':>9}{'p95 ms':>9}{'p50/parse':>11}{'p95/parse':>11}")
    for name, values in samples.items():
        p50, p95 = percentiles(values)
        print(
            f"{name:<26}{p50 * 1000:>9.1f}{p95 * 1000:>9.1f}{p50 / parse_p50:>11.2f}{p95 / parse_p95:>11.2f}"
        )


if __name__ == "__main__":
    main()
