"""What a rule is: metadata, docs, examples and visitor methods in one class.

A rule subclasses `Rule` in its own module under `rules/`; the registry finds it there,
so adding a rule edits nothing else. Visitor methods are named as in libcst
(`visit_Call`, `leave_FunctionDef`); the engine runs every enabled rule's methods in one
traversal and calls `finish()` once the whole tree has been seen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import libcst as cst

from torchlint.diagnostics import Applicability, Edit, Fix

if TYPE_CHECKING:
    from torchlint.engine.context import FileContext


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; `fixed` is the text after its fixes (unsafe ones included)."""

    code: str
    fixed: str | None = None
    count: int = 1
    target_torch_version: str | None = None


@dataclass(frozen=True)
class Valid:
    """An example the rule must not flag, optionally under a given target torch version."""

    code: str
    target_torch_version: str | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    # "none", or the applicability of the fixes the rule offers
    fix_availability: ClassVar[str] = "none"
    docs: ClassVar[str]
    # option name -> default value; users set them under [tool.torchlint.<rule-name>]
    options: ClassVar[dict[str, Any]] = {}
    # The rule cannot fire on a file whose text contains none of these (the prefilter):
    # a file no enabled rule may match is not even parsed by libcst.
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
    def may_match(cls, text: str) -> bool:
        """False only when the rule certainly cannot fire on `text`; must never hide a finding."""
        return any(token in text for token in cls.tokens) and all(test(text) for test in cls.text_tests)

    def report(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> None:
        self.ctx.report(self, node, message, fix)

    def finish(self) -> None:
        """Called after the traversal, when every analysis fact about the file is available."""

    # Fix construction helpers, so rules state intent rather than offsets.
    def make_fix(self, message: str, applicability: Applicability, *edits: Edit | None) -> Fix:
        return Fix(message, applicability, tuple(e for e in edits if e is not None))
