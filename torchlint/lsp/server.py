"""`torchlint lsp`: findings, quick fixes and rule docs in any LSP editor (pygls, stdio).

Linting runs on one worker thread so the event loop keeps answering while a large file is
linted. A result is tied to the document versions and the settings generation it was
computed for, so stale work is dropped instead of published. The server only parses: it
never imports or runs the code it lints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchlint import __version__
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic, Position
from torchlint.engine.lint import INTERNAL_ERROR, lint_text
from torchlint.engine.run import file_rules  # per-file-ignores match paths as `check` does
from torchlint.fixes.apply import FixError, applies, fix_to_fixpoint
from torchlint.lsp.actions import (
    FIX_ALL,
    NOTEBOOK_FIX_ALL,
    QUICK_FIX,
    Target,
    diagnostic_actions,
    diff_edits,
    fix_all_action,
    wanted,
    workspace_edit,
)
from torchlint.lsp.convert import to_lsp
from torchlint.lsp.noqa import code_at
from torchlint.lsp.positions import Lines
from torchlint.lsp.settings import ClientSettings, ProjectSettings, parse_client_settings
from torchlint.lsp.units import Unit, notebook_unit, text_unit
from torchlint.notebook import NotebookError
from torchlint.registry import find_rule
from torchlint.rule import Rule

if TYPE_CHECKING:
    from torchlint.catalogue import RuleEntry

T = TypeVar("T")
CONFIG_GLOBS = ("**/pyproject.toml", "**/torchlint.toml", "**/requirements*.txt")
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")]
        )
    ],
    save=True,
)


@dataclass(frozen=True)
class Linter:
    """What one file is linted with."""

    path: Path
    settings: Settings
    rules: Sequence[RuleEntry | type[Rule]]
    config_problem: str | None  # a broken config file: linted with the defaults meanwhile

    def lint(self, text: str) -> list[Diagnostic]:
        return lint_text(str(self.path), text, self.rules, self.settings)


@dataclass(frozen=True)
class Result:
    """One lint of one unit's document versions under one settings generation."""

    versions: dict[str, int | None]
    generation: int
    diagnostics: dict[str, list[types.Diagnostic]]  # per document uri
    fixable: bool  # fix-all would change something
    config_problem: str | None
    internal_errors: list[str]  # rules that crashed; the other rules' findings are kept

    @property
    def result_id(self) -> str:
        return f"{self.generation}:{sorted(self.versions.items())}"


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: pygls applies incremental changes with str.splitlines, which also breaks
        # lines at form feeds and other separators Python source may hold, and the whole text
        # is re-linted on every change anyway.
        super().__init__(
            "torchlint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            notebook_document_sync=NOTEBOOK_SYNC,
        )
        self.editor = ClientSettings()
        self.projects = ProjectSettings()
        self.generation = 0
        self.pending: dict[str, asyncio.Task] = {}
        self.results: dict[str, Result] = {}
        self.reported: set[str] = set()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchlint-lint")

    # -- client capabilities -----------------------------------------------------------
    def supports(self, field: str) -> bool:
        return bool(get_capability(self.client_capabilities, field, None))

    @property
    def pull(self) -> bool:
        """The client asks for diagnostics itself; pushing as well would show them twice."""
        return self.supports("text_document.diagnostic")

    # -- messages to the user ----------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=f"torchlint: {message}"))

    def report_once(self, message: str, kind: types.MessageType) -> None:
        """Log and show a problem the first time it occurs, so keystrokes do not repeat it."""
        if message in self.reported:
            return
        self.reported.add(message)
        self.log(message, kind)
        self.window_show_message(
            types.ShowMessageParams(type=kind, message=f"torchlint: {message}")
        )

    def set_editor_settings(self, raw: Any) -> None:
        settings, problems = parse_client_settings(raw)
        for problem in problems:
            self.report_once(problem, types.MessageType.Warning)
        self.editor = settings

    # -- units -------------------------------------------------------------------------
    def unit_key(self, uri: str) -> str:
        """The uri a document is linted under: its notebook's for a cell, else its own."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def unit(self, key: str) -> Unit | None:
        path = self.path_of(key)
        if self.workspace.get_notebook_document(notebook_uri=key) is not None:
            return notebook_unit(self.workspace, key, path)
        return text_unit(self.workspace, key, path)

    def path_of(self, uri: str) -> Path:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is not None:
            return Path(path)
        return Path(self.workspace.root_path or Path.cwd()) / "untitled.py"

    def open_units(self) -> set[str]:
        return {self.unit_key(uri) for uri in self.workspace.text_documents} | set(
            self.workspace.notebook_documents
        )

    # -- linting: the worker thread computes, the event loop talks to the client --------
    def linter_for(self, path: Path) -> Linter:
        project, problem = self.projects.for_directory(path.parent)
        settings = self.editor.apply(project)
        rules = file_rules(path, settings.enabled_rules(), settings)
        return Linter(path, settings, rules, problem)

    def _lint(self, unit: Unit, generation: int) -> Result:
        linter = self.linter_for(unit.path)
        findings = linter.lint(unit.text)
        errors = [f"{unit.path}: {d.message}" for d in findings if d.code == INTERNAL_ERROR[0]]
        diagnostics: dict[str, list[types.Diagnostic]] = {d.uri: [] for d in unit.documents}
        lines = {d.uri: Lines(d.text, self.workspace.position_encoding) for d in unit.documents}
        for finding in findings:
            if finding.code != INTERNAL_ERROR[0] and unit.documents:
                document, placed = unit.place(finding)
                diagnostics[document.uri].append(
                    to_lsp(placed, lines[document.uri], document.version)
                )
        fixable = any(applies(d.fix, linter.settings.unsafe_fixes) for d in findings)
        return Result(
            unit.versions, generation, diagnostics, fixable, linter.config_problem, errors
        )

    async def on_worker(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    def cached(self, key: str, unit: Unit) -> Result | None:
        found = self.results.get(key)
        if (
            found is not None
            and found.versions == unit.versions
            and found.generation == self.generation
        ):
            return found
        return None

    async def result_for(self, key: str) -> Result | None:
        """The current lint of an open unit, reusing the last one when nothing changed."""
        unit = self.unit(key)
        if unit is None:
            return None
        result = self.cached(key, unit)
        if result is not None:
            return result
        result = await self.on_worker(self._lint, unit, self.generation)
        if result.config_problem is not None:
            self.report_once(result.config_problem, types.MessageType.Error)
        for error in result.internal_errors:
            self.log(error, types.MessageType.Error)
        if key in self.open_units():
            self.results[key] = result
        return result

    # -- push diagnostics --------------------------------------------------------------
    def schedule(self, key: str, delay: float) -> None:
        """Lint unit `key` after `delay` seconds unless another change comes first."""
        if self.pull:
            return
        self.cancel(key)
        self.pending[key] = asyncio.ensure_future(self._publish_after(key, delay))

    def cancel(self, key: str) -> None:
        task = self.pending.pop(key, None)
        if task is not None:
            task.cancel()

    async def _publish_after(self, key: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            result = await self.result_for(key)
        except Exception as error:  # a bug in the server must not end the session
            self.log(
                f"linting {key} failed: {type(error).__name__}: {error}", types.MessageType.Error
            )
            return
        finally:
            if self.pending.get(key) is asyncio.current_task():
                del self.pending[key]
        if result is None:
            return
        for uri, diagnostics in result.diagnostics.items():
            self.publish(uri, diagnostics, result.versions.get(uri))

    def publish(
        self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None
    ) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def closed(self, key: str, uris: list[str]) -> None:
        self.cancel(key)
        self.results.pop(key, None)
        if not self.pull:
            for uri in uris:
                self.publish(uri, [])

    def settings_changed(self) -> None:
        """Settings or config files changed: every open document's findings may differ."""
        self.projects.clear()
        self.reported.clear()
        self.generation += 1
        if not self.pull:
            for key in self.open_units():
                self.schedule(key, 0)
        elif self.supports("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)

    # -- code actions ------------------------------------------------------------------
    def target(self, uri: str) -> Target | None:
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        return Target(
            uri=uri,
            version=document.version,
            lines=Lines(document.source, self.workspace.position_encoding),
            document_changes=self.supports("workspace.workspace_edit.document_changes"),
            disabled_support=self.supports("text_document.code_action.disabled_support"),
        )

    async def fix_all_edit(self, key: str) -> types.WorkspaceEdit | None:
        """Every applicable fix of the unit, to a fixpoint, as edits of the changed lines."""
        unit = self.unit(key)
        if unit is None:
            return None
        linter = self.linter_for(unit.path)
        try:
            fixed = await self.on_worker(_fixed_documents, linter, unit)
        except (FixError, NotebookError) as error:
            self.log(f"{unit.path}: {error}", types.MessageType.Warning)
            return None
        changes = []
        for document in unit.documents:
            new = fixed.get(document.uri, document.text)
            if new != document.text:
                lines = Lines(document.text, self.workspace.position_encoding)
                changes.append((document.uri, document.version, diff_edits(lines, new)))
        return (
            workspace_edit(changes, self.supports("workspace.workspace_edit.document_changes"))
            if changes
            else None
        )

    def shutdown_work(self) -> None:
        for key in list(self.pending):
            self.cancel(key)
        self.worker.shutdown(wait=False, cancel_futures=True)


def _fixed_documents(linter: Linter, unit: Unit) -> dict[str, str]:
    return unit.fixed_documents(
        fix_to_fixpoint(unit.text, linter.lint, linter.settings.unsafe_fixes).text
    )


def create_server() -> TorchlintServer:
    server = TorchlintServer()
    register_lifecycle(server)
    register_documents(server)
    register_actions(server)
    return server


def register_lifecycle(server: TorchlintServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        server.set_editor_settings(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        if server.supports("workspace.did_change_watched_files.dynamic_registration"):
            watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in CONFIG_GLOBS]
            registration = types.Registration(
                id="torchlint-config-files",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
            )
            try:
                await server.client_register_capability_async(
                    types.RegistrationParams(registrations=[registration])
                )
            except Exception as error:  # config changes are still seen on the next lint
                server.log(f"could not watch config files: {error}", types.MessageType.Warning)
        await pull_configuration()

    async def pull_configuration() -> None:
        """Settings served by workspace/configuration (Neovim's `settings`, VS Code's settings.json)."""
        if not server.supports("workspace.configuration"):
            return
        items = [types.ConfigurationItem(section="torchlint")]
        try:
            values = await server.workspace_configuration_async(
                types.ConfigurationParams(items=items)
            )
        except Exception as error:
            server.log(f"could not read the editor's settings: {error}", types.MessageType.Warning)
            return
        if values and isinstance(values[0], dict) and values[0]:
            server.set_editor_settings(values[0])
            server.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            server.set_editor_settings(params.settings)
            server.settings_changed()
            return
        await pull_configuration()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        server.settings_changed()

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.shutdown_work()


def register_documents(server: TorchlintServer) -> None:
    def debounce() -> float:
        return server.editor.debounce_ms / 1000

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, debounce())

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.closed(params.text_document.uri, [params.text_document.uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(params: types.DidOpenNotebookDocumentParams) -> None:
        server.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(params: types.DidChangeNotebookDocumentParams) -> None:
        key = params.notebook_document.uri
        structure = params.change.cells.structure if params.change.cells else None
        if structure is not None and not server.pull:
            for cell in structure.did_close or []:
                server.publish(cell.uri, [])
        server.schedule(key, debounce())

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(params: types.DidSaveNotebookDocumentParams) -> None:
        server.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(params: types.DidCloseNotebookDocumentParams) -> None:
        server.closed(
            params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents]
        )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="torchlint", inter_file_dependencies=False, workspace_diagnostics=False
        ),
    )
    async def pull_diagnostics(
        params: types.DocumentDiagnosticParams,
    ) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        result = await server.result_for(server.unit_key(uri))
        if result is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        if params.previous_result_id == result.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result.result_id)
        items = result.diagnostics.get(uri, [])
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result.result_id)


