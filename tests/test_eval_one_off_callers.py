"""TL001: a sampling method whose production callers run it with grad off, where other calls
of its name found across the project cannot run it.

`Decoder.infer` loops over `self.cell(...)`, and the project's script calls `flow.infer(...)`
under `torch.no_grad()` (`Flow.infer` hands it on in the one-off cases). A `model.infer(...)` in a
script that neither imports the module defining the class (directly or through other modules)
nor is imported by a module that does must not count: no instance of the class can reach it,
whatever its receiver is named (an example script that builds another library's model).
Importing `pkg.models.zoo` runs `pkg/models/__init__.py` first, which imports the class's
module: a script building its model from that registry reaches the class.

The twins keep the finding: the script imports the class's module, or a module importing both
the script and the class hands the script an instance. So do the one-off checks: a method
nothing in the project calls (`Flow.round_trip`, run by hand) calling `self.infer(...)` with
grad on, once or in a loop, or called by another module with grad on. Counting a never-called
one-off caller as deciding nothing would drop true findings: a `main` running
`trainer.val(0, val_loader)` once with grad on runs a whole validation pass with it
(`test_eval_grad_off_twins`), and the index cannot tell that loop from a sampling loop.
Invented projects, checked once by the installed `torchlint`.
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
from flow import Decoder
from other_script import run

run(Decoder(), ["a"])
"""

_ZOO = """\
REGISTRY = {}


def build(name):
    return REGISTRY[name]()
"""

_ZOO_SCRIPT = """\
import torch

from pkg.models.zoo import build


def main(inputs):
    model = build("decoder")
    for x in inputs:
        print(model.infer(x, 40))


if __name__ == "__main__":
    main([torch.zeros(1, 8)])
"""

_MARK = "  # TL001: self.cell("


def _project(mark: bool, **extra: str) -> dict[str, str]:
    """`Decoder` alone (no call of `infer` in its own file), the script calling it with grad
    off, and `extra`."""
    decoder = _FLOW.partition("\n\nclass Flow")[0] + "\n"
    return {
        "flow.py": decoder.replace("MARK", _MARK if mark else ""),
        "sample.py": _SAMPLE.replace("Flow", "Decoder"),
        **extra,
    }


def _checked(flow: str, **extra: str) -> dict[str, str]:
    """`flow` with `Flow` and its hand-run check, which keeps the finding, and `extra`."""
    return {"flow.py": flow.replace("MARK", _MARK), "sample.py": _SAMPLE, **extra}


CASES = [
    Case("one-off-check-uncalled", files=_checked(_FLOW), rules=("TL001",)),
    Case("one-off-check-looped", files=_checked(_CHECK_LOOPED), rules=("TL001",)),
    Case(
        "one-off-check-called",
        files=_checked(_FLOW, **{"audit.py": _CHECK_CALLER}),
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
        "script-through-a-package-init",
        files={
            "pkg/__init__.py": "",
            "pkg/models/__init__.py": "from pkg.models import flow\n",
            "pkg/models/zoo.py": _ZOO,
            "pkg/models/flow.py": _FLOW.partition("\n\nclass Flow")[0].replace("MARK", _MARK)
            + "\n\n\nfrom pkg.models.zoo import REGISTRY\n\nREGISTRY['decoder'] = Decoder\n",
            "sample.py": _SAMPLE.replace("Flow", "Decoder").replace(
                "from flow import", "from pkg.models.flow import"
            ),
            "run_zoo.py": _ZOO_SCRIPT,
        },
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
