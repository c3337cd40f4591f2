"""Which functions of a file a training framework runs for it, how often, and in which grad mode.

The table in `frameworks.py` says what each framework does; this fact finds the file's code it
applies to: methods of classes derived (directly or through the file's other classes) from a
framework's classes, and functions handed to ignite (`Engine(step)`, `@engine.on(Events...)`,
`engine.add_event_handler(Events..., fn)`). LoopFacts treats a per-step entry as the body of a
per-batch loop, so what it calls through the call graph is per step too; Evaluation reads
the grad mode of the evaluation hooks and the epoch handlers that repeat.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.frameworks import (
    CALLBACK_ENGINES,
    CALLBACK_REGISTRARS,
    EVENT_PERIODS,
    Framework,
    framework_of,
    may_drive_steps,
)
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import names_after

if TYPE_CHECKING:
    from pathlib import Path

    from torchlint.analysis.context import FileContext
    from torchlint.analysis.project_index import ProjectIndex

_MAX_BASES = 8  # classes of the file followed to reach a framework's class
# A module-level function that defines a function: a factory whose closure may be returned.
# (A line's rest `[^\n]*+` is possessive: only all of it can precede its newline.)
_FACTORY = re.compile(r"^def\s+(\w+)[^\n]*+\n(?:[ \t][^\n]*+\n|\n)*?[ \t]+def\s", re.MULTILINE)


def called_in_loops_elsewhere(source: str, project: ProjectIndex, file: Path) -> bool:
    """`EntryPoints.may_run_elsewhere` from the text of `file` alone: the engine asks it before
    parsing (`Rule.may_match_project`), the fact after. A class whose instances are called
    (`__call__`, an nn.Module's `forward`) is called through whatever name holds one built
    anywhere: its callers are the files that build it, as a factory's are."""
    defined = names_after("def", source)
    names = {n for n in defined if not n.startswith("__")}
    factories = set(_FACTORY.findall(source))
    if "forward" in defined or "__call__" in defined:
        factories.update(names_after("class", source))
    return bool(names or factories) and project.may_call_in_loops(file, names, factories)


class EntryPoints:
    """The file's functions a framework runs, via `ctx.fact(EntryPoints)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @cached_property
    def model(self) -> SemanticModel:
        return self.ctx.fact(SemanticModel)

    # -- methods of framework subclasses -------------------------------------------------
    def framework(self, owner: cst.ClassDef, depth: int = 0) -> Framework | None:
        """The framework whose class `owner` derives from, directly, through the file's classes,
        or through classes of the project's other modules (`class Net(Base)` where
        `models/base.py` has `class Base(pl.LightningModule)`)."""
        if depth > _MAX_BASES:
            return None
        for base in owner.bases:
            found = framework_of(self.ctx.symbols.qualname(base.value) or "")
            if found is not None:
                return found
            name = dotted(base.value) or ""
            parent = self.model.classes.get(name)
            if parent is not None and parent is not owner:
                found = self.framework(parent, depth + 1)
            elif parent is None and name:
                found = self._project_framework(name)
            if found is not None:
                return found
        return None

    def _project_framework(self, name: str) -> Framework | None:
        """The framework a base class imported from the project derives from, asked of the
        project index once per name."""
        if name not in self._project_answers:
            project = self.ctx.project
            bases = project.outside_bases(self.ctx.absolute_path, name) if project else frozenset()
            frameworks = [f for f in map(framework_of, sorted(bases)) if f is not None]
            self._project_answers[name] = frameworks[0] if frameworks else None
        return self._project_answers[name]

    @cached_property
    def _project_answers(self) -> dict[str, Framework | None]:
        return {}

    def _method_framework(self, function: cst.FunctionDef) -> Framework | None:
        owner = self.model.method_class(function)
        return self.framework(owner) if owner is not None else None

    def runs_without_grad(self, function: cst.FunctionDef) -> bool:
        """An evaluation hook the framework calls with autograd off (`validation_step`)."""
        found = self._method_framework(function)
        return found is not None and function.name.value in found.grad_off

    def evaluation_step(self, function: cst.FunctionDef) -> bool:
        """An evaluation hook the framework calls on every evaluation batch (`validation_step`):
        a per-batch loop that trains nothing."""
        found = self._method_framework(function)
        return found is not None and function.name.value in found.per_eval_batch

    def batch_index(self, param: cst.Param) -> bool:
        """`batch_idx` of `training_step(self, batch, batch_idx)`: the parameter where the
        framework passes the batch's index within its epoch."""
        function = self.model.function_of(param)
        if function is None:
            return False
        found = self._method_framework(function)
        at = found.batch_index_position(function.name.value) if found is not None else None
        params = [*function.params.posonly_params, *function.params.params][1:]
        if at == -1:
            params = [p for p in params if p.default is None]
        return at is not None and -len(params) <= at < len(params) and params[at] is param

    def stage_hook(self, function: cst.FunctionDef) -> Framework | None:
        """The framework that calls `function` with the stage it ends as first argument, under
        no_grad for its evaluation stages (speechbrain's `on_stage_end`)."""
        found = self._method_framework(function)
        return found if found is not None and function.name.value in found.stage_hooks else None

    # -- how often -------------------------------------------------------------------------
    def periodic_helper(self, call: cst.Call) -> bool:
        """`self.every_n_train_iters(runner, n)` in a method of a framework's subclass: a
        helper the framework's class provides that is true only now and then (the table's
        `periodic_methods`), so a hook's `if` on it is a periodic guard."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            return False
        function = self.model.function_of(call)
        framework = self._method_framework(function) if function is not None else None
        return framework is not None and func.attr.value in framework.periodic_methods

    @cached_property
    def _periods(self) -> dict[cst.FunctionDef, str]:
        """Every entry point of the file -> "step" or "epoch"."""
        found: dict[cst.FunctionDef, str] = {}
        functions = [f for group in self.model.functions.values() for f in group]
        for function in functions:
            framework = self._method_framework(function)
            if framework is None:
                continue
            if function.name.value in framework.per_batch:
                found[function] = "step"
            elif function.name.value in framework.per_epoch:
                found[function] = "epoch"
        for function in functions:
            for decorator in function.decorators:
                period = self._registered_period(decorator.decorator)
                if period is not None:
                    found[function] = period
        for call in self.model.calls:
            for function, period in self._handed_over(call):
                found.setdefault(function, period)
        return found

    def period(self, function: cst.FunctionDef) -> str | None:
        """ "step" when a framework runs `function` every step, "epoch" once per epoch, else None."""
        return self._periods.get(function)

    @property
    def per_step(self) -> set[cst.FunctionDef]:
        return {f for f, p in self._periods.items() if p == "step"}

    @cached_property
    def may_run_per_step(self) -> bool:
        """Whether code of a file without loops may still run every step: a framework may call
        it (its text names an entry point), or another module of the project may call one of
        its functions in a loop. Asked of texts alone, before any model is built."""
        return may_drive_steps(self.ctx.source) or self.may_run_elsewhere

    @cached_property
    def may_run_elsewhere(self) -> bool:
        """Whether another module of the project calls one of this file's functions on a line
        inside a loop (`ProjectIndex.may_call_in_loops`: a gate read from texts)."""
        project = self.ctx.project
        return project is not None and called_in_loops_elsewhere(
            self.ctx.source, project, self.ctx.absolute_path
        )

    def runs_per_step_elsewhere(
        self, function: cst.FunctionDef, every_update: bool = False
    ) -> bool:
        """Whether other modules of the project call `function` every step (a trainer's loop
        calling `self.model.optimize(batch)`, a loop calling the closure a factory here
        returns): it is then the body of a per-batch loop written in another file. Asked per
        function, for the functions a rule asks about, so only their callers are summarised.
        With `every_update`, a call under a gradient-accumulation guard counts too
        (`ProjectIndex.called_per_step`)."""
        project = self.ctx.project
        if project is None or not self.may_run_elsewhere:
            return False
        asked = (function, every_update)
        if asked not in self._elsewhere:
            key = self._project_keys.get(function)
            self._elsewhere[asked] = key is not None and bool(
                project.called_per_step(self.ctx.absolute_path, frozenset({key}), every_update)
            )
        return self._elsewhere[asked]

    @cached_property
    def _elsewhere(self) -> dict[tuple[cst.FunctionDef, bool], bool]:
        return {}

    @cached_property
    def _project_keys(self) -> dict[cst.FunctionDef, str]:
        """How other files name the functions of this one: `f`, `Class.method`, and `factory()`
        for a closure that a module-level factory returns."""
        found: dict[cst.FunctionDef, str] = {}
        model = self.model
        for group in model.functions.values():
            for function in group:
                scope = model.scope_parent.get(function)
                outer = model.scope_parent.get(scope) if scope is not None else None
                name = function.name.value
                if scope is model.module:
                    found[function] = name
                elif isinstance(scope, cst.ClassDef) and outer is model.module:
                    found[function] = f"{scope.name.value}.{name}"
                elif (
                    isinstance(scope, cst.FunctionDef)
                    and outer is model.module
                    and function in model.returned_functions(scope)
                ):
                    found[function] = f"{scope.name.value}()"
        return found

    def _registered_period(self, decorator: cst.BaseExpression) -> str | None:
        """`@trainer.on(Events.ITERATION_COMPLETED)`: how often the handler runs."""
        if not (
            isinstance(decorator, cst.Call)
            and isinstance(decorator.func, cst.Attribute)
            and decorator.func.attr.value in CALLBACK_REGISTRARS
            and decorator.args
        ):
            return None
        return self._event_period(decorator.args[0].value)

    def _event_period(self, event: cst.BaseExpression) -> str | None:
        """`Events.ITERATION_COMPLETED` -> "step"; a filtered event (`(every=100)`) -> None."""
        if not isinstance(event, cst.Attribute) or dotted(event.value) is None:
            return None
        if not (self.ctx.symbols.qualname(event) or "").startswith("ignite."):
            return None
        name = event.attr.value
        return next((p for prefix, p in EVENT_PERIODS.items() if name.startswith(prefix)), None)

    def _handed_over(self, call: cst.Call) -> list[tuple[cst.FunctionDef, str]]:
        """`Engine(step)` and `engine.add_event_handler(Events.X, fn)`: functions ignite runs."""
        func = call.func
        if (self.ctx.symbols.qualname(func) or "") in CALLBACK_ENGINES and call.args:
            return [(f, "step") for f in self._functions(call.args[0].value, call)]
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "add_event_handler"
            and len(call.args) >= 2
        ):
            period = self._event_period(call.args[0].value)
            if period is not None:
                return [(f, period) for f in self._functions(call.args[1].value, call)]
        return []

    def _functions(self, value: cst.BaseExpression, at: cst.Call) -> list[cst.FunctionDef]:
        if not isinstance(value, cst.Name):
            return []
        bindings = self.model.resolve(value.value, self.model.scope_of(at))[1]
        return [b.node for b in bindings if b.kind == "def" and isinstance(b.node, cst.FunctionDef)]

    # -- the accelerator -------------------------------------------------------------------
    @cached_property
    def framework_places_batches(self) -> bool:
        """Whether a framework that moves batches to the accelerator runs this file's hooks,
        and nothing in the file pins it to the CPU (`Trainer(accelerator="cpu")`)."""
        if not any(p == "step" for p in self._periods.values()):
            return False
        frameworks = {self._method_framework(f) for f, p in self._periods.items() if p == "step"}
        if not any(f is not None and f.on_accelerator for f in frameworks):
            return False
        return not any(_pins_cpu(call) for call in self.model.calls)


def _pins_cpu(call: cst.Call) -> bool:
    """`Trainer(accelerator="cpu")`, `Trainer(devices=0)`-like settings: the run stays on the CPU."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("accelerator", "device"):
            value = arg.value
            if isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu":
                return True
    return False
