"""Bad input through the installed command: every case gives a clear result, the other files
are still checked, and no traceback reaches the user."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import run_torchlint

DP_LINE = "model = torch.nn.DataParallel(model)"
DP = f"import torch\n{DP_LINE}\n"


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_torchlint("check", "--isolated", *args, cwd=cwd)
    assert "Traceback" not in result.stdout + result.stderr
    assert "Error:" not in result.stderr  # click's usage-error banner
    return result


def _json(cwd: Path, *args: str) -> tuple[int, list[dict]]:
    result = _check(cwd, "--output-format", "json", *args)
    return result.returncode, json.loads(result.stdout)


def _table(findings: list[dict]) -> dict[str, list[tuple[str, int]]]:
    """file -> [(code, row)]."""
    table: dict[str, list[tuple[str, int]]] = {}
    for item in findings:
        table.setdefault(item["filename"], []).append((item["code"], item["location"]["row"]))
    return table


def test_syntax_error_is_tl000_at_its_location_and_other_files_are_checked(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\n\ndef train(:\n    pass\n")
    (tmp_path / "good.py").write_text(DP)
    code, findings = _json(tmp_path)
    assert code == 1
    assert _table(findings) == {"broken.py": [("TL000", 3)], "good.py": [("TL004", 2)]}
    syntax = findings[0]
    assert syntax["name"] == "syntax-error"
    assert syntax["location"] == {"row": 3, "column": 11}
    assert "invalid syntax" in syntax["message"]


def test_syntax_error_in_full_output_shows_the_line(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\nx = torch.ones(3\n")
    result = _check(tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("broken.py:2:")
    assert "TL000 [syntax-error]" in lines[0]
    assert lines[1] == "2 | x = torch.ones(3"
    assert lines[2].startswith("  | ") and lines[2].strip("| ") == "^"


def test_non_utf8_bytes_are_one_tl000_and_the_run_goes_on(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"import torch\nname = '\xe9t\xe9'\n")
    (tmp_path / "good.py").write_text(DP)
    code, findings = _json(tmp_path)
    assert code == 1
    table = _table(findings)
    assert table["good.py"] == [("TL004", 2)]
    assert [c for c, _ in table["latin.py"]] == ["TL000"]
    (message,) = [f["message"] for f in findings if f["filename"] == "latin.py"]
    assert "decode" in message


def test_declared_encoding_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'\n" + DP_LINE.encode() + b"\n"
    )
    code, findings = _json(tmp_path)
    assert (code, _table(findings)) == (1, {"latin.py": [("TL004", 4)]})


def test_empty_file_is_clean(tmp_path):
    (tmp_path / "empty.py").write_text("")
    result = _check(tmp_path, "empty.py")
    assert (result.returncode, result.stdout) == (0, "All checks passed (1 file checked).\n")


def test_nonexistent_path_exits_2_with_one_line(tmp_path):
    result = _check(tmp_path, "missing.py")
    assert result.returncode == 2
    assert result.stderr == "torchlint: error: missing.py: no such file or directory\n"
    assert result.stdout == ""


def test_nonexistent_path_next_to_a_real_one_still_checks_the_real_one(tmp_path):
    (tmp_path / "good.py").write_text(DP)
    result = _check(tmp_path, "--output-format", "concise", "good.py", "missing.py")
    assert result.returncode == 2
    assert result.stdout.startswith("good.py:2:9: TL004 ")
    assert result.stderr.splitlines() == ["torchlint: error: missing.py: no such file or directory"]


def test_directory_without_python_files(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text(DP)
    result = _check(tmp_path, "docs")
    assert result.returncode == 0
    assert result.stdout == "All checks passed (0 files checked).\n"
    assert result.stderr == "torchlint: warning: no Python files found under docs\n"


def test_fifty_thousand_line_file(tmp_path):
    # Statements and comments alternate: 25,000 statements keep any per-statement cost
    # visible while the test stays a few seconds long.
    lines = (
        ["import torch"]
        + ["pass" if i % 2 else f"# step {i}" for i in range(1, 49_999)]
        + [DP_LINE]
    )
    (tmp_path / "big.py").write_text("\n".join(lines) + "\n")
    code, findings = _json(tmp_path)
    assert (code, _table(findings)) == (1, {"big.py": [("TL004", 50_000)]})


def test_nesting_python_refuses_is_one_tl000_as_python_reports_it(tmp_path):
    """500 levels of parentheses, lists or calls: CPython stops at 200 open brackets, so the
    file cannot run; torchlint says so at once instead of parsing it."""
    depth = 500
    deep = {
        "parens.py": "(" * depth + "1" + ")" * depth,
        "lists.py": "[" * depth + "1" + "]" * depth,
        "calls.py": "f(" * depth + "1" + ")" * depth,
        "huge.py": "[" * 20 * depth + "]" * 20 * depth,
    }
    for name, expression in deep.items():
        (tmp_path / name).write_text(f"import torch\nvalue = {expression}\n{DP_LINE}\n")
    code, findings = _json(tmp_path)
    assert code == 1
    assert _table(findings) == {name: [("TL000", 2)] for name in deep}
    assert all("too many nested parentheses" in f["message"] for f in findings)
    parens = next(f for f in findings if f["filename"] == "parens.py")
    assert parens["location"]["column"] == len("value = ") + 201  # the 201st open bracket


def test_deep_expressions_python_accepts_are_checked(tmp_path):
    """Deep trees CPython compiles: 200 nested lists and calls, a 500-call method chain, a
    1,000-term sum. Each is parsed and analysed: the finding after it is reported."""
    deep = {
        "lists.py": "[" * 200 + "1" + "]" * 200,
        "calls.py": "f(" * 200 + "1" + ")" * 200,
        "chain.py": "loader" + ".next()" * 500,
        "sums.py": " + ".join(["x"] * 1000),
    }
    for name, expression in deep.items():
        (tmp_path / name).write_text(f"import torch\nvalue = {expression}\n{DP_LINE}\n")
    code, findings = _json(tmp_path)
    assert code == 1
    assert _table(findings) == {name: [("TL004", 3)] for name in deep}


def test_deep_nesting_in_human_output_is_one_finding_without_traceback(tmp_path):
    (tmp_path / "deep.py").write_text("import torch\nvalue = " + "[" * 500 + "]" * 500 + "\n")
    result = _check(tmp_path, "--output-format", "concise")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "deep.py:2:209: TL000 invalid syntax: too many nested parentheses",
        "Found 1 finding in 1 file.",
    ]
    assert result.stderr == ""


def test_form_feed_lines_keep_rows_and_source_lines_aligned(tmp_path):
    (tmp_path / "ff.py").write_bytes(f"import torch\n\x0c\n{DP_LINE}\n".encode())
    lines = _check(tmp_path).stdout.split("\n")  # not splitlines(): it breaks at the form feed too
    assert lines[0].startswith("ff.py:3:9: TL004")
    assert lines[1:4] == ["1 | import torch", "2 | \x0c", f"3 | {DP_LINE}"]


def test_null_byte_is_one_tl000(tmp_path):
    (tmp_path / "nul.py").write_bytes(DP.encode() + b"x = 1\x00\n")
    code, findings = _json(tmp_path)
    assert (code, [f["code"] for f in findings]) == (1, ["TL000"])


def test_directory_named_like_a_python_file_and_a_broken_symlink(tmp_path):
    (tmp_path / "pkg.py").mkdir()
    (tmp_path / "pkg.py" / "inner.py").write_text(DP)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    code, findings = _json(tmp_path)
    assert code == 1
    assert _table(findings) == {"dangling.py": [("TL998", 1)], "pkg.py/inner.py": [("TL004", 2)]}
    (unreadable,) = [f for f in findings if f["code"] == "TL998"]
    assert unreadable["name"] == "io-error"
