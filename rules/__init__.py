"""The rule pack: one module per rule, found by `torchlint.registry`."""
