"""GPU training scripts and what they say about numeric precision: TF32, mixed precision, memory format.

The precision rules (TL112 TF32, TL113 autocast, TL114 channels_last) ask the same two
questions of a file: is it a CUDA training script, with its training loop, and what does the
entry point, with the project modules it imports, say about precision. A process-wide setting
made in a config module the script imports is made for the script too; a word that may settle
the question anywhere (a `--tf32` flag, a `use_amp` option, a framework that picks the
precision) settles it: unknown means silent.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.text import may_use_cuda, precision_mentions
from torchlint.analysis.training import Training

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


class Numerics:
    """File-level precision facts, via `ctx.fact(Numerics)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @property
    def own_mentions(self) -> frozenset[str]:
        """`text.precision_mentions` of the file alone: ask it before anything costlier."""
        return precision_mentions(self.ctx.source)

    @cached_property
    def mentions(self) -> frozenset[str]:
        """`text.precision_mentions` of the file and of the project modules it imports."""
        if self.ctx.project is None:
            return self.own_mentions
        return self.own_mentions | self.ctx.project.imported_precision(Path(self.ctx.path))

    @cached_property
    def training_step(self) -> cst.Call | None:
        """The first `backward()` (else optimizer step) run on every batch of a CUDA training
        script; None for a file that is not one: no training loop, a library module (no
        `__main__` block and no module-level training), a unit test, or no CUDA device."""
        if not may_use_cuda(self.ctx.source):
            return None
        training = self.ctx.fact(Training)
        if not training.trains or not training.is_script or training.is_test_file:
            return None
        loops = self.ctx.fact(LoopFacts)
        if not loops.uses_accelerator:
            return None
        steps = [call for call in training.step_calls if loops.per_batch_loop(call) is not None]
        backward = [call for call in steps if _method(call) in ("backward", "manual_backward")]
        chosen = backward or steps
        return chosen[0] if chosen else None


def _method(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None
