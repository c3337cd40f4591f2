"""TL002 host-sync-in-loop: the shared loop and tensor facts, the rule's decisions, its fix, its fixture pair."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from conftest import FIXTURES, run_torchlint

from torchlint.analysis.context import FileContext
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.tensors import Kind, TensorFacts
from torchlint.config import Settings
from torchlint.diagnostics import Applicability
from torchlint.engine.lint import lint_text
from torchlint.engine.traversal import run_rules
from torchlint.registry import find_rule

RULE = find_rule("TL002")
PAIR = FIXTURES / "host-sync-in-loop"


def _context(source: str) -> FileContext:
    """A file's context after the engine's traversal, as rules see it in `finish()`."""
    ctx = FileContext("example.py", source, cst.parse_module(source), (2, 5))
    run_rules(ctx, [])
    return ctx


def _loops(ctx: FileContext) -> list[cst.For | cst.While]:
    """The file's loops in textual order."""
    found: list[cst.For | cst.While] = []

    class Collect(cst.CSTVisitor):
        def visit_For(self, node: cst.For) -> None:
            found.append(node)

        def visit_While(self, node: cst.While) -> None:
            found.append(node)

    ctx.module.visit(Collect())
    return found


def _calls(ctx: FileContext, text: str) -> list[cst.Call]:
    """Calls whose code is exactly `text`, in textual order."""
    found: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if ctx.code(node) == text:
                found.append(node)

    ctx.module.visit(Collect())
    assert found, f"no call {text!r}"
    return found


def _expression(ctx: FileContext, text: str) -> cst.BaseExpression:
    """The first expression whose code is exactly `text`."""
    found: list[cst.BaseExpression] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if not found and isinstance(node, cst.BaseExpression) and ctx.code(node) == text:
                found.append(node)
            return not found

    ctx.module.visit(Collect())
    assert found, f"no expression {text!r}"
    return found[0]


def _findings(source: str) -> list:
    return lint_text("example.py", source, [RULE], Settings())


# -- loop facts ------------------------------------------------------------------------
TRAINING = """\
import torch
model.cuda()
for epoch in range(args.epochs):
    for step, (x, y) in enumerate(tqdm(train_loader)):
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        log(loss)
        if step % args.log_every == 0:
            report(loss)
    for name, p in model.named_parameters():
        pass
def log(value):
    print(value.item())
def report(value):
    print(value.item())
"""


def test_per_batch_loops_epoch_loops_and_other_loops():
    ctx = _context(TRAINING)
    facts = ctx.fact(LoopFacts)
    epoch, batches, params = _loops(ctx)
    assert facts.is_epoch_loop(epoch) and not facts.is_per_batch(epoch)
    assert facts.is_per_batch(batches)
    assert not facts.is_per_batch(params)


def test_code_in_a_function_called_from_the_loop_runs_per_batch_unless_the_call_is_guarded():
    ctx = _context(TRAINING)
    facts = ctx.fact(LoopFacts)
    batches = _loops(ctx)[1]
    in_log, in_report = _calls(ctx, "value.item()")
    assert facts.per_batch_loop(in_log) is batches
    assert facts.per_batch_loop(in_report) is None
    assert facts.per_batch_loop(in_report, every_iteration=False) is batches


@pytest.mark.parametrize(
    "guard",
    [
        "if step % log_every == 0:",
        "if (i + 1) % k == 0:",
        "if global_step % args.log_every == 0 and is_main:",
        "if not step % 100:",
        "if step % 100 == 0 or step == total - 1:",
        "if i == 0:",
        "if self.control.should_log:",
        "if log_now:",
    ],
)
def test_periodic_guards(guard):
    source = (
        "import torch\nmodel.cuda()\nstep = 0\n"
        "for i, batch in enumerate(loader):\n    step += 1\n    log_now = step % 50 == 0\n    loss = model(batch)\n"
        f"    {guard}\n        print(loss.item())\n"
    )
    ctx = _context(source)
    facts = ctx.fact(LoopFacts)
    (call,) = _calls(ctx, "loss.item()")
    assert facts.periodic_guard(call) is not None
    assert facts.per_batch_loop(call) is None
    assert facts.per_batch_loop(call, every_iteration=False) is _loops(ctx)[0]


