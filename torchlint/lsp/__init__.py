"""`torchlint lsp`: the language server for editors."""
