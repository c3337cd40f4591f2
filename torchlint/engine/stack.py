"""Run deep-recursing work (libcst's parser and code generator) on a thread with a big stack.

A 2,000-deep nested expression overflows the 8 MiB main-thread stack inside libcst's native
parser, which kills the process with no chance to report. A dedicated thread with a large
stack and a matching recursion limit turns that into a normal result or a RecursionError.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024  # reserved address space; only touched pages cost memory
RECURSION_LIMIT = 60_000
_lock = threading.Lock()


def on_big_stack(work: Callable[..., T], *args: object) -> T:
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = work(*args)
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = error

    with _lock:  # stack_size is process-wide: set it only around our own thread's creation
        previous = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="torchlint-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)
