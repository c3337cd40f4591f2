"""Whether a file trains, whether it is a script or a test, and which calls build torch optimizers.

Rules about global training settings (cuDNN autotuning, fused optimizers, debug tools left on)
need file-level answers rather than per-loop ones: does this file run backward passes or
optimizer steps at all, is it the entry point that owns process-wide settings, or is it a unit
test that calls debugging tools on purpose.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst
import libcst.matchers as m

from torchlint.analysis.grad import name_tokens
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_train

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext

_OPTIMIZER_WORDS = frozenset({"optimizer", "optimizers", "optim", "opt", "optimiser", "scaler"})
_NOT_OPTIMIZERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.")
_MAIN_GUARD = m.If(
    test=m.Comparison(
        left=m.Name("__name__"),
        comparisons=[m.ComparisonTarget(operator=m.Equal(), comparator=m.SimpleString())],
    )
)


def is_main_guard(statement: cst.CSTNode) -> bool:
    """`if __name__ == "__main__":`."""
    return m.matches(statement, _MAIN_GUARD)


def optimizer_class(qualname: str | None) -> str | None:
    """`Adam` for `torch.optim.Adam` or `torch.optim.adam.Adam`; None for schedulers and non-optimizers."""
    if (
        not qualname
        or not qualname.startswith("torch.optim.")
        or qualname.startswith(_NOT_OPTIMIZERS)
    ):
        return None
    last = qualname.rsplit(".", 1)[-1]
    return last if last[:1].isupper() and last != "Optimizer" else None


class Training:
    """File-level training facts, via `ctx.fact(Training)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @cached_property
    def scopes(self) -> SemanticModel:
        return self.ctx.fact(SemanticModel)

    @cached_property
    def step_calls(self) -> list[cst.Call]:
        """`backward()` calls and optimizer `step()` calls: what makes code training code."""
        if not may_train(self.ctx.source):
            return []  # most files show in their text that they have none, sparing the scope analysis
        return [call for call in self.scopes.calls if self._is_step(call)]

    @property
    def trains(self) -> bool:
        return bool(self.step_calls)

    def _is_step(self, call: cst.Call) -> bool:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value in ("backward", "manual_backward"):
            return True
        return func.attr.value == "step" and self.is_optimizer(func.value)

    def is_optimizer(self, node: cst.BaseExpression) -> bool:
        """A name or attribute bound to a torch optimizer, or named like one (`optimizer`, `self.opt`)."""
        words = set(name_tokens((dotted(node) or "").rsplit(".", 1)[-1]))
        if "sched" in words or "scheduler" in words:
            return False
        if words & _OPTIMIZER_WORDS:
            return True
        for binding in self.scopes.all_bindings(node):
            if binding.kind == "assign" and isinstance(binding.value, cst.Call):
                if optimizer_class(self.ctx.symbols.qualname(binding.value.func)):
                    return True
        return False

    @cached_property
    def is_script(self) -> bool:
        """The file is an entry point: an `if __name__ == "__main__":` block or module-level training."""
        if any(is_main_guard(statement) for statement in self.ctx.module.body):
            return True
        return any(
            self.scopes.function_of(call) is None and not self._in_class(call)
            for call in self.step_calls
        )

    def _in_class(self, node: cst.CSTNode) -> bool:
        return any(isinstance(parent, cst.ClassDef) for parent in self.scopes.ancestors(node))
