"""`github`: GitHub Actions workflow commands, which annotate the pull request's diff.

Escaping follows the runner's rules: `%`, CR and LF in the message; additionally `:` and
`,` in property values, where they would end the value.
"""

from __future__ import annotations

from torchlint.diagnostics import Diagnostic
from torchlint.output.levels import level


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(d: Diagnostic) -> str:
    cell = f" (cell {d.cell})" if d.cell is not None else ""
    properties = {
        "title": f"torchlint ({d.code}){cell}",
        "file": d.path,
        "line": d.file_start.row,  # in a notebook, the .ipynb line that holds the source line
        "col": d.file_start.column,
        "endLine": d.file_end.row,
        "endColumn": d.file_end.column,
    }
    joined = ",".join(f"{key}={_property(str(value))}" for key, value in properties.items())
    message = _data(f"[{d.name}] {d.message}")
    return f"::{level(d.code)} {joined}::{message}\n"


def github(diagnostics: list[Diagnostic]) -> str:
    return "".join(_command(d) for d in diagnostics)
