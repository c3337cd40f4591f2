"""One comparison: run two versions alternately, then build the report dict.

The first version runs first in every round; when its first run already fails there is
nothing to compare against, so the second is not started (a hang would cost a second
timeout for nothing). Temporary files live in one directory removed on every exit path.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from torchlint.verify.compare import (
    Tolerance,
    agreement,
    as_dict,
    verdict,
    version_summary,
    worst,
)
from torchlint.verify.launch import RunConfig, RunOutcome, Version, run_version
from torchlint.verify.progress import Progress

SETUP_STATUSES = ("no-torch", "no-cuda")


class SetupError(Exception):
    """The runs cannot start at all here (no torch, no CUDA device): a usage error."""


def compare_versions(
    first: Version,
    second: Version,
    config: RunConfig,
    repeat: int,
    tol: Tolerance,
    flagged: dict[str, dict[int, list[str]]],
    progress: Progress,
) -> dict[str, Any]:
    """Run both versions `repeat` times, alternating, and describe how they compare."""
    runs: dict[str, list[RunOutcome]] = {first.label: [], second.label: []}
    with tempfile.TemporaryDirectory(prefix="torchlint-verify-") as tmp:
        index = 0
        for attempt in range(1, repeat + 1):
            for version in (first, second):
                progress.run(version.label, attempt, repeat)
                outcome = run_version(version, config, Path(tmp), index)
                index += 1
                if outcome.status in SETUP_STATUSES:
                    raise SetupError(outcome.problem)
                runs[version.label].append(outcome)
                if version is first and not outcome.ok:
                    break
            if any(not o.ok for outcomes in runs.values() for o in outcomes):
                break
    return build(first, second, runs, tol, flagged)


def build(
    first: Version,
    second: Version,
    runs: dict[str, list[RunOutcome]],
    tol: Tolerance,
    flagged: dict,
) -> dict[str, Any]:
    labels = (first.label, second.label)
    versions = {
        v.label: version_summary(runs[v.label], v.text, flagged.get(v.label, {}))
        for v in (first, second)
    }
    pairs = list(zip(runs[first.label], runs[second.label]))
    combined = None
    if pairs and all(a.ok and b.ok for a, b in pairs):
        combined = worst([agreement(a.results, b.results, tol, labels) for a, b in pairs])
    originals = [o for o in runs[first.label] if o.ok]
    noise = (
        agreement(originals[0].results, originals[1].results, tol, (first.label, first.label))
        if len(originals) > 1
        else None
    )
    outcome, reason = verdict(labels, runs, combined)
    before, after = (
        versions[first.label]["median_step_ms"],
        versions[second.label]["median_step_ms"],
    )
    return {
        "labels": list(labels),
        "environment": environment(
            runs, versions[first.label]["device"] or versions[second.label]["device"]
        ),
        "versions": versions,
        "speedup": before / after if before and after else None,
        "agreement": as_dict(combined) if combined else None,
        "run_to_run": as_dict(noise) if noise else None,
        "verdict": outcome,
        "reason": reason,
    }


def environment(runs: dict[str, list[RunOutcome]], device: str | None) -> dict[str, Any]:
    """Where the runs ran, from the first run that reported it."""
    found: dict[str, Any] = next(
        (o.results["environment"] for outcomes in runs.values() for o in outcomes if o.results), {}
    )
    return {
        "python": None,
        "cpu": None,
        "threads": None,
        "gpu": None,
        "torch": None,
        **found,
        "device": device,
    }


def gpu_only_codes(codes: list[str], device: str | None) -> list[str]:
    """The codes among `codes` whose fixes save work that exists only on a GPU (`Rule.gpu_only`),
    when the runs were not on one: the speed figure cannot show what those fixes buy."""
    from torchlint.registry import find_rule

    if device == "cuda":
        return []
    return sorted(
        {code for code in codes if (rule := find_rule(code)) is not None and rule.gpu_only}
    )


def speed_note(codes: list[str], device: str | None) -> str | None:
    """ "needs a GPU" whenever a fix measured off a GPU saves only GPU work, alone or mixed with others."""
    return "needs a GPU" if gpu_only_codes(codes, device) else None


def settings_entry(
    config: RunConfig, repeat: int, tol: Tolerance, scale: int | None = None
) -> dict[str, Any]:
    return {
        "steps": config.steps,
        "repeat": repeat,
        "device": config.device,
        "rtol": tol.rtol,
        "atol": tol.atol,
        "timeout": config.timeout,
        "scale": scale,
    }
