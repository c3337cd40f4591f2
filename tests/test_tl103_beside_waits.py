"""TL103 leaves a small copy beside a wait its function makes on purpose.

A per-step block that sizes its output from the data (`index.bincount()`, `torch.unique`,
boolean-mask indexing) or reads a size the host needs (`n = int(lengths.max().item())`)
waits for the device there anyway: a vector built on the host next to it (`torch.arange(k)`,
`torch.zeros(1)`) lands on a drained stream or moves that wait by a few ops (judged debatable
on real point-cloud and alignment code). A matrix sized by the data still costs its host fill
and copy, a wait under a branch of its own paces nothing, a masked store of a number
(`flip[flip < 0.5] = -1.0`) runs as `masked_fill_` on the device and waits for nothing, and a
block without such a wait keeps its finding. Each case is an invented project checked by the installed `torchlint`.
"""

from __future__ import annotations

import pytest
from project_cases import Case, case_findings, check_projects

_BLOCK = """\
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, feats, index, lengths, scores):
{body}
"""


def _block(case_id: str, body: str) -> Case:
    lines = "\n".join("        " + line if line else "" for line in body.splitlines())
    return Case(case_id, {"block.py": _BLOCK.format(body=lines)}, rules=("TL103",))


CASES = [
    _block(
        "offsets-after-a-bincount",
        """\
counts = index.bincount()
offsets = torch.cat([torch.zeros(1, dtype=torch.long).cuda(), counts.cumsum(0)])
return feats[offsets]""",
    ),
    _block(
        "positions-sized-by-a-read-the-host-needs",
        """\
longest = int(lengths.max().item())
valid = torch.arange(longest).to(feats.device)[None, :] < lengths[:, None]
return feats * valid""",
    ),
    _block(
        "positions-before-a-boolean-mask",
        """\
k = feats.shape[1]
mask = torch.arange(k).unsqueeze(0).cuda() < lengths.unsqueeze(-1)
pairs = mask.unsqueeze(-1) & mask.unsqueeze(-2)
return feats.unsqueeze(-1).expand(-1, -1, k)[pairs]""",
    ),
    _block(
        "matrix-beside-a-unique-stays",
        """\
n, c = scores.shape
onehot = torch.zeros(n, c).cuda()  # TL103: torch.zeros(n, c).cuda()
classes = list(index.unique())
return onehot.sum() + len(classes)""",
    ),
    _block(
        "wait-under-its-own-branch-stays",
        """\
offsets = torch.zeros(1).cuda()  # TL103: torch.zeros(1).cuda()
if self.training:
    counts = index.bincount()
    offsets = offsets + counts.sum()
return feats + offsets""",
    ),
    _block(
        "masked-store-of-a-number-stays",
        """\
flip = torch.rand(feats.shape[1]).to(feats.device)  # TL103: torch.rand(feats.shape[1]).to(feats.device)
flip[flip >= 0.5] = 1.0
flip[flip < 0.5] = -1.0
return feats * flip""",
    ),
    _block(
        "no-wait-stays",
        """\
steps = torch.arange(feats.shape[1]).cuda()  # TL103: torch.arange(feats.shape[1]).cuda()
kept = feats[:, :, None] * scores[index]
return kept + steps""",
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(tmp_path_factory.mktemp("tl103_beside_waits"), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl103_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
