"""Code that runs only in a library module's `if __name__ == "__main__":` demo.

A module that other modules of the project import (models, losses, layers) often ends with a
`__main__` block that builds a model and runs one forward on a random tensor, checks a shape,
or times two implementations against each other. That block is a demo or a self-check, not the
project's training or evaluation: per-step and evaluation costs there are not worth a finding.
A training entry point stays one even when others import it (`from train import build`): a
block that loops over a loader, itself or through the file's functions (`main()`), is no demo.
Whether others import the module is the project index's answer, so a run on one file sees the
same as a run on the whole project; without a project nothing is a demo. A module nobody imports
(a loss kept as one file) has a demo too when its block compares two or more of the module's own
classes on random tensors and reads no file: a self-check, not a training script.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel
from torchlint.analysis.names import LOADER_NAME
from torchlint.analysis.nodes import is_main_guard, walk
from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from torchlint.analysis.context import FileContext


# How a program reads its command line: methods of a parser, and functions or values by name.
_COMMAND_LINE_METHODS = frozenset({"parse_args", "parse_known_args"})
# The module torch.hub.load imports from a repository: its entry points are library code.
_HUB_MODULE = "hubconf.py"
_COMMAND_LINE = frozenset(
    {"sys.argv", "tyro.cli", "fire.Fire", "hydra.main", "click.command", "typer.run"}
)


class LibraryDemo:
    """Where a library module's `__main__` demo runs, via `ctx.fact(LibraryDemo)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @cached_property
    def guards(self) -> list[cst.If]:
        """The file's `__main__` blocks that are demos: the module is imported by another module
        of the project, and the block reads no loader, itself or through the file's functions it
        calls (a toy loop on random tensors, a gradient check, a timing loop are demos)."""
        found = [s for s in self.ctx.module.body if is_main_guard(s)]
        if not found or self.ctx.project is None:
            return []
        blocks = [g for g in found if isinstance(g, cst.If) and not self._reads_data(g)]
        if not self._imported(self.ctx.absolute_path):
            return [g for g in blocks if self._compares_implementations(g)]
        return blocks

    def _imported(self, path: Path) -> bool:
        """Whether something imports the module: another module of the project, or torch.hub,
        which loads a repository's `hubconf.py` as a library of model entry points."""
        assert self.ctx.project is not None
        return path.name == _HUB_MODULE or self.ctx.project.imported_by_others(path)

    def _compares_implementations(self, guard: cst.If) -> bool:
        """A self-check of a library module nobody imports yet (a loss or an op kept as one file):
        the block builds two or more of the module's own classes (`FocalLossV1()`,
        `FocalLossV2()`) and feeds them random tensors, reading no file. A training script
        trains its one model; comparing implementations on a toy net is a check."""
        classes = {
            s.name.value for s in self.ctx.module.body if isinstance(s, cst.ClassDef) and s.bases
        }
        built: set[str] = set()
        random = False
        for node in walk(guard):
            if type(node) is not cst.Call:
                continue
            name = dotted(node.func) or ""
            leaf = name.rsplit(".", 1)[-1]
            if leaf in _READS_FILES or "load" in leaf.lower():
                return False
            random = random or (name.startswith("torch.") and leaf in _RANDOM)
            if isinstance(node.func, cst.Name) and node.func.value in classes:
                built.add(node.func.value)
        return random and len(built) >= 2

    def _reads_data(self, guard: cst.If) -> bool:
        """Whether the block, or a function of the file it reaches through calls, loops over a
        loader: the project's training or evaluation run, not a demo."""
        return self._reaches(guard, self._reads_loader)

    def _reads_loader(self, code: cst.CSTNode) -> bool:
        """A loop over a loader in `code` (`_loops_over_loader`): the file's loops that lie in
        it, from the model's list, instead of a walk of all its nodes (the main block's reach
        is often the whole script)."""
        model = self.ctx.fact(SemanticModel)
        return any(
            isinstance(loop, cst.For) and model.is_ancestor(code, loop) and _loops_over_loader(loop)
            for loop in model.loops
        )

    def _reaches(self, guard: cst.If, holds: Callable[[cst.CSTNode], bool]) -> bool:
        """Whether `holds` is true of the block or of a function of the file it reaches through calls."""
        model = self.ctx.fact(SemanticModel)
        todo: list[cst.CSTNode] = [guard]
        seen: set[cst.CSTNode] = {guard}
        while todo:
            node = todo.pop()
            if holds(node):
                return True
            for call in (c for c in model.calls if model.is_ancestor(node, c)):
                for callee in model.callees.get(call, ()):
                    if callee not in seen:
                        seen.add(callee)
                        todo.append(callee)
        return False

    def runs_only_in_demo(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs only in a demo block: inside one (also in a function the block
        defines), or in a function of the module that only demo code calls."""
        if not self.guards:
            return False
        for parent in self.ctx.fact(SemanticModel).ancestors(node):
            if parent in self.guards or parent in self._demo_functions:
                return True
        return False

    @cached_property
    def self_tested(self) -> bool:
        """Whether the file's demo blocks are self-tests, not a program's entry point either:
        none takes its settings from the command line (`parser.parse_args()`, `tyro.cli`,
        `fire.Fire`, `sys.argv`), itself or through the file's functions it calls. A
        reinforcement-learning script reads no loader (it trains on an environment) and others
        may import its classes, yet it is the project's training when it parses its arguments."""
        return bool(self.guards) and not any(
            self._reaches(guard, _parses_command_line) for guard in self.guards
        )

    def only_in_self_test(self, nodes: Sequence[cst.CSTNode]) -> bool:
        """Whether `nodes` are some and every one runs only in a self-test (`self_tested`): a
        file whose every `backward()` and optimizer step is its `__main__` self-test trains
        nothing of the project."""
        return (
            self.self_tested and bool(nodes) and all(self.runs_only_in_demo(node) for node in nodes)
        )

    @cached_property
    def _demo_functions(self) -> set[cst.FunctionDef]:
        """Module-level functions whose every use is a call made only by demo code (a `test()`
        the demo block calls), to a fixpoint. A function that a module importing this one
        names may be called from there (`evaluate` of an eval helper that training scripts
        import and its own `__main__` also runs): it is not the demo's."""
        model = self.ctx.fact(SemanticModel)
        project, path = self.ctx.project, self.ctx.absolute_path
        candidates = {
            s: model.names.get(s.name.value, [])
            for s in self.ctx.module.body
            if isinstance(s, cst.FunctionDef)
            and not (project is not None and project.named_by_importers(path, s.name.value))
        }
        found: set[cst.FunctionDef] = set()
        changed = True
        while changed:
            changed = False
            for function, names in candidates.items():
                if function in found:
                    continue
                uses = [n for n in names if n is not function.name]
                if uses and all(self._demo_call(use, found) for use in uses):
                    found.add(function)
                    changed = True
        return found

    def _demo_call(self, name: cst.Name, demo: set[cst.FunctionDef]) -> bool:
        model = self.ctx.fact(SemanticModel)
        parent = model.parents.get(name)
        if not isinstance(parent, cst.Call) or parent.func is not name:
            return False
        for outer in model.ancestors(parent):
            if outer in self.guards:
                return True
            if isinstance(outer, cst.FunctionDef):
                return outer in demo
        return False


# Calls that read data from files or the command line: a block that makes them runs a job.
_READS_FILES = frozenset({"open", "imread", "read_csv", "ArgumentParser", "parse_args", "glob"})
_RANDOM = frozenset({"randn", "rand", "randint", "randn_like", "rand_like", "randint_like"})


def _parses_command_line(code: cst.CSTNode) -> bool:
    """A read of the command line in `code`: `parser.parse_args()`, `tyro.cli(Args)`,
    `fire.Fire(main)`, `sys.argv`, or a `@hydra.main`/`@click.command` function."""
    for node in walk(code):
        if type(node) is not cst.Attribute:
            continue
        if node.attr.value in _COMMAND_LINE_METHODS or dotted(node) in _COMMAND_LINE:
            return True  # `ArgumentParser(...).parse_args()` has no dotted name: its attribute says
    return False


def _loops_over_loader(loop: cst.For) -> bool:
    """A loop over a loader: `for x, y in train_loader:`, `for b in DataLoader(...)`."""
    iterable = loop.iter
    if isinstance(iterable, cst.Call):
        name = dotted(iterable.func) or ""
        if name.endswith("DataLoader"):
            return True
        iterable = iterable.args[0].value if iterable.args else iterable
    name = (dotted(iterable) or "").rsplit(".", 1)[-1].lower()
    return bool(name) and LOADER_NAME.search(name) is not None