def register_actions(server: TorchlintServer) -> None:
    options = types.CodeActionOptions(
        code_action_kinds=[QUICK_FIX, FIX_ALL, NOTEBOOK_FIX_ALL], resolve_provider=True
    )

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        target = server.target(params.text_document.uri)
        if target is None:
            return None
        only = params.context.only
        actions: list[types.CodeAction] = []
        if wanted(QUICK_FIX, only):
            for diagnostic in params.context.diagnostics:
                actions += diagnostic_actions(target, diagnostic)
        key = server.unit_key(target.uri)
        kind = (
            NOTEBOOK_FIX_ALL
            if key != target.uri and only and wanted(NOTEBOOK_FIX_ALL, only)
            else FIX_ALL
        )
        if wanted(kind, only):
            action = await fix_all(key, kind, explicit=only is not None)
            if action is not None:
                actions.append(action)
        return actions or None

    async def fix_all(key: str, kind: str, explicit: bool) -> types.CodeAction | None:
        """Asked for by kind (e.g. on save): computed now. Offered next to quick fixes only when
        the last lint found something to fix, and then computed on resolve where the client can."""
        if not explicit:
            unit = server.unit(key)
            if unit is None:
                return None
            last = server.cached(key, unit)
            if last is None or not last.fixable:
                return None
            if server.supports("text_document.code_action.resolve_support"):
                return fix_all_action(
                    kind, None, {"key": key, "versions": list(unit.versions.items())}
                )
        edit = await server.fix_all_edit(key)
        return fix_all_action(kind, edit) if edit is not None else None

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        unit = server.unit(str(data.get("key", "")))
        if unit is None or action.kind not in (FIX_ALL, NOTEBOOK_FIX_ALL):
            return action
        if [list(pair) for pair in unit.versions.items()] != data.get("versions"):
            return action  # the documents changed since: no edit rather than a wrong one
        action.edit = await server.fix_all_edit(unit.key)
        return action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        target = server.target(params.text_document.uri)
        if target is None:
            return None
        at = target.lines.from_lsp(params.position)
        found = code_at(target.lines.line(at.row), at.column - 1)
        if found is None:
            return None
        rule = find_rule(found[0])
        if rule is None:
            return None
        _, start, end = found
        text = f"**{rule.code}** `{rule.name}`: {rule.summary}.\n{rule.docs}"
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=target.lines.range(Position(at.row, start + 1), Position(at.row, end + 1)),
        )


def serve() -> None:
    create_server().start_io()
