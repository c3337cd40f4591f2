"""Run deep-recursing work (libcst's parser and code generator) on a thread with a big stack.

A 2,000-deep nested expression overflows the 8 MiB main-thread stack inside libcst's native
parser, which kills the process with no chance to report. A dedicated thread with a large
stack and a matching recursion limit turns that into a normal result or a RecursionError.
The high limit holds only while that thread runs: everywhere else Python's own limit keeps
deep input (notebook JSON, TOML, CPython's parse) a RecursionError instead of a segfault.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

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

    # stack_size and the recursion limit are process-wide: the caller waits in join() meanwhile.
    with _lock:
        previous_stack = threading.stack_size(STACK_BYTES)
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, RECURSION_LIMIT))
        try:
            thread = threading.Thread(target=target, name="torchlint-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous_stack)
        thread.join()
        sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
