"""Every process a verified script starts is ended: at the end of each run, and when
`torchlint verify` itself dies, even by SIGKILL.

A process group is not enough: a script's child may leave it with `setsid` or
`start_new_session`. What every descendant keeps is its environment, so each run's processes
carry a tag variable, and reaping means killing every process whose environment holds it.
A watchdog in its own session holds one end of a pipe whose other end only `verify` holds;
when `verify` ends in any way, the kernel closes that end and the watchdog reaps the session's
tag. On Linux the runner also asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

TAG = "TORCHLINT_VERIFY_SESSION"
_PR_SET_PDEATHSIG = 1
_ROUNDS = 20  # a process may fork while its siblings are killed: look again until none is left


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged(tag: str) -> list[int]:
    """Pids of the processes whose environment carries `tag` (none of this process's own)."""
    marker = f"{TAG}={tag}".encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes() + b"\0"
        except OSError:  # gone, or not ours to read
            continue
        if marker in environ:
            found.append(int(entry.name))
    return found


def reap(tag: str) -> int:
    """SIGKILL every process tagged `tag`; how many were killed."""
    killed = 0
    for _ in range(_ROUNDS):
        pids = tagged(tag)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                continue
    return killed


def start_watchdog(tag: str) -> subprocess.Popen | None:
    """The watchdog for this session; it reaps `tag` once this process's pipe end closes."""
    if not Path("/proc").is_dir():
        return None
    env = {k: v for k, v in os.environ.items() if k != TAG}
    return subprocess.Popen(
        [sys.executable, "-m", "torchlint.verify.reaper", tag],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        close_fds=True,
    )


def stop_watchdog(watchdog: subprocess.Popen | None) -> None:
    """Close the pipe (the watchdog reaps and exits) and wait for it."""
    if watchdog is None:
        return
    if watchdog.stdin is not None:
        watchdog.stdin.close()
    try:
        watchdog.wait(timeout=10)
    except subprocess.TimeoutExpired:
        watchdog.kill()


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies; elsewhere the watchdog covers it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def _watch(tag: str) -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        reap(tag)


if __name__ == "__main__":
    _watch(sys.argv[1])
