"""Comparing two versions' runs: per-version figures, agreement, and the verdict.

Agreement is judged as numpy's `isclose` does, |a - b| <= atol + rtol * |b|, on every
loss passed to backward (matched by step and order within the step) and on the final
parameters matched by name. Parameters present in only one version (a bias the fix
removed) are listed, not compared; a parameter whose shape changed is a divergence.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from torchlint.verify.launch import RunOutcome

TOP_LINES = 5


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= self.atol + self.rtol * abs(b)


@dataclass
class Agreement:
    """How two runs agree; `diverged_in` is None when they agree within the tolerance."""

    losses_compared: int = 0
    loss_max_diff: float | None = None
    parameters_compared: int = 0
    parameter_max_diff: float | None = None
    only_in_first: list[str] = field(default_factory=list)
    only_in_second: list[str] = field(default_factory=list)
    diverged_at_step: int | None = None
    diverged_in: str | None = None  # "loss", "steps" or "parameters"
    detail: str | None = None

    def diverge(self, where: str, step: int | None, detail: str) -> None:
        """Keep the earliest divergence; parameters (compared at the end) come last."""
        if self.diverged_in is not None and (
            step is None or (self.diverged_at_step or math.inf) <= step
        ):
            return
        self.diverged_in, self.diverged_at_step, self.detail = where, step, detail


def agreement(
    first: dict[str, Any], second: dict[str, Any], tol: Tolerance, names: tuple[str, str]
) -> Agreement:
    """Compare two successful runs' results."""
    result = Agreement()
    compare_losses(first, second, tol, names, result)
    compare_steps(first, second, names, result)
    compare_parameters(first, second, tol, result)
    return result


def compare_losses(
    first: dict, second: dict, tol: Tolerance, names: tuple[str, str], result: Agreement
) -> None:
    a, b = by_step(first["losses"]), by_step(second["losses"])
    diffs: list[float] = []
    for step in sorted(set(a) | set(b)):
        left, right = a.get(step, []), b.get(step, [])
        if len(left) != len(right) and step <= min(first["steps"], second["steps"]):
            result.diverge(
                "loss",
                step,
                f"{len(left)} backward passes in the {names[0]}, {len(right)} in the {names[1]}",
            )
        for x, y in zip(left, right):
            diffs.append(abs(x - y) if not (math.isnan(x) and math.isnan(y)) else 0.0)
            if not tol.close(x, y):
                result.diverge(
                    "loss", step, f"loss {x:.6g} in the {names[0]}, {y:.6g} in the {names[1]}"
                )
    result.losses_compared = len(diffs)
    result.loss_max_diff = max(diffs) if diffs else None


def by_step(losses: list[list[float]]) -> dict[int, list[float]]:
    grouped: dict[int, list[float]] = defaultdict(list)
    for step, value in losses:
        grouped[int(step)].append(value)
    return grouped


def compare_steps(first: dict, second: dict, names: tuple[str, str], result: Agreement) -> None:
    if first["steps"] != second["steps"]:
        step = min(first["steps"], second["steps"]) + 1
        result.diverge(
            "steps",
            step,
            f"the {names[0]} ran {first['steps']} steps, the {names[1]} {second['steps']}",
        )


def compare_parameters(first: dict, second: dict, tol: Tolerance, result: Agreement) -> None:
    a = {p["name"]: p for p in first["parameters"]}
    b = {p["name"]: p for p in second["parameters"]}
    result.only_in_first = sorted(set(a) - set(b))
    result.only_in_second = sorted(set(b) - set(a))
    if a and b and not set(a) & set(b):
        result.diverge("parameters", None, "the two versions have no parameter name in common")
    diffs: list[float] = []
    for name in (n for n in a if n in b):
        x, y = a[name], b[name]
        if x["shape"] != y["shape"]:
            result.diverge(
                "parameters",
                None,
                f"{name} has shape {x['shape']} in one version, {y['shape']} in the other",
            )
            continue
        pairs = list(zip(x["values"], y["values"]))
        diffs.append(
            max(
                (abs(u - v) for u, v in pairs if not (math.isnan(u) and math.isnan(v))), default=0.0
            )
        )
        # The norm covers the elements a sample left out; a sum could cancel to near zero.
        bad = next(
            ((u, v) for u, v in [*pairs, (x["norm"], y["norm"])] if not tol.close(u, v)), None
        )
        if bad is not None:
            result.diverge(
                "parameters", None, f"final {name} differs: {bad[0]:.6g} vs {bad[1]:.6g}"
            )
    result.parameters_compared = len(diffs)
    result.parameter_max_diff = max(diffs) if diffs else None


