"""What `verify` is running and for how long, on stderr, while the runs take minutes.

On a terminal, click's progress bar counts the scripts or fixtures done and names what runs now,
refreshed every second ("TL003 tensor-from-numpy: fixed, run 2 of 3, 4 s"); each finished item
also leaves one line. Elsewhere (a CI log) only those lines are printed, without control
characters. The report itself still goes to stdout.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

import click


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.index = 0
        self.item = ""
        self.step = ""
        self.item_started = time.monotonic()
        self._lock = threading.RLock()  # the ticker thread and the runs draw the same bar
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: Any = None

    def __enter__(self) -> Progress:
        if self.live:
            self._bar = click.progressbar(
                length=self.total,
                label="verify",
                file=self.stream,
                show_eta=False,
                item_show_func=self._status,
            )
            self._bar.__enter__()
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bar is not None:
            with self._lock:
                self._bar.__exit__(*exc)

    def begin(self, item: str) -> None:
        """A new item (a fixture, or the one script) starts."""
        with self._lock:
            self.index += 1
            self.item, self.step, self.item_started = item, "", time.monotonic()
            self._redraw()

    def run(self, label: str, attempt: int, repeat: int) -> None:
        """One run of one version starts."""
        with self._lock:
            self.step = f"{label}, run {attempt} of {repeat}"
            self._redraw()

    def end(self, outcome: str) -> None:
        with self._lock:
            seconds = time.monotonic() - self.item_started
            line = f"[{self.index}/{self.total}] {self.item}: {outcome} ({seconds:.0f} s)"
            if self._bar is None:
                click.echo(line, file=self.stream)
                return
            click.echo("\r\x1b[K" + line, file=self.stream)  # above the bar, which redraws below
            self._bar.update(1, self.item)

    def _status(self, item: str | None) -> str | None:
        if not item:
            return None
        step = f": {self.step}" if self.step else ""
        return f"{item}{step}, {time.monotonic() - self.item_started:.0f} s"

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._redraw()

    def _redraw(self) -> None:
        """Draw the bar again with the current item and elapsed time (`update` draws only on a step)."""
        if self._bar is not None:
            self._bar.current_item = self.item
            self._bar.render_progress()
