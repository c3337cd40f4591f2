"""Starting runner processes: one per run, in its own process group, never left behind.

Each run gets the same interpreter, arguments, working directory, environment and seed.
A run past its timeout gets SIGTERM (the runner then prints every thread's stack, which
shows where it hung) and, a moment later, SIGKILL for its whole process group; the group
and every process carrying this session's tag (`reaper`) are killed after every run as well,
so DataLoader workers or subprocesses the script started, even in a session of their own,
cannot outlive it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint.verify.reaper import TAG, new_tag, reap

SESSION = new_tag()  # carried by every process of this verify's runs, whatever session they join

SEED = 0
GRACE_S = 3.0  # between SIGTERM and SIGKILL on a timeout
POLL_S = 0.05
TAIL_LINES = 25
OK_STATUSES = ("stopped", "completed")


@dataclass(frozen=True)
class Version:
    """One side of a comparison: the file it runs as, and the text it runs."""

    label: str  # "original", "fixed", "before", "after"...
    path: Path  # absolute; becomes __file__, sys.argv[0]'s file and sys.path[0]'s directory
    shown: str  # the path as the user named it
    text: str


@dataclass
class RunOutcome:
    label: str
    status: str  # a runner status, or "timeout" / "no-results"
    results: dict[str, Any] = field(default_factory=dict)
    returncode: int | None = None
    stderr_tail: str = ""
    wall_s: float = 0.0
    timeout_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES and self.results.get("steps", 0) > 0

    @property
    def problem(self) -> str | None:
        """Why this run cannot be compared, in words; None when it can."""
        if self.ok:
            return None
        error = self.results.get("error")
        if self.status == "timeout":
            started = (
                ""
                if self.results.get("environment")
                else ", before the script started (still importing torch)"
            )
            return f"timed out after {self.timeout_s:g} s{started}"
        if self.status == "crashed":
            return f"crashed: {error}" if error else "crashed"
        if self.status == "exited":
            return f"exited with status {self.results.get('exit_code')}"
        if self.status in ("no-torch", "no-cuda"):
            return error
        if self.status == "no-results":
            return f"died without results (exit status {self.returncode})"
        return "never called optimizer.step(): there is nothing to compare"


@dataclass(frozen=True)
class RunConfig:
    args: tuple[str, ...]
    steps: int | None
    device: str
    timeout: float | None


def environment(device: str) -> dict[str, str]:
    """The one environment every run gets."""
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = str(SEED)
    env["PYTHONUNBUFFERED"] = "1"
    env[TAG] = SESSION
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # the script's own device choice then falls to the CPU
    return env


def run_version(version: Version, config: RunConfig, workdir: Path, index: int) -> RunOutcome:
    """Run one version once in a fresh process and collect what its runner wrote."""
    stem = workdir / f"{index:02d}-{version.label}"
    source, spec, results = (
        stem.with_suffix(".py"),
        stem.with_suffix(".json"),
        stem.with_suffix(".results.json"),
    )
    source.write_text(version.text, encoding="utf-8")
    spec.write_text(
        json.dumps(
            {
                "script": str(version.path),
                "argv0": version.shown,
                "source": str(source),
                "args": list(config.args),
                "steps": config.steps,
                "seed": SEED,
                "results": str(results),
                "device": config.device,
            }
        ),
        encoding="utf-8",
    )
    stdout, stderr = stem.with_suffix(".out"), stem.with_suffix(".err")
    command = [sys.executable, "-m", "torchlint.verify.runner", str(spec)]
    with stdout.open("wb") as out, stderr.open("wb") as err:
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            env=environment(config.device),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out, returncode = supervise(process, config.timeout)
        wall = time.monotonic() - started
    status = "timeout" if timed_out else "no-results"
    outcome = RunOutcome(
        version.label, status, returncode=returncode, wall_s=wall, timeout_s=config.timeout
    )
    written = read_results(results)
    if timed_out:  # only the environment, written before the script started, is of use
        outcome.results = {"environment": written["environment"]} if written else {}
    elif written:
        outcome.results = written
        if written["status"] != "running":
            outcome.status = written["status"]
    if not outcome.ok:
        outcome.stderr_tail = tail(stderr)
    return outcome


def read_results(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # never written, or cut short by a kill
        return None


def supervise(process: subprocess.Popen, timeout: float | None) -> tuple[bool, int]:
    """Wait for the run, kill its group on a timeout or an interrupt; (timed out, exit status)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    try:
        while not exited(process):
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                terminate(process)
                break
            time.sleep(POLL_S)
    finally:
        kill_group(process.pid)  # the leader is still unreaped here, so its group id is not reused
        reap(SESSION)  # children that left the group with setsid
        returncode = process.wait()
    return timed_out, returncode


def exited(process: subprocess.Popen) -> bool:
    """True once the leader has exited, without reaping it (its pid stays reserved)."""
    if not hasattr(os, "waitid"):
        return process.poll() is not None
    try:
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def terminate(process: subprocess.Popen) -> None:
    """SIGTERM to the group, so the runner can print its stacks; then the caller kills it."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + GRACE_S
    while not exited(process) and time.monotonic() < deadline:
        time.sleep(POLL_S)


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tail(path: Path) -> str:
    """The last lines of a run's stderr, less the runner's own frames (of a timeout's stack dump)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    runner = str(Path(__file__).with_name("runner.py"))
    kept = [line for line in lines if runner not in line and "<frozen runpy>" not in line]
    return "\n".join(kept[-TAIL_LINES:])
