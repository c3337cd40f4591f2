"""`verify` says what it is running while it runs: a live status line on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from conftest import torchlint_executable

SCRIPTS = Path(__file__).parent / "verify_scripts"


def test_a_terminal_sees_which_run_is_going_and_for_how_long():
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [
            torchlint_executable(),
            "verify",
            "numpy_input.py",
            "--unsafe-fixes",
            "--device",
            "cpu",
            "--steps",
            "2",
            "--repeat",
            "2",
        ],
        cwd=SCRIPTS,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the command closed the terminal's other end
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = process.communicate(timeout=240)
    os.close(controller)
    shown = seen.decode()
    assert process.returncode in (0, 1), shown
    assert "numpy_input.py: original, run 1 of 2, " in shown and "verify  [" in shown  # click's bar
    assert "numpy_input.py: fixed, run 2 of 2, " in shown
    assert "\r\x1b[K" in shown  # the status line is rewritten in place
    assert "[1/1] numpy_input.py: equivalent (" in shown
    assert b"\x1b" not in stdout and b"verdict:" in stdout  # the report itself stays clean
