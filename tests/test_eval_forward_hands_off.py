"""A module whose `forward` only prepares arguments and returns what its grad-off methods return
(`return self.forward_one(x, state)`, each of those decorated no_grad or running its whole body
under `with torch.no_grad():`) records no graph, whoever calls it: TL001 is silent on its
evaluation calls. A forward that also runs a layer of its own, does arithmetic on what it
returns, or hands off to a method that records, stays a finding."""

from __future__ import annotations

from conftest import check_json

NET = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.n = 2

    def forward(self, x, state=None):
{forward}

    @torch.no_grad()
    def forward_one(self, x, state):
        return self.fc(x), state

    def forward_seq(self, x, state):
        with torch.no_grad():
            for _ in range(self.n):
                x = self.fc(x)
            return x, state

    def forward_plain(self, x, state):
        return self.fc(x), state
"""
PREPARES = """\
        if state is None:
            state = [None for _ in range(self.n * 3)]
            for i in range(self.n):
                state[i * 3 + 0] = torch.zeros(4, requires_grad=False)
        if type(x) is list:
            if len(x) > 1:
                return self.forward_seq(x, state)
            return self.forward_one(x[0], state)
        return self.forward_one(x, state)"""
EVAL = """
model = Net()
model.load_state_dict(torch.load("w.pth"))
model.eval()
for x in data:
    out, state = model.forward(x, None)
    print(out)
"""


def _rows(tmp_path, forward: str) -> list[int]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "run.py").write_text(NET.format(forward=forward) + EVAL)
    return [d["location"]["row"] for d in check_json(".", select="TL001", cwd=tmp_path)]


def test_forward_handing_off_to_grad_off_methods(tmp_path):
    assert _rows(tmp_path, PREPARES) == []


def test_forward_handing_off_one_call_further(tmp_path):
    """`forward` -> `run` -> grad-off methods: two hand-offs deep."""
    forward = "        return self.run(x, state)\n\n    def run(self, x, state):\n" + PREPARES
    assert _rows(tmp_path, forward) == []


def test_forward_running_a_layer_itself_is_a_finding(tmp_path):
    forward = "        x = self.fc(x)\n        return self.forward_one(x, state)"
    assert len(_rows(tmp_path, forward)) == 1


def test_forward_with_arithmetic_on_its_input_is_a_finding(tmp_path):
    forward = "        x = x * self.fc.weight\n        return self.forward_one(x, state)"
    assert len(_rows(tmp_path, forward)) == 1


def test_forward_handing_off_to_a_recording_method_is_a_finding(tmp_path):
    forward = PREPARES.replace("self.forward_seq(", "self.forward_plain(")
    assert len(_rows(tmp_path, forward)) == 1
