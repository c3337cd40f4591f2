"""Lint one file's text: decode, prefilter, parse once, traverse once, filter suppressions."""

from __future__ import annotations

import ast
import gc
import io
import re
import tokenize
import traceback
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from torchlint.analysis.project_index import index_for
from torchlint.catalogue import RuleEntry
from torchlint.config import Settings
from torchlint.diagnostics import (
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    Diagnostic,
    Position,
    source_lines,
)  # noqa: F401 (re-exported)
from torchlint.engine.stack import on_big_stack
from torchlint.project import for_text
from torchlint.suppressions import scan

if TYPE_CHECKING:
    import libcst

    from torchlint.rule import Rule

# libcst's cost grows with tokens, not bytes: about 10k tokens a second and 1.4 KB of memory
# each on this project's machines. Beyond this a file (generated data, not training code)
# would cost more than a few seconds and hundreds of MB; it is counted only for large files.
MAX_TOKENS = 150_000
_COUNT_TOKENS_ABOVE = 256 * 1024  # characters; below this no file reaches MAX_TOKENS' cost
_TOKEN = re.compile(r"\w+|[^\w\s]")
# What CPython raises for input nested deeper than it compiles; libcst would take minutes on it.
_DEPTH_MESSAGES = (
    "too many nested parentheses",
    "too complex",
    "too many statically nested blocks",
)


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def builtin(
    kind: tuple[str, str], path: str, message: str, row: int = 1, column: int = 1, line: str = ""
) -> Diagnostic:
    at = Position(row, column)
    return Diagnostic(kind[0], kind[1], message, path, at, at, source_line=line)


