"""`torchlint verify` speaks plainly: "needs a GPU" whenever a GPU-only fix is measured on a CPU,
even mixed with other fixes, and the `torchlint[verify]` extra when torch is missing.

Both through the installed command: one real verify run on the CPU, and one in a real Python
environment that has torchlint and its dependencies but no torch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import torchlint_executable

from torchlint.verify.report import render

SCRIPT = Path(__file__).parent / "verify_scripts" / "mixed_gpu.py"
# What makes a Python environment have torch: leave these out and it has none.
TORCH_ENTRIES = ("torch", "functorch", "torchgen")


def test_a_gpu_only_fix_mixed_with_others_is_marked_and_it_runs_on_cpu(tmp_path):
    """TL003's fix counts on a CPU; TL103's saves a host-to-GPU copy the CPU run cannot show."""
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)
    result = subprocess.run(
        [torchlint_executable(), "verify", "--isolated", "--unsafe-fixes", "--device", "cpu",
         "--select", "TL003,TL103", "--output-format", "json", SCRIPT.name],
        cwd=tmp_path, env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert sorted(f["code"] for f in report["fixes"]) == ["TL003", "TL103"]
    assert report["speed_note"] == "needs a GPU"
    assert report["gpu_only_fixes"] == ["TL103"]
    assert report["speedup"] is not None  # measured, and shown beside the note
    for output_format in ("text", "markdown"):
        shown = render(report, output_format)
        speed = next(line for line in shown.splitlines() if "median step time" in line)
        assert "x faster" in speed or "x slower" in speed, speed
        assert speed.rstrip(" |").endswith("TL103 needs a GPU"), speed
        assert "needs a GPU: TL103 saves work that exists only on a GPU" in shown


def test_without_torch_verify_names_the_verify_extra(tmp_path):
    python = _python_without_torch(tmp_path / "env")
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'torch'" in probe.stderr
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)
    result = subprocess.run(
        [python, "-m", "torchlint", "verify", "--isolated", "--unsafe-fixes", "--device", "cpu",
         SCRIPT.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    error = result.stderr.strip()
    assert "\n" not in error, error
    assert "pip install 'torchlint[verify]'" in error and "torch is not installed" in error


def _python_without_torch(env: Path) -> str:
    """A virtual environment with every package of this one linked in, except torch's."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120
    )
    python = str(env / "bin" / "python")
    target = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.split("-")[0]
        if name not in TORCH_ENTRIES:
            (target / entry.name).symlink_to(entry)
    return python
