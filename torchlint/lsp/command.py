"""The `torchlint lsp` command. pygls is imported only when the command runs, so `check`
and the other commands start without it and work where the `lsp` extra is not installed."""

from __future__ import annotations

import click

from torchlint.cli_options import fail, install_hint


@click.command("lsp")
def lsp() -> None:
    """Run the language server on stdio, for editors (needs the `lsp` extra)."""
    try:
        from torchlint.lsp.server import serve
    except ImportError as error:
        fail(
            f"the language server needs pygls: install torchlint's lsp extra, {install_hint('lsp')} ({error})"
        )
    serve()
