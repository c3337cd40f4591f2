"""A module whose `forward` runs its whole body under `with torch.no_grad():` records no graph,
whoever calls it: TL001 is silent on its evaluation calls, as for a `@torch.no_grad()` forward,
in the same file and through the project index. A forward only partly under no_grad still
records, and stays a finding."""

from __future__ import annotations

from conftest import check_json

NET = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.head = torch.nn.Linear(4, 4)

    def forward(self, x):
        """Inference only."""
{body}
'''
WHOLE = "        with torch.no_grad():\n            return self.fc(x)\n"
PARTLY = "        with torch.no_grad():\n            x = self.fc(x)\n        return self.head(x)\n"
EVAL = """\
import torch
{imports}
model = Net()
model.load_state_dict(torch.load("w.pth"))
model.eval()
for x in data:
    out = {call}(x)
    print(out)
"""


def _lines(tmp_path, files: dict[str, str]) -> list[tuple[str, int]]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = check_json(".", select="TL001", cwd=tmp_path)
    return [(d["filename"], d["location"]["row"]) for d in found]


def test_same_file_forward_wholly_under_no_grad(tmp_path):
    net = NET.format(body=WHOLE)
    text = net + "\n\n" + EVAL.format(imports="", call="model")
    assert _lines(tmp_path, {"run.py": text}) == []


def test_same_file_forward_partly_under_no_grad_is_a_finding(tmp_path):
    net = NET.format(body=PARTLY)
    text = net + "\n\n" + EVAL.format(imports="", call="model")
    assert len(_lines(tmp_path, {"run.py": text})) == 1


def test_forward_in_another_module(tmp_path):
    run = EVAL.format(imports="from pkg.net import Net\n", call="model.forward")
    files = {"pkg/__init__.py": "", "pkg/net.py": NET.format(body=WHOLE), "pkg/run.py": run}
    assert _lines(tmp_path, files) == []
    files["pkg/net.py"] = NET.format(body=PARTLY)
    assert _lines(tmp_path, files) == [("pkg/run.py", 8)]


def test_module_called_in_another_module(tmp_path):
    """`model(x)` runs `Net.forward` as `model.forward(x)` does: silent when that forward is
    wholly under no_grad in its own module, a finding when only partly."""
    run = EVAL.format(imports="from pkg.net import Net\n", call="model")
    files = {"pkg/__init__.py": "", "pkg/net.py": NET.format(body=WHOLE), "pkg/run.py": run}
    assert _lines(tmp_path, files) == []
    files["pkg/net.py"] = NET.format(body=PARTLY)
    assert _lines(tmp_path, files) == [("pkg/run.py", 8)]
