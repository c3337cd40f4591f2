"""Branches on a setting of the run (`if is_train:`, `if self.cfg.empty_cache:`): a test no
statement of the loop changes, so its branch runs on every batch or on none.

- TL102: a device read in such a branch (`if is_train: ...; now_loss = loss.item()`) drains
  the stream on every iteration of the runs that take it, like one outside any branch, so a
  blocking copy at the next batch has nothing to overlap (RWKV-v1's trainer: judged FPs). A
  read under a test the iteration computes paces nothing and the copy stays a finding.
- TL108: `torch.cuda.empty_cache()` behind a switch of the run named for memory (`if
  self.cfg.empty_cache:`, `if self.args.vllm_enable_sleep_mode:`) is a memory trade-off the
  user turns on on purpose (Pointcept's large pretraining configs, TRL's colocated vLLM before
  its wake-up: judged debatable and FP); unguarded, behind a test of the batch, or behind a
  switch for something else (`if args.batch_eval_metrics:`, transformers' Trainer: a dev-set
  TP) it stays a finding, and so does a `synchronize()` behind a switch.

Each case is an invented project checked once by the installed `torchlint` (see
`project_cases.py`); a line ending in `# TLxxx: text` expects a finding there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project_cases import Case, case_findings, check_projects, shown

_TRAINER = """\
import torch
from torch.utils.data import DataLoader


def run_epoch(model, optimizer, data, device, split):
    is_train = split == "train"
    model.train(is_train)
    loader = DataLoader(data, shuffle=True, pin_memory=True, batch_size=32, num_workers=4)
    for it, (x, y) in enumerate(loader):
        x = x.to(device)  {mark}
        with torch.set_grad_enabled(is_train):
            loss = model(x, y).mean()
        if {test}:
            model.zero_grad()
            loss.backward()
            optimizer.step()
            now_loss = loss.item()
            print(it, now_loss)
"""

_STEP = """\
import torch


class Trainer:
    def __init__(self, cfg, model, optimizer, loader):
        self.cfg, self.model, self.optimizer, self.loader = cfg, model, optimizer, loader

    def train(self):
        for batch in self.loader:
            loss = self.model(batch.cuda()).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
{tail}
"""

CASES = [
    Case(
        "copy-before-read-under-train-flag",
        files={"trainer.py": _TRAINER.format(mark="", test="is_train")},
        rules=("TL102",),
    ),
    Case(
        "copy-before-read-under-test-of-the-batch",
        files={
            "trainer.py": _TRAINER.format(
                mark="# TL102: x.to(device)", test="is_train and it > len(y)"
            )
        },
        rules=("TL102",),
    ),
    Case(
        "empty-cache-behind-config-switch",
        files={
            "trainer.py": _STEP.format(
                tail="            if self.cfg.empty_cache:\n                torch.cuda.empty_cache()"
            )
        },
        rules=("TL108",),
    ),
    Case(
        "empty-cache-behind-args-switch-before-wake-up",
        files={
            "trainer.py": _STEP.format(
                tail=(
                    "            if self.args.sleep_mode:\n"
                    "                torch.cuda.empty_cache()\n"
                    "                self.llm.wake_up()"
                )
            )
        },
        rules=("TL108",),
    ),
    Case(
        "empty-cache-every-step",
        files={
            "trainer.py": _STEP.format(
                tail="            torch.cuda.empty_cache()  # TL108: torch.cuda.empty_cache()"
            )
        },
        rules=("TL108",),
    ),
    Case(
        "empty-cache-behind-test-of-the-batch",
        files={
            "trainer.py": _STEP.format(
                tail=(
                    "            if batch.shape[0] > self.cfg.big:\n"
                    "                torch.cuda.empty_cache()  # TL108: torch.cuda.empty_cache()"
                )
            )
        },
        rules=("TL108",),
    ),
    Case(
        "empty-cache-behind-a-switch-for-something-else",
        files={
            "trainer.py": _STEP.format(
                tail=(
                    "            if self.args.batch_eval_metrics:\n"
                    "                self.metrics.update(loss)\n"
                    "                torch.cuda.empty_cache()  # TL108: torch.cuda.empty_cache()"
                )
            )
        },
        rules=("TL108",),
    ),
    Case(
        "synchronize-behind-config-switch",
        files={
            "trainer.py": _STEP.format(
                tail=(
                    "            if self.cfg.sync:\n"
                    "                torch.cuda.synchronize()  # TL108: torch.cuda.synchronize()"
                )
            )
        },
        rules=("TL108",),
    ),
]


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    return check_projects(Path(tmp_path_factory.mktemp("setting_branches")), CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_setting_branch_case(case: Case, findings: list[dict]) -> None:
    assert case_findings(case, findings) == case.expected(), shown(case, findings)
