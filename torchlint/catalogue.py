"""What the engine knows of each rule before importing it: code, name, default, prefilter, home.

Importing the rules imports libcst, a quarter of a second that `check` of a file no rule may match,
or of a cached file, never needs: settings, selection, the cache key and the prefilter all run on
these entries, and a rule's module is imported only when a file is parsed for it. The entries are
written from the rules into `catalogue.json` by `python -m torchlint.catalogue`; a test keeps the
file equal to what the rules say.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.analysis import text as text_tests
from torchlint.registry import rule_modules, rules_in

if TYPE_CHECKING:
    from torchlint.rule import Rule

CATALOGUE = Path(__file__).with_name("catalogue.json")


@dataclass(frozen=True)
class RuleEntry:
    code: str
    name: str
    default_enabled: bool
    performance: bool
    reviews_suppressions: bool
    tokens: tuple[str, ...]
    text_tests: tuple[str, ...]  # names of functions in torchlint.analysis.text
    module: str
    qualname: str
    # Runs only in preview mode (`--preview`, `preview = true`), whatever the selection says.
    preview: bool = False

    def may_match(self, text: str) -> bool:
        """The rule's own prefilter (`Rule.may_match`), without importing the rule."""
        tokens = not self.tokens or any(token in text for token in self.tokens)
        return tokens and all(getattr(text_tests, test)(text) for test in self.text_tests)

    def load(self) -> type[Rule]:
        return getattr(importlib.import_module(self.module), self.qualname)


def entry_of(rule: type[Rule]) -> RuleEntry:
    return RuleEntry(
        code=rule.code,
        name=rule.name,
        default_enabled=rule.default_enabled,
        performance=rule.performance,
        reviews_suppressions=rule.reviews_suppressions,
        tokens=tuple(rule.tokens),
        text_tests=tuple(test.__name__ for test in rule.text_tests),
        module=rule.__module__,
        qualname=rule.__qualname__,
        preview=rule.preview,
    )


@cache
def entries() -> tuple[RuleEntry, ...]:
    """The catalogue's entries, plus those of any rule module it does not list (a rule being
    written, or a module added to the package's path), read by importing that module."""
    rows = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    listed = [
        RuleEntry(**{**row, "tokens": tuple(row["tokens"]), "text_tests": tuple(row["text_tests"])})
        for row in rows
    ]
    known = {entry.module for entry in listed}
    unlisted = [
        entry_of(rule) for name in rule_modules() if name not in known for rule in rules_in(name)
    ]
    return tuple(sorted(listed + unlisted, key=lambda entry: entry.code))


def render(rules: tuple[type[Rule], ...]) -> str:
    return json.dumps([asdict(entry_of(rule)) for rule in rules], indent=1) + "\n"


if __name__ == "__main__":
    from torchlint.registry import all_rules

    CATALOGUE.write_text(render(all_rules()), encoding="utf-8")
    print(f"wrote {CATALOGUE} ({len(all_rules())} rules)")
