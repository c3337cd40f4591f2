"""TL112/TL113/TL114 beyond their examples, through the installed command: settings made in the
project modules a script imports, files that are not GPU training scripts, the fixture pairs."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_torchlint

PRECISION_RULES = ("--preview", "--select", "TL112,TL113,TL114")
SCRIPT = """\
import torch
{imports}
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten()).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    with torch.autocast("cuda", enabled={autocast}):
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
"""
# A float32 script training an MLP: TL112's and TL113's.
FP32 = """\
import torch
{imports}
model = torch.nn.Sequential(torch.nn.Linear(784, 2048), torch.nn.Linear(2048, 2048)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
"""


def _found(folder, *paths: str, rules: tuple[str, ...] = PRECISION_RULES) -> list[tuple[str, str]]:
    result = run_torchlint(
        "check", "--no-cache", "--output-format", "json", *rules, *paths, cwd=folder
    )
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["filename"], d["code"]) for d in json.loads(result.stdout))


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    return tmp_path


def test_a_float32_script_is_flagged_once_per_rule(project):
    (project / "train.py").write_text(FP32.format(imports=""))
    assert _found(project, "train.py") == [("train.py", "TL112"), ("train.py", "TL113")]


def test_tf32_set_in_an_imported_config_module_counts(project):
    (project / "config.py").write_text(
        "import torch\n\ndef setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    (project / "train.py").write_text(FP32.format(imports="from config import setup\nsetup()\n"))
    assert _found(project, "train.py") == [("train.py", "TL113")]


def test_a_setting_two_imports_away_counts_and_an_unimported_module_does_not(project):
    package = project / "lib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        'import torch\ntorch.set_float32_matmul_precision("high")\n'
    )
    (package / "model.py").write_text("from . import settings\n")
    (project / "unused.py").write_text("import torch\ntorch.autocast('cuda')\n")
    (project / "train.py").write_text(FP32.format(imports="from lib.model import *\n"))
    assert _found(project, "train.py") == [("train.py", "TL113")]


def test_autocast_in_the_model_module_silences_both_float32_rules(project):
    (project / "net.py").write_text(
        "import torch\n\nclass Net(torch.nn.Module):\n"
        "    @torch.autocast('cuda')\n    def forward(self, x):\n        return x\n"
    )
    (project / "train.py").write_text(FP32.format(imports="import net\n"))
    assert _found(project, "train.py") == []  # TF32 matters little where matmuls run in half


def test_the_finding_follows_a_change_to_the_imported_module(project):
    """The cache records the imported module: editing it re-lints the script."""
    (project / "config.py").write_text("import torch\n")
    (project / "train.py").write_text(FP32.format(imports="import config\n"))
    args = ("check", "--output-format", "json", *PRECISION_RULES, "train.py")
    first = json.loads(run_torchlint(*args, cwd=project).stdout)
    assert sorted(d["code"] for d in first) == ["TL112", "TL113"]
    (project / "config.py").write_text(
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    )
    again = json.loads(run_torchlint(*args, cwd=project).stdout)
    assert [d["code"] for d in again] == ["TL113"]


def test_a_conv_net_is_tl113s_alone_and_a_small_model_nobodys(project):
    conv = SCRIPT.replace('    with torch.autocast("cuda", enabled={autocast}):\n    ', "").replace(
        "torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten())",
        "torchvision.models.resnet18()",
    )
    conv = "import torchvision\n" + conv
    (project / "conv.py").write_text(conv.format(imports=""))
    sizes = "Linear(784, 2048), torch.nn.Linear(2048, 2048)"
    assert sizes in FP32
    (project / "tiny.py").write_text(
        FP32.replace(sizes, "Linear(2, 8), torch.nn.Linear(8, 1)").format(imports="")
    )
    (project / "mnist.py").write_text(  # 784 x 512: a launch-bound step
        FP32.replace(sizes, "Linear(784, 512), torch.nn.Linear(512, 10)").format(imports="")
    )
    (project / "sized.py").write_text(  # sizes from parameters: not known to be big
        FP32.replace(sizes, "Linear(n_in, n_hidden)").format(imports="")
    )
    found = _found(project, "conv.py", "tiny.py", "mnist.py", "sized.py")
    assert found == [("conv.py", "TL113")]


def test_channels_last_under_autocast_is_tl114s(project):
    (project / "train.py").write_text(SCRIPT.format(imports="", autocast="True"))
    assert _found(project, "train.py") == [("train.py", "TL114")]
    (project / "train.py").write_text(SCRIPT.format(imports="", autocast="False"))
    assert _found(project, "train.py") == []  # autocast switched off: TL113's question, not TL114's
    (project / "train.py").write_text(
        SCRIPT.format(imports="", autocast="True").replace(
            ".cuda()\noptimizer", ".cuda().to(memory_format=torch.channels_last)\noptimizer"
        )
    )
    assert _found(project, "train.py") == []


@pytest.mark.parametrize(
    "path",
    ["tests/test_train.py", "train_test.py", "conftest.py"],
    ids=["dir", "suffix", "conftest"],
)
def test_test_files_are_not_flagged(project, path):
    target = project / path
    target.parent.mkdir(exist_ok=True)
    # a test function makes a test-named file a unit-test module, not a script named like one
    target.write_text(FP32.format(imports="") + "\n\ndef test_trains():\n    pass\n")
    assert _found(project, path) == []


def test_a_library_module_and_a_cpu_script_are_not_flagged(project):
    library = "import torch\n\ndef fit(model, loader, optimizer):\n" + "".join(
        "    " + line + "\n" for line in FP32.format(imports="").splitlines()[4:]
    )
    (project / "lib.py").write_text(library)
    (project / "cpu.py").write_text(FP32.format(imports="").replace(".cuda()", ""))
    demo = "import torch\n\nif __name__ == '__main__':\n    print(torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()))\n"
    (project / "demo.py").write_text(demo)
    assert _found(project, "lib.py", "cpu.py", "demo.py") == []


@pytest.mark.parametrize(
    ("folder", "code"),
    [
        ("fp32-matmul-without-tf32", "TL112"),
        ("fp32-training-without-autocast", "TL113"),
        ("conv-net-without-channels-last", "TL114"),
    ],
)
def test_fixture_pair_shows_the_rule_before_and_not_after(folder, code):
    rules = ("--preview", "--select", code)
    before = _found(FIXTURES / folder, "before.py", rules=rules)
    after = _found(FIXTURES / folder, "after.py", rules=rules)
    assert before == [("before.py", code)]
    assert after == []
