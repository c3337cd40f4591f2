"""`torchlint lsp` end to end: a real LSP client (pytest-lsp) talking to the installed command.

Edits the server returns are applied here by an independent implementation of LSP
positions (code units of the negotiated encoding), and the resulting text is checked.
Tests that need no settings of their own share a server per module (each in its own
directory, so their documents and config files do not meet); starting one costs seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from conftest import run_torchlint, torchlint_executable
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

pytestmark = pytest.mark.asyncio(loop_scope="module")

HERE = Path(__file__).resolve().parent
TIMEOUT = 20

DATA_PARALLEL = "import torch\nmodel = torch.nn.DataParallel(model)\n"
FROM_NUMPY = "import numpy as np\nimport torch\nx = torch.tensor(np.load(path))\n"
FROM_NUMPY_FIXED = "import numpy as np\nimport torch\nx = torch.from_numpy(np.load(path))\n"


# -- the client ----------------------------------------------------------------------------
def _recording_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics in order and accepting
    capability registrations, as editors do."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []
    client.registrations = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.published.append(params)

    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    features = {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
        types.CLIENT_REGISTER_CAPABILITY: register,
    }
    register_lsp_features(client, features)
    return client


def capabilities(
    *,
    encodings: list[str] | None = None,
    pull: bool = False,
    resolve: bool = False,
    disabled: bool = False,
    notebooks: bool = False,
    configuration: bool = False,
) -> types.ClientCapabilities:
    code_action = types.CodeActionClientCapabilities(
        code_action_literal_support=types.ClientCodeActionLiteralOptions(
            code_action_kind=types.ClientCodeActionKindOptions(
                value_set=["quickfix", "source", "notebook"]
            )
        ),
        is_preferred_support=True,
        disabled_support=disabled,
        resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
        if resolve
        else None,
    )
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings)
        if encodings
        else None,
        text_document=types.TextDocumentClientCapabilities(
            code_action=code_action,
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            ),
            configuration=configuration,
        ),
        notebook_document=(
            types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities()
            )
            if notebooks
            else None
        ),
    )


@contextlib.asynccontextmanager
async def session(
    root: Path,
    caps: types.ClientCapabilities | None = None,
    options: dict | None = None,
    env: dict | None = None,
):
    """A started and initialized server; shut down and exited cleanly at the end."""
    config = ClientServerConfig(
        server_command=[torchlint_executable(), "lsp"],
        client_factory=_recording_client,
        server_env=env,
    )
    client = await config.start()
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps or capabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options={"debounceMs": 0, **(options or {})},
            )
        )
        client.init_result = result
        yield client
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        assert client._server.returncode == 0
    finally:
        await _stop(client)


async def _stop(client: LanguageClient) -> None:
    """Stop the client; a server still running (a test failed before `exit`) is killed."""
    if client._server is not None and client._server.returncode is None:
        client._server.kill()
    await client.stop()


async def published(
    client: LanguageClient, uri: str, version: int | None = None, after: int = 0
) -> list[types.Diagnostic]:
    """The first diagnostics published for `uri` (and `version`) from the `after`-th on."""

    async def wait() -> list[types.Diagnostic]:
        while True:
            for params in client.published[after:]:
                if params.uri == uri and (version is None or params.version == version):
                    return list(params.diagnostics)
            await asyncio.sleep(0.01)

    return await asyncio.wait_for(wait(), TIMEOUT)


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(item))
    return uri


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def code_actions(
    client: LanguageClient,
    uri: str,
    diagnostics: list[types.Diagnostic],
    only: list[str] | None = None,
) -> list[types.CodeAction]:
    whole = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
    )
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range if diagnostics else whole,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return result or []


# -- applying edits, independently of the server's position code ---------------------------
_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def _offset(text: str, at: types.Position, encoding: str) -> int:
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) or [""]
    if at.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: at.line])
    line = lines[at.line].rstrip("\r\n")
    codec, width = _CODECS[encoding]
    prefix = line.encode(codec)[: at.character * width].decode(codec)
    return start + len(prefix)


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    spans = [
        (_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text)
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    if edit.document_changes is not None:
        return {change.text_document.uri: list(change.edits) for change in edit.document_changes}
    return {uri: list(edits) for uri, edits in (edit.changes or {}).items()}


def applied(text: str, action: types.CodeAction, uri: str, encoding: str = "utf-16") -> str:
    return apply_edits(text, edits_of(action.edit)[uri], encoding)


def titled(actions: list[types.CodeAction], prefix: str) -> types.CodeAction:
    found = [a for a in actions if a.title.startswith(prefix)]
    assert len(found) == 1, [a.title for a in actions]
    return found[0]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory):
    """A client with few capabilities: UTF-16, pushed diagnostics, no resolve, safe fixes only."""
    async with session(tmp_path_factory.mktemp("plain")) as client:
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rich(tmp_path_factory):
    """A client with notebooks, code action resolve and disabled actions; unsafe fixes on."""
    caps = capabilities(resolve=True, disabled=True, notebooks=True)
    async with session(
        tmp_path_factory.mktemp("rich"), caps, options={"unsafeFixes": True}
    ) as client:
        yield client


# -- diagnostics ---------------------------------------------------------------------------
async def test_diagnostics_on_open_change_save_and_close(plain, tmp_path):
    client = plain
    uri = open_document(client, tmp_path / "train.py", DATA_PARALLEL)
    (found,) = await published(client, uri, 1)
    assert (found.code, found.source, found.severity) == (
        "TL004",
        "torchlint",
        types.DiagnosticSeverity.Warning,
    )
    assert found.range == types.Range(types.Position(1, 8), types.Position(1, 36))
    assert found.data["fix"]["applicability"] == "display-only"

    change_document(client, uri, "import torch\nmodel = model\n", 2)
    assert await published(client, uri, 2) == []

    change_document(client, uri, "import torch\n\n" + DATA_PARALLEL, 3)
    (found,) = await published(client, uri, 3)
    assert found.range.start == types.Position(3, 8)

    mark = len(client.published)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
    )
    assert [d.code for d in await published(client, uri, 3, after=mark)] == ["TL004"]

    mark = len(client.published)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
    )
    assert await published(client, uri, after=mark) == []


async def test_syntax_error_mid_edit_then_recovery(plain, tmp_path):
    client = plain
    uri = open_document(client, tmp_path / "train.py", DATA_PARALLEL)
    await published(client, uri, 1)
    change_document(client, uri, "import torch\nmodel = torch.nn.DataParallel(\n", 2)
    (error,) = await published(client, uri, 2)
    assert (error.code, error.severity) == ("TL000", types.DiagnosticSeverity.Error)
    assert "invalid syntax" in error.message
    change_document(client, uri, DATA_PARALLEL, 3)
    assert [d.code for d in await published(client, uri, 3)] == ["TL004"]


NON_ASCII_LINE = 'label = "café 🔥"; x = torch.tensor(np.load(path))'


async def _check_positions(client: LanguageClient, path: Path, encoding: str) -> None:
    """The finding after non-ASCII text, and its quick fix, in the negotiated encoding."""
    assert client.init_result.capabilities.position_encoding == encoding
    text = f"import numpy as np\nimport torch\n{NON_ASCII_LINE}\n"
    uri = open_document(client, path, text)
    (found,) = await published(client, uri, 1)
    codec, width = _CODECS[encoding]
    start, end = NON_ASCII_LINE.index("torch.tensor"), NON_ASCII_LINE.index("))") + 2
    assert found.range.start == types.Position(
        2, len(NON_ASCII_LINE[:start].encode(codec)) // width
    )
    assert found.range.end == types.Position(2, len(NON_ASCII_LINE[:end].encode(codec)) // width)
    assert found.range.start.character != start or encoding == "utf-32"

    fix = titled(await code_actions(client, uri, [found]), "torchlint (TL003)")
    assert applied(text, fix, uri, encoding) == text.replace("torch.tensor(", "torch.from_numpy(")


async def test_utf16_positions_after_non_ascii_text(plain, tmp_path):
    await _check_positions(plain, tmp_path / "train.py", "utf-16")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-32"])
async def test_positions_in_the_encoding_the_client_prefers(tmp_path, encoding):
    async with session(tmp_path, capabilities(encodings=[encoding, "utf-16"])) as client:
        await _check_positions(client, tmp_path / "train.py", encoding)


# -- code actions --------------------------------------------------------------------------
async def test_quick_fix_for_unsafe_fix_is_offered_but_not_preferred(plain, tmp_path):
    client = plain
    uri = open_document(client, tmp_path / "data.py", FROM_NUMPY)
    diagnostics = await published(client, uri, 1)
    actions = await code_actions(client, uri, diagnostics, only=["quickfix"])
    fix = titled(actions, "torchlint (TL003): Use `torch.from_numpy`")
    assert fix.kind == "quickfix" and not fix.is_preferred
    assert fix.edit.document_changes[0].text_document.version == 1
    fixed = applied(FROM_NUMPY, fix, uri)
    assert fixed == FROM_NUMPY_FIXED
    change_document(client, uri, fixed, 2)
    assert await published(client, uri, 2) == []


async def test_quick_fix_computed_on_older_text_is_not_offered(plain, tmp_path):
    client = plain
    uri = open_document(client, tmp_path / "data.py", FROM_NUMPY)
    diagnostics = await published(client, uri, 1)
    change_document(client, uri, "\n" + FROM_NUMPY, 2)
    await published(client, uri, 2)
    assert await code_actions(client, uri, diagnostics, only=["quickfix"]) == []


async def test_display_only_fix_is_shown_disabled_where_the_client_can(plain, rich, tmp_path):
    uri = open_document(rich, tmp_path / "train.py", DATA_PARALLEL)
    actions = await code_actions(rich, uri, await published(rich, uri, 1))
    shown = titled(actions, "torchlint (TL004): Launch with `torchrun`")
    assert shown.edit is None and shown.disabled is not None

    uri = open_document(plain, tmp_path / "train.py", DATA_PARALLEL)
    actions = await code_actions(plain, uri, await published(plain, uri, 1))
    assert [a.title for a in actions] == ["Disable TL004 for this line"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (DATA_PARALLEL, DATA_PARALLEL.replace("(model)\n", "(model)  # noqa: TL004\n")),
        (
            DATA_PARALLEL.replace("(model)\n", "(model)  # noqa: TL002   \n"),
            DATA_PARALLEL.replace("(model)\n", "(model)  # noqa: TL002, TL004   \n"),
        ),
        (
            DATA_PARALLEL.replace("(model)\n", "(model)  # keeps the old API\n"),
            DATA_PARALLEL.replace("(model)\n", "(model)  # keeps the old API  # noqa: TL004\n"),
        ),
        (  # the finding's own row ends inside a string: the statement's first row takes it
            'import torch\nrun(\n    torch.nn.DataParallel(model), """a\nb""")\n',
            'import torch\nrun(  # noqa: TL004\n    torch.nn.DataParallel(model), """a\nb""")\n',
        ),
    ],
    ids=["new", "extended", "after-comment", "multi-line-string"],
)
async def test_disable_for_this_line(plain, tmp_path, before, after):
    client = plain
    uri = open_document(client, tmp_path / "train.py", before)
    diagnostics = await published(client, uri, 1)
    action = titled(await code_actions(client, uri, diagnostics), "Disable TL004 for this line")
    assert applied(before, action, uri) == after
    change_document(client, uri, after, 2)
    assert await published(client, uri, 2) == []


MIXED = (
    "import numpy as np\nimport torch\n"
    "scaler = torch.cuda.amp.GradScaler()\n"  # TL106, safe fix
    "x = torch.tensor(np.load(path))\n"  # TL003, unsafe fix
    "optimizer.zero_grad(set_to_none=False)\n"  # TL006, unsafe fix
    "model = torch.nn.DataParallel(model)\n"  # TL004, display-only
)


def fixed_by_cli(directory: Path, text: str, *flags: str) -> str:
    """What `torchlint fix --apply` writes for the same text: fix-all must agree with it."""
    path = directory / "cli" / "train.py"
    path.parent.mkdir()
    path.write_text(text)
    run_torchlint("fix", "--apply", "--isolated", *flags, str(path))
    return path.read_text()


async def test_safe_quick_fix_is_preferred(plain, tmp_path):
    text = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    uri = open_document(plain, tmp_path / "train.py", text)
    fix = titled(
        await code_actions(plain, uri, await published(plain, uri, 1)), "torchlint (TL106)"
    )
    assert fix.is_preferred
    assert applied(text, fix, uri) == fixed_by_cli(tmp_path, text)


async def test_fix_all_applies_safe_fixes_only_by_default(plain, tmp_path):
    uri = open_document(plain, tmp_path / "train.py", MIXED)
    await published(plain, uri, 1)
    (action,) = await code_actions(plain, uri, [], only=["source.fixAll"])
    assert action.kind == "source.fixAll.torchlint"
    fixed = applied(MIXED, action, uri)
    assert fixed == fixed_by_cli(tmp_path, MIXED)
    assert "torch.cuda.amp" not in fixed and "torch.tensor(" in fixed


async def test_fix_all_with_unsafe_fixes_on(rich, tmp_path):
    uri = open_document(rich, tmp_path / "train.py", MIXED)
    await published(rich, uri, 1)
    (action,) = await code_actions(rich, uri, [], only=["source.fixAll"])
    fixed = applied(MIXED, action, uri)
    assert fixed == fixed_by_cli(tmp_path, MIXED, "--unsafe-fixes")
    assert "torch.from_numpy(np.load(path))" in fixed and "set_to_none=False" not in fixed


async def test_fix_all_is_not_offered_when_nothing_applies(plain, tmp_path):
    uri = open_document(plain, tmp_path / "train.py", FROM_NUMPY)
    await published(plain, uri, 1)
    assert await code_actions(plain, uri, [], only=["source.fixAll"]) == []


async def test_fix_all_offered_next_to_quick_fixes_is_resolved_on_demand(rich, tmp_path):
    uri = open_document(rich, tmp_path / "data.py", FROM_NUMPY)
    diagnostics = await published(rich, uri, 1)
    lazy = titled(await code_actions(rich, uri, diagnostics), "torchlint: fix all")
    assert lazy.edit is None
    resolved = await rich.code_action_resolve_async(lazy)
    assert applied(FROM_NUMPY, resolved, uri) == FROM_NUMPY_FIXED


async def test_fix_all_keeps_crlf_line_endings(rich, tmp_path):
    text = FROM_NUMPY.replace("\n", "\r\n")
    uri = open_document(rich, tmp_path / "data.py", text)
    await published(rich, uri, 1)
    (action,) = await code_actions(rich, uri, [], only=["source.fixAll.torchlint"])
    assert applied(text, action, uri) == FROM_NUMPY_FIXED.replace("\n", "\r\n")


async def test_hover_on_a_suppressed_code_shows_the_rule_docs(plain, tmp_path):
    text = "import torch\nm = torch.nn.DataParallel(m)  # noqa: TL003, TL004\n# torchlint: ignore[tensor-from-numpy]\n"
    uri = open_document(plain, tmp_path / "train.py", text)
    await published(plain, uri, 1)

    async def hover(line: int, character: int) -> types.Hover | None:
        position = types.Position(line=line, character=character)
        return await plain.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), position)
        )

    column = text.splitlines()[1].index("TL004")
    found = await hover(1, column + 2)
    assert "data-parallel" in found.contents.value and "## Why is this bad?" in found.contents.value
    assert found.range == types.Range(types.Position(1, column), types.Position(1, column + 5))
    by_name = await hover(2, text.splitlines()[2].index("tensor-") + 3)
    assert "TL003" in by_name.contents.value
    assert await hover(1, 3) is None


# -- configuration ---------------------------------------------------------------------------
async def test_config_file_change_is_picked_up(plain, tmp_path):
    client = plain
    watchers = [
        w["globPattern"] for r in client.registrations for w in r.register_options["watchers"]
    ]
    assert "**/pyproject.toml" in watchers and "**/torchlint.toml" in watchers
    uri = open_document(client, tmp_path / "train.py", DATA_PARALLEL + FROM_NUMPY)
    assert sorted(d.code for d in await published(client, uri, 1)) == ["TL003", "TL004"]

    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.torchlint]\nignore = ["TL004"]\n')
    mark = len(client.published)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    assert [d.code for d in await published(client, uri, 1, after=mark)] == ["TL003"]

    # No notification this time: the server sees the file's new stamp on the next lint.
    config.write_text(
        '[tool.torchlint]\nignore = ["TL003"]\nper-file-ignores = { "other.py" = ["TL004"] }\n'
    )
    change_document(client, uri, DATA_PARALLEL + FROM_NUMPY + "\n", 2)
    assert [d.code for d in await published(client, uri, 2)] == ["TL004"]

    (tmp_path / "torchlint.toml").write_text('per-file-ignores = { "train.py" = ["TL004"] }\n')
    change_document(client, uri, DATA_PARALLEL + FROM_NUMPY, 3)
    assert [d.code for d in await published(client, uri, 3)] == ["TL003"]

    config.unlink()
    (tmp_path / "torchlint.toml").write_text('ignore = ["TL404"]\n')
    change_document(client, uri, DATA_PARALLEL, 4)
    assert [d.code for d in await published(client, uri, 4)] == ["TL004"]
    assert any("TL404" in m.message and m.type == types.MessageType.Error for m in client.messages)


async def test_client_settings_and_debounce(tmp_path):
    caps = capabilities(configuration=True)
    options = {"ignore": ["TL004"], "targetTorchVersion": "2.1", "debounceMs": 300, "oops": 1}
    async with session(tmp_path, caps, options=options) as client:
        assert any("oops" in m.message for m in client.messages)
        uri = open_document(client, tmp_path / "train.py", "import torch\n")
        assert await published(client, uri, 1) == []
        for version in range(2, 6):  # typing: one lint, after the last keystroke
            change_document(client, uri, DATA_PARALLEL + FROM_NUMPY + "#" * version, version)
        assert [d.code for d in await published(client, uri, 5)] == ["TL003"]
        assert [p.version for p in client.published if p.uri == uri] == [1, 5]

        mark = len(client.published)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"torchlint": {"select": ["TL004"], "debounceMs": 0}}
            )
        )
        assert [d.code for d in await published(client, uri, 5, after=mark)] == ["TL004"]

        # Settings served through workspace/configuration, as Neovim's `settings` are.
        client.set_configuration({"select": ["tensor-from-numpy"]}, section="torchlint")
        mark = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        assert [d.code for d in await published(client, uri, 5, after=mark)] == ["TL003"]


# -- pull diagnostics ------------------------------------------------------------------------
async def test_pull_diagnostics_when_the_client_asks(tmp_path):
    async with session(tmp_path, capabilities(pull=True)) as client:
        uri = open_document(client, tmp_path / "train.py", DATA_PARALLEL)
        identifier = types.TextDocumentIdentifier(uri=uri)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=identifier)
        )
        assert [d.code for d in report.items] == ["TL004"]
        again = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=identifier, previous_result_id=report.result_id
            )
        )
        assert again.kind == "unchanged" and again.result_id == report.result_id
        change_document(client, uri, "import torch\n", 2)
        changed = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=identifier, previous_result_id=report.result_id
            )
        )
        assert changed.kind == "full" and list(changed.items) == []
        await asyncio.sleep(0.2)
        assert client.published == []  # pulled, never pushed: no duplicates in the editor


# -- notebooks ---------------------------------------------------------------------------------
async def test_notebook_cells_are_linted_as_one_module(rich, tmp_path):
    client = rich
    assert client.init_result.capabilities.notebook_document_sync is not None
    notebook_uri = (tmp_path / "explore.ipynb").as_uri()
    sources = [
        "import numpy as np\nimport torch\n",
        "# Data\nLoad the arrays.",
        "%matplotlib inline\nrows = np.load(path)\nx = torch.tensor(rows)\nm = torch.nn.DataParallel(m)\n",
    ]
    kinds = [
        types.NotebookCellKind.Code,
        types.NotebookCellKind.Markup,
        types.NotebookCellKind.Code,
    ]
    cell_uris = [f"vscode-notebook-cell:{tmp_path}/explore.ipynb#cell{i}" for i in range(3)]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=k, document=u) for k, u in zip(kinds, cell_uris)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=u, language_id="markdown" if i == 1 else "python", version=1, text=s
                )
                for i, (u, s) in enumerate(zip(cell_uris, sources))
            ],
        )
    )
    assert await published(client, cell_uris[0], 1) == []
    found = await published(client, cell_uris[2], 1)  # `np` and `torch` come from cell 1
    assert [(d.code, d.range.start.line) for d in found] == [("TL003", 2), ("TL004", 3)]

    fix = titled(await code_actions(client, cell_uris[2], found[:1]), "torchlint (TL003)")
    assert applied(sources[2], fix, cell_uris[2]) == sources[2].replace(
        "torch.tensor(", "torch.from_numpy("
    )
    noqa = titled(await code_actions(client, cell_uris[2], found[1:]), "Disable TL004")
    assert applied(sources[2], noqa, cell_uris[2]).endswith("(m)  # noqa: TL004\n")

    (fix_all,) = await code_actions(client, cell_uris[2], [], only=["notebook.source.fixAll"])
    assert fix_all.kind == "notebook.source.fixAll.torchlint"
    assert list(edits_of(fix_all.edit)) == [cell_uris[2]]
    assert applied(sources[2], fix_all, cell_uris[2]) == sources[2].replace(
        "torch.tensor(", "torch.from_numpy("
    )

    mark = len(client.published)
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in cell_uris],
        )
    )
    assert await published(client, cell_uris[2], after=mark) == []


# -- robustness and lifecycle ------------------------------------------------------------------
async def test_a_crashing_rule_is_logged_and_the_others_still_report(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE / "lsp"), os.environ.get("PYTHONPATH", "")]),
    }
    async with session(tmp_path, env=env) as client:
        uri = open_document(client, tmp_path / "train.py", DATA_PARALLEL + FROM_NUMPY)
        assert [d.code for d in await published(client, uri, 1)] == ["TL003"]
        errors = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
        assert any("TL004" in m and "injected failure" in m for m in errors)


async def test_shutdown_then_exit_ends_the_process_cleanly():
    config = ClientServerConfig(server_command=[torchlint_executable(), "lsp"])
    client = await config.start()
    try:
        await client.initialize_session(types.InitializeParams(capabilities=capabilities()))
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        assert client._server.returncode == 0
    finally:
        await _stop(client)


async def test_checking_files_does_not_import_the_language_server():
    code = "import sys, torchlint.cli; sys.exit(any(m.split('.')[0] in ('pygls', 'lsprotocol') for m in sys.modules))"
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
    assert await process.wait() == 0
