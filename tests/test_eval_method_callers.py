"""TL001: a sampling method of a module class whose only callers in production code run it
with grad off, found by the method's name across the project.

`PolicyHeads.generate` loops over `self.forward(...)`; the project's trainer calls
`self.model.generate(...)` under `torch.no_grad()`. Other calls of methods named `generate` must
not count as its callers where they cannot run it:
- `super().generate(...)` in a class whose lineage is another library's (a base's method, and
  `PolicyHeads` is none of its bases);
- `model.generate(...)` where `model = OtherLM.load_from_checkpoint(...)`, an alternate
  constructor of a project class unrelated to `PolicyHeads`;
- a wrapper's `self.base.generate(...)` whose own callers are these same calls, itself among them
  (a cycle of callers decides nothing; the calls entering it do);
- `self.lm.generate(...)` in a class that binds `self.lm` only to `OtherLM.from_pretrained(...)`;
- a test module's call with grad on (test code, whose speed no rule judges).
The twins keep the finding: a production caller with grad on, a `super().generate(...)` of a
subclass of `PolicyHeads`, `PolicyHeads.load_from_checkpoint(...)`, `self.lm` bound to a
parameter or written from another module (`runner.lm = PolicyHeads(base)`), and a cycle no
call with grad off enters. Invented projects, checked once by the installed `torchlint`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_POLICY = """\
import torch
from torch import nn


class Wrapper(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base


class PolicyHeads(Wrapper):
    def __init__(self, base):
        super().__init__(base)
        self.head = nn.Linear(8, 8)

    def forward(self, x):
        return self.head(self.base(x))

    def generate(self, x, steps):
        for _ in range(steps):
            out = self.forward(x)MARK
            x = torch.cat([x, out.argmax(-1, keepdim=True)], 1)
        return x
"""

_VALUE = """\
from policy import Wrapper


class ValueHeads(Wrapper):
    def generate(self, *args):
        return self.base.generate(*args)
"""

_TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def rollout(self, x):
        with torch.no_grad():
            return self.model.generate(x, 16)

    def learn(self, loader):
        for x in loader:
            samples = self.rollout(x)
            loss = self.model(samples).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
"""

_OTHER = """\
from megatronish.models import GPTBase


class OtherLM(GPTBase):
    def generate(self, x, steps):
        return super().generate(x, steps)
"""

_SCRIPT = """\
from other import OtherLM


def main(path, prompts):
    model = OtherLM.load_from_checkpoint(path)
    for p in prompts:
        print(model.generate(p, 40))


if __name__ == "__main__":
    main("ckpt", ["a", "b"])
"""

_TEST = """\
import torch

from policy import PolicyHeads


def test_generate():
    model = PolicyHeads(torch.nn.Linear(8, 8))
    for n in (1, 2):
        assert model.generate(torch.zeros(1, 8), n).shape[1] == 8 + n
"""

_GRAD_ON = """\
import torch

from policy import PolicyHeads


def demo(prompts):
    model = PolicyHeads(torch.nn.Linear(8, 8))
    for p in prompts:
        print(model.generate(p, 40))
"""

_SUBCLASS = """\
from policy import PolicyHeads


class Tempered(PolicyHeads):
    def generate(self, x, steps):
        return super().generate(x / 2, steps)


def demo(prompts):
    model = Tempered(None)
    for p in prompts:
        print(model.generate(p, 40))
"""

_OWN_LOADER = _SCRIPT.replace(
    "from other import OtherLM", "from policy import PolicyHeads"
).replace("OtherLM.load", "PolicyHeads.load")

_RUNNER = """\
from other import OtherLM


class Runner:
    def __init__(self, path):
        self.lm = OtherLM.from_pretrained(path)

    def run(self, prompts):
        for p in prompts:
            print(self.lm.generate(p, 40))
"""

_RUNNER_HANDED = _RUNNER.replace("__init__(self, path)", "__init__(self, lm)").replace(
    "OtherLM.from_pretrained(path)", "lm"
)

_RUNNER_REWIRED = """\
from policy import PolicyHeads
from runner import Runner


def swap(runner, base):
    runner.lm = PolicyHeads(base)
    runner.run(["a"])
"""

_MARK = "  # TL001: self.forward("


def _project(mark: bool, **extra: str) -> dict[str, str]:
    return {
        "policy.py": _POLICY.replace("MARK", _MARK if mark else ""),
        "trainer.py": _TRAINER,
        "other.py": _OTHER,
        "script.py": _SCRIPT,
        "value.py": _VALUE,
        "runner.py": _RUNNER,
        "tests/test_policy.py": _TEST,
        **extra,
    }


CASES = [
    Case("callers-grad-off-elsewhere", files=_project(False), rules=("TL001",)),
    Case(
        "callers-grad-on-elsewhere",
        files=_project(True, **{"demo.py": _GRAD_ON}),
        rules=("TL001",),
    ),
    Case(
        "callers-super-of-a-subclass",
        files=_project(True, **{"tempered.py": _SUBCLASS}),
        rules=("TL001",),
    ),
    Case(
        "callers-own-alternate-constructor",
        files=_project(True, **{"script.py": _OWN_LOADER}),
        rules=("TL001",),
    ),
    Case(
        "callers-attribute-handed-in",
        files=_project(True, **{"runner.py": _RUNNER_HANDED}),
        rules=("TL001",),
    ),
    Case(
        "callers-attribute-written-elsewhere",
        files=_project(True, **{"swap.py": _RUNNER_REWIRED}),
        rules=("TL001",),
    ),
    Case(
        # Only the wrapper's cycle and grad-on calls: nothing with grad off enters it.
        "callers-cycle-entered-with-grad-on",
        files={
            "policy.py": _POLICY.replace("MARK", _MARK),
            "script.py": _SCRIPT,
            "other.py": _OTHER,
            "value.py": _VALUE,
            "runner.py": _GRAD_ON.replace("PolicyHeads(", "ValueHeads(").replace(
                "policy import PolicyHeads", "value import ValueHeads"
            ),
        },
        rules=("TL001",),
    ),
    Case(
        # Only the wrapper's own call: a cycle nothing enters says nothing of the grad mode.
        "callers-cycle-never-entered",
        files={"policy.py": _POLICY.replace("MARK", _MARK), "value.py": _VALUE},
        rules=("TL001",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Every case in its own project folder, all checked in one run."""
    return check_projects(Path(tmp_path_factory.mktemp("eval_method_callers")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_eval_method_callers_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