@pytest.mark.parametrize(
    "guard",
    [
        "if step % log_every != 0:\n        pass\n    else:",
        "if step % 10:\n        continue\n    if True:",
    ],
)
def test_negated_periodic_guards_guard_the_other_branch(guard):
    source = f"import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch)\n    {guard}\n        print(loss.item())\n"
    ctx = _context(source)
    (call,) = _calls(ctx, "loss.item()")
    assert ctx.fact(LoopFacts).per_batch_loop(call) is None


@pytest.mark.parametrize(
    "guard", ["if step > warmup:", "if step % 10 > 3 or debug:", "if loss_is_finite:", "if i >= 1:"]
)
def test_conditions_that_hold_on_most_steps_are_not_guards(guard):
    source = f"import torch\nfor i, batch in enumerate(loader):\n    loss = model(batch)\n    {guard}\n        print(loss.item())\n"
    ctx = _context(source)
    (call,) = _calls(ctx, "loss.item()")
    assert ctx.fact(LoopFacts).per_batch_loop(call) is not None


def test_loops_that_step_or_iterate_loaders_are_per_batch_and_outer_loops_are_not():
    source = """\
import torch
from torch.utils.data import DataLoader
dl = DataLoader(ds)
pbar = tqdm(dl)
for batch in pbar:
    pass
while not done:
    scaler.scale(loss).backward()
    scaler.step(optimizer)
for shard in DataLoader(files):
    for x in shard:
        train_step(x)
for batch in loader:
    for chunk in batch.split(4):
        model(chunk).sum().backward()
    opt.step()
for item in items:
    lr_scheduler.step()
def train_step(x):
    model(x).backward()
"""
    ctx = _context(source)
    facts = ctx.fact(LoopFacts)
    pbar, while_loop, shards, shard, batch, chunk, items = _loops(ctx)
    assert [facts.is_per_batch(loop) for loop in (pbar, while_loop, shard, batch, chunk)] == [
        True
    ] * 5
    assert not facts.is_per_batch(
        shards
    )  # a DataLoader of shards, each iterated by an inner batch loop
    assert not facts.is_per_batch(items)  # a scheduler step is no training step


@pytest.mark.parametrize(
    ("line", "uses"),
    [
        ("model.cuda()", True),
        ("x = x.to(device)", True),
        ("x = torch.zeros(3, device=args.device)", True),
        ("dev = torch.device('cuda:0')", True),
        ("name = 'cuda'", True),
        ("accelerator = Accelerator()", True),
        ("x = x.to('cpu')", False),
        ("x = x.to(torch.float16)", False),
        ("x = torch.zeros(3, device='cpu')", False),
        ("'''Moves things with .cuda() in a docstring.'''", False),
    ],
)
def test_accelerator_evidence(line, uses):
    ctx = _context(f"import torch\n{line}\n")
    assert ctx.fact(LoopFacts).uses_accelerator is uses


# -- tensor facts ----------------------------------------------------------------------
KINDS = """\
import torch
import numpy as np
import torch.nn.functional as F
criterion = torch.nn.CrossEntropyLoss()
for x, y in train_loader:
    out = model(x.to(device))
    loss = criterion(out, y.to(device))
    cpu_out = model(x)
    probs = F.softmax(out, dim=1)
    _, pred = torch.max(out, 1)
    acc = (pred == y.to(device)).float().mean()
    arr = np.asarray(x)
    host = out.cpu()
    n = loss.item()
    count = x.size(0)
    total = 0.0
    total += loss.detach()
    mystery = helper(x)
"""


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("loss", Kind.TENSOR),
        ("probs", Kind.TENSOR),
        ("pred", Kind.TENSOR),
        ("acc", Kind.TENSOR),
        ("total", Kind.TENSOR),
        ("out.sum()", Kind.TENSOR),
        ("x", Kind.HOST_TENSOR),  # a DataLoader batch that was not moved
        ("cpu_out", Kind.HOST_TENSOR),  # a model fed CPU batches runs on the CPU
        ("host", Kind.HOST_TENSOR),
        ("arr", Kind.NOT_TENSOR),
        ("n", Kind.NOT_TENSOR),
        ("count", Kind.NOT_TENSOR),
        ("mystery", Kind.HOST_TENSOR),  # a helper fed only CPU tensors
        ("helper(out)", Kind.UNKNOWN),
        ("helper(x, device)", Kind.TENSOR),  # a helper given a device moves to it
    ],
)
def test_tensor_kinds(text, kind):
    ctx = _context(KINDS + f"    probe = {text}\n")
    probe = _loops(ctx)[0].body.body[-1].body[0]  # the `probe = ...` statement ending the loop
    assert isinstance(probe, cst.Assign)
    assert ctx.fact(TensorFacts).kind(probe.value) is kind


