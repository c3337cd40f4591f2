"""Shared helpers for the benchmark scripts: file sets, timing of commands, ratios."""

from __future__ import annotations

import compileall
import resource
import subprocess
import sys
import time
from pathlib import Path

import libcst as cst


def torch_source() -> Path:
    """The installed torch package's source tree (importing only its location)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        sys.exit("benchmarks need torch installed: pip install torch==2.13.0")
    return Path(spec.origin).parent


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def count_lines(files: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


def parse_seconds(files: list[Path]) -> dict[Path, float]:
    """libcst's parse of each file, single process: the floor of any libcst linter."""
    seconds = {}
    for path in files:
        start = time.perf_counter()
        try:
            cst.parse_module(path.read_bytes().decode("utf-8"))
        except Exception:  # noqa: BLE001 - unparsable files cost what they cost
            pass
        seconds[path] = time.perf_counter() - start
    return seconds


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Wall seconds of a command and the peak RSS (KiB) of the largest child so far."""
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - start
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def torchlint_command() -> list[str]:
    """The installed command, its modules byte-compiled first as an installed package's are
    (an editable install under PYTHONDONTWRITEBYTECODE would compile every module on each run,
    which the libcst it is compared with, compiled in site-packages, does not pay)."""
    import importlib.util

    for package in ("torchlint", "torchlint.rules"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=1)
    return [str(Path(sys.executable).parent / "torchlint")]
