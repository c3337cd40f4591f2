"""What `verify` is running and for how long, on stderr, while the runs take minutes.

On a terminal one status line is rewritten in place every second ("[2/15] TL003 tensor-from-numpy:
fixed, run 2 of 3, 4 s"); elsewhere (a CI log) each finished item gets one plain line, so the log
moves without control characters. The report itself still goes to stdout.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.index = 0
        self.item = ""
        self.step = ""
        self.started = self.item_started = time.monotonic()
        self._lock = threading.RLock()  # the ticker thread and the runs write the same line
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._write("\r\x1b[K")

    def begin(self, item: str) -> None:
        """A new item (a fixture, or the one script) starts."""
        with self._lock:
            self.index += 1
            self.item, self.step, self.item_started = item, "", time.monotonic()
        self._draw()

    def run(self, label: str, attempt: int, repeat: int) -> None:
        """One run of one version starts."""
        with self._lock:
            self.step = f"{label}, run {attempt} of {repeat}"
        self._draw()

    def end(self, outcome: str) -> None:
        with self._lock:
            seconds = time.monotonic() - self.item_started
            line = f"[{self.index}/{self.total}] {self.item}: {outcome} ({seconds:.0f} s)"
            self._write(("\r\x1b[K" if self.live else "") + line + "\n")

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._draw()

    def _draw(self) -> None:
        if not self.live:
            return
        with self._lock:
            seconds = time.monotonic() - self.item_started
            step = f": {self.step}" if self.step else ""
            line = f"[{self.index}/{self.total}] {self.item}{step}, {seconds:.0f} s"
            self._write("\r\x1b[K" + line)

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text)
            self.stream.flush()
