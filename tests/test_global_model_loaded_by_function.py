"""A module-level model that a loader function of the file builds and puts in eval mode
(`global _model; _model = Encoder(); _model.eval()`) and nothing puts back in training mode is
in eval mode wherever the file's functions run it: `_model.forward(x)` in `embed(x)`, called
for every file by another module, evaluates with autograd on. A method of it other than its
forward (`_model.generate(x)`, which may set its own grad mode) is left alone, and so is a
global the file also trains. (`embed` hands its result back whole: had it kept none of its
graph, it would evaluate whatever the mode, `test_eval_dropped_graph.py`.)"""

from __future__ import annotations

from conftest import check_json

INFERENCE = """\
import torch

from enc.model import Encoder

_model = None


def load_model(path):
    global _model
    _model = Encoder()
    _model.load_state_dict(torch.load(path))
    _model.eval()
{train}

def embed(frames):
    frames = torch.from_numpy(frames)
    return _model.forward(frames)


def sample(frames):
    return _model.generate(torch.from_numpy(frames))
"""
MODEL = """\
import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def generate(self, x):
        with torch.no_grad():
            return self.fc(x)
"""
PREPROCESS = """\
import numpy as np

from enc import inference

inference.load_model("w.pt")
for path in ["a.npy", "b.npy"]:
    print(inference.embed(np.load(path)), inference.sample(np.load(path)))
"""
TRAIN = """

def fine_tune(batches, optimizer):
    _model.train()
    for x in batches:
        _model(x).sum().backward()
        optimizer.step()
"""


def _rows(tmp_path, train: str) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    files = {
        "enc/__init__.py": "",
        "enc/model.py": MODEL,
        "enc/inference.py": INFERENCE.format(train=train),
        "enc/preprocess.py": PREPROCESS,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = check_json(".", select="TL001", cwd=tmp_path)
    return [(d["filename"], d["location"]["row"]) for d in found]


def test_global_put_in_eval_mode_by_a_loader(tmp_path):
    assert _rows(tmp_path, "") == [("enc/inference.py", 17)]


def test_global_also_trained_is_left_alone(tmp_path):
    assert _rows(tmp_path, TRAIN) == []
