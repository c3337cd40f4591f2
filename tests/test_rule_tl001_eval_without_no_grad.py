"""TL001 eval-without-no-grad beyond its examples: the fixture pair, fixes in odd layouts, scope and caller logic."""

from __future__ import annotations

import json
import subprocess
import sys

import libcst as cst
import pytest
from conftest import FIXTURES, run_torchlint

from torchlint.config import Settings
from torchlint.engine.lint import lint_text
from torchlint.fixes.apply import fix_to_fixpoint
from torchlint.project import rules_for
from torchlint.registry import find_rule

RULE = find_rule("TL001")
PAIR = FIXTURES / "eval-without-no-grad"


def findings(code: str, path: str = "script.py"):
    """As the engine lints the file at `path`: test code gets no performance rules (`rules_for`)."""
    return lint_text(path, code, rules_for(path, [RULE], Settings()), Settings())


def fixed(code: str, path: str = "script.py") -> str:
    text = fix_to_fixpoint(code, lambda t: findings(t, path), unsafe=True).text
    cst.parse_module(text)
    return text


def test_fixture_pair_is_flagged_before_and_clean_after():
    result = run_torchlint(
        "check", "--select", "TL001", "--output-format", "json", "before.py", "after.py", cwd=PAIR
    )
    found = json.loads(result.stdout)
    assert [(d["code"], d["filename"]) for d in found] == [("TL001", "before.py")], result.stdout
    assert found[0]["fix"]["applicability"] == "unsafe"


def test_fixture_after_is_before_with_the_fix_applied():
    before = (PAIR / "before.py").read_text()
    assert fixed(before, "before.py") == (PAIR / "after.py").read_text()


