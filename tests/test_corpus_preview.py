"""The corpus measures the preview rules (issue 26): they earn their way out of preview there.

The benchmark runs the installed `torchlint check --preview`, and the sample and the precision
tally count each preview rule beside the others, so `docs/precision.md` has a row for it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from corpus.corpus import PREVIEW_RULES, Finding, Repo, findings, precision, sample

CATALOGUE = Path(__file__).resolve().parents[1] / "torchlint" / "catalogue.json"

CUDA_IN_DATASET = textwrap.dedent(
    """
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Samples(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            return torch.zeros(3).cuda()


    loader = DataLoader(Samples(), batch_size=2)
    """
)


def _finding(rule: str, index: int) -> Finding:
    return Finding("o/r", "0" * 40, f"f{index}.py", 1, rule, "m", f"line {index}")


def test_the_corpus_measures_every_preview_rule_of_the_catalogue():
    catalogue = json.loads(CATALOGUE.read_text())
    assert set(PREVIEW_RULES) == {entry["code"] for entry in catalogue if entry.get("preview")}


def test_a_preview_rule_is_drawn_and_tallied_but_not_a_parse_error_or_unused_noqa():
    found = [_finding("TL118", i) for i in range(3)] + [
        _finding(code, 9) for code in ("TL000", "TL100", "TL999")
    ]
    drawn = sample(found, 14, "tune")
    assert set(drawn) == {"TL118"} and len(drawn["TL118"]) == 3
    assert set(precision(found, drawn, {})) == {"TL118"}


def test_the_corpus_run_reports_preview_findings(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "data.py").write_text(CUDA_IN_DATASET)
    found = findings(Repo("o/r", "0" * 40, "tune"), tmp_path)
    assert [(f.path, f.rule, f.text) for f in found if f.rule in PREVIEW_RULES] == [
        ("data.py", "TL118", "return torch.zeros(3).cuda()")
    ]
