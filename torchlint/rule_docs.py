"""Each rule's documentation page, rendered from the rule itself.

`torchlint rule CODE` prints a page (a short one for the built-in codes TL000, TL998 and TL999);
`python -m torchlint.rule_docs [DIR]` writes every page and an index to `docs/rules/` (the default
DIR, where each finding's `url` points) and, by default, the rules table of the README. Tests keep
the committed pages and the table equal to what the rules say, so the docs cannot drift from the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.diagnostics import FixAvailability

if TYPE_CHECKING:
    from torchlint.rule import Rule

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


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
    ]
    if rule.preview:
        lines.append(
            "- **Preview:** this rule is in preview: it runs only in preview mode, with"
            " `--preview` on `check`/`fix`/`verify` or `preview = true` in `[tool.torchlint]`;"
            f" selecting it (`--select {rule.code}`) without preview mode has no effect."
            " It leaves preview once its precision on the corpus holds the bar (docs/precision.md)."
        )
    lines.append(f"- **Fix:** {_fix(rule)}.")
    lines += [
        f"- **Fix needs torch >= {since}** where it writes {what}."
        for what, since in rule.fix_versions.items()
    ]
    if rule.performance:
        lines.append("- **Test code:** not checked unless `lint-tests = true`.")
    return "\n".join(lines) + "\n" + rule.docs.rstrip() + "\n"


_FIX_TEXT = {
    FixAvailability.NONE: "none",
    FixAvailability.DISPLAY_ONLY: "advice only, never applied",
    FixAvailability.SAFE: "safe (`--fix`)",
    FixAvailability.UNSAFE: "unsafe, may change behaviour (`--fix --unsafe-fixes`); the page says when",
}


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


def _fix(rule: type[Rule]) -> str:
    return _FIX_TEXT[rule.fix_availability]


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
        default = _default(rule)
        rows.append(
            f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {default} | {rule.fix_availability.value} | {versions} | {rule.summary} |"
        )
    return "\n".join(rows) + "\n"


def _default(rule: type[Rule]) -> str:
    """ "on" or "opt-in", with "(preview)" for a rule that runs only in preview mode."""
    state = "on" if rule.default_enabled else "opt-in"
    return f"{state} (preview)" if rule.preview else state


README = DOCS.parent.parent / "README.md"
_TABLE = re.compile(r"(<!-- rules-table -->\n).*?(<!-- /rules-table -->)", re.DOTALL)


def readme_table(rules: tuple[type[Rule], ...]) -> str:
    """The README's table of rules (between its `rules-table` markers)."""
    rows = ["| code | name | default | fix | what it flags |", "|---|---|---|---|---|"]
    rows += [
        f"| {r.code} | `{r.name}` | {_default(r)} | {r.fix_availability.value} | {r.summary} |"
        for r in rules
    ]
    return "\n".join(rows) + "\n"


def with_readme_table(text: str, rules: tuple[type[Rule], ...]) -> str:
    """`text` (the README) with its rules table replaced by the one the rules generate."""
    table = readme_table(rules)
    return _TABLE.sub(lambda found: found.group(1) + table + found.group(2), text, count=1)


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
    if directory.resolve() == DOCS and README.is_file():
        text = README.read_text(encoding="utf-8")
        README.write_text(with_readme_table(text, all_rules()), encoding="utf-8")
    return len(pages)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS
    print(f"wrote {write(target)} pages to {target}")
