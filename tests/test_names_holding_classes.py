"""A name that holds a class, not an instance (`for model, path in ((RWKV7, P1), (Qwen, P2)):`,
`model = Net`), is called to build an object: `llm = model(path)` is a constructor call, no
forward pass, whatever the name says. A name bound to instances stays a module."""

from __future__ import annotations

from conftest import check_json

CLASSES = """\
import torch


class LLM:
    def __init__(self, path):
        self.w = torch.load(path)


class Small(LLM):
    pass


class Net(torch.nn.Module):
    def __init__(self, path):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.load_state_dict(torch.load(path))

    def forward(self, x):
        return self.fc(x)


"""


def _rows(tmp_path, text: str) -> list[int]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "run.py").write_text(CLASSES + text)
    return [d["location"]["row"] for d in check_json(".", select="TL001", cwd=tmp_path)]


def test_loop_over_classes_builds_objects(tmp_path):
    text = """\
if __name__ == "__main__":
    for model, path in ((LLM, "a.pth"), (Small, "b.pth"), (Net, "c.pth")):
        llm = model(path)
        print(llm)
"""
    assert _rows(tmp_path, text) == []


def test_name_bound_to_a_class_builds_objects(tmp_path):
    text = """\
model = Net
for path in ["a.pth", "b.pth"]:
    net = model(path)
    print(net)
"""
    assert _rows(tmp_path, text) == []


def test_loop_over_instances_runs_forwards(tmp_path):
    text = """\
model = Net("w.pth")
model.eval()
for model, x in ((model, torch.ones(2, 4)), (model, torch.zeros(2, 4))):
    print(model(x))
"""
    assert _rows(tmp_path, text) == [len(CLASSES.splitlines()) + 4]
