"""What a rule is: metadata, docs, examples and visitor methods in one class.

A rule subclasses `Rule` in its own module under `rules/`; the registry finds it there,
so adding a rule edits nothing else. Visitor methods are named as in libcst
(`visit_Call`, `leave_FunctionDef`); the engine runs every enabled rule's methods in one
traversal and calls `finish()` once the whole tree has been seen.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import libcst as cst

from torchlint.analysis.dead_branches import DeadBranches
from torchlint.analysis.edits import import_binding, references, without_alias
from torchlint.analysis.unimportable import Unimportable
from torchlint.diagnostics import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    FixAvailability,
    Position,
    rule_url,
)
from torchlint.notebook import keeps_cells, masks_magics

if TYPE_CHECKING:
    from pathlib import Path

    from torchlint.analysis.context import FileContext
    from torchlint.analysis.project_index import ProjectIndex
    from torchlint.suppressions import Suppressions


def example_text(code: str) -> str:
    """An example as the file it stands for: a triple-quoted block written indented in the rule
    (opening on its own line) is dedented, so examples read as code, not as escaped strings."""
    if not code.startswith("\n"):
        return code
    return textwrap.dedent(code[1:])


class Named(Protocol):
    """A rule or its catalogue entry: what selectors and reviews know a rule by."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; `fixed` is the text after its fixes (unsafe ones included).

    `line`/`column` (1-based) and `message` (a part of it) pin the first finding, so an example
    shows where the rule reports and what it says."""

    code: str
    fixed: str | None = None
    count: int = 1
    target_torch_version: str | None = None
    line: int | None = None
    column: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", example_text(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", example_text(self.fixed))


@dataclass(frozen=True)
class Valid:
    """An example the rule must not flag, optionally under a given target torch version."""

    code: str
    target_torch_version: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", example_text(self.code))


@dataclass(frozen=True)
class Rewrite:
    """A finding whose fix rewrites a use of the imported name `head` (`autocast` in `autocast()`)
    into code that no longer needs it."""

    node: cst.CSTNode
    message: str
    fix: Fix | None
    head: str | None = field(default=None)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    # A preview rule runs only with `--preview` (or `preview = true`): every new rule starts there
    # and leaves once its validate precision holds the bar on both strata (docs/precision.md).
    preview: ClassVar[bool] = False
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    docs: ClassVar[str]
    # option name -> default value; users set them under [tool.torchlint.<rule-name>]
    options: ClassVar[dict[str, Any]] = {}
    # What each of the rule's fixes writes -> the lowest torch that has it ("2.3"). Every fix
    # with edits names its entry (`make_fix(..., writes=...)`); the rules' docs list the table.
    fix_versions: ClassVar[dict[str, str]] = {}
    # Performance rules report nothing in test code unless `lint-tests = true`.
    performance: ClassVar[bool] = True
    # What the fix saves exists only on a GPU (transfers, kernel launches, multi-GPU): `verify`
    # on a CPU shows no speed figure for it.
    gpu_only: ClassVar[bool] = False
    # The rule cannot fire on a file whose text contains none of these (the prefilter; empty: no
    # token test): a file no enabled rule may match is not even parsed by libcst.
    tokens: ClassVar[tuple[str, ...]] = ("torch",)
    # Text tests (`analysis/text.py`) of the kind of code the rule looks at, all of which must hold
    # too: `may_train` for a rule about training code. Override `may_match` for more.
    text_tests: ClassVar[tuple[Callable[[str], bool], ...]] = ()
    # A rule about the suppression comments themselves (unused-noqa): it does not visit the
    # syntax tree; `review` runs after suppressions are applied, on the comments and their use.
    reviews_suppressions: ClassVar[bool] = False
    valid: ClassVar[list[str | Valid]] = []
    invalid: ClassVar[list[str | Invalid]] = []

    def __init__(self, ctx: FileContext, options: dict[str, Any]) -> None:
        self.ctx = ctx
        self.opts = {**self.options, **options}

    @classmethod
    def load(cls) -> type[Rule]:
        """The rule itself: the engine takes rules and their catalogue entries alike."""
        return cls

    @classmethod
    def may_match(cls, text: str) -> bool:
        """False only when the rule certainly cannot fire on `text`; must never hide a finding."""
        return (not cls.tokens or any(token in text for token in cls.tokens)) and all(
            test(text) for test in cls.text_tests
        )

    @classmethod
    def may_match_project(cls, text: str, project: ProjectIndex, file: Path) -> bool:
        """`may_match` for a file of `project` (at the absolute path `file`), asked after it: False
        only when what the other files' texts say means the rule cannot fire on `text`."""
        return True

    def report(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> None:
        """Record a finding at `node`. The checks every rule would otherwise repeat happen here: a
        performance rule reports nothing in test code when the engine says so, nor in a module
        the project cannot import (`Unimportable`: vendored code whose imports name another
        root, whose code never runs), nor in a branch that never runs (`DeadBranches`: `if
        parallel:` after `parallel = False`), and a fix that writes what the file's target
        torch lacks is dropped, with the message saying why."""
        ctx = self.ctx
        if self.performance and (
            ctx.fact(Unimportable).holds or ctx.fact(DeadBranches).holds(node)
        ):
            return
        have = ctx.target_torch_version
        if fix is not None and fix.min_torch is not None and have < fix.min_torch:
            need = fix.min_torch
            message += f" (no fix offered: it needs torch {need[0]}.{need[1]}, the project targets {have[0]}.{have[1]})"
            fix = None
        if fix is not None and not keeps_cells(ctx.cell_boundaries, fix.edits):
            # The notebook adapter writes back cell by cell; such a fix could never be applied.
            message += " (no fix offered: it would cross a boundary between notebook cells)"
            fix = None
        start, end = ctx.start(node), ctx.end(node)
        ctx.diagnostics.append(
            Diagnostic(
                self.code,
                self.name,
                message,
                ctx.path,
                start,
                end,
                fix,
                url=rule_url(self.code),
                source_line=ctx.line(start.row),
                anchor_rows=(start.row, ctx.statement_row(node)),
                context_before=ctx.lines_between(start.row - 2, start.row - 1),
                context_after=ctx.lines_between(start.row + 1, start.row + 2),
            )
        )

    @classmethod
    def review(
        cls,
        path: str,
        text: str,
        suppressions: Suppressions,
        used: set[tuple[int, str]],
        enabled: Sequence[Named],
    ) -> list[Diagnostic]:
        """A rule that `reviews_suppressions` reports here, on the comments and which of them
        suppressed something (`used`: row and code), after the other rules ran."""
        return []

    def finish(self) -> None:
        """Called after the traversal, when every analysis fact about the file is available."""

    # Fix construction helpers, so rules state intent rather than offsets.
    def make_fix(
        self,
        message: str,
        applicability: Applicability,
        *edits: Edit | None,
        writes: str | None = None,
    ) -> Fix:
        """A fix; `writes` names its entry in `fix_versions`, so it is offered only on a target
        torch that has what it writes (the engine drops it below and says why)."""
        since = _version(self.fix_versions[writes]) if writes is not None else None
        return Fix(message, applicability, tuple(e for e in edits if e is not None), since)

    def report_rewrites(self, rewrites: list[Rewrite]) -> None:
        """Report each rewrite. Where the rewrites replace every use of an imported name, each of
        their fixes rewrites all of those uses and removes the import: one fix applied alone
        would otherwise leave the import unused, or remove it under a use that is still there."""
        groups: dict[str, list[Rewrite]] = {}
        for rewrite in rewrites:
            if rewrite.head and rewrite.fix is not None and rewrite.fix.edits:
                groups.setdefault(rewrite.head, []).append(rewrite)
        merged: dict[int, Fix] = {}
        for head, members in groups.items():
            if len({m.fix.applicability for m in members if m.fix}) != 1:
                continue
            edits = list(dict.fromkeys(e for m in members if m.fix for e in m.fix.edits))
            drop = drop_unused_import(self.ctx, head, len(members), [e.content for e in edits])
            if drop is None:
                continue
            where = f" at all {len(members)} uses of `{head}`" if len(members) > 1 else ""
            for m in members:
                assert m.fix is not None
                merged[id(m)] = Fix(
                    f"{m.fix.message}{where}, and remove its unused import",
                    m.fix.applicability,
                    (*edits, drop),
                    m.fix.min_torch,
                )
        for rewrite in rewrites:
            self.report(rewrite.node, rewrite.message, merged.get(id(rewrite), rewrite.fix))


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def drop_unused_import(
    ctx: FileContext, name: str, rewritten: int, new_texts: Iterable[str]
) -> Edit | None:
    """The edit that removes the module-level import of `name` once `rewritten` uses of it are
    rewritten into `new_texts`, when the file has no other mention of it.

    Not in an `__init__.py`, whose imports are its package's interface, nor in a notebook with
    magics, whose masked lines may still use the name.
    """
    if (
        ctx.path.endswith("__init__.py")
        or masks_magics(ctx.source)
        or any(references(text, name) for text in new_texts)
    ):
        return None
    if references(ctx.source, name) != rewritten + 1:
        return None  # another use, a re-export in `__all__`, a mention we cannot judge
    found = import_binding(ctx.module, name)
    if found is None:
        return None
    statement, node, alias = found
    smaller = without_alias(node, alias)
    if smaller is not None:
        return ctx.replace(node, smaller)
    if len(statement.body) > 1:
        return None
    start, end = ctx.start(statement), ctx.end(statement)
    return Edit(Position(start.row, 1), Position(end.row + 1, 1), "")
