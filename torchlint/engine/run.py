"""A whole run: discover files, lint each, return results in a deterministic order."""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.analysis.project_index import index_for
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.engine.cache import ResultCache, cache_directory, settings_fingerprint
from torchlint.engine.files import Unreadable, check_code_size, discover, read_source
from torchlint.engine.lint import (
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    FileResult,
    builtin,
    collection_paused,
    decode,
    lint_text,
)
from torchlint.notebook import Notebook, NotebookError, parse_bytes
from torchlint.project import FileSettings, RuleT, relative_path, rules_for

if TYPE_CHECKING:
    from torchlint.catalogue import RuleEntry
    from torchlint.rule import Rule

# Below this many files a pool costs more to start than it saves.
MIN_FILES_FOR_POOL = 8


@dataclass
class RunResult:
    files: list[FileResult]
    missing: list[str]
    warnings: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]


def display_path(path: Path) -> str:
    """Paths relative to the working directory when below it, as users typed them, with control
    characters escaped: a newline in a file name must not forge a line of output."""
    try:
        shown = path.absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = path.as_posix()
    return (
        shown
        if shown.isprintable()
        else "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)
    )


def lint_bytes(
    shown: str, data: bytes, rules: Sequence[RuleEntry | type[Rule]], settings: Settings
) -> list[Diagnostic]:
    """Findings in a file's bytes; a notebook's (by its name as shown) carry their cell."""
    read = read_code(shown, data)
    if isinstance(read, Diagnostic):
        return [read]
    notebook, text = read
    found = lint_text(shown, text, rules, settings)
    return notebook.map_diagnostics(text, found) if notebook else found


def read_code(shown: str, data: bytes) -> tuple[Notebook | None, str] | Diagnostic:
    """The file's notebook if it is one (by its name as shown), and the code to lint (a notebook's
    code cells as one module); or the finding that says why there is none."""
    try:
        if not shown.endswith(".ipynb"):
            return None, decode(data)
        notebook = parse_bytes(data)
        check_code_size(notebook.text)
        return notebook, notebook.text
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        return builtin(SYNTAX_ERROR, shown, f"cannot decode file: {reason}")
    except NotebookError as error:
        return builtin(SYNTAX_ERROR, shown, str(error))
    except Unreadable as problem:  # a notebook of more code than a file may hold
        return builtin(IO_ERROR, shown, str(problem))


def lint_file(path: Path, settings: Settings, use_cache: bool = False) -> FileResult:
    """One file under its own settings (see `torchlint.project`), through the cache at its project root."""
    shown = display_path(path)
    try:
        data = read_source(path, settings.root)
    except Unreadable as problem:
        return FileResult(shown, [builtin(IO_ERROR, shown, str(problem))])
    rules = file_rules(path, settings.enabled_rules(), settings)
    if not use_cache:
        return FileResult(shown, lint_bytes(shown, data, rules, settings))
    cache = ResultCache(cache_directory(settings))
    key = cache.key(settings_fingerprint(settings, rules), shown, data)
    found = cache.get(key)
    if found is None:
        index = index_for(settings.root)
        index.consulted.clear()
        found = lint_bytes(shown, data, rules, settings)
        if not any(d.code == INTERNAL_ERROR[0] for d in found):
            own = path.absolute()
            cache.put(
                key, found, {str(p): digest for p, digest in index.consulted.items() if p != own}
            )
    return FileResult(shown, found)


def file_rules(path: Path, rules: Sequence[RuleT], settings: Settings) -> list[RuleT]:
    """The rules that apply to `path` once per-file-ignores are taken off."""
    return rules_for(relative_path(path, settings.root), rules, settings)


# -- the process pool --------------------------------------------------------------------
_worker_state: tuple[list[Settings], bool] | None = None


def _start_worker(distinct: list[Settings], use_cache: bool) -> None:
    global _worker_state
    _worker_state = (distinct, use_cache)
    gc.disable()  # for the worker's life, a run's files only (`collection_paused`)


def _work(job: tuple[Path, int]) -> FileResult:
    distinct, use_cache = _worker_state  # type: ignore[misc]
    return lint_file(job[0], distinct[job[1]], use_cache)


def check_paths(
    paths: list[str], settings: Settings, jobs: int | None = None, use_cache: bool = True
) -> RunResult:
    """Lint every file under `paths`, each under its own settings; results come in discovery
    order whatever `jobs` is. Raises ConfigError for a broken config file found on the way."""
    discovery = discover(paths, settings)
    files = discovery.files
    per_file = FileSettings(settings)
    distinct: list[Settings] = []
    which: list[int] = []
    for path in files:
        found = per_file.for_file(path)
        index = next((i for i, s in enumerate(distinct) if s is found), None)
        if index is None:
            index = len(distinct)
            distinct.append(found)
        which.append(index)
    for each in distinct:
        each.torch_target  # noqa: B018 - read the declarations once, before the workers fork
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(files)))
    unreadable = [
        FileResult(display_path(path), [builtin(IO_ERROR, display_path(path), why)])
        for path, why in discovery.unreadable
    ]
    if jobs == 1 or len(files) < MIN_FILES_FOR_POOL:
        with collection_paused():
            linted = [lint_file(path, distinct[i], use_cache) for path, i in zip(files, which)]
        return RunResult(linted + unreadable, discovery.missing, discovery.warnings)
    # Imported here: a single-process run would spend 15 ms CPU importing the pool machinery.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Largest first, a few at a time: the prefilter leaves the cost in a minority of files, and a
    # big one drawn last would keep one process busy while the others idle.
    order = sorted(range(len(files)), key=lambda i: _size(files[i]), reverse=True)
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    results: list[FileResult] = [None] * len(files)  # type: ignore[list-item]
    with ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_start_worker, initargs=(distinct, use_cache)
    ) as pool:
        for i, result in zip(
            order, pool.map(_work, [(files[i], which[i]) for i in order], chunksize=4)
        ):
            results[i] = result
    return RunResult(results + unreadable, discovery.missing, discovery.warnings)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reported when the file is read
