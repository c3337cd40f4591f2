"""Every relative link in the README and docs/ points at a file that exists."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(document):
    text = document.read_text(encoding="utf-8")
    targets = [
        t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")
    ]
    missing = [t for t in targets if not (document.parent / t.split("#", 1)[0]).exists()]
    assert missing == []
