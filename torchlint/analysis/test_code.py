"""Test code, by a file's path and text: the settings take performance rules off it, and the
project index leaves its calls out of the callers whose grad mode a function runs in (a test's
speed is no rule's concern)."""

from __future__ import annotations

import re

# A library's test harnesses live in a `testing` package too (`mylib/testing/`).
_TEST_DIRECTORY = re.compile(r"(^|/)(tests?|testing)/")
# pytest or unittest imported: the file is test code, whatever its path.
_TEST_FRAMEWORK = re.compile(r"^\s*(import|from)\s+(pytest|unittest)\b", re.MULTILINE)
_TEST_NAME = re.compile(r"^(test_.*|.*_test|tests|conftest)\.(py|ipynb)$")
# Named like a test module, yet a script when run (`tools/test_net.py`, an evaluation script of
# a detection codebase; `add_test.py`, the training script of a sequence-model benchmark's
# "adding problem"): no test function, and code that runs at the top level: a `__main__` guard,
# the command line parsed there, or a loop there.
_SCRIPT_NAME = re.compile(r"^(test_.*|.*_test)\.py$")
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", re.MULTILINE)
_TOP_LEVEL_RUN = re.compile(
    r"^(?:(?:for|while)\s|[A-Za-z_]\w*+\s*=\s*[\w.]+\.parse_(?:known_)?args\()", re.MULTILINE
)
_TEST_FUNCTION = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test", re.MULTILINE)


def is_test_path(relpath: str) -> bool:
    """Test code by its path: under tests/, test/ or testing/, or named test_*.py, *_test.py, tests.py, conftest.py."""
    return bool(_TEST_DIRECTORY.search(relpath)) or bool(
        _TEST_NAME.match(relpath.rsplit("/", 1)[-1])
    )


def test_by_name_only(relpath: str) -> bool:
    """Named like a test module (`test_net.py`) outside any test folder: its text decides."""
    return not _TEST_DIRECTORY.search(relpath) and bool(
        _SCRIPT_NAME.match(relpath.rsplit("/", 1)[-1])
    )


def named_like_script_test(name: str) -> bool:
    """A file name like a test module's that a script may bear (`test_net.py`)."""
    return bool(_SCRIPT_NAME.match(name))


def runs_as_script(text: str) -> bool:
    runs = ("__main__" in text and bool(_MAIN_GUARD.search(text))) or bool(
        _TOP_LEVEL_RUN.search(text)
    )
    return runs and not _TEST_FUNCTION.search(text)


def is_test_code(relpath: str, text: str) -> bool:
    """Test code, by its path or its text: a file named like a test module (`test_net.py`) that
    runs code at the top level (a `__main__` guard, `args = parser.parse_args()`, a loop) and has
    no test function is a script, such as a codebase's evaluation."""
    if imports_test_framework(text):
        return True
    if test_by_name_only(relpath):
        return not runs_as_script(text)
    return is_test_path(relpath)


def imports_test_framework(text: str) -> bool:
    """Whether a source imports pytest or unittest: a unit-test module, whatever its path. The
    names are looked for first: the line-anchored pattern is tried at every character."""
    if "pytest" not in text and "unittest" not in text:
        return False
    return bool(_TEST_FRAMEWORK.search(text))
