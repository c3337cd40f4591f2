"""The torch target read from real declaration files, and every fix checked against the oldest
torch it claims to run on."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from torchlint.config import Settings, load_settings
from torchlint.engine.lint import lint_text
from torchlint.registry import all_rules, find_rule
from torchlint.rule import Invalid
from torchlint.torch_target import NEWEST_TORCH, declared_in, infer


def _version(folder: Path) -> tuple[int, int] | None:
    found = declared_in(folder)
    return found.version if found else None


# -- the sources ---------------------------------------------------------------------------


def test_pyproject_dependencies_and_optional_groups_give_the_lowest(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["numpy", "torch>=2.1"]\n'
        '[project.optional-dependencies]\nlegacy = ["torch>=1.12,<2"]\n'
    )
    assert _version(tmp_path) == (1, 12)


def test_environment_markers_that_do_not_hold_are_skipped(tmp_path):
    this = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "requirements.txt").write_text(
        f'torch>=1.4; python_version < "3"\ntorch>=2.2; python_version == "{this}"\ntorch>=1.5; sys_platform == "no-such-os"\n'
    )
    assert _version(tmp_path) == (2, 2)


def test_setup_cfg_install_requires_and_extras(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    numpy\n    torch>=1.13.1\n\n"
        "[options.extras_require]\ndev = pytest\n"
    )
    found = declared_in(tmp_path)
    assert (
        found is not None
        and found.version == (1, 13)
        and found.source == "setup.cfg: torch>=1.13.1"
    )


def test_setup_py_is_read_from_its_syntax_tree_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "setup.py").write_text(
        f"from setuptools import setup\nopen({str(marker)!r}, 'w').close()\n"
        "REQUIRED = ['numpy', 'torch>=1.13']\n"
        "setup(name='x', install_requires=REQUIRED, extras_require={'old': ['torch>=1.9']})\n"
    )
    assert _version(tmp_path) == (1, 9)
    assert not marker.exists()


def test_setup_py_with_computed_requirements_stays_unknown(tmp_path):
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=open('reqs').read().split())\n"
    )
    assert _version(tmp_path) is None


def test_requirements_follow_includes_once(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "requirements.txt").write_text("-r base/common.txt\nnumpy  # numbers\n")
    (tmp_path / "base" / "common.txt").write_text(
        "--requirement ../requirements.txt\ntorch==1.10.2  # pinned\n"
    )
    found = declared_in(tmp_path)
    assert found is not None and found.version == (1, 10)


def test_conda_environment_file(tmp_path):
    (tmp_path / "environment.yml").write_text(
        "name: train\nchannels:\n  - pytorch\ndependencies:\n  - python=3.10\n  - pytorch::pytorch=1.11  # cuda\n"
        "  - pip\n  - pip:\n    - torch>=2.0\nvariables:\n  torch: 'not a dependency'\n"
    )
    assert _version(tmp_path) == (1, 11)


def test_conda_pins_with_build_strings(tmp_path):
    """`conda env export` writes the build after the version; the pin is still 1.9."""
    for pin in ("pytorch=1.9.0=py3.7_cuda11.1_cudnn8.0.5_0", "pytorch 1.9.0 py3.7_cuda11.1_0"):
        (tmp_path / "environment.yml").write_text(f"name: t\ndependencies:\n  - {pin}\n")
        assert _version(tmp_path) == (1, 9), pin


def test_upper_bound_only_and_unversioned(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch<2.0\n")
    assert _version(tmp_path) == (1, 13)
    (tmp_path / "requirements.txt").write_text("torch\ntorchvision>=0.2\n")
    assert _version(tmp_path) == NEWEST_TORCH


def test_monorepo_files_get_the_nearest_declaration(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("torch>=2.4\n")
    old = tmp_path / "packages" / "old"
    (old / "src" / "old").mkdir(parents=True)
    (old / "pyproject.toml").write_text('[project]\nname = "old"\ndependencies = ["torch>=1.6"]\n')
    plain = tmp_path / "packages" / "plain"
    plain.mkdir()
    (plain / "setup.cfg").write_text(
        "[metadata]\nname = plain\n"
    )  # declares no torch: the root's applies
    assert infer(old / "src" / "old").version == (1, 6)
    assert infer(plain).version == (2, 4)
    assert load_settings(start=old / "src" / "old").torch_version == (1, 6)
    assert load_settings(start=plain).root == plain


# -- every fix against the oldest torch it claims ----------------------------------------------

# When the torch API a fix may write first appeared (from the PyTorch release notes).
API_SINCE = {
    r"\.amp\.GradScaler\(": (2, 3),
    r"\.amp\.autocast\(": (1, 10),
    r"\.amp\.custom_(fwd|bwd)": (2, 4),
    r"set_to_none\s*=": (1, 7),
    r"fused\s*=": (2, 0),
    r"optim\.AdamW\b|\bAdamW\(": (1, 2),
    r"persistent_workers\s*=": (1, 7),
    r"\binference_mode\b": (1, 9),
    r"non_blocking\s*=": (0, 4),
    r"\bas_tensor\(": (0, 4),
}


def _fixes(rule, code: str, version: tuple[int, int] | None):
    settings = Settings(target_torch_version=version)
    return [d for d in lint_text("example.py", code, [rule], settings) if d.code == rule.code]


def _invalid_cases():
    for rule in all_rules():
        for i, example in enumerate(rule.invalid):
            example = example if isinstance(example, Invalid) else Invalid(example)
            yield pytest.param(rule, example, id=f"{rule.code}-{i}")


@pytest.mark.parametrize(("rule", "example"), list(_invalid_cases()))
def test_each_fix_declares_a_version_that_has_the_api_it_writes(rule, example):
    target = (
        tuple(int(p) for p in example.target_torch_version.split("."))
        if example.target_torch_version
        else None
    )
    for found in _fixes(rule, example.code, target):
        fix = found.fix
        if fix is None or not fix.edits:
            continue
        assert fix.min_torch is not None, (
            f"{rule.code}: fix {fix.message!r} declares no lowest torch"
        )
        assert fix.min_torch in {
            tuple(int(p) for p in v.split(".")) for v in rule.fix_versions.values()
        }
        written = "".join(edit.content for edit in fix.edits)
        for pattern, since in API_SINCE.items():
            if re.search(pattern, written):
                assert since <= fix.min_torch, (
                    f"{rule.code} writes {pattern} (torch {since}) but claims {fix.min_torch}"
                )
        if fix.min_torch <= (1, 0):
            continue  # "any torch": nothing older is a target
        # One minor release below what it claims, the same finding comes without the fix, saying why.
        below = (
            (fix.min_torch[0], fix.min_torch[1] - 1)
            if fix.min_torch[1]
            else (fix.min_torch[0] - 1, 13)
        )
        older = [d for d in _fixes(rule, example.code, below) if d.start == found.start]
        if older:  # some rules do not fire at all on older torch (the pattern was right there)
            assert older[0].fix is None or older[0].fix.message != fix.message
            if older[0].fix is None:
                assert f"needs torch {fix.min_torch[0]}.{fix.min_torch[1]}" in older[0].message


def test_every_rule_with_edit_fixes_lists_their_versions():
    for rule in all_rules():
        if rule.fix_availability in ("safe", "unsafe"):
            assert rule.fix_versions, rule.code


FUSED = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
{before}optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
{after}for x, y in loader:
    x, y = x.cuda(), y.cuda()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
"""


@pytest.mark.parametrize(
    ("before", "after", "target", "fixed"),
    [
        ("model = model.cuda()\n", "", (2, 2), True),  # on the GPU when the optimizer is built
        ("", "model.cuda()\n", (2, 2), False),  # still on the CPU: fused=True raises before 2.4
        ("", "model.cuda()\n", (2, 4), True),
    ],
)
def test_fused_fix_needs_2_4_while_parameters_may_be_on_the_cpu(before, after, target, fixed):
    found = _fixes(find_rule("TL109"), FUSED.format(before=before, after=after), target)
    assert len(found) == 1
    assert (found[0].fix is not None) is fixed
    if not fixed:
        assert "needs torch 2.4, the project targets 2.2" in found[0].message


def test_set_to_none_is_not_advised_below_1_7():
    code = "import torch\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n"
    rule = find_rule("TL006")
    at_17 = _fixes(rule, code, (1, 7))
    at_15 = _fixes(rule, code, (1, 5))
    assert (
        at_17 and at_17[0].fix is not None and "set_to_none=True" in at_17[0].fix.edits[0].content
    )
    assert (
        at_15 == []
    )  # no set_to_none to advise on that torch: the finding would not be actionable
