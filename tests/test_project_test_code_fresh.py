"""The project index judges a file test code once per state of the file: a caller's module
that starts to import pytest after the index read it (an editor's long-lived index) leaves
the callers whose grad mode a method runs in, though no other question summarised it again.
Invented project."""

from __future__ import annotations

import os
from pathlib import Path

from torchlint.analysis.project_index import ProjectIndex

_NET = """\
class Net:
    def valid(self, x):
        return x
"""

_RUN = """\
import torch


def main(net, x):
    with torch.no_grad():
        net.valid(x)
"""

_CHECK = """\
def check(net, x):
    net.valid(x)
"""


def test_a_caller_turned_test_code_is_judged_again(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "net.py").write_text(_NET)
    (tmp_path / "run.py").write_text(_RUN)
    check = tmp_path / "check_net.py"
    check.write_text(_CHECK)
    index = ProjectIndex(tmp_path)
    net = tmp_path / "net.py"
    assert not index.handed_over_without_grad(net, "Net.valid")  # `check` calls it, grad on
    check.write_text("import pytest\n\n\n" + _CHECK)
    stamp = check.stat().st_mtime_ns + 10**9  # a clock coarser than the two writes
    os.utime(check, ns=(stamp, stamp))
    assert index.handed_over_without_grad(net, "Net.valid")
