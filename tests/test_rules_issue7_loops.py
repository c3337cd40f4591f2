"""TL104, TL105, TL108 beyond their examples: CLI state and docs, fixtures, the TL104 fix, real-code shapes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, listed_rules, rule_docs, run_torchlint

from torchlint.config import Settings
from torchlint.engine.lint import lint_text
from torchlint.registry import find_rule

RULES = {
    "TL104": "loss-accumulated-with-graph",
    "TL105": "grad-accumulation-broken",
    "TL108": "sync-call-in-loop",
}


def _codes(path, code: str, cwd) -> list[str]:
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        code,
        "--output-format",
        "json",
        str(path),
        cwd=cwd,
    )
    assert result.returncode in (0, 1), result.stderr
    return [d["code"] for d in json.loads(result.stdout)]


def _found(code: str, text: str) -> list[int]:
    """Rows of `code`'s findings in `text`."""
    return [
        d.start.row
        for d in lint_text("train.py", text, [find_rule(code)], Settings())
        if d.code == code
    ]


def test_rules_are_listed_on_by_default():
    listed = listed_rules()
    for code, name in RULES.items():
        assert listed[code]["name"] == name
        assert listed[code]["default"] == "on"


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_docs_are_complete(code):
    docs = rule_docs(code)
    assert "pytorch.org" in docs and "efficientdl.com" in docs


@pytest.mark.parametrize("code", sorted(RULES))
def test_fixture_before_is_flagged_and_after_is_clean(code):
    folder = FIXTURES / RULES[code]
    found = _codes(folder / "before.py", code, folder)
    assert found and set(found) == {code}
    assert _codes(folder / "after.py", code, folder) == []


def test_tl104_fix_turns_the_fixture_into_after_and_it_still_runs(tmp_path):
    shutil.copytree(FIXTURES / RULES["TL104"], tmp_path / "pair")
    folder = tmp_path / "pair"
    fixed = run_torchlint(
        "fix",
        "--isolated",
        "--select",
        "TL104",
        "--unsafe-fixes",
        "--apply",
        "before.py",
        cwd=folder,
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    body = lambda name: (folder / name).read_text().split('"""', 2)[2]  # noqa: E731 -- the code after the docstring
    assert body("before.py") == body("after.py")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    ran = subprocess.run(
        [sys.executable, "before.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (
        "requires_grad" not in ran.stderr
    )  # torch's warning about converting a tensor that requires grad is gone


def test_display_only_rules_offer_no_edits(tmp_path):
    for code in ("TL105", "TL108"):
        folder = FIXTURES / RULES[code]
        result = run_torchlint(
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            code,
            "--output-format",
            "json",
            "before.py",
            cwd=folder,
        )
        for finding in json.loads(result.stdout):
            assert (
                finding["fix"]["applicability"] == "display-only" and finding["fix"]["edits"] == []
            )


# -- TL104: shapes met in real training code ---------------------------------------------------
def test_tl104_a_value_detached_on_the_host_before_it_is_added_is_clean():
    text = (
        "def pass_epoch(model, loss_fn, loader, optimizer):\n    loss = 0\n    for x, y in loader:\n        loss_batch = loss_fn(model(x), y)\n"
        "        if model.training:\n            loss_batch.backward()\n            optimizer.step()\n"
        "        loss_batch = loss_batch.detach().cpu()\n        loss += loss_batch\n    return loss\n"
    )
    assert _found("TL104", text) == []


def test_tl104_token_counts_multiplied_into_the_loss_carry_no_graph():
    text = (
        "import torch\nrunning_loss, num_tokens = 0, 0\nfor idx, batch in enumerate(loader):\n"
        "    n = (batch['labels'] != -100).sum()\n    num_tokens += n\n    current_loss = loss_step(batch) * n\n"
        "    running_loss += current_loss\n    current_loss.backward()\n"
        "    if (idx + 1) % accum == 0:\n        optimizer.step()\n        running_loss = 0\n        num_tokens = 0\n"
    )
    assert _found("TL104", text) == [7]


def test_tl104_list_of_losses_for_the_epoch_mean_is_flagged_and_a_dict_of_floats_is_not():
    text = (
        "import torch\nlosses, scores = [], {}\nfor x, y in train_loader:\n    loss = criterion(net(x), y)\n    optimizer.zero_grad()\n"
        "    loss.backward()\n    optimizer.step()\n    losses.append(loss)\n    scores['loss'] = loss.item()\n"
        "epoch_loss = torch.mean(torch.stack(losses)).item()\n"
    )
    assert _found("TL104", text) == [8]


def test_tl104_under_a_grad_disabled_helper_is_clean():
    text = (
        "import torch\n@torch.no_grad()\ndef evaluate(model, loader):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n        total += loss\n    return total\n"
        "def train(model, loader, optimizer):\n    for x, y in loader:\n        criterion(model(x), y).backward()\n        optimizer.step()\n"
    )
    assert _found("TL104", text) == []


# -- TL105 -------------------------------------------------------------------------------------
def test_tl105_gradients_rescaled_at_the_step_leave_an_undivided_loss_alone():
    text = (
        "import torch\nfor idx, batch in enumerate(loader):\n    current_loss = torch.nn.functional.cross_entropy(model(batch['x']), batch['y'])\n"
        "    current_loss.backward()\n    if (idx + 1) % grad_accum == 0:\n        training.scale_grads(model, 1 / grad_accum)\n"
        "        optimizer.step()\n        optimizer.zero_grad(set_to_none=True)\n"
    )
    assert _found("TL105", text) == []


def test_tl105_zero_grad_after_a_skip_of_the_accumulating_iterations_is_clean():
    text = (
        "import torch\nfor i, (x, y) in enumerate(loader):\n    (criterion(model(x), y) / 4).backward()\n"
        "    if (i + 1) % 4 != 0:\n        continue\n    optimizer.step()\n    optimizer.zero_grad()\n"
    )
    assert _found("TL105", text) == []


def test_tl105_reports_each_zero_grad_once_and_skips_the_scaling_check():
    text = (
        "import torch\nimport torch.nn.functional as F\nfor i, (x, y) in enumerate(loader):\n    optimizer.zero_grad()\n"
        "    loss = F.cross_entropy(model(x), y)\n    loss.backward()\n    if i % 4 == 3:\n        optimizer.step()\n"
    )
    assert _found("TL105", text) == [4]


# -- TL108 -------------------------------------------------------------------------------------
def test_tl108_cache_freed_after_every_evaluation_batch_is_flagged():
    text = (
        "import torch\ndef evaluation_loop(self, dataloader):\n    for step, inputs in enumerate(dataloader):\n"
        "        logits = self.model(**inputs)\n        if self.args.batch_eval_metrics:\n            metrics = self.compute_metrics(logits)\n"
        "            del logits, inputs\n            torch.cuda.empty_cache()\n"
        "        elif (step + 1) % self.args.eval_accumulation_steps == 0:\n            torch.cuda.empty_cache()\n"
    )
    assert _found("TL108", text) == [8]


def test_tl108_cuda_event_timing_is_a_measurement():
    text = (
        "import torch\nstart, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
        "for x, y in loader:\n    start.record()\n    model(x).sum().backward()\n    optimizer.step()\n    end.record()\n"
        "    torch.cuda.synchronize()\n    times.append(start.elapsed_time(end))\n"
    )
    assert _found("TL108", text) == []
