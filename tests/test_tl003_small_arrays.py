"""TL003 on arrays numpy builds from Python numbers, and on loops over a mapping's keys.

Judges found two kinds of copies that cost nothing measurable even on a per-batch path: an
array numpy has just built from a list of Python numbers (one molecule id per atom,
`[i] * len(atoms)`; one reward score per completion gathered with `.tolist()`; the lengths of
a batch), where converting each Python object costs far more than the copy that follows; and
a copy in a loop over a dict's items, which runs once per key (a few processor outputs), not
per sample. A copy beside an autoregressive decode (`model.generate(...)` in the same loop
iteration or function) is noise next to the decode's forward pass per token. Each case is an invented project; a line marked `# TL003: text` expects a finding
there (`project_cases.Case`), every other TL003 finding of a case is a failure. One
`torchlint` run checks all cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects

CASES = [
    # a collate function: the index array is built from Python ints, the features from arrays
    Case(
        "collate-index-array-from-python-ints",
        {
            "collate.py": """\
import numpy as np
import torch


def collate_graphs(graphs):
    features = []
    batch_indexes = []
    for i, graph in enumerate(graphs):
        features.append(graph.x)
        batch_indexes.append([i] * len(graph.x))
    lengths = np.array([len(g.x) for g in graphs])
    x = torch.tensor(np.concatenate(features))  # TL003: torch.tensor(np.concatenate(features))
    batch = torch.tensor(np.concatenate(batch_indexes)).long()
    return x, batch, torch.tensor(lengths)
""",
            "train.py": """\
from torch.utils.data import DataLoader

from collate import collate_graphs


def loader(data):
    return DataLoader(data, batch_size=32, collate_fn=collate_graphs)
""",
        },
        rules=("TL003",),
    ),
    # one Python float per completion, gathered per batch with `.tolist()` or `.item()`
    Case(
        "scores-gathered-as-python-floats",
        {
            "scoring.py": """\
import numpy as np
import torch


def score_shard(model, inputs, order, size):
    scores = []
    i = 0
    while i < len(inputs):
        scores.extend(model(inputs[i : i + size]).cpu().tolist())
        i += size
    scores = np.array(scores)
    scores = scores[np.argsort(order)]
    return torch.tensor(scores)


def best_of(model, inputs, size):
    best = []
    i = 0
    while i < len(inputs):
        best.append(model(inputs[i : i + size]).max().item())
        i += size
    return torch.tensor(np.array(best))


def embeddings(model, inputs, size):
    rows = []
    i = 0
    while i < len(inputs):
        rows.extend(model(inputs[i : i + size]).cpu().numpy())
        i += size
    return torch.tensor(np.array(rows))  # TL003: torch.tensor(np.array(rows))
""",
            "run.py": """\
from scoring import best_of, embeddings, score_shard


def run(model, shards, order):
    for shard in shards:
        yield score_shard(model, shard, order, 8), best_of(model, shard, 8), embeddings(model, shard, 8)
""",
        },
        rules=("TL003",),
    ),
    # a copy beside an autoregressive decode in the same loop iteration: the decode runs the
    # model once per generated token, so the copy is noise; a copy beside one forward repeats
    Case(
        "copy-beside-generate",
        {
            "synthesize.py": """\
import numpy as np
import torch


class Synthesizer:
    def synthesize(self, batches, embeds):
        specs = []
        for i, batch in enumerate(batches):
            chars = np.stack(batch)
            speakers = np.stack(embeds[i])
            chars = torch.tensor(chars).long()
            speakers = torch.tensor(speakers).float()
            specs.append(self.model.generate(chars, speakers))
        return specs

    def score(self, batches):
        out = []
        for batch in batches:
            x = torch.tensor(np.stack(batch))  # TL003: torch.tensor(np.stack(batch))
            out.append(self.model(x))
        return out
""",
        },
        rules=("TL003",),
    ),
    # a loop over a mapping's items runs once per key; a loop over batches repeats
    Case(
        "loop-over-dict-items",
        {
            "generate.py": """\
import numpy as np
import torch


class Generator:
    def prepare(self, fields):
        inputs = {}
        for k, v in fields.items():
            inputs[k] = torch.tensor(np.array(v))
        for key in fields.keys():
            inputs[key] = torch.tensor(np.stack(fields[key]))
        return inputs

    def encode(self, batches):
        out = []
        for batch in batches:
            out.append(torch.tensor(np.stack(batch)))  # TL003: torch.tensor(np.stack(batch))
        return out
""",
        },
        rules=("TL003",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    root: Path = tmp_path_factory.mktemp("tl003_small_arrays")
    return check_projects(root, CASES)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tl003_small_arrays_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected()
