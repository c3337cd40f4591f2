"""TL001 false alarms that the judges of held-out batch 18 found on production code (issue 24),
each an invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- A frozen network's forward whose result a training loop backpropagates, reached through a
  function handed over as an argument (`train(..., predict)`), is training, not evaluation.
- A single forward outside any loop in a self-test (`def test():`, no parameters, called by no
  code of the project) runs once: it is no repeating evaluation.
- A library module whose forward turns grad off itself (PyG's `LabelPropagation`) records
  nothing.
- A Hugging Face model merged out of a PEFT wrapper (`model = model.merge_and_unload()`) still
  generates without grad.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "frozen_network_feeds_a_loss_through_a_handed_over_function",
        {
            "cycada.py": """\
import torch
from torch import nn


def train(loader, net_g, predict, opt):
    for x, y in loader:
        fake = net_g(x)
        pred = predict(fake)
        loss = nn.functional.cross_entropy(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def main(loader, net_g, opt):
    model = nn.Linear(4, 3)
    model.load_state_dict(torch.load("seg.pt"))
    model.eval()

    def predict(image):
        prediction = model(image)
        return prediction.softmax(1)

    for epoch in range(10):
        train(loader, net_g, predict, opt)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "handed_over_evaluation_that_feeds_no_backward_is_still_reported",
        {
            "fit.py": """\
import torch
from torch import nn


def run(loader, check):
    for x, y in loader:
        print(check(x))


def main(loader):
    model = nn.Linear(4, 3)
    model.load_state_dict(torch.load("seg.pt"))
    model.eval()

    def predict(image):
        prediction = model(image)  # TL001: model(image)
        return prediction.softmax(1)

    for epoch in range(10):
        run(loader, predict)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "self_test_forward_outside_any_loop",
        {
            "pkg/__init__.py": "",
            "pkg/transformer.py": """\
import numpy as np
import torch
from torch import nn


class TransformerForDiffusion(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, sample, timestep):
        return self.fc(sample) * timestep


class RotationTransformer:
    def __init__(self, rep="axis_angle"):
        self.rep = rep

    def forward(self, x):
        return torch.from_numpy(x).mul(2).numpy()


def test():
    transformer = TransformerForDiffusion(16)
    timestep = torch.tensor(0)
    sample = torch.randn(4, 8, 16)
    out = transformer(sample, timestep)
    assert out.shape == (4, 8, 16)

    tf = RotationTransformer()
    rotvec = np.random.uniform(-1, 1, size=(1000, 3))
    rot6d = tf.forward(rotvec)
    assert rot6d.shape == (1000, 3)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "test_function_with_a_loop_over_data_is_still_reported",
        {
            "evaluate.py": """\
import torch
from torch import nn


def test(model, test_loader):
    model.eval()
    correct = 0
    for x, y in test_loader:
        correct += (model(x).argmax(1) == y).sum().item()  # TL001: model(x)
    return correct
""",
        },
        rules=("TL001",),
    ),
    Case(
        "library_label_propagation_turns_grad_off_itself",
        {
            "label_prop.py": """\
import torch
from torch_geometric.nn import LabelPropagation

if __name__ == "__main__":
    adj_t = torch.load("adj.pt")
    y = torch.zeros(100, 10)
    model = LabelPropagation(3, 0.9)
    out = model(y, adj_t)
    print(out.argmax(dim=-1))
""",
        },
        rules=("TL001",),
    ),
    Case(
        "merged_peft_model_generates_without_grad",
        {
            "chat.py": """\
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("out")
base_model = AutoModelForCausalLM.from_pretrained("base", dtype=torch.float16)
model = PeftModel.from_pretrained(base_model, "out")
model = model.merge_and_unload()
model.eval()


def generate_prediction(prompt):
    inputs = tokenizer([prompt], return_tensors="pt").to(model.device)
    generated_ids = model.generate(**inputs, max_new_tokens=512)
    return tokenizer.decode(generated_ids[0], skip_special_tokens=True)


for prompt in ["a", "b"]:
    print(generate_prediction(prompt))
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("tl001_batch18")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_batch18_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
