"""Rendering a verify report (a plain dict, also the JSON output) as text or markdown.

The dict is built by `command.py`; its keys are the JSON contract:
`script`, `against`, `labels`, `args`, `fixes`, `settings`, `environment`, `versions`
(per label: `median_step_ms`, `syncs_per_step`, `cuda_syncs_per_step`, `peak_memory_bytes`,
`memory_kind`, `sync_lines`, `runs`, `problem`, `stderr_tail`), `speedup`, `agreement`,
`run_to_run`, `verdict` (`equivalent` / `diverged` / `failed`) and `reason`; `speed_note`
("needs a GPU" when a fix measured off a GPU saves only GPU work) and `gpu_only_fixes` (their codes).
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from typing import Any

VERDICT_WORDS = {"equivalent": "equivalent", "diverged": "DIVERGED", "failed": "FAILED"}


def render(report: dict[str, Any] | list[dict[str, Any]], output_format: str) -> str:
    if output_format == "json":
        return json.dumps(report, indent=2) + "\n"
    if isinstance(report, list):
        return fixtures_markdown(report) if output_format == "markdown" else fixtures_text(report)
    return markdown(report) if output_format == "markdown" else text(report)


# -- numbers -------------------------------------------------------------------------------
def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} ms" if value >= 100 else f"{value:.3g} ms"


def mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.1f} MiB"


def per_step(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def diff(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def speedup(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


# -- one script ----------------------------------------------------------------------------
def rows(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The side-by-side table: (what, first version, second version, change)."""
    first, second = (report["versions"][label] for label in report["labels"])
    memory = (
        "peak memory (CUDA)"
        if "cuda" in (first["memory_kind"], second["memory_kind"])
        else "peak memory (RSS)"
    )
    table = [
        ("steps", _steps(first), _steps(second), ""),
        (
            "median step time",
            ms(first["median_step_ms"]),
            ms(second["median_step_ms"]),
            speed_change(report),
        ),
        (
            "host syncs per step",
            per_step(first["syncs_per_step"]),
            per_step(second["syncs_per_step"]),
            "",
        ),
    ]
    if first["cuda_syncs_per_step"] is not None or second["cuda_syncs_per_step"] is not None:
        table.append(
            (
                "CUDA syncs per step",
                per_step(first["cuda_syncs_per_step"]),
                per_step(second["cuda_syncs_per_step"]),
                "",
            )
        )
    table.append((memory, mib(first["peak_memory_bytes"]), mib(second["peak_memory_bytes"]), ""))
    return table


def any_run_ok(report: dict[str, Any]) -> bool:
    return any(
        run["problem"] is None for version in report["versions"].values() for run in version["runs"]
    )


def speed_change(report: dict[str, Any]) -> str:
    """The speed column: the ratio, "needs a GPU" instead when every fix saves only GPU work,
    and the ratio with the GPU-only fixes named when they are mixed with others (the ratio then
    measures the others only)."""
    ratio, note = change(report["speedup"]), report.get("speed_note")
    if not note:
        return ratio
    gpu = report.get("gpu_only_fixes") or []
    if not ratio or all(f["code"] in gpu for f in report.get("fixes", [])):
        return note
    return f"{ratio}; {', '.join(gpu)} {note}"


def gpu_note(report: dict[str, Any]) -> str:
    """The line under the table that says why the speed figure is not the whole story."""
    gpu = report.get("gpu_only_fixes") or []
    if all(f["code"] in gpu for f in report.get("fixes", [])):
        return GPU_ONLY_NOTE
    return (
        f"needs a GPU: {', '.join(gpu)} saves work that exists only on a GPU; "
        "the ratio measures the other fixes"
    )


def change(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.2f}x faster" if value >= 1 else f"{1 / value:.2f}x slower"


def agreement_lines(report: dict[str, Any]) -> list[str]:
    agreement = report["agreement"]
    if not agreement:
        return []
    labels = report["labels"]
    lines = [
        f"losses: {agreement['losses_compared']} compared, max |diff| {diff(agreement['loss_max_diff'])}",
        f"final parameters: {agreement['parameters_compared']} tensors compared, max |diff| {diff(agreement['parameter_max_diff'])}",
    ]
    for key, label in (("only_in_first", labels[0]), ("only_in_second", labels[1])):
        if agreement[key]:
            lines.append(f"parameters only in the {label}: {', '.join(agreement[key])}")
    noise = report.get("run_to_run")
    if noise and noise["diverged_in"] is not None:
        lines.append(f"note: the {labels[0]} does not reproduce itself ({noise['detail']})")
    return lines


