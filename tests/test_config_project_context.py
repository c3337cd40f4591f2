"""Settings found from each file, whatever paths are passed; --show-settings; the cache's place;
test code, through the installed `torchlint` command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_torchlint, torchlint_executable

TRAIN = """\
import torch
from torch.cuda import amp

cuda = torch.cuda.is_available()
scaler = amp.GradScaler(enabled=cuda)
model = torch.nn.DataParallel(model)
for x, y in loader:
    x = x.to("cuda")
    loss = model(x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def _json(cwd: Path, *args: str) -> list[dict]:
    result = run_torchlint("check", "--output-format", "json", "--no-cache", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def _diff(cwd: Path, *args: str) -> str:
    result = run_torchlint("fix", "--unsafe-fixes", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The issue's scenario: torch>=1.8.0 declared at the root, the code one folder down."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "requirements.txt").write_text("numpy\ntorch>=1.8.0\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text(TRAIN)
    (tmp_path / "other.py").write_text("import torch\nmodel = torch.nn.DataParallel(model)\n")
    return tmp_path


def test_findings_and_fixes_do_not_depend_on_the_paths_passed(project):
    whole = [d for d in _json(project, ".") if d["filename"] == "sub/train.py"]
    assert whole == _json(project, "sub") == _json(project, "sub/train.py")
    assert whole == [
        d for d in _json(project, "other.py", "sub/train.py") if d["filename"] == "sub/train.py"
    ]
    codes = {d["code"] for d in whole}
    assert "TL006" in codes and "TL004" in codes
    assert "TL106" not in codes  # torch.cuda.amp is not deprecated on the declared 1.8
    zero_grad = next(d for d in whole if d["code"] == "TL006")
    assert "set_to_none=True" in zero_grad["fix"]["edits"][0]["content"]  # 1.8 has set_to_none
    diff = _diff(project, "sub/train.py")
    assert (
        "+    optimizer.zero_grad(set_to_none=True)" in diff
        and "GradScaler" not in diff.replace("-scaler", "")
    )
    assert _diff(project, "sub") == diff and _diff(
        project, ".", "--select", "TL006,TL106,TL102"
    ) == _diff(project, "sub", "--select", "TL006,TL106,TL102")


def test_a_nested_config_applies_to_its_files_whichever_path_is_passed(project):
    (project / "sub" / "torchlint.toml").write_text('ignore = ["TL004"]\n')
    assert "TL004" not in {
        d["code"] for d in _json(project, ".") if d["filename"] == "sub/train.py"
    }
    assert "TL004" in {d["code"] for d in _json(project, ".") if d["filename"] == "other.py"}
    assert _json(project, "sub/train.py") == [
        d for d in _json(project, ".") if d["filename"] == "sub/train.py"
    ]


def test_each_file_of_a_monorepo_gets_its_nearest_torch(project):
    old = project / "packages" / "old"
    old.mkdir(parents=True)
    (old / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='old', install_requires=['torch>=1.5'])\n"
    )
    (old / "train.py").write_text(TRAIN)
    found = {d["filename"]: d for d in _json(project, ".") if d["code"] == "TL006"}
    assert found["sub/train.py"]["fix"] is not None
    assert "packages/old/train.py" not in found  # torch 1.5 has no set_to_none to advise


def test_show_settings(project):
    (project / "tests").mkdir()
    (project / "tests" / "test_train.py").write_text(TRAIN)
    result = run_torchlint("check", "--show-settings", "sub/train.py", cwd=project)
    assert result.returncode == 0, result.stderr
    shown = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert shown["project root"] == str(project.resolve())
    assert shown["config file"] == "(none: defaults)"
    assert shown["torch target"] == "1.8 (requirements.txt: torch>=1.8.0)"
    assert shown["test code"] == "no"
    assert "TL004" in shown["enabled rules"].split(", ")
    tests = run_torchlint(
        "check",
        "--show-settings",
        "tests/test_train.py",
        "--target-torch-version",
        "2.1",
        cwd=project,
    )
    shown = dict(line.split(": ", 1) for line in tests.stdout.splitlines())
    assert shown["test code"].startswith("yes")
    assert shown["torch target"] == "2.1 (--target-torch-version)"
    assert shown["enabled rules"] == "TL106"
    missing = run_torchlint("check", "--show-settings", "nope.py", cwd=project)
    assert (
        missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.py" in missing.stderr
    )


def test_one_cache_at_the_project_root_or_where_asked(project, tmp_path_factory):
    assert run_torchlint("check", "sub", cwd=project).returncode == 1
    assert (project / ".torchlint_cache").is_dir() and not (
        project / "sub" / ".torchlint_cache"
    ).exists()
    elsewhere = tmp_path_factory.mktemp("cache")
    assert (
        run_torchlint("check", "sub", "--cache-dir", str(elsewhere / "a"), cwd=project).returncode
        == 1
    )
    assert any((elsewhere / "a").rglob("*.json"))
    env = {**os.environ, "TORCHLINT_CACHE_DIR": str(elsewhere / "b")}
    result = subprocess.run(
        [torchlint_executable(), "check", "sub"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and any((elsewhere / "b").rglob("*.json"))


def test_test_code_gets_no_performance_findings_unless_asked(project):
    (project / "tests").mkdir()
    (project / "tests" / "helpers.py").write_text(TRAIN)
    # a unit-test module by its name: it defines a test function (without one, and running
    # code at the top level, it would be a script named like a test)
    (project / "test_model.py").write_text(TRAIN + "\n\ndef test_trains():\n    pass\n")
    (project / "suite.py").write_text(
        "import pytest\nimport torch\n\nclass TestModel:\n    def test_parallel(self):\n        m = torch.nn.DataParallel(model)\n\n"
        "def test_parallel():\n    m = torch.nn.DataParallel(model)\n\ndef test(model, loader):\n    m = torch.nn.DataParallel(model)\n"
    )
    found = _json(project, ".")
    # a file that imports pytest or unittest is test code as a whole, as one under tests/ is
    assert {d["filename"] for d in found} == {"sub/train.py", "other.py"}
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.torchlint]\nlint-tests = true\n'
    )
    linted = {d["filename"] for d in _json(project, ".")}
    assert {"tests/helpers.py", "test_model.py"} <= linted
    assert len([d for d in _json(project, ".") if d["filename"] == "suite.py"]) == 3


def test_deprecations_are_still_reported_in_test_code(project):
    (project / "requirements.txt").write_text("torch>=2.4\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_amp.py").write_text(
        "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    )
    assert [d["code"] for d in _json(project, "tests")] == ["TL106"]


BACKBONE = "from torch import nn\n\n\nclass Backbone(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layer = nn.Linear(4, 2)\n"
HEAD = """\
import torch
from .backbone import Backbone


class Classifier(Backbone):
    def predict(self, batch):
        return self.layer(batch).argmax(-1)
"""


def test_tl001_sees_a_module_base_class_in_another_file(tmp_path):
    """`predict` of a module is its API (callers choose the grad mode) once the index finds that
    the imported base is an nn.Module; a single-file run sees it too, and the cache notices when
    the other file changes."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "heads.py").write_text(HEAD)
    (tmp_path / "pkg" / "backbone.py").write_text(
        "class Backbone:\n    layer = None\n"
    )  # not a module
    assert [d["code"] for d in _json(tmp_path, "pkg/heads.py", "--select", "TL001")] == ["TL001"]
    cached = run_torchlint("check", "pkg/heads.py", "--select", "TL001", cwd=tmp_path)
    assert cached.returncode == 1
    (tmp_path / "pkg" / "backbone.py").write_text(BACKBONE)
    for args in (("pkg/heads.py",), (".",), ("pkg",)):
        assert _json(tmp_path, *args, "--select", "TL001") == []
    again = run_torchlint(
        "check", "pkg/heads.py", "--select", "TL001", cwd=tmp_path
    )  # the cached entry is stale
    assert again.returncode == 0, again.stdout


EVALUATE = "import torch\n\n\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x, _ in loader]\n"


@pytest.mark.parametrize(
    ("caller", "flagged"),
    [
        (
            "import torch\nfrom pkg.metrics import evaluate\n\nwith torch.no_grad():\n    evaluate(net, val_loader)\n",
            False,
        ),
        (
            "import torch\nfrom pkg import metrics\n\n@torch.inference_mode()\ndef report(net, loader):\n    return metrics.evaluate(net, loader)\n",
            False,
        ),
        (
            "import torch\nfrom pkg.metrics import evaluate\n\nwith torch.no_grad():\n    evaluate(net, val_loader)\nevaluate(net, test_loader)\n",
            True,
        ),
        (
            "import torch\nfrom pkg.metrics import evaluate\n\nwith torch.set_grad_enabled(True):\n    evaluate(net, val_loader)\n",
            True,
        ),
        (
            "import torch\n\nwith torch.no_grad():\n    evaluate(net, val_loader)\n",
            True,
        ),  # another `evaluate`: not imported from metrics
    ],
    ids=[
        "with-no-grad",
        "inference-mode-decorator",
        "one-call-with-grad",
        "grad-enabled",
        "unrelated-name",
    ],
)
def test_tl001_trusts_callers_in_other_files_only_when_all_turn_grad_off(tmp_path, caller, flagged):
    """An evaluation function the file never calls takes its grad mode from its callers elsewhere
    in the project: silent only when every one of them runs it under no_grad or inference_mode."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "metrics.py").write_text(EVALUATE)
    (tmp_path / "train.py").write_text(caller)
    for args in (("pkg/metrics.py",), (".",)):
        found = [
            d
            for d in _json(tmp_path, *args, "--select", "TL001")
            if d["filename"].endswith("metrics.py")
        ]
        assert bool(found) is flagged, (args, found)


LOGGING_LOOP = (
    "import torch\nfrom config import DEVICE\n\n\ndef train(model, loader, opt):\n    for x, y in loader:\n"
    "        loss = torch.nn.functional.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE))\n"
    "        loss.backward()\n        opt.step()\n        print(loss.item())\n"
)


@pytest.mark.parametrize(
    ("config", "flagged"),
    [
        (
            'import torch\n\nDEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
            True,
        ),
        ('DEVICE = "cpu"\n', False),  # a CPU-only project: its syncs cost nothing
        (
            'DEVICE = "cpu"\n\n\ndef use_gpu():\n    global DEVICE\n    DEVICE = "cuda:0"\n',
            True,
        ),  # rebound: unknown, its name decides
    ],
    ids=["gpu", "cpu-only", "rebound"],
)
def test_a_device_declared_in_another_module_is_evidence(tmp_path, config, flagged):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "config.py").write_text(config)
    (tmp_path / "train.py").write_text(LOGGING_LOOP)
    for args in (("train.py",), (".",)):
        found = [d["code"] for d in _json(tmp_path, *args, "--select", "TL002")]
        assert found == (["TL002"] if flagged else []), args


@pytest.mark.parametrize(
    ("base", "flagged"),
    [
        (
            "from torch.nn.parallel import DataParallel\n\n\nclass ChunkedDataParallel(DataParallel):\n    pass\n",
            True,
        ),
        (
            "import torch.nn as nn\n\n\nclass Inner(nn.DataParallel):\n    pass\n\n\nclass ChunkedDataParallel(Inner):\n    pass\n",
            True,
        ),
        (
            "import torch.nn as nn\n\n\nclass ChunkedDataParallel(nn.Module):\n    pass\n",
            False,
        ),  # a plain module
    ],
    ids=["direct", "through-a-base", "not-a-subclass"],
)
def test_tl004_sees_a_data_parallel_subclass_in_another_file(tmp_path, base, flagged):
    """Constructing a project's own DataParallel subclass pays DataParallel's costs."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "parallel.py").write_text(base)
    (tmp_path / "train.py").write_text(
        "from pkg.parallel import ChunkedDataParallel\n\nmodel = ChunkedDataParallel(model, [0, 1])\n"
    )
    found = [
        (d["filename"], d["location"]["row"]) for d in _json(tmp_path, ".", "--select", "TL004")
    ]
    assert found == ([("train.py", 3)] if flagged else [])


@pytest.mark.parametrize(
    ("common", "flagged"),
    [
        ("import torch\n\nDEVICE = 'cpu'\n", True),  # the star import brings torch
        ("from torch import *\n", True),  # a star import of torch itself
        ("DEVICE = 'cpu'\n", False),  # nothing of torch anywhere: not a torch file
    ],
    ids=["project-module-imports-torch", "star-import-of-torch", "no-torch"],
)
def test_tl001_sees_torch_through_a_star_import(tmp_path, common, flagged):
    """A script that gets torch from `from common import *` is still a torch script."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "common.py").write_text(common)
    (tmp_path / "evaluate.py").write_text(
        "from common import *\n\n\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x, _ in loader]\n"
    )
    for args in (("evaluate.py",), (".",)):
        found = [(d["filename"], d["code"]) for d in _json(tmp_path, *args, "--select", "TL001")]
        assert found == ([("evaluate.py", "TL001")] if flagged else []), args