def worst(agreements: list[Agreement]) -> Agreement:
    """One agreement summing up several pairs: the largest differences, the earliest divergence."""
    combined = Agreement()
    for item in agreements:
        combined.losses_compared = max(combined.losses_compared, item.losses_compared)
        combined.parameters_compared = max(combined.parameters_compared, item.parameters_compared)
        combined.loss_max_diff = _max(combined.loss_max_diff, item.loss_max_diff)
        combined.parameter_max_diff = _max(combined.parameter_max_diff, item.parameter_max_diff)
        combined.only_in_first = sorted(set(combined.only_in_first) | set(item.only_in_first))
        combined.only_in_second = sorted(set(combined.only_in_second) | set(item.only_in_second))
        if item.diverged_in is not None:
            combined.diverge(item.diverged_in, item.diverged_at_step, item.detail or "")
    return combined


def _max(a: float | None, b: float | None) -> float | None:
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None


def version_summary(
    outcomes: list[RunOutcome], source: str, flagged: dict[int, list[str]]
) -> dict[str, Any]:
    """One version's figures over its runs: step time, syncs, memory, the lines that sync most."""
    ok = [o for o in outcomes if o.ok]
    times = [t for o in ok for t in o.results["step_times_ms"]]
    summary: dict[str, Any] = {
        "runs": [
            {
                "status": o.status,
                "steps": o.results.get("steps", 0),
                "problem": o.problem,
                "wall_s": round(o.wall_s, 2),
            }
            for o in outcomes
        ],
        "steps": (ok or outcomes)[0].results.get("steps") if outcomes else None,
        "median_step_ms": statistics.median(times) if times else None,
        "syncs_per_step": _rate(ok, "syncs"),
        "cuda_syncs_per_step": _rate(ok, "cuda_syncs"),
        "peak_memory_bytes": max((o.results["peak_memory"]["bytes"] for o in ok), default=None),
        "memory_kind": ok[0].results["peak_memory"]["kind"] if ok else None,
        "device": ok[0].results["device"] if ok else None,
        "sync_lines": sync_lines(ok, source, flagged),
    }
    failed = next((o for o in outcomes if not o.ok), None)
    summary["problem"] = failed.problem if failed else None
    summary["stderr_tail"] = failed.stderr_tail if failed else None
    return summary


def _rate(ok: list[RunOutcome], key: str) -> float | None:
    """Per step over the steady steps (between the first and the last step end) of every run."""
    steps = sum(o.results["steady_steps"] for o in ok if o.results[key] is not None)
    return sum(o.results[key] for o in ok if o.results[key] is not None) / steps if steps else None


def sync_lines(
    ok: list[RunOutcome], source: str, flagged: dict[int, list[str]]
) -> list[dict[str, Any]]:
    """The script lines that synced most per step, with the rules that flag each (if any)."""
    steps = sum(o.results["steady_steps"] for o in ok)
    if not steps:
        return []
    totals: Counter[int] = Counter()
    for o in ok:
        totals.update({int(line): count for line, count in o.results["sync_lines"].items()})
    lines = source.splitlines()
    return [
        {
            "line": line,
            "per_step": count / steps,
            "text": lines[line - 1].strip() if 0 < line <= len(lines) else "(outside the script)",
            "flagged_by": flagged.get(line, []),
        }
        for line, count in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:TOP_LINES]
    ]


def verdict(
    labels: tuple[str, str], runs: dict[str, list[RunOutcome]], combined: Agreement | None
) -> tuple[str, str]:
    """`equivalent`, `diverged` or `failed`, and the reason in one sentence."""
    for label in labels:
        for i, outcome in enumerate(runs[label], 1):
            if outcome.problem is not None:
                which = f"the {label} (run {i})" if len(runs[label]) > 1 else f"the {label}"
                return "failed", f"{which} {outcome.problem}"
    assert combined is not None
    if combined.diverged_in is None:
        return "equivalent", "losses and final parameters agree within the tolerance"
    where = (
        f"at step {combined.diverged_at_step}"
        if combined.diverged_at_step is not None
        else "in the final parameters"
    )
    return "diverged", f"{where}: {combined.detail}"


def as_dict(item: Agreement) -> dict[str, Any]:
    return asdict(item)
