"""A run keeps Python's cyclic collector off while it lints (syntax trees are large and acyclic)
and gives it back as it found it: the language server and library callers of the engine run on
with their own collector settings."""

from __future__ import annotations

import gc

from torchlint.config import Settings
from torchlint.engine.lint import collection_paused
from torchlint.engine.run import check_paths

TRAIN = """\
import torch

for x in loader:
    loss = model(x.cuda())
    loss.backward()
    print(loss.item())
"""


def test_a_run_restores_the_collector(tmp_path):
    for i in range(3):
        (tmp_path / f"train{i}.py").write_text(TRAIN)
    assert gc.isenabled()
    result = check_paths([str(tmp_path)], Settings(), jobs=1, use_cache=False)
    assert gc.isenabled()
    codes = [d.code for r in result.files for d in r.diagnostics]
    assert codes.count("TL002") == 3


def test_paused_nests_and_keeps_a_disabled_collector_disabled():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
