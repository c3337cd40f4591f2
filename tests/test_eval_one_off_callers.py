"""TL001: a sampling method whose production callers run it with grad off, where the other
calls of its name found across the project cannot repeat an evaluation with grad on.

`Decoder.infer` loops over `self.cell(...)`; `Flow.infer` runs its decoder's `infer` and the
project's script calls `flow.infer(...)` under `torch.no_grad()`. Two kinds of call must not
count against it:
- a one-off check nothing in the project calls (`Flow.round_trip`, a method its users run by
  hand once, which calls `self.infer(...)` once, outside any loop): it repeats no evaluation,
  so it decides nothing, as a cycle decides nothing, and the calls with grad off decide;
- `model.infer(...)` in a script that neither imports the module defining the class (directly
  or through other modules) nor is imported by a module that does: no instance of the class can
  reach it, whatever its receiver is named.
The twins keep the finding: the check calls `infer` in a loop, another module calls the check
with grad on (a loop further down, as in a `Flow.infer` looping over its decoders, keeps it too:
`test_eval_method_callers`'s never-called `swap`), the script imports the class's module, or a module importing both the script and
the class hands the script an instance. Invented projects, checked once by the installed
`torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_FLOW = """\
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)

    def forward(self, x, h):
        return self.cell(x, h)

    def infer(self, x, steps):
        h = torch.zeros_like(x)
        outs = []
        for _ in range(steps):
            h = self.cell(x, h)MARK
            outs.append(h)
        return torch.stack(outs)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def forward(self, x, h):
        return self.decoder(x, h)

    def infer(self, x, steps):
        return self.decoder.infer(x, steps)[-1]

    def round_trip(self, x, steps):
        \"\"\"Checks by hand that sampling and the forward agree.\"\"\"
        y = self.infer(x, steps)
        return (self(y, x) - x).abs().max()
"""

_SAMPLE = """\
import torch

from flow import Flow


def main():
    flow = Flow()
    flow.eval()
    with torch.no_grad():
        for n in range(4):
            print(flow.infer(torch.zeros(1, 8), n + 1))


if __name__ == "__main__":
    main()
"""

_CHECK_LOOPED = _FLOW.replace(
    "        y = self.infer(x, steps)\n",
    "        for _ in range(3):\n            y = self.infer(x, steps)\n",
)

_CHECK_CALLER = """\
import torch

from flow import Flow


def audit(xs):
    flow = Flow()
    for x in xs:
        print(flow.round_trip(x, 4))
"""

_OTHER_SCRIPT = """\
from transformers import AutoModel


def run(model, prompts):
    model.eval()
    for p in prompts:
        print(model.infer(p, 40))


if __name__ == "__main__":
    run(AutoModel.from_pretrained("some/lm"), ["a", "b"])
"""

_CONNECTED_SCRIPT = _OTHER_SCRIPT.replace(
    "from transformers import AutoModel\n", "from transformers import AutoModel\n\nimport flow\n"
)

_BOTH = """\
from flow import Flow
from other_script import run

run(Flow(), ["a"])
"""

_MARK = "  # TL001: self.cell("


def _project(mark: bool, **extra: str) -> dict[str, str]:
    return {
        "flow.py": _FLOW.replace("MARK", _MARK if mark else ""),
        "sample.py": _SAMPLE,
        **extra,
    }


def _looped(mark: bool) -> dict[str, str]:
    return {**_project(mark), "flow.py": _CHECK_LOOPED.replace("MARK", _MARK if mark else "")}


CASES = [
    Case("one-off-check-uncalled", files=_project(False), rules=("TL001",)),
    Case("one-off-check-looped", files=_looped(True), rules=("TL001",)),
    Case(
        "one-off-check-called",
        files=_project(True, **{"audit.py": _CHECK_CALLER}),
        rules=("TL001",),
    ),
    Case(
        "unconnected-script",
        files=_project(False, **{"other_script.py": _OTHER_SCRIPT}),
        rules=("TL001",),
    ),
    Case(
        "connected-script",
        files=_project(True, **{"other_script.py": _CONNECTED_SCRIPT}),
        rules=("TL001",),
    ),
    Case(
        "script-handed-an-instance",
        files=_project(True, **{"other_script.py": _OTHER_SCRIPT, "both.py": _BOTH}),
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_one_off_callers")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_one_off_callers_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
