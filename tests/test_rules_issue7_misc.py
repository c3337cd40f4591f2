"""TL106, TL107, TL109, TL110, TL111 beyond their examples: fixtures, CLI state, paths, fix placement."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import libcst as cst
import pytest

from torchlint.config import Settings, parse_version
from torchlint.engine.lint import lint_text, rules_for
from torchlint.fixes.apply import fix_to_fixpoint
from torchlint.registry import find_rule

from conftest import FIXTURES, listed_rules, rule_docs, run_torchlint

RULES = {
    "TL106": ("deprecated-cuda-amp", True),
    "TL107": ("debug-mode-left-on", True),
    "TL109": ("optimizer-not-fused", False),
    "TL110": ("cudnn-benchmark-off", False),
    "TL111": ("adam-with-weight-decay", False),
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


def _lint(code: str, text: str, path: str = "train.py", version: str | None = None):
    settings = Settings(target_torch_version=parse_version(version, "test") if version else None)
    return lint_text(path, text, rules_for(path, [find_rule(code)], settings), settings)


def test_rules_are_listed_with_their_default_state():
    listed = listed_rules()
    for code, (name, on) in RULES.items():
        assert listed[code]["name"] == name
        assert listed[code]["default"] == ("on" if on else "opt-in")


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_docs_are_complete(code):
    docs = rule_docs(code)
    assert "pytorch.org" in docs


@pytest.mark.parametrize("code", sorted(RULES))
def test_fixture_before_is_flagged_and_after_is_clean(code):
    folder = FIXTURES / RULES[code][0]
    found = _codes(folder / "before.py", code, folder)
    assert found and set(found) == {code}
    assert _codes(folder / "after.py", code, folder) == []


@pytest.mark.parametrize("code", ["TL109", "TL110", "TL111"])
def test_opt_in_fix_cleans_the_fixture_and_it_still_runs(code, tmp_path):
    shutil.copytree(FIXTURES / RULES[code][0], tmp_path / "pair")
    folder = tmp_path / "pair"
    fixed = run_torchlint(
        "fix", "--isolated", "--select", code, "--unsafe-fixes", "--apply", "before.py", cwd=folder
    )
    assert fixed.returncode in (0, 1), fixed.stderr
    assert _codes(folder / "before.py", code, folder) == []
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


# -- TL106 ------------------------------------------------------------------------------------
AMP = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def test_deprecated_amp_follows_the_target_version():
    assert [d.code for d in _lint("TL106", AMP, version="2.4")] == ["TL106"]
    assert _lint("TL106", AMP, version="2.3") == []


# -- TL107 ------------------------------------------------------------------------------------
ANOMALY = "import torch\ntorch.autograd.set_detect_anomaly(True)\nfor x in loader:\n    model(x).sum().backward()\n    opt.step()\n"


@pytest.mark.parametrize("path", ["tests/train_loop.py", "test_train.py", "pkg/train_test.py"])
def test_debug_tools_in_tests_are_not_flagged(path):
    assert _lint("TL107", ANOMALY, path=path) == []


def test_debug_tools_in_training_scripts_are_flagged():
    assert [d.code for d in _lint("TL107", ANOMALY, path="scripts/train.py")] == ["TL107"]


# -- TL109 ------------------------------------------------------------------------------------
SGD = "import torch\nmodel.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in loader:\n    model(x).sum().backward()\n    opt.step()\n"


def test_fused_sgd_needs_torch_2_3():
    assert [d.code for d in _lint("TL109", SGD, version="2.3")] == ["TL109"]
    assert _lint("TL109", SGD, version="2.2") == []


# -- TL110 ------------------------------------------------------------------------------------
CONV = (
    "model = nn.Conv2d(3, 8, 3).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x in loader:\n    model(x).sum().backward()\n    opt.step()"
)


def _fixed(code: str, text: str) -> str:
    outcome = fix_to_fixpoint(text, lambda t: _lint(code, t), unsafe=True)
    cst.parse_module(outcome.text)
    assert _lint(code, outcome.text) == []
    return outcome.text


def test_benchmark_goes_after_imports_guarded_by_try():
    text = (
        "import torch\ntry:\n    from torch import nn\nexcept ImportError:\n    raise\nSEED = 0\n"
        + CONV
        + "\n"
    )
    assert _fixed("TL110", text).startswith(
        "import torch\ntry:\n    from torch import nn\nexcept ImportError:\n    raise\ntorch.backends.cudnn.benchmark = True\nSEED = 0\n"
    )


def test_benchmark_line_is_added_to_a_file_without_final_newline():
    text = "import torch\nfrom torch import nn\n" + CONV
    assert _fixed("TL110", text).startswith(
        "import torch\nfrom torch import nn\ntorch.backends.cudnn.benchmark = True\nmodel ="
    )


def test_benchmark_insertion_ignores_imports_inside_the_main_guard():
    text = "import torch\nfrom torch import nn\n" + CONV.replace("\n", "\n    ").replace(
        "model = ", "def main():\n    model = ", 1
    )
    text += "\n\nif __name__ == '__main__':\n    import sys\n    main()\n"
    assert "from torch import nn\ntorch.backends.cudnn.benchmark = True\ndef main():" in _fixed(
        "TL110", text
    )


# -- TL111 ------------------------------------------------------------------------------------
def test_weight_decay_bound_twice_is_not_known():
    text = "import torch\nwd = 1e-4\nif small:\n    wd = 0\nopt = torch.optim.Adam(model.parameters(), weight_decay=wd)\n"
    assert _lint("TL111", text) == []


def test_plain_seeding_does_not_hide_the_missing_benchmark():
    text = (
        "import random\nimport numpy as np\nimport torch\nfrom torch import nn\nrandom.seed(0)\nnp.random.seed(0)\ntorch.manual_seed(0)\n"
        + CONV
        + "\n"
    )
    assert [d.code for d in _lint("TL110", text)] == ["TL110"]
    helper = text.replace(
        "import random\n", "import random\nfrom utils import init_seeds\n"
    ).replace("random.seed(0)\n", "init_seeds(0)\n")
    assert _lint("TL110", helper) == []
