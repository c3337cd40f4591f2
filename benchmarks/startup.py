"""Start-up cost of `torchlint --version` and of `check` on one clean file, against `python -c pass`
measured in the same run: the best of N wall times, and the best of N CPU times (user + system of
the child), which a busy machine inflates far less than wall time.

    python benchmarks/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best(command: list[str], runs: int, cwd: str) -> tuple[float, float]:
    """Best wall time and best CPU time of `runs` runs, in seconds."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu, start = _cpu(), time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    exe = shutil.which("torchlint") or str(Path(sys.executable).parent / "torchlint")
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "clean.py").write_text("import torch\n\nx = torch.ones(3)\n")
        base = best([sys.executable, "-c", "pass"], runs, folder)
        cases = {
            "torchlint --version": [exe, "--version"],
            "check clean.py (cached)": [exe, "check", "--isolated", "clean.py"],
            "check clean.py --no-cache": [exe, "check", "--isolated", "--no-cache", "clean.py"],
        }
        print(f"{'':<28} {'wall':>9} {'over python':>12} {'cpu':>9} {'over python':>12}")
        print(f"{'python -c pass':<28} {base[0] * 1000:6.0f} ms {'':>12} {base[1] * 1000:6.0f} ms")
        for name, command in cases.items():
            wall, cpu = best(command, runs, folder)
            verdict = "within" if wall - base[0] <= 0.15 else "OVER"
            print(
                f"{name:<28} {wall * 1000:6.0f} ms {(wall - base[0]) * 1000:+9.0f} ms {cpu * 1000:6.0f} ms "
                f"{(cpu - base[1]) * 1000:+9.0f} ms  (wall: {verdict} the 150 ms budget)"
            )


if __name__ == "__main__":
    main()
