"""gitlab, rdjson, pylint and azure through the installed command, each against its consumer's
documented shape, with a notebook among the inputs and a hostile file name."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_torchlint

SCRIPT = (
    "import numpy as np\nimport torch\nfrom torch import nn\n\n"
    "x = torch.tensor(np.load(path))\nmodel = nn.DataParallel(nn.Linear(2, 2))\n"
)
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}
RDJSON_SEVERITIES = {"UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"}


def _check(tmp_path, fmt: str, *names: str) -> str:
    result = run_torchlint(
        "check", "--isolated", "--no-cache", "--output-format", fmt, *names, cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "copy.py").write_text(
        SCRIPT + "y = torch.tensor(np.load(path))\ny = torch.tensor(np.load(path))\n"
    )
    return tmp_path


def test_gitlab_code_quality_issues(project):
    issues = json.loads(_check(project, "gitlab", "train.py", "copy.py"))
    assert len(issues) == 6
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert isinstance(issue["description"], str) and issue["check_name"].startswith("TL")
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["location"]["path"] in ("train.py", "copy.py")
        assert isinstance(issue["location"]["lines"]["begin"], int)
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == len(fingerprints)  # identical lines are numbered apart
    again = json.loads(_check(project, "gitlab", "train.py", "copy.py"))
    assert [i["fingerprint"] for i in again] == fingerprints


def test_gitlab_fingerprints_survive_lines_moving(project):
    before = {
        i["check_name"]: i["fingerprint"] for i in json.loads(_check(project, "gitlab", "train.py"))
    }
    (project / "train.py").write_text("# a comment above moves every line\n" + SCRIPT)
    after = {
        i["check_name"]: i["fingerprint"] for i in json.loads(_check(project, "gitlab", "train.py"))
    }
    assert before == after


def test_rdjson_has_reviewdogs_shape_and_suggestions(project):
    report = json.loads(_check(project, "rdjson", "train.py"))
    assert report["source"]["name"] == "torchlint" and report["severity"] in RDJSON_SEVERITIES
    by_code = {d["code"]["value"]: d for d in report["diagnostics"]}
    assert set(by_code) == {"TL003", "TL004"}
    for d in report["diagnostics"]:
        assert d["severity"] in RDJSON_SEVERITIES and d["location"]["path"] == "train.py"
        span = d["location"]["range"]
        assert {"line", "column"} <= set(span["start"]) and {"line", "column"} <= set(span["end"])
        assert d["code"]["url"].endswith(f"/docs/rules/{d['code']['value']}.md")
    [suggestion] = by_code["TL003"]["suggestions"]
    assert (
        suggestion["range"]["start"] == {"line": 5, "column": 5}
        and "torch.from_numpy(np.load(path))" == suggestion["text"]
    )
    assert "suggestions" not in by_code["TL004"]  # advice only: nothing to apply


def test_pylint_lines(project):
    lines = _check(project, "pylint", "train.py").splitlines()
    assert lines == [
        "train.py:5: [TL003(tensor-from-numpy), ] " + lines[0].split("] ", 1)[1],
        "train.py:6: [TL004(data-parallel), ] " + lines[1].split("] ", 1)[1],
    ]


def test_azure_logging_commands_escape_properties(project):
    (project / "odd;name].py").write_text(SCRIPT)
    lines = _check(project, "azure", "odd;name].py").splitlines()
    assert len(lines) == 2
    for line in lines:
        match = re.fullmatch(r"##vso\[task\.logissue ((?:\w+=[^;\]]*;)+)\](.*)", line)
        assert match, line
        properties = dict(p.split("=", 1) for p in match.group(1).rstrip(";").split(";"))
        assert properties["type"] == "warning" and properties["sourcepath"] == "odd%3Bname%5D.py"
        assert properties["code"] in ("TL003", "TL004") and int(properties["linenumber"]) in (5, 6)
