"""Code actions: a quick fix per fixable finding, a `# noqa` per finding, and fix-all.

Quick fixes and `# noqa` edits are computed from the diagnostic's `data` and the document
text alone; only fix-all lints again (to a fixpoint, as `torchlint fix` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from lsprotocol import types

from torchlint.diagnostics import Applicability, Fix
from torchlint.engine.lint import INTERNAL_ERROR, SYNTAX_ERROR
from torchlint.fixes.apply import newline_of
from torchlint.lsp.convert import SOURCE, fix_from_data
from torchlint.lsp.noqa import disable_edit
from torchlint.lsp.positions import Lines

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.torchlint"
NOTEBOOK_FIX_ALL = f"notebook.{FIX_ALL}"  # what VS Code asks of notebooks on save
QUICK_FIX = types.CodeActionKind.QuickFix.value
_UNSUPPRESSIBLE = (SYNTAX_ERROR[0], INTERNAL_ERROR[0])


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether a request's `only` filter admits actions of `kind` (a prefix admits its children)."""
    return only is None or any(kind == o or kind.startswith(f"{o}.") for o in only)


@dataclass(frozen=True)
class Target:
    """The document a code action edits, as the client knows it."""

    uri: str
    version: int | None
    lines: Lines
    document_changes: bool  # the client takes versioned edits
    disabled_support: bool  # the client can show an action it cannot apply

    def workspace_edit(self, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return workspace_edit([(self.uri, self.version, edits)], self.document_changes)


def workspace_edit(
    changes: list[tuple[str, int | None, list[types.TextEdit]]], versioned: bool
) -> types.WorkspaceEdit:
    """Edits of one or more documents; versioned ones are refused by the client if a document
    moved on since."""
    if not versioned:
        return types.WorkspaceEdit(changes={uri: edits for uri, _, edits in changes})
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=edits,
            )
            for uri, version, edits in changes
        ]
    )


def diagnostic_actions(target: Target, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The quick fix and the `# noqa` action for one of our diagnostics on the current text."""
    data = diagnostic.data
    if (
        diagnostic.source != SOURCE
        or not isinstance(data, dict)
        or data.get("version") != target.version
    ):
        return []  # someone else's, or computed on an older text: its positions no longer hold
    code = str(diagnostic.code)
    actions = []
    fix = fix_from_data(data)
    if fix is not None:
        actions += _quick_fix(target, diagnostic, code, fix)
    rows = [r for r in data.get("rows", []) if isinstance(r, int)]
    if code not in _UNSUPPRESSIBLE and rows:
        edit = disable_edit(target.lines.text, target.lines.lines, rows, code)
        if edit is not None:
            actions.append(
                types.CodeAction(
                    title=f"Disable {code} for this line",
                    kind=QUICK_FIX,
                    diagnostics=[diagnostic],
                    edit=target.workspace_edit(
                        [
                            types.TextEdit(
                                range=target.lines.range(edit.start, edit.end),
                                new_text=edit.content,
                            )
                        ]
                    ),
                )
            )
    return actions


def _quick_fix(
    target: Target, diagnostic: types.Diagnostic, code: str, fix: Fix
) -> list[types.CodeAction]:
    title = f"torchlint ({code}): {fix.message}"
    if fix.applicability is Applicability.DISPLAY_ONLY or not fix.edits:
        if not target.disabled_support:
            return []
        reason = "Display-only: this change needs a manual rewrite"
        disabled = types.CodeActionDisabled(reason=reason)
        return [
            types.CodeAction(
                title=title, kind=QUICK_FIX, diagnostics=[diagnostic], disabled=disabled
            )
        ]
    return [
        types.CodeAction(
            title=title,
            kind=QUICK_FIX,
            diagnostics=[diagnostic],
            is_preferred=fix.applicability is Applicability.SAFE,
            edit=target.workspace_edit(fix_edits(target.lines, fix)),
        )
    ]


def fix_edits(lines: Lines, fix: Fix) -> list[types.TextEdit]:
    """A fix's edits in client positions; rules write `\\n`, a CRLF file gets `\\r\\n`."""
    newline = newline_of(lines.text)
    return [
        types.TextEdit(
            range=lines.range(e.start, e.end), new_text=_with_newline(e.content, newline)
        )
        for e in fix.edits
    ]


def _with_newline(content: str, newline: str) -> str:
    return content if newline == "\n" else content.replace("\r\n", "\n").replace("\n", newline)


def diff_edits(lines: Lines, new: str) -> list[types.TextEdit]:
    """The changed lines between the document and `new`, as separate edits.

    Line-level edits keep the client's cursor, folds and markers on untouched lines, which
    one whole-document replacement would not. difflib's junk heuristic stays on: without it
    the matcher is quadratic in the lines that repeat (blank lines, `return x`), which took
    7 s on a 5,000-line file; with it a popular line may only widen an edit, never break it.
    """
    old = lines.text
    bounds = [*lines.starts, len(old)]
    old_lines = [old[bounds[k] : bounds[k + 1]] for k in range(len(lines.starts))]
    new_lines = Lines(new, None)
    new_bounds = [*new_lines.starts, len(new)]
    replacement = [new[new_bounds[k] : new_bounds[k + 1]] for k in range(len(new_lines.starts))]
    matcher = SequenceMatcher(None, old_lines, replacement)
    return [
        types.TextEdit(
            range=types.Range(
                start=lines.offset_to_lsp(bounds[i1]), end=lines.offset_to_lsp(bounds[i2])
            ),
            new_text="".join(replacement[j1:j2]),
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def fix_all_action(
    kind: str, edit: types.WorkspaceEdit | None, data: dict | None = None
) -> types.CodeAction:
    """Fix-all with its edit, or (edit None) to be resolved later from `data`."""
    return types.CodeAction(
        title="torchlint: fix all auto-fixable problems", kind=kind, edit=edit, data=data
    )
