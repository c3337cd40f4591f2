"""One sweep of the installed `torchlint` over a scratch copy of a tree, and what went wrong.

The steps, each through the installed command in a subprocess:
1. `check --select ALL --output-format json` on the untouched copy: no internal error (TL999);
   it also says which files have a fix that `fix --unsafe-fixes` may apply. It fills the result
   cache, so the fix's own first lint of every file reads the check's results instead of linting
   the whole tree a second time (the cache's own correctness is tested elsewhere).
2. `fix --apply --unsafe-fixes --select ALL` over every file. `fix` lints in one process, so
   the files are split into one batch per core, run side by side (one thread waits on each).
3. Every file whose bytes changed must parse with libcst and compile; the changed files must be
   exactly those the check offered a fix in.
4. A second `fix --apply --unsafe-fixes` over the changed files must change nothing. The other
   files need no second pass: the first one already left their bytes as a fixpoint.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from conftest import run_torchlint
from sweep.trees import Tree

SELECTION = ["--select", "ALL", "--isolated"]
TIMEOUT = 900  # seconds for one command; torch's 2,300 files take a few minutes on 2 cores
_FIXED = re.compile(r"^Fixed (\d+) findings? in \d+ files?:$", re.MULTILINE)
_PER_RULE = re.compile(r"^ +(\d+)  (TL\d{3}) ", re.MULTILINE)


@dataclass
class Sweep:
    tree: Tree
    findings: int = 0  # in the check of the original
    fixable: set[str] = field(default_factory=set)  # files the check offered an applicable fix in
    changed: list[str] = field(default_factory=list)
    applied: Counter = field(default_factory=Counter)  # fixes applied, per rule
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        rules = ", ".join(f"{code} {n}" for code, n in sorted(self.applied.items())) or "none"
        return (
            f"sweep {self.tree.name} (target {self.tree.target}): {len(self.tree.files)} files swept, "
            f"{self.findings} findings, {sum(self.applied.values())} fixes applied ({rules}), "
            f"{len(self.changed)} files changed, {len(self.failures)} failures, {self.seconds:.0f} s"
        )


def sweep(tree: Tree, root: Path) -> Sweep:
    """Copy `tree` under `root`, check it, fix it twice, and record every failure."""
    started = time.monotonic()
    tree.write(root)
    result = Sweep(tree)
    _check(result, root)
    _first_fix(result, root)
    _judge_changed(result, root)
    if result.changed:
        _second_fix(result, root)
    result.seconds = time.monotonic() - started
    return result


def _check(result: Sweep, root: Path) -> None:
    args = [
        "check",
        *SELECTION,
        "--target-torch-version",
        result.tree.target,
        "--exit-zero",
        "--output-format",
        "json",
        *sorted(result.tree.files),
    ]  # named, so no default exclude applies
    done = run_torchlint(*args, cwd=root, timeout=TIMEOUT)
    if done.returncode != 0:
        result.failures.append(f"check exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    try:
        found = json.loads(done.stdout)
    except json.JSONDecodeError:
        result.failures.append(f"check printed no JSON: {done.stderr.strip()[-2000:]}")
        return
    result.findings = len(found)
    result.failures += [
        f"check: {d['filename']}: {d['code']} {d['message']}" for d in found if d["code"] == "TL999"
    ]
    result.fixable = {d["filename"] for d in found if _applies(d["fix"])}


def _applies(fix: dict | None) -> bool:
    return fix is not None and fix["applicability"] in ("safe", "unsafe") and bool(fix["edits"])


def _first_fix(result: Sweep, root: Path) -> None:
    for done in _run_fix(result, root, sorted(result.tree.files), "fix"):
        per_rule = [(code, int(n)) for n, code in _PER_RULE.findall(done.stdout)]
        for code, n in per_rule:
            result.applied[code] += n
        if sum(int(n) for n in _FIXED.findall(done.stdout)) != sum(n for _, n in per_rule):
            result.failures.append(
                f"fix: the per-rule counts do not add up to the total:\n{done.stdout[:3000]}"
            )
    result.changed = [
        p for p in sorted(result.tree.files) if (root / p).read_bytes() != result.tree.files[p]
    ]


def _second_fix(result: Sweep, root: Path) -> None:
    before = {p: (root / p).read_bytes() for p in result.changed}
    for done in _run_fix(result, root, result.changed, "second fix"):
        if _FIXED.search(done.stdout):
            result.failures.append(f"second fix applied fixes again:\n{done.stdout[:3000]}")
    result.failures += [
        f"second fix changed {p}" for p in result.changed if (root / p).read_bytes() != before[p]
    ]


def _run_fix(
    result: Sweep, root: Path, paths: list[str], stage: str
) -> list[subprocess.CompletedProcess]:
    """`fix --apply --unsafe-fixes` over `paths`, one batch per core, all at once; records errors."""
    args = [
        "fix",
        *SELECTION,
        "--target-torch-version",
        result.tree.target,
        "--apply",
        "--unsafe-fixes",
    ]
    batches = _batches(root, paths)
    with ThreadPoolExecutor(len(batches)) as pool:
        runs = list(
            pool.map(lambda batch: run_torchlint(*args, *batch, cwd=root, timeout=TIMEOUT), batches)
        )
    for done in runs:
        if done.returncode not in (0, 1) or "TL999" in done.stdout + done.stderr:
            result.failures.append(
                f"{stage} exited {done.returncode}: {(done.stderr or done.stdout).strip()[-3000:]}"
            )
    return runs


def _batches(root: Path, paths: list[str]) -> list[list[str]]:
    """Split the paths into one batch per core with about the same number of bytes each."""
    batches: list[list[str]] = [[] for _ in range(min(os.cpu_count() or 1, len(paths)))]
    sizes = [0] * len(batches)
    for path in sorted(paths, key=lambda p: (root / p).stat().st_size, reverse=True):
        lightest = sizes.index(min(sizes))
        batches[lightest].append(path)
        sizes[lightest] += (root / path).stat().st_size
    return batches


def _judge_changed(result: Sweep, root: Path) -> None:
    """Changed files must be valid Python, and exactly the ones the check offered a fix in."""
    for path in result.changed:
        result.failures += [
            f"fixed {path} {problem}"
            for problem in _validity(path, root / path, result.tree.files[path])
        ]
    changed = set(result.changed)
    result.failures += [
        f"fix changed {p}, where the check offered no fix" for p in sorted(changed - result.fixable)
    ]
    result.failures += [
        f"fix left {p} unchanged, where the check offered a fix"
        for p in sorted(result.fixable - changed)
    ]


def _validity(name: str, path: Path, original: bytes) -> list[str]:
    data = path.read_bytes()
    problems = []
    try:
        cst.parse_module(data)
    except Exception as error:  # noqa: BLE001 - any failure to parse is the finding
        problems.append(f"does not parse with libcst: {type(error).__name__}: {str(error)[:500]}")
    if _compiles(original, name) is None and (error := _compiles(data, name)) is not None:
        problems.append(f"does not compile: {error}")
    return problems


def _compiles(data: bytes, name: str) -> str | None:
    try:
        compile(data, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return None