def test_parameters_take_the_kind_their_callers_pass():
    source = "import torch\ndef acc(out, y):\n    return out == y\nfor x, y in loader:\n    a = acc(model(x.cuda()), y.cuda())\n"
    ctx = _context(source)
    facts = ctx.fact(TensorFacts)
    assert facts.kind(_expression(ctx, "out == y")) is Kind.TENSOR


def test_isinstance_numpy_narrows_to_not_a_tensor():
    source = "import torch\nimport numpy as np\ndef f(v):\n    if isinstance(v, np.ndarray):\n        return v.item()\n"
    ctx = _context(source)
    (call,) = _calls(ctx, "v.item()")
    assert ctx.fact(TensorFacts).kind(call.func.value) is Kind.NOT_TENSOR


# -- the rule's decisions --------------------------------------------------------------
HEADER = "import torch\ndevice = torch.device('cuda')\n"


@pytest.mark.parametrize(
    "body",
    [
        "    if torch.isnan(loss):\n        continue\n",
        "    print(loss)\n",
        "    logger.info(f'loss {loss:.3f}')\n",
        "    value = float(loss)\n",
        "    losses.append(loss.item())\n",
        "    preds.append(out.argmax(1).cpu().numpy())\n",
        "    keep = bool(loss > 0)\n",
        "    ids = out.argmax(1).tolist()\n",
        "    bar.set_description(('%10s' * 2) % ('loss', *loss))\n",
        "    text = '{:.3f}'.format(loss)\n",
    ],
)
def test_syncs_on_every_batch_are_flagged_with_a_display_only_hint(body):
    source = (
        HEADER
        + "for x, y in train_loader:\n    out = model(x.to(device))\n    loss = criterion(out, y.to(device))\n"
        + body
    )
    found = _findings(source)
    assert [d.code for d in found] == ["TL002"]
    assert found[0].fix is not None and found[0].fix.applicability is Applicability.DISPLAY_ONLY
    assert not found[0].fix.edits and found[0].fix.message


@pytest.mark.parametrize(
    "body",
    [
        "    self.assertEqual(loss.item(), 0.5)\n",
        "    assert loss.item() < 10\n",
        "    dist.all_reduce(done)\n    if done.item():\n        break\n",
        "    if torch.isnan(loss):\n        raise ValueError('nan')\n",
        "    if torch.is_tensor(lr):\n        lr = lr.item()\n",
        "    print(float(len(y)), y.tolist())\n",
    ],
)
def test_deliberate_or_free_conversions_are_not_flagged(body):
    source = (
        HEADER
        + "import torch.distributed as dist\nfor x, y in train_loader:\n    out = model(x.to(device))\n"
        "    loss = criterion(out, y.to(device))\n    done = torch.zeros(1, device=device)\n" + body
    )
    assert _findings(source) == []


def test_one_sync_is_reported_once():
    source = (
        HEADER
        + "for x in loader:\n    out = model(x.to(device))\n    print(f'{out.detach().cpu().numpy()}', float(out.sum().item()))\n"
    )
    found = _findings(source)
    assert sorted(d.message.split("`")[1] for d in found) == [
        "out.detach().cpu()",
        "out.sum().item()",
    ]


def test_inner_loops_get_the_move_once_per_batch_hint():
    source = (
        HEADER
        + "for x in loader:\n    scores = model(x.to(device))\n    labels = [s.item() for s in scores]\n"
    )
    (finding,) = _findings(source)
    assert "every element" in finding.message and "once per batch" in finding.fix.message


def test_no_fix_when_the_accumulator_is_read_on_every_batch():
    source = (
        HEADER
        + "total = 0.0\nfor i, x in enumerate(loader):\n    loss = model(x.to(device))\n    total += loss.item()\n    bar.set_postfix(avg=total / (i + 1))\n"
    )
    (finding,) = _findings(source)
    assert finding.fix.applicability is Applicability.DISPLAY_ONLY


def test_no_fix_when_an_integer_accumulator_gets_values_of_unknown_dtype():
    source = (
        HEADER
        + "seen = 0\nfor x in loader:\n    out = model(x.to(device))\n    seen += out.max().item()\nprint(seen)\n"
    )
    (finding,) = _findings(source)
    assert finding.fix.applicability is Applicability.DISPLAY_ONLY


