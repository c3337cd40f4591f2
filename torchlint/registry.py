"""Finds the rules: every `Rule` subclass defined in a module of the `torchlint.rules` package.

The rules (and libcst, which they build on) are imported on the first call, not with this
module, so commands that never lint (`--version`, `rules --help`) start without them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchlint.rule import Named, Rule


@cache
def all_rules() -> tuple[type[Rule], ...]:
    found = [rule for name in rule_modules() for rule in rules_in(name)]
    return tuple(sorted(found, key=lambda r: r.code))


def rule_modules() -> list[str]:
    """The modules of the rule package, found on its path without importing them."""
    import torchlint.rules as package

    return [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)]


def rules_in(name: str) -> list[type[Rule]]:
    from torchlint.rule import Rule

    module = importlib.import_module(name)
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Rule)
        and value is not Rule
        and value.__module__ == module.__name__
    ]


def find_rule(code_or_name: str) -> type[Rule] | None:
    wanted = code_or_name.strip()
    for rule in all_rules():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    return None


def matches(rule: Named, selector: str) -> bool:
    """A selector is `ALL`, a code prefix (`TL0`, `TL004`) or a rule name."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    return rule.code.startswith(selector.upper()) or rule.name == selector.lower()
