"""TL101, TL102, TL103 beyond their examples: fixtures, CLI state, data-flow reach, fix safety."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import libcst as cst
import pytest

from torchlint.config import Settings
from torchlint.diagnostics import Applicability
from torchlint.engine.lint import lint_text, rules_for
from torchlint.fixes.apply import fix_to_fixpoint
from torchlint.registry import find_rule

from conftest import FIXTURES, listed_rules, rule_docs, run_torchlint

RULES = {
    "TL101": "dataloader-without-workers",
    "TL102": "transfer-without-non-blocking",
    "TL103": "tensor-created-then-moved",
}
SELECT = ",".join(RULES)


def _lint(codes: str, text: str, path: str = "train.py"):
    """As the engine lints the file at `path`: test code gets no performance rules (`rules_for`)."""
    rules, settings = [find_rule(c) for c in codes.split(",")], Settings()
    return lint_text(path, text, rules_for(path, rules, settings), settings)


def _fixed(codes: str, text: str, unsafe: bool = True) -> str:
    outcome = fix_to_fixpoint(text, lambda t: _lint(codes, t), unsafe=unsafe)
    cst.parse_module(outcome.text)
    return outcome.text


def _json(path, cwd, select: str = SELECT) -> list[dict]:
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        select,
        "--output-format",
        "json",
        str(path),
        cwd=cwd,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _without_docstring(text: str) -> str:
    module = cst.parse_module(text)
    return module.with_changes(body=module.body[1:]).code


# -- catalogue and fixtures -------------------------------------------------------------------
def test_rules_are_listed_and_on_by_default():
    listed = listed_rules()
    for code, name in RULES.items():
        assert listed[code]["name"] == name
        assert listed[code]["default"] == "on"


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_docs_are_complete(code):
    docs = rule_docs(code)
    for reference in ("pytorch.org", "efficientdl.com", "tuning_guide"):
        assert reference in docs


@pytest.mark.parametrize("code", sorted(RULES))
def test_fixture_before_is_flagged_and_after_is_clean(code):
    folder = FIXTURES / RULES[code]
    found = [d["code"] for d in _json(folder / "before.py", folder, code)]
    assert found and set(found) == {code}
    assert _json(folder / "after.py", folder, code) == []


@pytest.mark.parametrize("code", sorted(RULES))
def test_fix_turns_the_fixture_into_its_after_version_and_it_runs(code, tmp_path):
    folder = tmp_path / "pair"
    shutil.copytree(FIXTURES / RULES[code], folder)
    fixed = run_torchlint(
        "fix",
        "--isolated",
        "--select",
        SELECT,
        "--unsafe-fixes",
        "--apply",
        "before.py",
        cwd=folder,
    )
    assert fixed.returncode in (0, 1), fixed.stderr
    assert [d for d in _json(folder / "before.py", folder) if d["fix"] and d["fix"]["edits"]] == []
    before, after = (folder / "before.py").read_text(), (folder / "after.py").read_text()
    assert _without_docstring(before) == _without_docstring(after)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    ran = subprocess.run(
        [sys.executable, "before.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]


# -- TL101 ------------------------------------------------------------------------------------
LOOP = "    for x, y in loader:\n        x = x.to(device)\n        model(x).sum().backward()\n"


@pytest.mark.parametrize(
    "setup",
    [
        # a same-file factory function
        "def make():\n    return DataLoader(ds, batch_size=8)\n\n\ndef train():\n    loader = make()\n",
        # unpacked from a factory returning a pair
        "def make():\n    return DataLoader(ds), DataLoader(vs)\n\n\ndef train():\n    loader, _ = make()\n",
        # a `with ... as` target
        "def train():\n    with tqdm(DataLoader(ds)) as loader:\n        pass\n",
    ],
)
def test_loaders_are_followed_to_their_loops(setup):
    text = "from torch.utils.data import DataLoader\n\n\n" + setup + LOOP
    assert [d.code for d in _lint("TL101", text)] == ["TL101"]


def test_loader_kept_on_self_is_followed_across_methods():
    text = (
        "from torch.utils.data import DataLoader\n\n\nclass Trainer:\n    def setup(self):\n"
        "        self.train_loader = DataLoader(self.ds, batch_size=8, num_workers=4)\n\n"
        "    def fit(self):\n        for batch in self.train_loader:\n            self.model(batch[0].cuda()).sum().backward()\n"
    )
    found = _lint("TL101", text)
    assert [d.code for d in found] == ["TL101"]
    assert "pin_memory" in found[0].message and "num_workers" not in found[0].message


def test_unit_tests_are_not_flagged():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef test_fit():\n    loader = DataLoader(ds)\n"
        + LOOP
    )
    assert _lint(SELECT, text, path="tests/test_fit.py") == []


def test_workers_are_not_added_to_a_script_that_runs_at_import():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef main():\n    loader = DataLoader(ds, batch_size=8)\n"
        + LOOP
        + "\n\nmain()\n"
    )
    found = _lint("TL101", text)
    assert (
        len(found) == 1 and "__main__" in found[0].fix.message
    )  # the help line says why workers wait
    assert "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n" in _fixed("TL101", text)


def test_pinning_added_by_tl101_makes_tl102_add_non_blocking():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef main():\n    loader = DataLoader(ds, batch_size=8)\n"
        + LOOP
        + '\n\nif __name__ == "__main__":\n    main()\n'
    )
    fixed = _fixed("TL101,TL102", text)
    assert "DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)" in fixed
    assert "x = x.to(device, non_blocking=True)" in fixed


# -- TL102 ------------------------------------------------------------------------------------
PINNED = "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=4, pin_memory=True)\n"


def test_a_value_read_on_the_host_in_the_next_statement_is_not_flagged():
    text = (
        PINNED
        + "for x, y in loader:\n    y = y.to(device)\n    counts[int(y)] += 1\n    x = x.to(device)\n"
    )
    found = _lint("TL102", text)
    assert [d.start.row for d in found] == [7]


def test_non_blocking_is_a_safe_fix_and_idempotent():
    text = PINNED + "for i, (x, y) in enumerate(loader):\n    x = x.to(\n        device,\n    )\n"
    found = _lint("TL102", text)
    assert len(found) == 1 and found[0].fix.applicability is Applicability.SAFE
    fixed = _fixed("TL102", text, unsafe=False)
    assert "x = x.to(\n        device,\n        non_blocking=True,\n    )\n" in fixed
    assert _fixed("TL102", fixed, unsafe=False) == fixed


def test_loops_over_other_iterables_are_not_flagged():
    text = (
        PINNED + "for x in cached_batches:\n    x = x.to(device)\nfor x, y in loader:\n    pass\n"
    )
    assert _lint("TL102", text) == []


# -- TL103 ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("creation", "applicability"),
    [
        ("torch.zeros(n)", Applicability.SAFE),
        ("torch.arange(1, n)", Applicability.SAFE),
        ("torch.arange(0, n, 2)", Applicability.UNSAFE),
        ("torch.linspace(0, 1, n)", Applicability.UNSAFE),
        ("torch.ones(n, requires_grad=True)", Applicability.UNSAFE),
    ],
)
def test_fix_safety_follows_whether_the_values_can_change(creation, applicability):
    found = _lint(
        "TL103", f"import torch\n\n\ndef forward(x, n):\n    return x + {creation}.to(device)\n"
    )  # every step
    assert len(found) == 1 and found[0].fix.applicability is applicability


def test_random_factories_are_flagged_only_where_they_run_every_step():
    once = "import torch\nw = torch.randn(8, 8).to(device)\n"
    assert _lint("TL103", once) == []
    looped = "import torch\nfor x in loader:\n    noise = torch.rand(x.shape).cuda()\n    model(x.cuda() + noise).sum().backward()\n"
    found = _lint("TL103", looped)
    assert len(found) == 1 and found[0].fix.applicability is Applicability.UNSAFE
    assert _fixed("TL103", looped, unsafe=False) == looped


def test_fix_keeps_an_indented_multi_line_creation_intact():
    text = (
        "import torch\n\n\ndef forward(x):\n    if x is not None:\n        m = torch.zeros(\n            x.shape[0],\n"
        "            dtype=torch.bool,  # the mask\n        ).to(x.device)\n    return m\n"
    )
    assert _fixed("TL103", text, unsafe=False) == (
        "import torch\n\n\ndef forward(x):\n    if x is not None:\n        m = torch.zeros(\n            x.shape[0],\n"
        "            dtype=torch.bool, device=x.device,  # the mask\n        )\n    return m\n"
    )


@pytest.mark.parametrize(
    "spacing",
    [
        "torch.zeros(3) .cuda()",
        "(torch.zeros(3)\n .to(device))",
        "torch.zeros(3).\\\n    to(device)",
    ],
)
def test_prefilter_admits_unusual_spacing(spacing):
    text = f"import torch\n\n\ndef forward(x):\n    y = {spacing}\n    return x + y\n"
    assert find_rule("TL103").may_match(text)
    assert [d.code for d in _lint("TL103", text)] == ["TL103"]
