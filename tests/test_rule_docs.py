"""docs/rules/ is what the rules say, and every finding links to its rule's page."""

from __future__ import annotations

import json
from urllib.parse import urlparse

from conftest import ROOT, run_torchlint

from torchlint import REPOSITORY
from torchlint.registry import all_rules
from torchlint.rule_docs import render

PAGES = ROOT / "docs" / "rules"
SLOW = "import torch\nfrom torch import nn\n\nmodel = nn.DataParallel(nn.Linear(2, 2))\n"


def test_committed_pages_are_what_the_rules_generate():
    expected = render(all_rules())
    committed = {p.name: p.read_text(encoding="utf-8") for p in PAGES.glob("*.md")}
    stale = sorted(
        name
        for name in expected.keys() | committed.keys()
        if expected.get(name) != committed.get(name)
    )
    assert stale == [], f"{stale} differ from the rules: run `python -m torchlint.rule_docs`"


def test_every_rule_has_a_page_in_the_index():
    index = (PAGES / "README.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"[{rule.code}]({rule.code}.md)" in index
        assert (PAGES / f"{rule.code}.md").is_file()


def _page_of(url: str):
    parsed = urlparse(url)
    assert url.startswith(REPOSITORY + "/blob/main/"), url
    return ROOT / parsed.path.split("/blob/main/", 1)[1]


def test_findings_and_sarif_rules_point_at_existing_pages(tmp_path):
    (tmp_path / "train.py").write_text(SLOW)
    found = json.loads(
        run_torchlint(
            "check", "--isolated", "--output-format", "json", "train.py", cwd=tmp_path
        ).stdout
    )
    assert [d["code"] for d in found] == ["TL004"]
    assert _page_of(found[0]["url"]) == PAGES / "TL004.md"
    sarif = json.loads(
        run_torchlint(
            "check", "--isolated", "--output-format", "sarif", "train.py", cwd=tmp_path
        ).stdout
    )
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    linked = {r["id"]: _page_of(r["helpUri"]) for r in rules if "helpUri" in r}
    assert set(linked) == {rule.code for rule in all_rules()}
    assert all(page.is_file() for page in linked.values())


def test_rule_command_prints_the_page():
    result = run_torchlint("rule", "TL004")
    assert result.returncode == 0
    assert result.stdout == (PAGES / "TL004.md").read_text(encoding="utf-8")