def decode(data: bytes) -> str:
    """Text of a Python source, honouring a BOM or coding cookie (PEP 263)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def lint_text(
    path: str, text: str, rules: Sequence[RuleEntry | type[Rule]], settings: Settings
) -> list[Diagnostic]:
    """Findings of `rules` in `text`, suppressions applied, sorted by position."""
    rules = for_text(path, text, rules, settings)
    enabled = rules
    reviewers = [rule for rule in rules if rule.reviews_suppressions]
    rules = [rule for rule in rules if not rule.reviews_suppressions and rule.may_match(text)]
    found = _lint(path, text, rules, settings)
    if not found and not any(rule.may_match(text) for rule in reviewers):
        return []
    suppressions = scan(text)
    kept, used = suppressions.filter(found, keep=lambda d: d.code == INTERNAL_ERROR[0])
    if not any(d.code == SYNTAX_ERROR[0] for d in found):  # no rule ran on it: no comment is judged
        for reviewer in reviewers:
            kept += reviewer.load().review(path, text, suppressions, used, enabled)
    return sorted(kept, key=Diagnostic.sort_key)


def _lint(
    path: str, text: str, rules: Sequence[RuleEntry | type[Rule]], settings: Settings
) -> list[Diagnostic]:
    """Every finding of `rules`, suppressed or not."""
    with collection_paused():
        project = index_for(settings.root) if settings.directory is not None else None
        if project is not None and rules:
            file = Path(path).absolute()
            rules = [rule for rule in rules if rule.load().may_match_project(text, project, file)]
        parsed = (project.tree_for(text) if project is not None else None) or _python_parse(
            path, text
        )
        python = parsed if isinstance(parsed, Exception) else None
        if not rules and python is None:
            return []  # the prefilter: no rule can fire, and the file is valid Python
        if (refused := _refused(path, text, python)) is not None:
            return [refused]
        return on_big_stack(_lint_parsed, path, text, rules, settings, parsed)


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off while syntax trees are built and read: they are large and
    acyclic (the context breaks the cycles it makes when a file is done), so its generational
    scans cost more than the lint; a run over many files keeps it off between them too (6 % of a
    run over all of torch, for 2.5 % more memory)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _refused(path: str, text: str, python: Exception | None) -> Diagnostic | None:
    """Why a text is not handed to libcst at all: a null byte, nesting deeper than Python itself
    compiles, or more tokens than libcst parses in a few seconds."""
    if "\x00" in text:
        return builtin(SYNTAX_ERROR, path, "source contains a null byte")
    if isinstance(python, (RecursionError, MemoryError)):
        return builtin(
            SYNTAX_ERROR, path, "too deeply nested: Python itself cannot compile this file"
        )
    if isinstance(python, SyntaxError) and python.msg in _DEPTH_MESSAGES:
        row = python.lineno or 1
        return builtin(
            SYNTAX_ERROR,
            path,
            f"invalid syntax: {python.msg}",
            row,
            max(1, python.offset or 1),
            _line(text, row),
        )
    if len(text) > _COUNT_TOKENS_ABOVE and (tokens := len(_TOKEN.findall(text))) > MAX_TOKENS:
        return builtin(
            IO_ERROR, path, f"file too large to analyse ({tokens:,} tokens > {MAX_TOKENS:,})"
        )
    return None


def _lint_parsed(
    path: str,
    text: str,
    rules: Sequence[RuleEntry | type[Rule]],
    settings: Settings,
    parsed: ast.Module | Exception,
) -> list[Diagnostic]:
    # Imported here, not with the module: a run whose files no rule may match never needs libcst.
    import libcst as cst

    from torchlint.analysis.context import FileContext
    from torchlint.engine.traversal import run_rules

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        return [_syntax_error(path, text, error, parsed)]
    except RecursionError:
        return [builtin(SYNTAX_ERROR, path, "too deeply nested to parse")]
    ctx = FileContext(path, text, module, settings.torch_version)
    ctx.python_tree = parsed if isinstance(parsed, ast.Module) else None
    ctx.project = index_for(settings.root) if settings.directory is not None else None
    instances = [rule.load()(ctx, settings.rule_options.get(rule.name, {})) for rule in rules]
    try:
        if ctx.project is not None and isinstance(parsed, ast.Module):
            with ctx.project.parsed(text, parsed):  # its own summary, asked of the index
                failed = run_rules(ctx, instances)
        else:
            failed = run_rules(ctx, instances)
    except RecursionError:
        return [builtin(SYNTAX_ERROR, path, "too deeply nested to analyse")]
    finally:
        ctx.close()
    found = ctx.diagnostics
    for rule, crash in failed.items():
        found = [d for d in found if d.code != rule.code]
        message = f"rule {rule.code} ({rule.name}) failed: {type(crash).__name__}: {crash}"
        trace = "".join(traceback.format_exception(type(crash), crash, crash.__traceback__))
        found.append(replace(builtin(INTERNAL_ERROR, path, message), detail=trace))
    return found


def _python_parse(path: str, text: str) -> ast.Module | Exception:
    """CPython's verdict, about ten times faster than libcst's parse: its syntax tree when it parses
    the text (kept for the project index's summary of this file), else what it raised (a SyntaxError;
    ValueError, RecursionError or MemoryError when it cannot say).
    Run under Python's own recursion limit, so it refuses what `python` itself would refuse for depth.
    A plain SyntaxError is never final on its own: libcst knows newer syntax."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            tree = compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error
    return cast("ast.Module", tree)


def _syntax_error(
    path: str, text: str, error: libcst.ParserSyntaxError, python: ast.Module | Exception
) -> Diagnostic:
    """The finding for a file libcst cannot parse, with CPython's message and location when
    CPython agrees: libcst points at the token after the error, often on the next line."""
    row, column, message = error.raw_line, error.raw_column + 1, f"invalid syntax: {error.message}"
    if isinstance(python, SyntaxError) and python.lineno:
        row, column = python.lineno, max(1, python.offset or 1)
        message = (
            python.msg
            if python.msg.startswith("invalid syntax")
            else f"invalid syntax: {python.msg}"
        )
    return builtin(SYNTAX_ERROR, path, message, row, column, _line(text, row))


def _line(text: str, row: int) -> str:
    lines = source_lines(text)
    return lines[row - 1] if 0 < row <= len(lines) else ""
