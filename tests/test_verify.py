"""`torchlint verify` end to end on the CPU: real runs of real scripts through the installed command."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, torchlint_executable

from torchlint.verify.compare import Tolerance, agreement
from torchlint.verify.report import render

SCRIPTS = Path(__file__).parent / "verify_scripts"
PAIRS = (
    sorted(
        d.name
        for d in FIXTURES.iterdir()
        if (d / "before.py").is_file() and (d / "after.py").is_file()
    )
    if FIXTURES.is_dir()
    else []
)


def run(*args: str, timeout: float = 240, **env: str) -> subprocess.CompletedProcess:
    """The installed `torchlint ARGS` in verify_scripts/.

    One intra-op thread: on a small shared CI machine, torch's thread pool waiting for
    descheduled threads makes tiny steps hundreds of times slower.
    """
    return subprocess.run(
        [torchlint_executable(), *args],
        cwd=SCRIPTS,
        env={**os.environ, "OMP_NUM_THREADS": "1", **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def verify(
    *args: str, timeout: float = 240
) -> tuple[subprocess.CompletedProcess, dict | list | None]:
    """Run `torchlint verify ARGS --output-format json`; the result and the parsed report."""
    result = run("verify", "--device", "cpu", "--output-format", "json", *args, timeout=timeout)
    report = json.loads(result.stdout) if result.stdout.strip() else None
    return result, report


@pytest.fixture(scope="module")
def fixtures_run() -> tuple[subprocess.CompletedProcess, list[dict]]:
    """One `verify --fixtures` over every pair, shared by the tests that read its report: each
    pair runs once (two torch processes), however many tests look at it."""
    if not PAIRS:
        pytest.skip("no fixture pairs in fixtures/ yet")
    result, reports = verify("--fixtures", timeout=900)
    assert result.returncode in (0, 1), result.stderr
    return result, reports


@pytest.fixture(scope="module")
def fixtures_report(fixtures_run) -> dict[str, dict]:
    return {r["rule"]: r for r in fixtures_run[1]}


@pytest.mark.parametrize("rule", PAIRS)
def test_fixture_pair_verdict_is_the_expected_one(fixtures_report, rule):
    """Equivalent, unless after.py declares that its fix changes the computation on purpose."""
    report = fixtures_report[rule]
    assert report["verdict"] == report["expected"], (
        report["reason"],
        report["versions"]["after"]["stderr_tail"],
    )
    assert report["agreement"]["losses_compared"] > 0
    assert report["agreement"]["parameters_compared"] > 0


@pytest.mark.skipif("host-sync-in-loop" not in PAIRS, reason="no host-sync-in-loop fixture yet")
def test_host_sync_fixture_syncs_once_per_step_before_and_almost_never_after(fixtures_report):
    report = fixtures_report["host-sync-in-loop"]
    before, after = report["versions"]["before"], report["versions"]["after"]
    assert before["syncs_per_step"] >= 0.95
    assert after["syncs_per_step"] <= 0.2
    top = before["sync_lines"][0]
    assert top["per_step"] >= 0.95 and "TL002" in top["flagged_by"], top


def test_fixtures_table_fits_100_columns_and_marks_gpu_only_speed(fixtures_run):
    """A GPU-only rule's CPU speed reads "needs a GPU", in the table and in the JSON. The table is
    the text the command prints for this JSON report (`render`, as `--output-format text`)."""
    result, reports = fixtures_run
    lines = render(reports, "text").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("rule "))
    assert lines[header].split()[:3] == ["rule", "ms", "before"]
    rows = {line.split()[0]: line for line in lines[header + 1 : header + 1 + len(reports)]}
    assert "needs a GPU" in rows["TL004"] and "needs a GPU" not in rows["TL003"]
    assert "needs a GPU" in rows["TL110"]  # cuDNN autotuning too
    listed = "".join("".join(lines).split("rules:", 1)[1].split())  # wrapped, also at hyphens
    assert "TL003tensor-from-numpy," in listed and "TL004data-parallel," in listed
    assert "which CPU timings cannot show" in "\n".join(lines)
    end = header + 1 + len(reports)
    rules_end = lines.index("", end + 1) if "" in lines[end + 1 :] else len(lines)
    table = lines[:rules_end]  # the setup lines, the table and the rules under it
    assert max(len(line) for line in table) <= 100, "\n".join(table)
    by_rule = {r["rule"]: r for r in reports}
    assert by_rule["cudnn-benchmark-off"]["speed_note"] == "needs a GPU"
    assert by_rule["tensor-from-numpy"]["speed_note"] is None
    assert "speedup" in by_rule["data-parallel"]
    count = len(reports)
    assert re.search(rf"^\[\d+/{count}\] TL004 data-parallel: equivalent", result.stderr, re.M), (
        result.stderr
    )  # one plain line per fixture off a terminal
    assert "\r" not in result.stderr and "\x1b" not in result.stderr


def test_fixtures_rejects_an_unknown_rule():
    result = run("verify", "--fixtures", "no-such-rule")
    assert result.returncode == 2
    assert "no fixture for 'no-such-rule'" in result.stderr


def test_changed_learning_rate_diverges_at_the_first_step_after_the_update():
    result, report = verify("train.py", "--against", "train_lr.py")
    assert result.returncode == 1, result.stderr
    assert report["verdict"] == "diverged"
    # Step 1's loss comes before any update, so it agrees; the rates differ from step 2 on.
    assert report["agreement"]["diverged_at_step"] == 2
    assert report["agreement"]["diverged_in"] == "loss"
    assert report["reason"].startswith("at step 2: loss ")


def test_same_script_is_equivalent_stops_after_steps_and_attributes_syncs(tmp_path):
    result = run(
        "verify",
        "train.py",
        "--against",
        "train.py",
        "--steps",
        "3",
        "--repeat",
        "2",
        "--device",
        "cpu",
        "--output-format",
        "json",
        TMPDIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "equivalent"
    assert (
        report["agreement"]["loss_max_diff"] == 0 and report["agreement"]["parameter_max_diff"] == 0
    )
    assert report["run_to_run"]["diverged_in"] is None
    original = report["versions"]["original"]
    assert [run["steps"] for run in original["runs"]] == [3, 3]
    assert [run["status"] for run in original["runs"]] == ["stopped", "stopped"]
    assert original["syncs_per_step"] == 1.0  # the loss.item() in the print of every step
    line = (SCRIPTS / "train.py").read_text().splitlines().index(
        '        print(f"step {step}: loss {loss.item():.5f}")'
    ) + 1
    assert original["sync_lines"][0]["line"] == line
    assert original["sync_lines"][0]["per_step"] == 1.0
    assert not list(
        tmp_path.glob("torchlint-verify-*")
    )  # the runs' temporary files are gone (torch keeps its own)


def test_fixed_version_of_a_script_runs_and_is_compared(tmp_path):
    output = tmp_path / "report.md"
    result = run(
        "verify",
        "numpy_input.py",
        "--unsafe-fixes",
        "--select",
        "TL003",
        "--device",
        "cpu",
        "--output-format",
        "markdown",
        "-o",
        str(output),
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    text = output.read_text()
    assert "### torchlint verify: numpy_input.py vs its fixed version" in text
    assert "TL003 tensor-from-numpy (line 13)" in text
    assert "**verdict: equivalent" in text


def test_without_an_applicable_fix_nothing_runs():
    result = run("verify", "numpy_input.py", "--select", "TL003")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "no fix applies to numpy_input.py" in result.stderr and "--unsafe-fixes" in result.stderr


def test_crash_of_the_other_version_is_reported_with_its_traceback():
    result, report = verify("train.py", "--against", "crash.py")
    assert result.returncode == 1
    assert report["verdict"] == "failed"
    assert (
        report["reason"]
        == "the other crashed: RuntimeError: deliberate failure after step 2 (line 12)"
    )
    tail = report["versions"]["other"]["stderr_tail"]
    assert 'crash.py", line 12, in <module>' in tail and "runner.py" not in tail


def test_hanging_script_is_stopped_at_the_timeout_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    result = run(
        "verify",
        "hang.py",
        "--against",
        "train.py",
        "--timeout",
        "12",
        "--device",
        "cpu",
        "--",
        str(pid_file),
        timeout=120,
    )
    assert result.returncode == 1
    assert "verdict: FAILED: the original timed out after 12 s" in result.stdout
    assert "hang.py" in result.stdout.split("stderr of the original")[1]  # where it hung
    child = int(pid_file.read_text())
    assert not _alive(child), "the script's child process outlived the run"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie is dead, waiting for init to reap it


def test_script_that_never_steps_is_reported():
    result, report = verify("no_optimizer.py", "--against", "train.py")
    assert result.returncode == 1
    assert (
        report["reason"]
        == "the original never called optimizer.step(): there is nothing to compare"
    )
    assert report["versions"]["other"]["runs"] == []  # nothing to compare against: not started


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.py"], "missing.py: no such file"),
        ([], "missing SCRIPT"),
        (["train.py", "--scale", "2"], "--scale applies to --fixtures only"),
        (["--fixtures", "--against", "train.py"], "cannot be combined"),
        (["train.py", "--steps", "0"], "Invalid value for '--steps'"),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = run("verify", *args)
    assert result.returncode == 2
    assert message in result.stderr


def test_cuda_without_a_gpu_is_a_usage_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    result = run("verify", "train.py", "--against", "train.py", "--device", "cuda", timeout=120)
    assert result.returncode == 2
    assert "no CUDA device is available" in result.stderr


# -- the comparison itself, on results as the runner writes them -------------------------------
def _results(losses, parameters, steps=None):
    steps = steps if steps is not None else max((s for s, _ in losses), default=0)
    return {"steps": steps, "losses": [[s, v] for s, v in losses], "parameters": parameters}


def _parameter(name, values, shape=None):
    return {
        "name": name,
        "shape": shape or [len(values)],
        "values": values,
        "norm": sum(v * v for v in values) ** 0.5,
        "sum": sum(values),
    }


def _agreement(first, second):
    return agreement(first, second, Tolerance(1e-4, 1e-5), ("before", "after"))


def test_a_parameter_only_one_version_has_is_listed_not_compared():
    weight = _parameter("conv.weight", [0.5, -0.25])
    result = _agreement(
        _results([(1, 2.0), (2, 1.5)], [weight, _parameter("conv.bias", [0.1])]),
        _results([(1, 2.0), (2, 1.5 + 1e-9)], [weight]),
    )
    assert result.diverged_in is None
    assert result.only_in_first == ["conv.bias"] and result.only_in_second == []
    assert result.parameters_compared == 1 and result.losses_compared == 2


def test_a_changed_shape_or_value_diverges_in_the_parameters():
    result = _agreement(
        _results([(1, 1.0)], [_parameter("w", [1.0, 2.0])]),
        _results([(1, 1.0)], [_parameter("w", [1.0])]),
    )
    assert result.diverged_in == "parameters" and "shape" in result.detail
    result = _agreement(
        _results([(1, 1.0)], [_parameter("w", [1.0, 2.0])]),
        _results([(1, 1.0)], [_parameter("w", [1.0, 2.1])]),
    )
    assert result.diverged_in == "parameters" and result.diverged_at_step is None
    assert result.parameter_max_diff == pytest.approx(0.1)


def test_the_earliest_difference_is_the_divergence():
    nan = float("nan")
    result = _agreement(
        _results([(1, nan), (2, 1.0), (3, 5.0), (3, 1.0)], [_parameter("w", [3.0])]),
        _results([(1, nan), (2, 1.0), (3, 5.0)], [_parameter("w", [9.0])]),
    )
    assert result.diverged_in == "loss" and result.diverged_at_step == 3
    assert "2 backward passes in the before, 1 in the after" in result.detail
    result = _agreement(_results([(1, 1.0), (2, 1.0)], []), _results([(1, 1.0)], []))
    assert result.diverged_in == "steps" and result.diverged_at_step == 2
