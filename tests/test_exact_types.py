"""Exact type tests of libcst nodes (`type(node) is cst.Call`) say what `isinstance` says.

The analysis and the rules test node types exactly where they test every node, call or
ancestor of a file: `isinstance` of a libcst class goes through ABCMeta's hook whenever the
answer is no. That is the same answer only while the class has no subclass, which this test
checks for every libcst class the code compares types with.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
_EXACT = re.compile(r"type\([^()]*\) (?:is|is not|in|not in) \(?((?:cst\.\w+(?:, )?)+)")
_SETS = re.compile(r"frozenset\(\s*\{([^}]*)\}\s*\)")


def _compared_classes() -> dict[str, set[str]]:
    """libcst class name -> the files that compare a node's type with it exactly."""
    found: dict[str, set[str]] = {}
    for path in [*ROOT.joinpath("torchlint").rglob("*.py"), *ROOT.joinpath("rules").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for pattern in (_EXACT, _SETS):
            for match in pattern.finditer(text):
                for name in re.findall(r"cst\.(\w+)", match.group(1)):
                    found.setdefault(name, set()).add(path.name)
    return found


def test_the_classes_compared_exactly_are_found():
    classes = _compared_classes()
    assert {"Call", "Name", "Attribute", "Return", "For", "ClassDef"} <= classes.keys()


def test_every_libcst_class_compared_exactly_has_no_subclass():
    for name, files in sorted(_compared_classes().items()):
        kind = getattr(cst, name)
        assert isinstance(kind, type), f"cst.{name} ({', '.join(sorted(files))}) is no class"
        assert not kind.__subclasses__(), (
            f"cst.{name} has subclasses: `type(node) is cst.{name}` in "
            f"{', '.join(sorted(files))} no longer says what isinstance says"
        )
