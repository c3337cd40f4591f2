"""`torchlint verify` leaves no process behind: not the runners, not the script's children,
not children that left its process group with setsid, and not when verify itself is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import torchlint_executable

SCRIPTS = Path(__file__).parent / "verify_scripts"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie is dead, waiting to be reaped


def _pids(folder: Path) -> list[int]:
    return [int(p.name.split("-")[1]) for p in folder.iterdir()] if folder.is_dir() else []


def _all_dead(pids: list[int], within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        time.sleep(0.1)
    return False


def _verify(folder: Path, *script_args: str, timeout: str | None = None) -> subprocess.Popen:
    limit = ["--timeout", timeout] if timeout else []
    command = [
        torchlint_executable(),
        "verify",
        "escape.py",
        "--against",
        "escape.py",
        "--device",
        "cpu",
        *limit,
        "--",
        str(folder),
        *script_args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        command, cwd=SCRIPTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _runner_of(verify: subprocess.Popen) -> list[int]:
    """The runner processes verify started (its direct children, the watchdog aside)."""
    children = Path(f"/proc/{verify.pid}/task/{verify.pid}/children").read_text().split()
    return [
        int(pid)
        for pid in children
        if "torchlint.verify.runner" in Path(f"/proc/{pid}/cmdline").read_text()
    ]


def test_children_that_escaped_with_setsid_are_reaped_after_each_run(tmp_path):
    folder = tmp_path / "pids"
    process = _verify(folder)
    out, err = process.communicate(timeout=300)
    assert "Traceback" not in err
    pids = _pids(folder)
    assert len(pids) == 4  # two children in each of the two runs
    assert _all_dead(pids, within=2), "a child of the script outlived verify"


def test_children_are_reaped_after_a_timeout(tmp_path):
    folder = tmp_path / "pids"
    process = _verify(folder, "forever", timeout="20")
    out, err = process.communicate(timeout=300)
    assert "timed out" in out
    pids = _pids(folder)
    assert pids and _all_dead(pids, within=2)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP])
def test_killing_verify_kills_its_runner_and_every_child(tmp_path, signum):
    folder = tmp_path / "pids"
    process = _verify(folder, "forever")
    deadline = time.monotonic() + 120
    while len(_pids(folder)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_pids(folder)) == 2, "the script never started its children"
    runners = _runner_of(process)
    assert runners
    process.send_signal(signum)
    process.communicate(timeout=60)
    assert _all_dead(runners + _pids(folder)), "a runner or a child outlived the killed verify"
