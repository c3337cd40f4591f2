"""What one lint covers: a Python document, or a notebook's cells joined into one module.

A notebook is linted as one module (names from earlier cells are known), through
torchlint.notebook; findings land back in the cell documents, with cell-relative positions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from torchlint.diagnostics import Diagnostic, Position
from torchlint.notebook import Notebook, parse


@dataclass(frozen=True)
class Document:
    uri: str
    version: int | None
    text: str


@dataclass(frozen=True)
class Unit:
    key: str  # the document's or the notebook's uri
    path: Path
    text: str  # what the engine lints
    documents: tuple[Document, ...]  # where findings land: the document, or each cell
    notebook: Notebook | None = None

    @property
    def versions(self) -> dict[str, int | None]:
        return {d.uri: d.version for d in self.documents}

    def place(self, finding: Diagnostic) -> tuple[Document, Diagnostic]:
        """The document a finding belongs in, and the finding in that document's positions."""
        if self.notebook is None:
            return self.documents[0], finding
        notebook = self.notebook
        (mapped,) = notebook.map_diagnostics(self.text, [finding])
        rows = tuple(self._locate(notebook, Position(row, 1))[1].row for row in finding.anchor_rows)
        edit_cells = (
            {self._locate(notebook, e.start)[0] for e in finding.fix.edits}
            if finding.fix
            else set()
        )
        # A fix reaching into another cell (an import added to the first one) is left to fix-all.
        fix = mapped.fix if edit_cells <= {mapped.cell} else None
        return self.documents[(mapped.cell or 1) - 1], replace(mapped, anchor_rows=rows, fix=fix)

    def _locate(self, notebook: Notebook, at: Position) -> tuple[int | None, Position]:
        """The cell and cell-relative position of a position in the virtual module."""
        (probe,) = notebook.map_diagnostics(self.text, [Diagnostic("", "", "", "", at, at)])
        return probe.cell, probe.start

    def fixed_documents(self, fixed: str) -> dict[str, str]:
        """The new text of each document from the unit's fixed text (NotebookError if a fix
        crossed a cell boundary)."""
        if self.notebook is None:
            return {self.key: fixed}
        sources = self.notebook.sources(fixed)
        return {
            self.documents[cell.number - 1].uri: new
            for cell, new in zip(self.notebook.cells, sources)
        }


def text_unit(workspace: Workspace, uri: str, path: Path) -> Unit | None:
    document = workspace.text_documents.get(uri)
    if document is None:
        return None
    return Unit(uri, path, document.source, (Document(uri, document.version, document.source),))


def notebook_unit(workspace: Workspace, uri: str, path: Path) -> Unit | None:
    """The notebook's synced cells as one module; only Python code cells are linted."""
    notebook = workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return None
    documents = []
    cells = []
    for cell in notebook.cells:
        document = workspace.text_documents.get(cell.document)
        if document is None:
            continue
        documents.append(Document(cell.document, document.version, document.source))
        code = cell.kind == types.NotebookCellKind.Code and document.language_id in (None, "python")
        cells.append({"cell_type": "code" if code else "markdown", "source": document.source})
    parsed = parse(json.dumps({"cells": cells, "metadata": {}}))
    return Unit(uri, path, parsed.text, tuple(documents), parsed)
