"""`torchlint verify`: the click command, for a script, two scripts, or the rule fixtures.

The parent never imports torch: it lints, makes the fixed text in memory, starts the
runners and compares what they wrote. Exit 0 equivalent, 1 diverged or failed, 2 usage.
"""

from __future__ import annotations

import signal
import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from torchlint.cli_options import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    emit,
    fail,
    load,
    selection_options,
)
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.engine.lint import SYNTAX_ERROR
from torchlint.fixes.apply import FixError, fix_to_fixpoint
from torchlint.verify import fixtures as fixture_pairs
from torchlint.verify.compare import Tolerance
from torchlint.verify.launch import SESSION, RunConfig, Version
from torchlint.verify.progress import Progress
from torchlint.verify.reaper import start_watchdog, stop_watchdog
from torchlint.verify.report import render
from torchlint.verify.session import (
    SetupError,
    compare_versions,
    gpu_only_codes,
    settings_entry,
    speed_note,
)
from torchlint.verify.sources import flagged_lines, linter, read_version

EXIT_INTERRUPTED = 130


@click.command()
@click.argument(
    "arguments",
    nargs=-1,
    type=click.UNPROCESSED,
    metavar="SCRIPT [-- SCRIPT_ARGS...] | --fixtures [RULE...]",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    help="Stop each run after N optimizer steps (default: run to completion).",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Runs of each version, alternating.",
)
@click.option(
    "--device",
    type=click.Choice(["auto", "cuda", "cpu"]),
    default="auto",
    show_default=True,
    help="Where the script runs.",
)
@click.option(
    "--unsafe-fixes", is_flag=True, help="Apply unsafe fixes too (verify is how they earn trust)."
)
@selection_options
@click.option(
    "--rtol",
    type=click.FloatRange(min=0),
    default=1e-4,
    show_default=True,
    help="Relative tolerance for losses and parameters.",
)
@click.option(
    "--atol",
    type=click.FloatRange(min=0),
    default=1e-5,
    show_default=True,
    help="Absolute tolerance for losses and parameters.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop a run that takes longer (per run).",
)
@click.option(
    "--output-format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report here.",
)
@click.option(
    "--against",
    "other",
    metavar="OTHER.py",
    help="Compare SCRIPT with OTHER.py instead of with SCRIPT's fixed version.",
)
@click.option(
    "--fixtures",
    "use_fixtures",
    is_flag=True,
    help="Run each rule's fixtures/<rule>/before.py against after.py.",
)
@click.option(
    "--scale",
    type=click.IntRange(min=1),
    help="Size of the fixtures (passed as --scale N; default 1).",
)
def verify(
    arguments,
    steps,
    repeat,
    device,
    unsafe_fixes,
    config_path,
    isolated,
    rtol,
    atol,
    timeout,
    output_format,
    output_file,
    other,
    use_fixtures,
    scale,
    **selection,
) -> None:
    """Run SCRIPT and its fixed version side by side and compare speed, syncs, memory and results.

    Both run in fresh processes with the same arguments, environment, working directory and
    seeds. Only this command ever executes code.
    """
    if use_fixtures and other is not None:
        fail("--fixtures and --against cannot be combined")
    if scale is not None and not use_fixtures:
        fail("--scale applies to --fixtures only")
    tol = Tolerance(rtol, atol)
    settings_args = dict(
        config_path=config_path, isolated=isolated, unsafe_fixes=unsafe_fixes, **selection
    )
    signal.signal(signal.SIGTERM, _terminated)  # so runners are killed and temp files removed
    signal.signal(signal.SIGHUP, _terminated)  # a closed terminal, likewise
    watchdog = start_watchdog(SESSION)  # and, should this process be killed outright, the watchdog
    report: list[dict[str, Any]] | dict[str, Any]
    try:
        if use_fixtures:
            config = RunConfig((), steps, device, timeout)
            report = fixture_pairs.run(
                list(arguments),
                config,
                repeat,
                tol,
                scale or 1,
                partial(_settings, **settings_args),
            )
            ok = all(r["verdict"] == r["expected"] for r in report)
        else:
            if not arguments:
                fail("missing SCRIPT (or --fixtures)")
            config = RunConfig(tuple(arguments[1:]), steps, device, timeout)
            single = _script_report(arguments[0], other, config, repeat, tol, settings_args)
            if single is None:
                sys.exit(EXIT_CLEAN)
            report, ok = single, single["verdict"] == "equivalent"
    except SetupError as error:
        fail(str(error))
    except KeyboardInterrupt:
        click.echo("torchlint: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        stop_watchdog(watchdog)
    emit(render(report, output_format), output_file)
    sys.exit(EXIT_CLEAN if ok else EXIT_FINDINGS)


def _terminated(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _settings(paths: tuple[str, ...], **settings_args: Any) -> Settings:
    return load(
        paths, settings_args.pop("config_path"), settings_args.pop("isolated"), **settings_args
    )


def _script_report(
    script: str,
    other: str | None,
    config: RunConfig,
    repeat: int,
    tol: Tolerance,
    settings_args: dict,
) -> dict | None:
    """The report for SCRIPT against its fixed version (or OTHER); None when no fix applies."""
    settings = _settings((script,), **settings_args)
    original = read_version("original", script)
    lint = linter(original.path, settings)
    if other is not None:
        second = read_version("other", other)
        flagged = {
            "original": flagged_lines(lint(original.text)),
            "other": flagged_lines(linter(second.path, settings)(second.text)),
        }
        fixes: list[Diagnostic] = []
    else:
        found = lint(original.text)
        if any(d.code == SYNTAX_ERROR[0] for d in found):
            fail(f"{original.shown}: {next(d.message for d in found if d.code == SYNTAX_ERROR[0])}")
        try:
            fixed = fix_to_fixpoint(original.text, lint, settings.unsafe_fixes)
        except FixError as error:
            fail(f"{original.shown}: {error}")
        if not fixed.applied:
            _nothing_to_verify(original.shown, found, settings.unsafe_fixes)
            return None
        second = Version("fixed", original.path, original.shown, fixed.text)
        flagged = {"original": flagged_lines(found), "fixed": flagged_lines(lint(fixed.text))}
        fixes = fixed.applied
    with Progress(1) as progress:
        progress.begin(original.shown)
        report = compare_versions(original, second, config, repeat, tol, flagged, progress)
        progress.end(report["verdict"])
    codes, device = [d.code for d in fixes], report["environment"]["device"]
    return {
        "script": original.shown,
        "against": second.shown if other is not None else None,
        "args": list(config.args),
        "fixes": [fix_entry(d) for d in fixes],
        "settings": settings_entry(config, repeat, tol),
        **report,
        "speed_note": speed_note(codes, device),
        "gpu_only_fixes": gpu_only_codes(codes, device),
    }


def fix_entry(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "name": d.name,
        "row": d.start.row,
        "column": d.start.column,
        "message": d.fix.message if d.fix else d.message,
    }


def _nothing_to_verify(shown: str, found: list[Diagnostic], unsafe: bool) -> None:
    hint = (
        ""
        if unsafe or not any(d.fixable for d in found)
        else " (some fixes are unsafe: add --unsafe-fixes to verify them)"
    )
    click.echo(f"torchlint verify: no fix applies to {shown}; nothing to verify{hint}", err=True)
