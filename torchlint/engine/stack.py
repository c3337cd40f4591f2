"""Run deep-recursing work (libcst's parser and code generator) on a thread with a big stack.

A 2,000-deep nested expression overflows the 8 MiB main-thread stack inside libcst's native
parser, which kills the process with no chance to report. A dedicated thread with a large
stack and a matching recursion limit turns that into a normal result or a RecursionError.
The high limit holds only while that thread works: everywhere else Python's own limit keeps
deep input (notebook JSON, TOML, CPython's parse) a RecursionError instead of a segfault.

The thread is started once per process and reused: a thread per file paid its start and the
page faults of a fresh stack on every file, a tenth of the analysis on a package.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024  # reserved address space; only touched pages cost memory
RECURSION_LIMIT = 60_000
_lock = threading.Lock()
_workers: list[ThreadPoolExecutor] = []  # the one worker of this process, once started


def _forget_worker() -> None:
    """A forked child inherits the executor but not its thread: it starts its own."""
    _workers.clear()


os.register_at_fork(after_in_child=_forget_worker)


def _worker() -> ThreadPoolExecutor:
    if not _workers:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchlint-deep")
        previous_stack = threading.stack_size(STACK_BYTES)
        try:
            pool.submit(int).result()  # its thread starts now, while the big stack size is set
        finally:
            threading.stack_size(previous_stack)
        _workers.append(pool)
    return _workers[0]


def on_big_stack(work: Callable[..., T], *args: object) -> T:
    # The recursion limit is process-wide: the caller waits for the result meanwhile.
    with _lock:
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, RECURSION_LIMIT))
        try:
            return _worker().submit(work, *args).result()
        finally:
            sys.setrecursionlimit(previous_limit)
