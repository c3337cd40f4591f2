"""Each rule's documentation page, rendered from the rule itself.

`torchlint rule CODE` prints a page (a short one for the built-in codes TL000, TL998 and TL999);
`python -m torchlint.rule_docs [DIR]` writes every page and an index to `docs/rules/` (the default
DIR, where each finding's `url` points) and, by default, the rules table of the README. Tests keep
the committed pages and the table equal to what the rules say, so the docs cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint import REPOSITORY

if TYPE_CHECKING:
    from torchlint.rule import Rule

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"
README = DOCS.parent.parent / "README.md"
TABLE_START, TABLE_END = "<!-- rules-table -->\n", "<!-- /rules-table -->\n"


def url(code: str) -> str:
    return f"{REPOSITORY}/blob/main/docs/rules/{code}.md"


def page(rule: type[Rule]) -> str:
    state = (
        "on by default"
        if rule.default_enabled
        else "opt-in: enable it with `--extend-select " + rule.code + "`"
    )
    lines = [
        f"# {rule.code} `{rule.name}`",
        "",
        f"{rule.summary}.",
        "",
        f"- **Default:** {state}.",
        f"- **Fix:** {_fix(rule)}.",
    ]
    lines += [
        f"- **Fix needs torch >= {since}** where it writes {what}."
        for what, since in rule.fix_versions.items()
    ]
    if rule.performance:
        lines.append("- **Test code:** not checked unless `lint-tests = true`.")
    return "\n".join(lines) + "\n" + rule.docs.rstrip() + "\n"


def builtin_page(code_or_name: str) -> str | None:
    """The short page of a built-in code (`TL000 syntax-error`, ...), or None for any other."""
    from torchlint.diagnostics import BUILTIN_DOCS

    for (code, name), (summary, docs) in BUILTIN_DOCS.items():
        if code_or_name.upper() == code or code_or_name.lower() == name:
            return (
                f"# {code} `{name}`\n\n{summary}.\n\n"
                "- **Built in:** reported by torchlint itself about a file, not by a rule.\n\n"
                f"{docs}\n"
            )
    return None


def readme_table(rules: tuple[type[Rule], ...]) -> str:
    """The README's table of rules, between its `rules-table` markers."""
    rows = [
        "| code | name | default | fix | what it flags |",
        "|---|---|---|---|---|",
    ]
    for rule in rules:
        default = "preview" if rule.preview else "on" if rule.default_enabled else "opt-in"
        rows.append(
            f"| {rule.code} | `{rule.name}` | {default} | {rule.fix_availability} | {rule.summary} |"
        )
    return "\n".join(rows) + "\n"


def with_table(readme: str, table: str) -> str:
    """The README's text with the table between its markers replaced by `table`."""
    start = readme.index(TABLE_START) + len(TABLE_START)
    return readme[:start] + table + readme[readme.index(TABLE_END, start) :]


def _fix(rule: type[Rule]) -> str:
    return {
        "none": "none",
        "display-only": "advice only, never applied",
        "safe": "safe (`--fix`)",
        "unsafe": "unsafe, may change behaviour (`--fix --unsafe-fixes`); the page says when",
    }.get(rule.fix_availability, rule.fix_availability)


def index(rules: tuple[type[Rule], ...]) -> str:
    """The table of every rule and the lowest torch each fix writes for."""
    rows = [
        "# Rules",
        "",
        "Generated from the rules by `python -m torchlint.rule_docs`; do not edit by hand.",
        "",
        "| code | name | default | fix | lowest torch of the fix | summary |",
        "|---|---|---|---|---|---|",
    ]
    for rule in rules:
        versions = (
            "; ".join(f"{since} ({what})" for what, since in rule.fix_versions.items()) or "-"
        )
        default = "on" if rule.default_enabled else "opt-in"
        rows.append(
            f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {default} | {rule.fix_availability} | {versions} | {rule.summary} |"
        )
    return "\n".join(rows) + "\n"


def render(rules: tuple[type[Rule], ...]) -> dict[str, str]:
    """File name -> text of every page under docs/rules/."""
    return {"README.md": index(rules), **{f"{rule.code}.md": page(rule) for rule in rules}}


def write(directory: Path) -> int:
    from torchlint.registry import all_rules

    directory.mkdir(parents=True, exist_ok=True)
    pages = render(all_rules())
    for stale in set(p.name for p in directory.glob("*.md")) - pages.keys():
        (directory / stale).unlink()
    for name, text in pages.items():
        (directory / name).write_text(text, encoding="utf-8")
    return len(pages)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS
    print(f"wrote {write(target)} pages to {target}")
    if len(sys.argv) == 1:
        from torchlint.registry import all_rules

        text = README.read_text(encoding="utf-8")
        README.write_text(with_table(text, readme_table(all_rules())), encoding="utf-8")
        print(f"wrote the rules table of {README}")
