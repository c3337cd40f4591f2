"""Fault injection for tests/test_lsp.py: on PYTHONPATH, this makes TL004's visitor raise in
the server process, as a bug in a rule would. Nothing else imports it."""

import torchlint.rules.data_parallel as data_parallel


def _broken(self, node):
    raise RuntimeError("injected failure")


data_parallel.DataParallel.visit_Call = _broken