def test_fixture_pair_runs_on_cpu_and_agrees():
    runs = [
        subprocess.Popen(
            [sys.executable, name, "--epochs", "1"],
            cwd=PAIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("before.py", "after.py")
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    assert outputs[0][0] == outputs[1][0]
    assert "val_acc" in outputs[0][0]


def test_rule_docs_explain_when_the_fix_is_unsafe():
    result = run_torchlint("rule", "TL001")
    assert result.returncode == 0
    assert "## Fix safety" in result.stdout and "unsafe" in result.stdout
    assert "torch.no_grad" in result.stdout and "inference_mode" in result.stdout


EVAL_LOOP = "import torch\nmodel.eval()\nfor x in val_loader:\n    out = model(x)\n"


@pytest.mark.parametrize("path", ["tests/test_model.py", "model_test.py", "conftest.py"])
def test_unit_test_modules_are_not_evaluation(path):
    unit_test = EVAL_LOOP + "\n\ndef test_evaluates():\n    pass\n"  # a test function: no script
    assert findings(unit_test, path) == []
    assert len(findings(EVAL_LOOP, "evaluate.py")) == 1


def test_one_finding_per_loop_and_both_loops_fixed():
    code = (
        "import torch\n\ndef fit(model, val_loader, test_loader):\n"
        "    for x in val_loader:\n        a = model(x)\n        b = model(x * 2)\n"
        "    print('done')\n"
        "    for x in test_loader:\n        c = model(x)\n"
    )
    assert [d.start.row for d in findings(code)] == [5, 9]
    assert fixed(code) == (
        "import torch\n\ndef fit(model, val_loader, test_loader):\n"
        "    with torch.no_grad():\n        for x in val_loader:\n            a = model(x)\n            b = model(x * 2)\n"
        "    print('done')\n"
        "    with torch.no_grad():\n        for x in test_loader:\n            c = model(x)\n"
    )


def test_line_endings_and_tab_indentation_survive_the_fix():
    crlf = EVAL_LOOP.replace("\n", "\r\n")
    assert (
        fixed(crlf)
        == "import torch\r\nmodel.eval()\r\nwith torch.no_grad():\r\n    for x in val_loader:\r\n        out = model(x)\r\n"
    )
    tabs = "import torch\ndef run(model):\n\tmodel.eval()\n\tfor x in loader:\n\t\tif x:\n\t\t\tout = model(x)\n\t  \n\tprint(1)\n"
    assert fixed(tabs) == (
        "import torch\ndef run(model):\n\tmodel.eval()\n\twith torch.no_grad():\n\t\tfor x in loader:\n\t\t\tif x:\n\t\t\t\tout = model(x)\n"
        "\t  \n\tprint(1)\n"
    )


def test_a_yield_inside_the_block_gets_advice_but_no_edit():
    code = "import torch\n\ndef stream(model, loader):\n    model.eval()\n    for x in loader:\n        yield model(x)\n"
    [finding] = findings(code)
    assert (
        not finding.fix.edits and finding.fix.message == "Run it under `torch.no_grad()`"
    )  # advice, no edit


def test_methods_only_called_from_no_grad_methods_run_without_grad():
    code = (
        "import torch\n\nclass Trainer:\n"
        "    def evaluate(self):\n        return self.model(self.batch)\n\n"
        "    @torch.no_grad()\n    def fit(self):\n        return self.evaluate()\n"
    )
    assert findings(code) == []
    assert len(findings(code.replace("    @torch.no_grad()\n", ""))) == 1


def test_mutual_recursion_between_callers_terminates():
    code = (
        "import torch\n\ndef predict(model, x, n):\n    return model(x) if n == 0 else infer(model, x, n - 1)\n\n"
        "def infer(model, x, n):\n    return predict(model, x, n)\n\npredict(model, x, 3)\n"
    )
    assert [d.start.row for d in findings(code)] == [4]


def test_a_closure_only_called_in_an_evaluation_function_gets_the_decorator():
    code = (
        "import torch\n\ndef evaluate(model, loader):\n    def step(batch):\n        return model(batch)\n"
        "    return [step(b) for b in loader]\n"
    )
    assert fixed(code) == code.replace("def evaluate", "@torch.no_grad()\ndef evaluate")


def test_set_grad_enabled_true_and_enable_grad_inside_no_grad_count_as_explicit():
    enabled = "import torch\nmodel.eval()\nwith torch.no_grad():\n    with torch.enable_grad():\n        out = model(x)\n"
    assert findings(enabled) == []
    switched = (
        "import torch\nmodel.eval()\nwith torch.set_grad_enabled(True):\n    out = model(x)\n"
    )
    assert findings(switched) == []


@pytest.mark.parametrize(
    "name",
    [
        "_validate_args",
        "infer_shape",
        "generate_code",
        "is_valid",
        "test_conv2d_backward",
        "check_module",
    ],
)
def test_helper_names_are_not_evaluation(name):
    code = f"import torch\n\ndef {name}(model, x):\n    return model(x)\n"
    assert findings(code) == []


@pytest.mark.parametrize(
    "name",
    [
        "validate",
        "evaluate_model",
        "val_epoch",
        "run_inference",
        "predict_proba",
        "generate_samples",
        "predict_sentiment",
    ],
)
def test_evaluation_names(name):
    code = f"import torch\n\ndef {name}(model, x):\n    return model(x)\n"
    assert len(findings(code)) == 1


@pytest.mark.parametrize(
    "callee", ["add_module", "self.wrap_model", "model.generate", "model_cls", "build_model"]
)
def test_calls_that_are_not_forward_passes(callee):
    code = f"import torch\n\ndef evaluate(x):\n    return {callee}(x)\n"
    assert findings(code) == []


def test_validation_called_next_to_a_training_function_is_still_evaluation():
    code = (
        "import torch\n\ndef train_one_epoch(model, loader, opt):\n    for x, y in loader:\n"
        "        loss = (model(x) - y).pow(2).mean()\n        loss.backward()\n        opt.step()\n\n"
        "def valid_fn(model, loader):\n    return [model(x) for x, _ in loader]\n\n"
        "for epoch in range(3):\n    train_one_epoch(model, train_loader, opt)\n    preds = valid_fn(model, val_loader)\n"
    )
    assert [d.start.row for d in findings(code)] == [10]
    # but a prediction whose loss is backpropagated in the same loop is training
    feeding = code.replace(
        "    preds = valid_fn(model, val_loader)\n",
        "    valid_fn(model, val_loader)[0].sum().backward()\n",
    )
    assert findings(feeding) == []


def test_helpers_of_an_evaluation_entry_point_called_elsewhere_are_left_to_it():
    helper = "def _predict_batch(self, x):\n        return self.model(x)\n\n"
    entry = "    def inference(self, x):\n        return self._predict_batch(x)\n"
    code = "import torch\n\nclass Predictor(Base):\n    " + helper + entry
    assert findings(code) == []
    # but when training code in the file runs the evaluation with grad on, the helper is reported
    fit = "\n    def fit(self, x):\n        self.optimizer.step()\n        return self._predict_epoch(x)\n"
    code = (
        "import torch\n\nclass Model(Base):\n    "
        + helper
        + "    def _predict_epoch(self, x):\n        return self._predict_batch(x)\n"
        + fit
    )
    assert [d.start.row for d in findings(code)] == [5]
