"""Whole-project analysis of one folder against libcst's bare parse of its files, in one run.

    python benchmarks/project_speed.py FOLDER [--repeat N]

Runs `torchlint check --isolated --select ALL -j1 --no-cache FOLDER` (every rule, the project
index reading the other modules as a run over the whole repository does) and prints, for each
repetition, its time as a ratio to the bare parse of the folder's Python files timed just before
(the bar: at most 1.5x), and its peak memory against the 1 GB bar. Wall time is what the bar
means; CPU time (user + system of the command, against the parse's own CPU time) is printed
beside it because on a loaded machine it moves far less between runs. On cszn/KAIR, 2026-11-26:
2.23x the parse in instructions before the speed work of that day, 1.93x after (README, Speed).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import time
from pathlib import Path

import libcst as cst
from _common import count_lines, python_files, torchlint_command

MEMORY_BAR = 1024**3  # bytes
RATIO_BAR = 1.5


def parse_times(files: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of libcst's parse of every file, in this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    for path in files:
        try:
            cst.parse_module(path.read_bytes().decode("utf-8"))
        except Exception:  # noqa: BLE001 - unparsable files cost what they cost
            pass
    return time.perf_counter() - wall, time.process_time() - cpu


def check_times(folder: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of the whole-project check, and its peak RSS in bytes."""
    command = torchlint_command() + [
        "check",
        "--isolated",
        "--select",
        "ALL",
        "-j1",
        "--no-cache",
        "--exit-zero",
        "-q",
        str(folder),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss * 1024  # ru_maxrss is KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeat", type=int, default=1, help="alternate parse and check N times")
    args = parser.parse_args()
    files = python_files(args.folder)
    print(f"{args.folder}: {len(files)} files, {count_lines(files):,} lines")
    for _ in range(args.repeat):
        parse_wall, parse_cpu = parse_times(files)
        wall, cpu, rss = check_times(args.folder)
        print(
            f"parse {parse_wall:6.2f} s, check {wall:6.2f} s: {wall / parse_wall:.2f}x the parse"
            f" (bar {RATIO_BAR}x; CPU {cpu:.2f} s against {parse_cpu:.2f} s: {cpu / parse_cpu:.2f}x)"
            f" | peak RSS {rss / 2**20:.0f} MiB, {100 * rss / MEMORY_BAR:.0f}% of the 1 GB bar"
        )


if __name__ == "__main__":
    main()
