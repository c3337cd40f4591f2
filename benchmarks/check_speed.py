"""`torchlint check` over the installed torch package against libcst's bare parse, TorchFix,
all cores, and a warm cache, timed in one run. Prints ratios.

    python benchmarks/check_speed.py [--subset DIR_UNDER_TORCH | --training-slice] [--preview] [--no-torchfix]

`--training-slice` times the folders of torch that hold training code (249 files; 89 pass the
prefilter, 91 with `--preview`, with 65 % of the lines: training code, so it shows what the
analyses cost where whole-torch figures hide it behind prefiltered files). `--preview` runs the
preview rules too. The parse and the single-process check alternate `--repeat` times (3 by
default); the best of each counts, and every run's ratio is printed beside it. The figures of
2026-11-26, wall clock and instructions, are in the README's Speed section.

TorchFix needs libcst<1.6, so it is installed in its own virtualenv under
benchmarks/.torchfix-venv on first use (pip install torchfix==0.7.0).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import count_lines, parse_seconds, python_files, timed, torch_source, torchlint_command

from torchlint.config import Settings

TORCHFIX_VENV = Path(__file__).parent / ".torchfix-venv"
TRAINING_SLICE = ("nn", "optim", "utils/data", "amp", "cuda", "autograd")


def torchfix() -> list[str]:
    executable = TORCHFIX_VENV / "bin" / "torchfix"
    if not executable.exists():
        subprocess.run([sys.executable, "-m", "venv", str(TORCHFIX_VENV)], check=True)
        subprocess.run(
            [str(TORCHFIX_VENV / "bin" / "pip"), "install", "-q", "torchfix==0.7.0"], check=True
        )
    return [str(executable)]


def prefiltered(files: list[Path], preview: bool) -> list[Path]:
    """The files some enabled rule's prefilter lets through: those `check` parses."""
    rules = Settings(preview=preview).enabled_rules()
    texts = {f: f.read_bytes().decode("utf-8", "replace") for f in files}
    return [f for f, text in texts.items() if any(rule.may_match(text) for rule in rules)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--subset", help="only this folder of the torch package, e.g. nn")
    parser.add_argument(
        "--training-slice", action="store_true", help=f"only {', '.join(TRAINING_SLICE)}"
    )
    parser.add_argument(
        "--preview", action="store_true", help="check with the preview rules on (`check --preview`)"
    )
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="alternate the parse and the single-process check N times; the best of each counts",
    )
    args = parser.parse_args()

    # A private copy, so the cache (written at the project root) stays out of site-packages.
    work = Path(tempfile.mkdtemp(prefix="torchlint-bench-"))
    tree = work / "torch"
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyi", "*.h")
    if args.training_slice:
        for folder in TRAINING_SLICE:
            shutil.copytree(torch_source() / folder, tree / folder, ignore=ignore)
    else:
        source = torch_source() / args.subset if args.subset else torch_source()
        shutil.copytree(source, tree, ignore=ignore)
    files = python_files(tree)
    cores = os.cpu_count() or 1
    print(f"{len(files)} files, {count_lines(files):,} lines, {cores} cores")

    command = torchlint_command() + ["check", "--isolated", "--exit-zero", "-q", "--statistics"]
    command += ["--preview"] if args.preview else []
    # Alternated, so a busy spell of the machine slows both sides; the best of each is the
    # least disturbed run, as timeit takes it.
    parses, checks = [], []
    for _ in range(max(1, args.repeat)):
        parses.append(parse_seconds(files))
        checks.append(timed(command + ["--no-cache", "--jobs", "1", str(tree)], cwd=work)[0])
    per_file = min(parses, key=lambda run: sum(run.values()))
    parse = sum(per_file.values())
    runs = f"best of {len(parses)}"
    print(f"libcst bare parse, 1 process ({runs}): {parse:8.2f} s   1.00x")
    parsed = prefiltered(files, args.preview)
    parsed_parse = sum(per_file[f] for f in parsed)
    print(
        f"prefilter: {len(parsed)} files parsed ({100 * count_lines(parsed) / count_lines(files):.0f}% of the lines,"
        f" {100 * parsed_parse / parse:.0f}% of the parse time)"
    )
    cold1 = min(checks)
    rss1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far
    print(
        f"torchlint check, cold, 1 process ({runs}): {cold1:8.2f} s   {cold1 / parse:.2f}x parse"
        f" (every run: {', '.join(f'{c / sum(p.values()):.2f}x' for p, c in zip(parses, checks))})"
    )
    print(f"  against the parse of the files it parses:           {cold1 / parsed_parse:.2f}x")
    coldn, _ = timed(command + ["--no-cache", "--jobs", str(cores), str(tree)], cwd=work)
    print(
        f"torchlint check, cold, {cores} processes:    {coldn:8.1f} s   {cold1 / coldn:.2f}x faster than 1 process"
    )
    timed(command + [str(tree)], cwd=work)  # fills the cache
    warm, _ = timed(command + [str(tree)], cwd=work)
    print(
        f"torchlint check, warm cache:          {warm:8.1f} s   {100 * warm / coldn:.1f}% of cold ({cores} processes)"
    )
    print(f"peak RSS of a single-process run:     {rss1 / 1024:8.0f} MiB")
    if not args.no_torchfix:
        tf, _ = timed(torchfix() + ["--jobs", str(cores), str(tree)], cwd=work)
        print(
            f"TorchFix 0.7.0, {cores} processes:        {tf:8.1f} s   torchlint is {tf / coldn:.1f}x faster"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
