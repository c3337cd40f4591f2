"""Start-up cost of `torchlint --version` and of `check` on one clean file, against `python -c pass`
measured in the same run (best of N, so a busy machine inflates all three alike).

    python benchmarks/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best(command: list[str], runs: int, cwd: str) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


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
        print(f"{'python -c pass':<28} {base * 1000:7.1f} ms")
        for name, command in cases.items():
            took = best(command, runs, folder)
            verdict = "within" if took - base <= 0.15 else "OVER"
            print(f"{name:<28} {took * 1000:7.1f} ms  +{(took - base) * 1000:6.1f} ms  x{took / base:5.1f}  ({verdict} the 150 ms budget)")


if __name__ == "__main__":
    main()
