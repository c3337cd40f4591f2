"""Exact text tests for the prefilters: what the source text of a file must contain, as written,
for a syntax pattern to occur in it. A file that fails a rule's test is not parsed for that rule.
"""

from __future__ import annotations

import re
from functools import lru_cache

# What may stand between two tokens of one expression: whitespace, a backslash joining lines,
# a comment ending its line (inside brackets). Each alternative starts with its own character,
# so a failed search never backtracks into exponential splits.
GAP = r"(?:[\s\\]|#[^\r\n]*[\r\n])*"

# Text that every `.backward`/`.manual_backward`/`.step` call has, also split over lines.
STEP_CALL_TEXT = re.compile(r"\." + GAP + r"(?:manual_)?(?:backward|step)\b")


@lru_cache(maxsize=1)
def may_train(text: str) -> bool:
    """Whether the text may call `backward()` or an optimizer's `step()`: what training code does.
    Cached for the file's several rules that ask (a str keeps its hash, so a hit costs nothing)."""
    return STEP_CALL_TEXT.search(text) is not None


_DL_TEXT = re.compile(r"dl\b")
_ITER_TEXT = re.compile(r"(?:train|val|valid|validation|test|eval|data|batch)_?iter(?:ator)?\b")


@lru_cache(maxsize=1)
def may_have_batch_loops(text: str) -> bool:
    """Whether the text has what every per-batch loop needs somewhere in its file: a step call
    or a loader-like name (`loops._LOADER_NAME`, `...DataLoader(...)`). Substring tests go first:
    one case-insensitive regex over the whole text costs more than the scope analysis it spares."""
    if may_train(text):
        return True
    low = text.lower()
    if "loader" in low or "batches" in low:
        return True
    return bool(("dl" in low and _DL_TEXT.search(low)) or ("iter" in low and _ITER_TEXT.search(low)))