def _steps(version: dict[str, Any]) -> str:
    return "-" if version["steps"] is None else str(version["steps"])


def headline(report: dict[str, Any]) -> str:
    if report["against"] is not None:
        return f"torchlint verify: {report['script']} vs {report['against']}"
    return f"torchlint verify: {report['script']} vs its fixed version"


def setup_line(report: dict[str, Any]) -> str:
    settings, env = report["settings"], report["environment"]
    steps = (
        f"{settings['steps']} steps per run"
        if settings["steps"] is not None
        else "each run to completion"
    )
    runs = (
        f"{settings['repeat']} runs of each, alternating"
        if settings["repeat"] > 1
        else "1 run of each"
    )
    return f"{steps}, {runs}; {device_words(env)}"


def device_words(env: dict[str, Any]) -> str:
    if not env.get("python"):
        return "the runs reported no environment"
    threads = env.get("threads")
    cpu = f"CPU {env['cpu']}" + (
        f" ({threads} thread{'s' if threads != 1 else ''})" if threads else ""
    )
    where = f"GPU {env['gpu']}" if env.get("device") == "cuda" and env.get("gpu") else cpu
    return f"{where}, torch {env.get('torch') or 'not installed'}, Python {env['python']}"


def fixes_lines(report: dict[str, Any]) -> list[str]:
    fixes = report["fixes"]
    if report["against"] is not None:
        return []
    if not fixes:
        return ["no fixes applied"]
    noun = "fix" if len(fixes) == 1 else "fixes"
    return [f"{len(fixes)} {noun} applied:"] + [
        f"  {f['code']} {f['name']} (line {f['row']}): {f['message']}" for f in fixes
    ]


def verdict_line(report: dict[str, Any]) -> str:
    settings = report["settings"]
    line = f"verdict: {VERDICT_WORDS[report['verdict']]}: {report['reason']}"
    if report["verdict"] != "failed":
        line += f" (rtol={settings['rtol']:g}, atol={settings['atol']:g})"
    if report["fixes"]:
        counts = Counter(f["code"] for f in report["fixes"])
        line += "; fixes applied: " + ", ".join(
            f"{code} x{n}" if n > 1 else code for code, n in sorted(counts.items())
        )
    return line


