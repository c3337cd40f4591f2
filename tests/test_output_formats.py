"""Every output format, through the installed command: the JSON contract field by field,
the machine formats parsed by their real consumers (json, xml.etree, sarif-tools), and the
human formats as a user reads them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import run_torchlint

from torchlint.diagnostics import Diagnostic, Position
from torchlint.output import FORMATS
from torchlint.output.github import github
from torchlint.registry import all_rules
from torchlint.rule import Invalid

DP = "import torch\nmodel = torch.nn.DataParallel(model)\n"  # TL004 at 2:9-2:37
DP_MESSAGE_START = "`nn.DataParallel`"
BROKEN = "import torch\ndef f(:\n    pass\n"


def _project(tmp_path: Path) -> Path:
    """Two files with TL004 (three findings) and one with a syntax error."""
    (tmp_path / "a.py").write_text(DP + "other = torch.nn.DataParallel(other)\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(DP)
    (tmp_path / "broken.py").write_text(BROKEN)
    return tmp_path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_torchlint("check", "--isolated", *args, cwd=tmp_path)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def _fixable_example() -> tuple[str, str]:
    """(code, source) of a registered rule example whose finding carries text edits."""
    for rule in all_rules():
        for example in rule.invalid:
            if (
                isinstance(example, Invalid)
                and example.fixed
                and example.target_torch_version is None
            ):
                return rule.code, example.code
    pytest.skip("no registered rule has an example with a fix")


# -- json / json-lines -------------------------------------------------------------------

POSITION_KEYS = {"row", "column"}
DIAGNOSTIC_KEYS = {
    "code",
    "name",
    "message",
    "filename",
    "cell",
    "location",
    "end_location",
    "fix",
    "url",
}


def _assert_position(value: object) -> None:
    assert isinstance(value, dict) and set(value) == POSITION_KEYS
    assert all(isinstance(value[k], int) and value[k] >= 1 for k in POSITION_KEYS)


def _assert_contract(item: dict) -> None:
    assert set(item) == DIAGNOSTIC_KEYS
    assert re.fullmatch(r"TL\d{3}", item["code"])
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", item["name"])
    assert isinstance(item["message"], str) and item["message"]
    assert isinstance(item["filename"], str)
    assert item["cell"] is None or (isinstance(item["cell"], int) and item["cell"] >= 1)
    _assert_position(item["location"])
    _assert_position(item["end_location"])
    assert (item["location"]["row"], item["location"]["column"]) <= (
        item["end_location"]["row"],
        item["end_location"]["column"],
    )
    assert item["url"] is None or isinstance(item["url"], str)
    fix = item["fix"]
    if fix is not None:
        assert set(fix) == {"applicability", "message", "edits"}
        assert fix["applicability"] in {"safe", "unsafe", "display-only"}
        assert isinstance(fix["message"], str) and fix["message"]
        for edit in fix["edits"]:
            assert set(edit) == {"content", "location", "end_location"}
            assert isinstance(edit["content"], str)
            _assert_position(edit["location"])
            _assert_position(edit["end_location"])


def test_json_follows_the_contract_field_by_field(tmp_path):
    result = _run(_project(tmp_path), "--output-format", "json")
    assert result.returncode == 1
    items = json.loads(result.stdout)
    for item in items:
        _assert_contract(item)
    by_file = [(i["filename"], i["code"], i["location"]["row"]) for i in items]
    assert by_file == [
        ("a.py", "TL004", 2),
        ("a.py", "TL004", 3),
        ("broken.py", "TL000", 2),
        ("sub/b.py", "TL004", 2),
    ]
    first = items[0]
    assert first["name"] == "data-parallel"
    assert first["message"].startswith(DP_MESSAGE_START)
    assert first["cell"] is None
    assert first["location"] == {"row": 2, "column": 9}
    assert first["end_location"] == {"row": 2, "column": 37}
    assert first["fix"]["applicability"] == "display-only"
    assert first["fix"]["edits"] == []
    syntax = items[2]
    assert (syntax["name"], syntax["fix"]) == ("syntax-error", None)


def test_json_edits_are_text_edits_with_one_based_positions(tmp_path):
    code, source = _fixable_example()
    (tmp_path / "t.py").write_text(source)
    items = json.loads(_run(tmp_path, "--select", code, "--output-format", "json").stdout)
    with_edits = [i for i in items if i["fix"] and i["fix"]["edits"]]
    assert with_edits, items
    lines = source.splitlines(keepends=True)
    for item in with_edits:
        _assert_contract(item)
        for edit in item["fix"]["edits"]:
            # An edit may insert at the start of the line after the last one, nowhere further.
            assert edit["location"]["row"] <= len(lines) + 1
            assert edit["end_location"]["row"] <= len(lines) + 1


def test_json_is_an_empty_array_when_clean(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(3)\n")
    result = _run(tmp_path, "--output-format", "json")
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_json_lines_holds_the_same_objects_one_per_line(tmp_path):
    _project(tmp_path)
    whole = json.loads(_run(tmp_path, "--output-format", "json").stdout)
    lines = _run(tmp_path, "--output-format", "json-lines").stdout.splitlines()
    assert [json.loads(line) for line in lines] == whole
    assert len(lines) == 4


# -- github ------------------------------------------------------------------------------

GITHUB_LINE = re.compile(r"^::(?P<level>warning|error) (?P<props>[^:]*)::(?P<message>.*)$")


def _github_properties(props: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in props.split(","))


def test_github_emits_one_workflow_command_per_finding(tmp_path):
    result = _run(_project(tmp_path), "--output-format", "github")
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    parsed = [GITHUB_LINE.match(line) for line in lines]
    assert all(parsed), lines
    first = _github_properties(parsed[0]["props"])
    assert first == {
        "title": "torchlint (TL004)",
        "file": "a.py",
        "line": "2",
        "col": "9",
        "endLine": "2",
        "endColumn": "37",
    }
    assert parsed[0]["level"] == "warning"
    assert DP_MESSAGE_START in parsed[0]["message"]
    syntax = parsed[2]
    assert syntax["level"] == "error"
    assert _github_properties(syntax["props"])["file"] == "broken.py"
    assert "Found" not in result.stdout  # machine formats carry no summary line


def test_github_escapes_property_separators_in_paths(tmp_path):
    weird = tmp_path / "a,b:c"
    weird.mkdir()
    (weird / "t.py").write_text(DP)
    line = _run(tmp_path, "--output-format", "github").stdout.strip()
    props = GITHUB_LINE.match(line)["props"]
    assert "file=a%2Cb%3Ac/t.py" in props.split(",")


def test_github_escapes_percent_and_newlines_in_messages():
    at = Position(1, 1)
    finding = Diagnostic("TL004", "data-parallel", "100% slower\r\nsecond line", "x,y.py", at, at)
    line = github([finding])
    assert line.count("\n") == 1
    assert "file=x%2Cy.py" in line
    assert line.rstrip("\n").endswith("100%25 slower%0D%0Asecond line")


# -- junit -------------------------------------------------------------------------------


def test_junit_is_xml_with_a_failing_testcase_per_finding(tmp_path):
    result = _run(_project(tmp_path), "--output-format", "junit")
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures")) == ("4", "4")
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == {"a.py", "broken.py", "sub/b.py"}
    cases = suites["a.py"].findall("testcase")
    assert (suites["a.py"].get("tests"), suites["a.py"].get("failures"), len(cases)) == (
        "2",
        "2",
        2,
    )
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("type") == "TL004"
    assert failure.get("message").startswith(DP_MESSAGE_START)
    assert "a.py:2:9" in failure.text
    assert cases[0].get("line") == "2"
    assert suites["broken.py"].find("testcase/failure").get("type") == "TL000"


def test_junit_clean_run_is_one_passing_testcase(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n")
    result = _run(tmp_path, "--output-format", "junit")
    assert result.returncode == 0
    root = ET.fromstring(result.stdout)
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1
    assert cases[0].find("failure") is None
    assert root.get("failures") == "0"


# -- sarif -------------------------------------------------------------------------------


def _sarif_command() -> str:
    candidate = Path(sys.executable).parent / "sarif"
    found = str(candidate) if candidate.exists() else shutil.which("sarif")
    assert found, "the sarif command (sarif-tools) is not installed"
    return found


def _sarif(tmp_path: Path, *args: str) -> tuple[dict, Path]:
    out = tmp_path / "out.sarif"
    result = _run(tmp_path, "--output-format", "sarif", "-o", str(out), *args)
    assert result.stdout == ""
    return json.loads(out.read_text(encoding="utf-8")), out


def test_sarif_is_accepted_by_sarif_tools(tmp_path):
    _, out = _sarif(_project(tmp_path))
    summary = subprocess.run(
        [_sarif_command(), "summary", str(out)], capture_output=True, text=True, timeout=120
    )
    assert summary.returncode == 0, summary.stderr
    assert re.search(r"^error: 1$", summary.stdout, re.MULTILINE), summary.stdout
    assert re.search(r"^warning: 3$", summary.stdout, re.MULTILINE), summary.stdout
    assert re.search(r"TL004 .*: 3$", summary.stdout, re.MULTILINE), summary.stdout
    # --check makes sarif-tools fail the build on warnings: it must see ours.
    gate = subprocess.run(
        [_sarif_command(), "--check", "warning", "summary", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert gate.returncode != 0


def test_sarif_run_describes_the_tool_and_every_rule(tmp_path):
    log, _ = _sarif(_project(tmp_path))
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "torchlint"
    assert driver["version"]
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert {"TL000", "TL998", "TL999"} <= set(rules)
    for registered in all_rules():
        rule = rules[registered.code]
        assert rule["name"] == registered.name
        assert rule["shortDescription"]["text"] == registered.summary
        assert "## What it does" in rule["fullDescription"]["markdown"]
        assert rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] == "warning"
    assert rules["TL000"]["name"] == "syntax-error"
    assert rules["TL000"]["defaultConfiguration"]["level"] == "error"


def test_sarif_results_point_at_relative_uris_and_regions(tmp_path):
    log, _ = _sarif(_project(tmp_path))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == 4
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    first = results[0]
    assert (first["ruleId"], first["level"]) == ("TL004", "warning")
    assert first["message"]["text"].startswith(DP_MESSAGE_START)
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 9, "endLine": 2, "endColumn": 37}
    assert "fixes" not in first  # display-only, no edits
    nested = results[3]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert nested["uri"] == "sub/b.py"
    syntax = results[2]
    assert (syntax["ruleId"], syntax["level"]) == ("TL000", "error")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"


def test_sarif_fixes_carry_the_json_edits_as_replacements(tmp_path):
    code, source = _fixable_example()
    (tmp_path / "t.py").write_text(source)
    log, _ = _sarif(tmp_path, "--select", code)
    items = json.loads(_run(tmp_path, "--select", code, "--output-format", "json").stdout)
    results = log["runs"][0]["results"]
    assert len(results) == len(items)
    for result, item in zip(results, items):
        edits = item["fix"]["edits"] if item["fix"] else []
        if not edits:
            assert "fixes" not in result
            continue
        (fix,) = result["fixes"]
        assert fix["description"]["text"] == item["fix"]["message"]
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "t.py", "uriBaseId": "%SRCROOT%"}
        expected = [
            {
                "deletedRegion": {
                    "startLine": e["location"]["row"],
                    "startColumn": e["location"]["column"],
                    "endLine": e["end_location"]["row"],
                    "endColumn": e["end_location"]["column"],
                },
                "insertedContent": {"text": e["content"]},
            }
            for e in edits
        ]
        assert change["replacements"] == expected


def test_sarif_clean_run_has_no_results(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n")
    log, out = _sarif(tmp_path)
    assert log["runs"][0]["results"] == []
    summary = subprocess.run(
        [_sarif_command(), "summary", str(out)], capture_output=True, text=True, timeout=120
    )
    assert summary.returncode == 0
    assert re.search(r"^warning: 0$", summary.stdout, re.MULTILINE), summary.stdout


# -- human formats -----------------------------------------------------------------------


def test_full_shows_location_context_gutter_caret_and_fix_hint(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n\n" + DP + "x = 1\ny = 2\nz = 3\n")
    lines = _run(tmp_path).stdout.splitlines()
    assert lines[0].startswith(f"a.py:4:9: TL004 [data-parallel] {DP_MESSAGE_START}")
    assert lines[1:4] == ["2 |", "3 | import torch", "4 | model = torch.nn.DataParallel(model)"]
    assert lines[4] == "  | " + " " * len("model = ") + "^" * len("torch.nn.DataParallel(model)")
    assert lines[5:7] == ["5 | x = 1", "6 | y = 2"]
    assert lines[7].startswith("  = help: ")
    assert lines[-1] == "Found 1 finding in 1 file."


def test_full_caret_follows_tabs_in_the_source_line(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nif True:\n\tm = torch.nn.DataParallel(m)\n")
    lines = _run(tmp_path).stdout.splitlines()
    assert lines[3] == "3 | \tm = torch.nn.DataParallel(m)"
    assert lines[4] == "  | \t    " + "^" * len("torch.nn.DataParallel(m)")


def test_full_labels_an_unsafe_fix(tmp_path):
    code, source = _fixable_example()
    (tmp_path / "t.py").write_text(source)
    out = _run(tmp_path, "--select", code, "--unsafe-fixes").stdout
    rule = next(r for r in all_rules() if r.code == code)
    label = {"safe": "  = fix: ", "unsafe": "  = unsafe fix: "}[rule.fix_availability]
    assert label in out
    assert re.search(
        r"^\[\*\] [1-9]\d* fixable with `torchlint check --fix --unsafe-fixes`\.$",
        out,
        re.MULTILINE,
    )


def test_concise_is_one_line_per_finding(tmp_path):
    result = _run(_project(tmp_path), "--output-format", "concise")
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"a.py:2:9: TL004 {DP_MESSAGE_START}")
    assert lines[1].startswith("a.py:3:9: TL004 ")
    assert lines[2].startswith("broken.py:2:")
    assert lines[3].startswith("sub/b.py:2:9: TL004 ")
    assert lines[4] == "Found 4 findings in 3 files."
    assert len(lines) == 5


def test_concise_marks_fixable_findings(tmp_path):
    code, source = _fixable_example()
    (tmp_path / "t.py").write_text(source)
    first = _run(
        tmp_path, "--select", code, "--unsafe-fixes", "--output-format", "concise"
    ).stdout.splitlines()[0]
    assert re.match(rf"t\.py:\d+:\d+: {code} \[\*\] ", first)


def test_grouped_lists_findings_under_each_file(tmp_path):
    result = _run(_project(tmp_path), "--output-format", "grouped")
    assert result.returncode == 1
    blocks = result.stdout.split("\n\n")
    assert blocks[0].splitlines()[0] == "a.py:"
    assert [line.split(" ", 3)[2:3] for line in blocks[0].splitlines()[1:]] == [["2:9"], ["3:9"]]
    assert all(line.startswith("  ") and " TL004 " in line for line in blocks[0].splitlines()[1:])
    assert blocks[1].splitlines()[0] == "broken.py:"
    assert " TL000 " in blocks[1]
    assert blocks[2].splitlines() == [
        "sub/b.py:",
        f"  2:9 TL004 {blocks[2].split('TL004 ', 1)[1].splitlines()[0]}",
    ]
    assert blocks[3].strip() == "Found 4 findings in 3 files."


@pytest.mark.parametrize("output_format", ["json", "json-lines", "github", "sarif", "junit"])
def test_machine_formats_have_no_summary_line(tmp_path, output_format):
    (tmp_path / "a.py").write_text(DP)
    result = _run(tmp_path, "--output-format", output_format)
    assert "Found 1 finding" not in result.stdout
    assert result.returncode == 1


def test_every_registered_format_is_offered():
    assert set(FORMATS) == {
        "full",
        "concise",
        "grouped",
        "json",
        "json-lines",
        "github",
        "sarif",
        "junit",
        "gitlab",
        "rdjson",
        "pylint",
        "azure",
    }
    assert all(isinstance(FORMATS[name]([]), str) for name in FORMATS)
