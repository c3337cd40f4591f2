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

from torchlint.analysis.model import BindingKind, SemanticModel
from torchlint.analysis.names import is_optimizer_name, name_tokens
from torchlint.analysis.nodes import is_main_guard
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_train

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_NOT_OPTIMIZERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.")


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

    def stepped_optimizer(self, call: cst.Call) -> str | None:
        """`optimizer` for `optimizer.step()` and `scaler.step(optimizer)`: which optimizer a call steps."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "step":
            return None
        owner = dotted(func.value)
        if owner is None:
            return None
        if "scaler" in name_tokens(owner.rsplit(".", 1)[-1]):
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            return dotted(positional[0]) if positional else None
        return owner if self.is_optimizer(func.value) else None

    def is_optimizer(self, node: cst.BaseExpression) -> bool:
        """A name or attribute bound to a torch optimizer, or named like one (`optimizer`, `self.opt`)."""
        words = set(name_tokens((dotted(node) or "").rsplit(".", 1)[-1]))
        if "sched" in words or "scheduler" in words:
            return False
        if is_optimizer_name(dotted(node) or ""):
            return True
        for binding in self.scopes.all_bindings(node):
            if binding.kind is BindingKind.ASSIGN and isinstance(binding.value, cst.Call):
                if optimizer_class(self.ctx.symbols.qualname(binding.value.func)):
                    return True
        return False

    @cached_property
    def is_script(self) -> bool:
        """The file is a training entry point: an `if __name__ == "__main__":` block that trains
        (a step call in it, or a call of a function of the file that trains), or module-level
        training. A library module's `__main__` demo that only runs a forward is no script."""
        guards = [s for s in self.ctx.module.body if is_main_guard(s)]
        if any(self._trains_under(guard) for guard in guards):
            return True
        return any(
            self.scopes.function_of(call) is None and not self._in_class(call)
            for call in self.step_calls
        )

    def _trains_under(self, guard: cst.CSTNode) -> bool:
        for call in self.scopes.calls:
            if not self.scopes.is_ancestor(guard, call):
                continue
            if call in self._step_call_set or self._training_functions & set(
                self.scopes.callees.get(call, ())
            ):
                return True
            if not self.scopes.callees.get(call) and isinstance(call.func, cst.Name):
                if self.ctx.symbols.qualname(call.func) is not None:
                    return True  # a function imported from elsewhere may train: unknown counts
        return False

    @cached_property
    def _step_call_set(self) -> set[cst.Call]:
        return set(self.step_calls)

    @cached_property
    def _training_functions(self) -> set[cst.FunctionDef]:
        """Functions of the file that step, directly or through the functions they call."""
        found = {f for c in self.step_calls if (f := self.scopes.function_of(c)) is not None}
        todo = list(found)
        while todo:
            for call in self.scopes.callers.get(todo.pop(), ()):
                caller = self.scopes.function_of(call)
                if caller is not None and caller not in found:
                    found.add(caller)
                    todo.append(caller)
        return found

    def _in_class(self, node: cst.CSTNode) -> bool:
        return any(isinstance(parent, cst.ClassDef) for parent in self.scopes.ancestors(node))
