"""`pylint` and `azure`: one line per finding, for tools that read those formats.

`pylint` is pylint's parseable template (`path:row: [CODE(name), ] message`), which editors and
CI problem matchers already parse. `azure` is the Azure Pipelines logging command
`##vso[task.logissue ...]`, with Azure's escapes, so a pipeline lists the findings. A line break in
a message or path cannot start a forged line: both formats escape or replace it.
"""

from __future__ import annotations

from torchlint.diagnostics import Diagnostic
from torchlint.output.levels import level, where


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


def _pylint_line(d: Diagnostic) -> str:
    cell = f"cell {d.cell}" if d.cell is not None else ""  # pylint's "object" slot
    return f"{_one_line(d.path)}:{d.file_start.row}: [{d.code}({d.name}), {cell}] {_one_line(d.message)}\n"


def render_pylint(diagnostics: list[Diagnostic]) -> str:
    return "".join(_pylint_line(d) for d in diagnostics)


def _azure_data(text: str) -> str:
    return text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")


def _azure_property(text: str) -> str:
    return _azure_data(text).replace(";", "%3B").replace("]", "%5D")


def _azure_line(d: Diagnostic) -> str:
    properties = {
        "type": level(d.code),
        "sourcepath": d.path,
        "linenumber": d.file_start.row,
        "columnnumber": d.file_start.column,
        "code": d.code,
    }
    joined = "".join(f"{key}={_azure_property(str(value))};" for key, value in properties.items())
    return f"##vso[task.logissue {joined}]{_azure_data(f'[{d.name}] {where(d)}{d.message}')}\n"


def render_azure(diagnostics: list[Diagnostic]) -> str:
    return "".join(_azure_line(d) for d in diagnostics)
