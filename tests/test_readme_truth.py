"""What the README promises about the command holds: its rules table is the rules (written by
`python -m torchlint.rule_docs`), `torchlint rule` knows every code it lists, and the top-level
`--help` shows each command's description whole."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, run_torchlint

from torchlint.diagnostics import BUILTIN_DOCS
from torchlint.registry import all_rules, find_rule
from torchlint.rule_docs import with_readme_table

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_rules_table_is_every_rule():
    assert with_readme_table(README, all_rules()) == README, "run `python -m torchlint.rule_docs`"
    assert "| TL100 | `unused-noqa` |" in README


def test_every_code_the_readme_lists_is_a_rule_or_a_builtin():
    codes = set(re.findall(r"\bTL\d{3}\b", README))
    builtin = {code for code, _ in BUILTIN_DOCS}
    assert builtin <= codes
    assert all(find_rule(code) is not None for code in codes - builtin)


@pytest.mark.parametrize(("code", "name"), list(BUILTIN_DOCS))
def test_rule_prints_a_short_doc_for_a_builtin_code(code, name):
    for asked in (code, name):
        result = run_torchlint("rule", asked)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"# {code} `{name}`\n\n")
        assert BUILTIN_DOCS[(code, name)][1] in result.stdout


def test_help_shows_each_command_description_whole():
    result = run_torchlint("--help")
    commands = result.stdout.split("Commands:", 1)[1]
    assert result.returncode == 0 and "..." not in commands
    listed = " ".join(commands.split())
    for name, first in _first_sentences().items():
        assert f"{name} {first}" in listed, (name, first)


def _first_sentences() -> dict[str, str]:
    """Each command's first sentence of help, as `torchlint COMMAND --help` shows it."""
    from torchlint.cli import main

    found = {}
    for name in ("check", "clean", "fix", "lsp", "rule", "rules", "verify"):
        command = main.get_command(None, name)  # type: ignore[arg-type]
        paragraph = " ".join((command.help or "").split("\n\n")[0].split())
        found[name] = paragraph.split(". ")[0].rstrip(".") + "."
    return found
