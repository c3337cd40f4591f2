"""`torchlint verify --fixtures [RULE...]`: each rule's before/after pair, one row per rule.

A fixture is `fixtures/<rule-name>/before.py` (the pattern the rule flags) and `after.py`
(the hand-written fix), both accepting `--scale N`. The pair runs through the same
machinery as `verify BEFORE --against AFTER`. A pair is expected to be equivalent unless
after.py says otherwise in a comment line `# torchlint-verify: expect diverged` (a fix that
changes the computation on purpose, such as Adam's L2 term becoming AdamW's decay), or
`# torchlint-verify: expect diverged on cuda` for one that changes it only on that device
(TF32 and half-precision kernels exist only on the GPU).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torchlint
from torchlint.cli_options import fail
from torchlint.config import Settings
from torchlint.engine.run import display_path
from torchlint.registry import find_rule, matches
from torchlint.verify.compare import Tolerance
from torchlint.verify.launch import RunConfig
from torchlint.verify.progress import Progress
from torchlint.verify.session import compare_versions, settings_entry, speed_note
from torchlint.verify.sources import flagged_lines, linter, read_version

EXPECT = re.compile(
    r"^#\s*torchlint-verify:\s*expect\s+(equivalent|diverged)(?:\s+on\s+(cuda|cpu))?\s*$",
    re.MULTILINE,
)


def fixtures_root() -> Path | None:
    """fixtures/ shipped in the package (a wheel), else next to it (a source checkout)."""
    package = Path(torchlint.__file__).resolve().parent
    for candidate in (package / "fixtures", package.parent / "fixtures"):
        if candidate.is_dir():
            return candidate
    return None


def pairs(root: Path) -> list[Path]:
    """Fixture directories holding both halves, in rule-code order (unknown rules last)."""
    found = [
        d for d in root.iterdir() if (d / "before.py").is_file() and (d / "after.py").is_file()
    ]
    return sorted(found, key=lambda d: (_code(d) == "-", _code(d), d.name))


def _code(directory: Path) -> str:
    rule = find_rule(directory.name)
    return rule.code if rule else "-"


def expected_verdict(after_text: str, device: str | None) -> str:
    """The verdict after.py declares for the device that ran it: a line naming the device
    (`expect diverged on cuda`: TF32 or half precision change results only on a GPU) wins over
    one naming none; equivalent when nothing is declared."""
    found: dict[str | None, str] = {
        match.group(2): match.group(1) for match in EXPECT.finditer(after_text)
    }
    return found.get(device) or found.get(None) or "equivalent"


def select(found: list[Path], selectors: list[str]) -> list[Path]:
    """The fixtures RULE selectors (codes, prefixes, names) pick; exit 2 on one that picks none."""
    if not selectors:
        return found
    chosen: set[Path] = set()
    for selector in selectors:
        hits = [
            d
            for d in found
            if d.name == selector.lower()
            or ((rule := find_rule(d.name)) and matches(rule, selector))
        ]
        if not hits:
            names = ", ".join(d.name for d in found) or "none"
            fail(f"no fixture for {selector!r} (fixtures: {names})")
        chosen.update(hits)
    return [d for d in found if d in chosen]


def run(
    selectors: list[str],
    config: RunConfig,
    repeat: int,
    tol: Tolerance,
    scale: int,
    settings_for: Callable[..., Settings],
) -> list[dict[str, Any]]:
    root = fixtures_root()
    if root is None:
        fail("no fixtures/ directory found next to the torchlint package")
    config = RunConfig(("--scale", str(scale)), config.steps, config.device, config.timeout)
    chosen = select(pairs(root), selectors)
    reports = []
    with Progress(len(chosen)) as progress:
        for directory in chosen:
            progress.begin(f"{_code(directory)} {directory.name}")
            reports.append(
                fixture_report(directory, config, repeat, tol, scale, settings_for, progress)
            )
            progress.end(reports[-1]["verdict"])
    return reports


def fixture_report(
    directory: Path,
    config: RunConfig,
    repeat: int,
    tol: Tolerance,
    scale: int,
    settings_for: Callable[..., Settings],
    progress: Progress,
) -> dict[str, Any]:
    before = read_version("before", display_path(directory / "before.py"))
    after = read_version("after", display_path(directory / "after.py"))
    settings = settings_for((str(before.path),))
    rule = find_rule(directory.name)
    if rule is not None and rule.preview:  # a preview rule's own fixture shows what it flags
        settings = replace(settings, preview=True)
    flagged = {v.label: flagged_lines(linter(v.path, settings)(v.text)) for v in (before, after)}
    compared = compare_versions(before, after, config, repeat, tol, flagged, progress)
    device = compared["environment"]["device"]
    return {
        "rule": directory.name,
        "rule_code": _code(directory),
        "expected": expected_verdict(after.text, device),
        "script": before.shown,
        "against": after.shown,
        "args": list(config.args),
        "fixes": [],
        "settings": settings_entry(config, repeat, tol, scale),
        **compared,
        "speed_note": speed_note([_code(directory)], device),
    }