def test_the_unsafe_fix_is_offered_only_with_unsafe_fixes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        HEADER
        + "total = 0.0\nfor x in loader:\n    loss = model(x.to(device))\n    total += loss.item()\nprint(total)\n"
    )
    report = run_torchlint(
        "check", "--select", "TL002", "--output-format", "json", "--no-cache", str(script)
    )
    (item,) = json.loads(report.stdout)
    assert item["fix"]["applicability"] == "unsafe"
    safe_only = run_torchlint("fix", "--select", "TL002", "--apply", str(script))
    assert safe_only.returncode in (0, 1) and "total += loss.item()" in script.read_text()
    applied = run_torchlint("fix", "--select", "TL002", "--apply", "--unsafe-fixes", str(script))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    text = script.read_text()
    assert "total += loss.detach()" in text and "print(float(total))" in text


def test_hostile_nesting_does_not_crash():
    chain = " + ".join(["loss"] * 1500)
    source = (
        HEADER
        + f"for x in loader:\n    loss = model(x.to(device))\n    s = {chain}\n    if s:\n        pass\n"
    )
    found = _findings(source)
    assert [d.code for d in found] == ["TL002"]


# -- the fixture pair ------------------------------------------------------------------
def _codes(path: Path) -> list[str]:
    result = run_torchlint(
        "check", "--select", "TL002", "--output-format", "json", "--no-cache", str(path)
    )
    assert result.returncode in (0, 1), result.stderr
    return [item["code"] for item in json.loads(result.stdout)]


def test_fixture_before_is_flagged_and_after_is_clean():
    assert _codes(PAIR / "before.py") == ["TL002", "TL002"]
    assert _codes(PAIR / "after.py") == []


def _losses(script: Path) -> list[float]:
    done = subprocess.run(
        [sys.executable, str(script), "--scale", "1"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [float(v) for v in re.findall(r"loss (\d+\.\d+)", done.stdout)]


def test_fixture_pair_and_the_fixed_before_train_alike(tmp_path):
    pytest.importorskip("torch")
    fixed = tmp_path / "before.py"
    shutil.copy(PAIR / "before.py", fixed)
    applied = run_torchlint("fix", "--select", "TL002", "--apply", "--unsafe-fixes", str(fixed))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _codes(fixed) == []
    before, after, rewritten = (
        _losses(PAIR / "before.py"),
        _losses(PAIR / "after.py"),
        _losses(fixed),
    )
    assert len(before) == 2
    assert after == pytest.approx(before, abs=1e-3)
    assert rewritten == pytest.approx(before, abs=1e-3)


def test_methods_called_from_the_batch_loop_run_per_batch():
    source = """\
import torch
class Trainer:
    def fit(self):
        for epoch in range(self.epochs):
            for batch in self.train_loader:
                self.step(batch)
            self.report(epoch)
    def step(self, batch):
        loss = self.model(batch.cuda())
        loss.backward()
        self.optimizer.step()
        self.total += loss.item()
    def report(self, epoch):
        print(epoch, self.last.item())
"""
    (finding,) = _findings(source)
    assert finding.start.row == 12 and "self.total" in finding.message
    assert finding.fix.applicability is Applicability.DISPLAY_ONLY


def test_a_batch_moved_in_place_is_no_longer_known_to_be_on_the_cpu():
    source = (
        HEADER
        + "for batch in loader:\n    for k in batch:\n        batch[k] = batch[k].to(device)\n    out = model(**batch)\n    print(out.sum().item())\n"
    )
    assert [d.code for d in _findings(source)] == ["TL002"]


@pytest.mark.parametrize("guard", ["if args.do_eval:", "if cfg.should_log:", "if log_now:"])
def test_flags_the_loop_never_changes_are_not_guards(guard):
    """A run setting, or a flag bound once before the loop: the branch runs on every batch or never."""
    source = (
        "import torch\nmodel.cuda()\nlog_now = verbose\n"
        "for i, batch in enumerate(loader):\n    loss = model(batch)\n"
        f"    {guard}\n        print(loss.item())\n"
    )
    ctx = _context(source)
    (call,) = _calls(ctx, "loss.item()")
    assert ctx.fact(LoopFacts).per_batch_loop(call) is _loops(ctx)[0]
