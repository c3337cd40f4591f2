"""Hostile files and rule crashes, through the installed command: one clear line for the
file, the run goes on, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import run_torchlint

SLOW = "import torch\nfrom torch import nn\nmodel = nn.DataParallel(model)\n"


def _check(tmp_path: Path, *args: str):
    result = run_torchlint(
        "check", ".", "--no-cache", "--output-format", "json", *args, cwd=tmp_path
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result, json.loads(result.stdout or "[]")


def _by_file(findings):
    table: dict[str, list[str]] = {}
    for f in findings:
        table.setdefault(Path(f["filename"]).name, []).append(f["code"])
    return table


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("invalid_utf8.py", SLOW.encode() + b"x = '\xff\xfe'\n", ["TL000"]),
        ("bom.py", b"\xef\xbb\xbf" + SLOW.encode(), ["TL004"]),
        (
            "latin1.py",
            b"# -*- coding: latin-1 -*-\n" + SLOW.encode() + b"name = '\xe9t\xe9'\n",
            ["TL004"],
        ),
        ("crlf.py", SLOW.replace("\n", "\r\n").encode(), ["TL004"]),
        (
            "mixed.py",
            b"import torch\r\nfrom torch import nn\nmodel = nn.DataParallel(model)\r\n",
            ["TL004"],
        ),
        (
            "formfeed.py",
            b"import torch\n\x0c\nfrom torch import nn\nmodel = nn.DataParallel(model)\n",
            ["TL004"],
        ),
        (
            "tabs.py",
            b"import torch\nfrom torch import nn\nif True:\n\tmodel = nn.DataParallel(model)\n",
            ["TL004"],
        ),
        ("nullbyte.py", SLOW.encode() + b"x = 1\x00\n", ["TL000"]),
        (
            "deep.py",
            ("import torch\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n").encode(),
            ["TL000"],
        ),
    ],
)
def test_hostile_file_gives_one_line_and_the_run_goes_on(tmp_path, name, data, expected):
    (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text(SLOW)
    result, findings = _check(tmp_path)
    table = _by_file(findings)
    assert table["good.py"] == ["TL004"]
    if name == "deep.py":  # parsed and clean, or one TL000 that says it is too deep
        assert table.get(name, []) in ([], ["TL000"])
    else:
        assert table[name] == expected
    assert result.returncode == 1


def test_ten_megabyte_file(tmp_path):
    (tmp_path / "huge.py").write_text(
        SLOW + "x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]\n" * 200_000
    )
    (tmp_path / "good.py").write_text(SLOW)
    result, findings = _check(tmp_path)
    assert (tmp_path / "huge.py").stat().st_size > 10_000_000
    assert _by_file(findings) == {"good.py": ["TL004"], "huge.py": ["TL998"]}
    assert "too large" in next(f["message"] for f in findings if f["code"] == "TL998")


def test_symlink_loop_fifo_and_unreadable_file(tmp_path):
    (tmp_path / "good.py").write_text(SLOW)
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.mkfifo(tmp_path / "pipe.py")
    secret = tmp_path / "secret.py"
    secret.write_text(SLOW)
    secret.chmod(0)
    result, findings = _check(tmp_path)
    table = _by_file(findings)
    assert table["good.py"] == ["TL004"]
    assert table["pipe.py"] == ["TL998"]
    if os.geteuid() != 0:  # root reads anything
        assert table["secret.py"] == ["TL998"]
    for loop in ("loop_a.py", "loop_b.py"):
        assert table.get(loop, []) in ([], ["TL998"])
    explicit = run_torchlint(
        "check", "loop_a.py", "--no-cache", "--output-format", "concise", cwd=tmp_path
    )
    assert "TL998" in explicit.stdout and "Traceback" not in explicit.stderr


def test_file_deleted_mid_run(tmp_path):
    # Training-shaped files, so each is parsed: 400 of them take seconds, and half vanish meanwhile.
    body = SLOW + "for x in loader:\n    loss(x).backward()\n    opt.step()\n" + "y = 1\n" * 200
    for i in range(400):
        (tmp_path / f"m{i:03d}.py").write_text(body)
    command = [
        str(Path(sys.executable).parent / "torchlint"),
        "check",
        ".",
        "--no-cache",
        "--jobs",
        "1",
        "--output-format",
        "json",
    ]
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )

    def delete_late_files() -> None:
        time.sleep(0.3)
        for i in range(200, 400):
            (tmp_path / f"m{i:03d}.py").unlink(missing_ok=True)

    deleter = threading.Thread(target=delete_late_files)
    deleter.start()
    out, err = process.communicate(timeout=300)
    deleter.join()
    assert "Traceback" not in err
    findings = json.loads(out)
    codes = {f["code"] for f in findings}
    assert codes <= {"TL004", "TL998"}
    assert process.returncode == 1


def test_crashing_rule_is_an_internal_error_and_others_still_report(tmp_path):
    (tmp_path / "train.py").write_text(SLOW + "opt.zero_grad(set_to_none=False)\n")
    inject = (
        "import sys\n"
        "from torchlint.rules import data_parallel\n"
        "def broken(self, node):\n"
        "    raise ValueError('unexpected node shape')\n"
        "data_parallel.DataParallel.visit_Call = broken\n"
        "from torchlint.cli import main\n"
        "sys.argv = ['torchlint'] + sys.argv[1:]\n"
        "main()\n"
    )
    base = [sys.executable, "-c", inject, "check", "train.py", "--no-cache", "--select", "ALL"]
    result = subprocess.run(
        base + ["--output-format", "concise"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert any(
        "TL999" in line and "TL004" in line and line.startswith("train.py") for line in lines
    )
    assert any("TL006" in line for line in lines), "the other rules still report for that file"
    assert not any(line.startswith("train.py:3") and "TL004 " in line for line in lines)
    assert "Traceback" not in result.stdout + result.stderr
    traced = subprocess.run(
        base + ["--show-traceback", "-q"], cwd=tmp_path, capture_output=True, text=True
    )
    assert "Traceback" in traced.stderr and "unexpected node shape" in traced.stderr
