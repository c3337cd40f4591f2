"""Branches behind a latched flag run once, not every step (issue 24, fix round 2).

A flag that its own branch clears at once, and that only code which does not run every step
sets again (`end_epoch`, `__init__`), lets the branch run once per epoch or run: statistics
read from one batch per epoch, an RNN state built on the first game only. The flag may be an
attribute of the trainer (`self._need_stats`), a local of the loop, or reach the branch through
another name (`skip = not self._need_stats`, a parameter every call passes that way). Each case
is an invented project checked by the installed `torchlint`; marked lines are the findings
that must stay (the same code with a flag that the step sets again, or that nothing clears).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_ATTRIBUTE_FLAG = """\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self._need_stats = True
        self.stats = {}

    def train_step(self, batch):
        loss = self.model(batch.cuda()).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self._need_stats:
            self._need_stats = False
            self.stats["loss"] = loss.item()

    def end_epoch(self, epoch):
        self._need_stats = True
"""

# The flag reaches the statistics through a parameter bound from it; the step clears it
# after the statistics are kept.
_ALIASED_FLAG = """\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self._need_stats = True
        self.stats = {}

    def train_step(self, batch):
        loss, stats = self.compute_loss(batch, skip_stats=not self._need_stats)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self._need_stats:
            self.stats = stats
            self._need_stats = False

    def compute_loss(self, batch, skip_stats=False):
        loss = self.model(batch.cuda()).mean()
        stats = {}
        if not skip_stats:
            stats["loss"] = loss.item()
        return loss, stats

    def end_epoch(self, epoch):
        self._need_stats = True
"""

# The same flag through a local bound from it in the step.
_LOCAL_ALIAS = """\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self._need_stats = True

    def train_step(self, batch):
        loss = self.model(batch.cuda()).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        skip = not self._need_stats
        if not skip:
            self._need_stats = False
            print(loss.item())

    def end_epoch(self, epoch):
        self._need_stats = True
"""

# Controls: the step sets the flag again every time (through a method it calls), and a flag
# that nothing clears: both branches run every step.
_RESET_EVERY_STEP = """\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self._need_stats = True

    def mark(self):
        self._need_stats = True

    def train_step(self, batch):
        loss = self.model(batch.cuda()).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.mark()
        if self._need_stats:
            self._need_stats = False
            print(loss.item())  # TL002: loss.item()


class Verbose:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self.verbose = True

    def train_step(self, batch):
        loss = self.model(batch.cuda()).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self.verbose:
            print(loss.item())  # TL002: loss.item()
"""

# A local flag of the loop, cleared by its own branch: the state is built on the first game.
_LOCAL_FLAG = """\
import torch


class Player:
    def __init__(self, model, env, is_rnn):
        self.model = model
        self.env = env
        self.is_rnn = is_rnn

    def init_rnn(self):
        self.states = [torch.zeros(4, 8).to("cuda") for _ in range(2)]

    def run(self, loader, opt):
        need_init = self.is_rnn
        for batch in loader:
            if need_init:
                self.init_rnn()
                need_init = False
            opt.zero_grad()
            self.model(batch.cuda()).sum().backward()
            opt.step()
            hidden = torch.zeros(4, 8).to("cuda")  # TL103: torch.zeros(4, 8).to("cuda")
            print(hidden)
"""

# The flag set by its own negated branch (`if not shown: ...; shown = True`) runs once; a flag
# that some other test clears (after a warm-up) guards a branch that runs every step until then.
_NEGATED_LOCAL_FLAG = """\
import torch


def train(model, loader, opt):
    shown = False
    warming = True
    for step, batch in enumerate(loader):
        opt.zero_grad()
        loss = model(batch.cuda()).mean()
        loss.backward()
        opt.step()
        if not shown:
            print(loss.item())
            shown = True
        if warming:
            print(loss.item())  # TL002: loss.item()
        if step > 1000:
            warming = False
"""

CASES = [
    Case("attribute_flag", {"trainer.py": _ATTRIBUTE_FLAG}, rules=("TL002",)),
    Case("aliased_flag", {"trainer.py": _ALIASED_FLAG}, rules=("TL002",)),
    Case("local_alias", {"trainer.py": _LOCAL_ALIAS}, rules=("TL002",)),
    Case("reset_every_step", {"trainer.py": _RESET_EVERY_STEP}, rules=("TL002",)),
    Case("local_flag", {"player.py": _LOCAL_FLAG}, rules=("TL103",)),
    Case("negated_local_flag", {"train.py": _NEGATED_LOCAL_FLAG}, rules=("TL002",)),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("latched_flags")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_latched_flag(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
