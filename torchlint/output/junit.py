"""`junit`: JUnit XML, which CI systems (GitLab, Jenkins, Azure) show as test results.

One test suite per file with findings, one failing test case per finding; a clean run is
one passing test case, so the report is never empty.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby

from torchlint.diagnostics import Diagnostic

# Characters XML 1.0 cannot hold at all, even escaped; messages may quote user source.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _counts(element: ET.Element, tests: int, failures: int) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(failures))
    element.set("errors", "0")


def _case(suite: ET.Element, d: Diagnostic) -> None:
    where = (
        f"{d.start.row}:{d.start.column}"
        if d.cell is None
        else f"cell {d.cell}:{d.start.row}:{d.start.column}"
    )
    case = ET.SubElement(
        suite, "testcase", name=_clean(f"{d.code} {d.name} at {where}"), classname=_clean(d.path)
    )
    case.set("file", _clean(d.path))
    case.set(
        "line", str(d.file_start.row)
    )  # in a notebook, the .ipynb line; the name keeps the cell
    failure = ET.SubElement(case, "failure", message=_clean(d.message), type=d.code)
    details = [f"{d.path}:{where}: {d.code} [{d.name}] {d.message}"]
    if d.fix is not None:
        details.append(f"fix ({d.fix.applicability.value}): {d.fix.message}")
    failure.text = _clean("\n".join(details))


def render_junit(diagnostics: list[Diagnostic]) -> str:
    root = ET.Element("testsuites", name="torchlint")
    _counts(root, max(1, len(diagnostics)), len(diagnostics))
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="torchlint")
        _counts(suite, 1, 0)
        ET.SubElement(suite, "testcase", name="no findings", classname="torchlint")
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        found = list(group)
        suite = ET.SubElement(root, "testsuite", name=_clean(path))
        _counts(suite, len(found), len(found))
        for d in found:
            _case(suite, d)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
