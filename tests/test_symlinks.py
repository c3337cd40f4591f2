"""Symlinks that lead out of the project: nothing outside it is written or created through them.

A project with planted folder symlinks (relative, absolute, nested, chained through an inside
folder, onto another project, loops) beside an `outside/` tree. Every writing path of the
installed command is run on every link, and the whole outside tree is hashed before and after
each command: not one byte may change and not one file may appear.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_torchlint

FIXABLE = "import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n"  # TL106, a safe fix

# Each link as the user names it, and a file reached through it.
LINKS = {
    "rel": "rel/victim.py",  # ../outside, relative
    "abs": "abs/victim.py",  # /…/outside, absolute
    "sub/inner": "sub/inner/deep/victim.py",  # a link one folder down, to outside/nested
    "chain/out": "chain/out/victim.py",  # chain -> inside/, whose out -> ../../outside
    "other": "other/victim.py",  # a folder that is a project of its own
}
LOOPS = ("loop/victim.py", "loop_a/victim.py")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """`proj/` (a git project targeting torch 2.4) beside `outside/` and `other_project/`."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n[tool.torchlint]\n'
    )
    (proj / "own.py").write_text(FIXABLE)
    outside = tmp_path / "outside"
    (outside / "nested" / "deep").mkdir(parents=True)
    (outside / "victim.py").write_text(FIXABLE)
    (outside / "nested" / "deep" / "victim.py").write_text(FIXABLE)
    other = tmp_path / "other_project"
    other.mkdir()
    (other / "pyproject.toml").write_text(
        '[project]\nname = "o"\ndependencies = ["torch>=2.3"]\n[tool.torchlint]\n'
    )
    (other / "victim.py").write_text(FIXABLE)
    os.symlink("../outside", proj / "rel")
    os.symlink(outside, proj / "abs")
    (proj / "sub").mkdir()
    os.symlink("../../outside/nested", proj / "sub" / "inner")
    (proj / "inside").mkdir()
    os.symlink("../../outside", proj / "inside" / "out")
    os.symlink("inside", proj / "chain")
    os.symlink("../other_project", proj / "other")
    os.symlink("loop", proj / "loop")
    os.symlink("loop_b", proj / "loop_a")
    os.symlink("loop_a", proj / "loop_b")
    return proj


def tree_digest(*tops: Path) -> dict[str, str]:
    """Every name under `tops` (links not followed) with a hash of its content or link target."""
    found: dict[str, str] = {}
    for top in tops:
        for directory, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                path = Path(directory) / name
                if path.is_symlink():
                    found[str(path)] = "link:" + os.readlink(path)
                elif path.is_file():
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    found[str(path)] = "folder"
    return found


def _writing_commands(target: str) -> list[tuple[str, ...]]:
    """Each way torchlint writes a file or creates one, aimed at `target`."""
    folder = target.rsplit("/", 1)[0]
    return [
        ("check", target, "--fix", "--unsafe-fixes"),
        ("check", folder, "--fix", "--unsafe-fixes"),
        ("fix", target, "--apply", "--unsafe-fixes"),
        ("fix", folder, "--apply"),
        ("check", target, "--add-noqa"),
        ("check", folder, "--add-noqa"),
        ("check", folder),  # the cache
        ("check", target, "--fix", "--cache-dir", f"{folder}/cache"),
        ("check", target, "-o", f"{folder}/report.txt"),
        ("clean", folder),
    ]


def _outside(world: Path) -> tuple[Path, Path]:
    return world.parent / "outside", world.parent / "other_project"


def _no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr


@pytest.mark.parametrize("link", sorted(LINKS))
def test_no_writing_command_changes_anything_outside_through_a_folder_symlink(world, link):
    before = tree_digest(*_outside(world))
    for args in _writing_commands(LINKS[link]):
        result = run_torchlint(*args, cwd=world)
        _no_traceback(result)
        assert tree_digest(*_outside(world)) == before, args
        if args[0] != "clean":
            assert result.returncode in (1, 2), (args, result.stdout, result.stderr)
    assert (world / "own.py").read_text() == FIXABLE  # nothing of the project was named


@pytest.mark.parametrize("target", LOOPS)
def test_a_symlink_loop_is_refused_in_one_line(world, target):
    before = tree_digest(*_outside(world))
    for args in _writing_commands(target):
        result = run_torchlint(*args, cwd=world, timeout=60)
        _no_traceback(result)
        assert tree_digest(*_outside(world)) == before, args


def test_a_named_path_through_a_leaving_link_gets_one_line_naming_the_link(world):
    result = run_torchlint("check", "sub/inner/deep/victim.py", "--fix", cwd=world)
    lines = [line for line in result.stdout.splitlines() if "TL998" in line]
    assert lines == [
        "sub/inner/deep/victim.py:1:1: TL998 [io-error] reached through 'sub/inner', "
        "a symlink to a folder outside the project; not followed"
    ], result.stdout
    assert result.returncode == 1


def test_a_named_folder_through_a_leaving_link_is_one_line_and_is_not_walked(world):
    for args in (("check", "rel"), ("fix", "rel", "--apply"), ("check", "rel", "--add-noqa")):
        result = run_torchlint(*args, cwd=world)
        lines = [line for line in (result.stdout + result.stderr).splitlines() if "rel" in line]
        assert len(lines) == 1, (args, result.stdout, result.stderr)  # outside holds two files
        assert "reached through 'rel', a symlink to a folder outside the project" in lines[0]
        assert result.returncode in (1, 2)


def test_the_whole_project_is_fixed_and_nothing_outside_it(world):
    """The walk never enters a folder link; the project's own file is fixed as before."""
    before = tree_digest(*_outside(world))
    for args in (("check", ".", "--fix"), ("check", ".", "--add-noqa"), ("fix", ".", "--apply")):
        result = run_torchlint(*args, cwd=world)
        _no_traceback(result)
        assert tree_digest(*_outside(world)) == before, args
    assert "torch.amp.autocast" in (world / "own.py").read_text()


def test_show_settings_and_the_torch_target_agree_on_the_root(world):
    for target in ("rel/victim.py", "other/victim.py"):
        result = run_torchlint("check", "--show-settings", target, cwd=world)
        assert result.returncode == 0, result.stderr
        report = dict(line.split(": ", 1) for line in result.stdout.splitlines())
        root = Path(report["project root"])
        if target.startswith("rel/"):
            assert root == world
            assert report["torch target"].startswith("2.4 ")
        else:  # a folder that declares a project: its own settings, named where it is linked
            assert root == world / "other"
            assert report["torch target"].startswith("2.3 ")


def test_a_project_reached_through_a_link_from_no_project_is_still_fixed(world, tmp_path):
    """A linked checkout (a home folder pointing at a data disk) is no escape: nothing is left."""
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(world, home / "work")
    result = run_torchlint("check", str(home / "work" / "own.py"), "--fix", cwd=home)
    _no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "torch.amp.autocast" in (world / "own.py").read_text()