def sync_line_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(version, line, syncs per step, code, flagged by) for the lines that sync most."""
    found = []
    for label in report["labels"]:
        for item in report["versions"][label]["sync_lines"]:
            flag = (
                ", ".join(item["flagged_by"]) if item["flagged_by"] else "not flagged by any rule"
            )
            found.append((label, str(item["line"]), per_step(item["per_step"]), item["text"], flag))
    return found


def text(report: dict[str, Any]) -> str:
    labels = report["labels"]
    out = [headline(report), setup_line(report), *fixes_lines(report)]
    if any_run_ok(report):
        table = [("", labels[0], labels[1], ""), *rows(report)]
        out.append("")
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        out += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        out += agreement_lines(report)
        if report.get("speed_note"):
            out.append(gpu_note(report))
    synced = sync_line_rows(report)
    if synced:
        out += ["", "lines that sync most (per step):"]
        out += [
            f"  {label:<8} line {line:<5} {count:>6}  {code}  [{flag}]"
            for label, line, count, code, flag in synced
        ]
    out += ["", verdict_line(report)]
    for label in labels:
        tail_text = report["versions"][label]["stderr_tail"]
        if tail_text:
            out += [
                f"stderr of the {label} (last lines):",
                *("  " + line for line in tail_text.splitlines()),
            ]
    return "\n".join(out) + "\n"


def markdown(report: dict[str, Any]) -> str:
    labels = report["labels"]
    out = [f"### {headline(report)}", "", setup_line(report) + ".", ""]
    fixes = fixes_lines(report)
    if fixes:
        out += [fixes[0], *(f"- {line.strip()}" for line in fixes[1:]), ""]
    if any_run_ok(report):
        out += [f"| | {labels[0]} | {labels[1]} | |", "|---|---:|---:|---|"]
        out += [f"| {what} | {a} | {b} | {c} |" for what, a, b, c in rows(report)]
    out += ["", *(f"- {line}" for line in agreement_lines(report))] if report["agreement"] else []
    if any_run_ok(report) and report.get("speed_note"):
        out += ["", f"_{gpu_note(report)}._"]
    synced = sync_line_rows(report)
    if synced:
        out += [
            "",
            "| version | line | syncs per step | code | flagged by |",
            "|---|---:|---:|---|---|",
        ]
        out += [
            f"| {label} | {line} | {count} | `{code}` | {flag} |"
            for label, line, count, code, flag in synced
        ]
    out += ["", f"**{verdict_line(report)}**"]
    for label in labels:
        tail_text = report["versions"][label]["stderr_tail"]
        if tail_text:
            out += ["", f"stderr of the {label}:", "```", tail_text, "```"]
    return "\n".join(out) + "\n"


# -- the fixtures table --------------------------------------------------------------------
# One row per rule, within 100 columns: the rule's name is in the lines below the table.
FIXTURE_HEADER = (
    "rule",
    "ms before",
    "ms after",
    "speedup",
    "syncs/step",
    "peak MiB",
    "loss diff",
    "param diff",
    "verdict",
)
GPU_ONLY_NOTE = (
    "needs a GPU: these fixes save work that exists only on a GPU, which CPU timings cannot show"
)


def _number(value: float | None, digits: str = ".3g") -> str:
    return "-" if value is None else format(value, digits)


def fixture_row(report: dict[str, Any]) -> tuple[str, ...]:
    before, after = (report["versions"][label] for label in report["labels"])
    agreement = report["agreement"] or {}
    memory = [
        None if v["peak_memory_bytes"] is None else v["peak_memory_bytes"] / 2**20
        for v in (before, after)
    ]
    return (
        report["rule_code"],
        _number(before["median_step_ms"]),
        _number(after["median_step_ms"]),
        report.get("speed_note") or speedup(report["speedup"]),
        f"{per_step(before['syncs_per_step'])}>{per_step(after['syncs_per_step'])}",
        f"{_number(memory[0], '.0f')}>{_number(memory[1], '.0f')}",
        diff(agreement.get("loss_max_diff")),
        diff(agreement.get("parameter_max_diff")),
        fixture_verdict(report, short=True),
    )


# In the table an expected divergence is marked, not spelled out, so the table fits 100 columns.
EXPECTED_NOTE = "*: expected (the fixture's after.py changes the computation on purpose)"


def fixture_verdict(report: dict[str, Any], short: bool = False) -> str:
    if not _expected(report):
        return VERDICT_WORDS[report["verdict"]]
    return VERDICT_WORDS[report["verdict"]] + ("*" if short else " (expected)")


def _expected(report: dict[str, Any]) -> bool:
    return report["verdict"] == report["expected"] != "equivalent"


def fixtures_text(reports: list[dict[str, Any]]) -> str:
    table = [FIXTURE_HEADER, *(fixture_row(r) for r in reports)]
    widths = [max(len(row[i]) for row in table) for i in range(len(FIXTURE_HEADER))]
    out = [*textwrap.wrap(_fixtures_setup(reports), 100), ""]
    out += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    out += [
        "",
        *textwrap.wrap(
            "rules: " + ", ".join(f"{r['rule_code']} {r['rule']}" for r in reports), 100
        ),
    ]
    if any(r.get("speed_note") for r in reports):
        out.append(GPU_ONLY_NOTE + ".")
    if any(_expected(r) for r in reports):
        out.append(EXPECTED_NOTE + ".")
    for report in (r for r in reports if r["verdict"] != "equivalent"):
        out += [
            "",
            f"{report['rule_code']} {report['rule']}: {fixture_verdict(report)}: {report['reason']}",
        ]
        for label in report["labels"]:
            tail_text = report["versions"][label]["stderr_tail"]
            if tail_text:
                out += [
                    f"stderr of {label}.py (last lines):",
                    *("  " + line for line in tail_text.splitlines()),
                ]
    return "\n".join(out) + "\n"


def fixtures_markdown(reports: list[dict[str, Any]]) -> str:
    out = [
        _fixtures_setup(reports) + ".",
        "",
        "| " + " | ".join(FIXTURE_HEADER) + " |",
        "|---|" + "---:|" * 7 + "---|",
    ]
    out += ["| " + " | ".join(fixture_row(r)) + " |" for r in reports]
    problems = [
        f"- {r['rule_code']} {r['rule']}: {fixture_verdict(r)}: {r['reason']}"
        for r in reports
        if r["verdict"] != "equivalent"
    ]
    notes = [f"_{GPU_ONLY_NOTE}._"] if any(r.get("speed_note") for r in reports) else []
    notes += [f"_{EXPECTED_NOTE}._"] if any(_expected(r) for r in reports) else []
    return (
        "\n".join(out + ([""] + problems if problems else []) + ([""] + notes if notes else []))
        + "\n"
    )


def _fixtures_setup(reports: list[dict[str, Any]]) -> str:
    if not reports:
        return "no fixtures"
    first = reports[0]
    scale = first["settings"]["scale"]
    return f"torchlint verify --fixtures (scale {scale}): {setup_line(first)}"
