"""TL001 classes from the pooled validate production sample (issue 24, fix round 6), each an
invented minimal project checked once by the installed `torchlint` (the scheme of
`test_production_cases.py`: a line ending in `# TL001: text` expects a finding there).

- A module-level function named `forward(model, i, data)` is no module's forward: it is a
  helper that training and evaluation share, so its call in the loop after `model.eval()` is
  the evaluation forward (a method named `forward` stays the module's own).
- A method of a project class that turns autograd on itself (`with torch.set_grad_enabled(True):`
  around a Grad-CAM's `backward()`), called on a model whose class the calling file cannot
  resolve (a registry's loader): the method needs the graph, so the call is no evaluation to put
  under `no_grad`. A method of the same receiver that does not is still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

CASES = [
    Case(
        "module_level_forward_helper_shared_with_training",
        {
            "main.py": """\
import torch


def forward(model, i, data):
    items, targets = data.get_slice(i)
    hidden = model(torch.as_tensor(items))
    return targets, model.compute_scores(hidden)


def train_test(model, train_data, test_data, opt):
    model.train()
    for i in train_data.generate_batch(32):
        opt.zero_grad()
        targets, scores = forward(model, i, train_data)
        loss = model.loss_function(scores, torch.as_tensor(targets))
        loss.backward()
        opt.step()
    model.eval()
    hits = []
    for i in test_data.generate_batch(32):
        targets, scores = forward(model, i, test_data)  # TL001: forward(model, i, test_data)
        hits.append(scores.topk(20)[1].cpu().detach().numpy())
    return hits


def run(model, train_data, test_data, opt):
    for _epoch in range(30):
        train_test(model, train_data, test_data, opt)
""",
        },
        rules=("TL001",),
    ),
    Case(
        "project_method_turns_grad_on_itself",
        {
            "models/vqa.py": """\
import torch
from torch import nn


class VQA(nn.Module):
    def forward_itm(self, samples):
        image = samples["image"]
        with torch.set_grad_enabled(True):
            scores = self.itm(image, samples["text"])
            scores.sum().backward()
        samples["gradcams"] = self.itm.grads
        return samples

    def forward_cap(self, samples):
        return self.captioner(samples["image"])
""",
            "demo.py": """\
import torch
from models.registry import load_model

model = load_model("vqa", device="cuda")
model.load_state_dict(torch.load("vqa.pt"))
model.eval()
for samples in batches:
    samples = model.forward_itm(samples=samples)
for samples in batches:
    captions = model.forward_cap(samples)  # TL001: model.forward_cap(samples)
""",
        },
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("tl001_round6")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
