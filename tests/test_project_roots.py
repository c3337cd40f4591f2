"""Which folder is a project's root: a `setup.py` declares a project only when it calls `setup()`.

A module named setup.py that is a helper (a script's `setup(args)` function, a Sphinx hook) is
no declaration: the enclosing project's root, its settings and its requirements still apply.
Checked through the installed `torchlint`'s `--show-settings`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_torchlint

HELPERS = {
    "defines-setup": "def setup(app):\n    app.add_css_file('x.css')\n",
    "configures-logging": "import logging\n\n\ndef configure():\n    logging.basicConfig()\n",
    "empty": "",
}
DECLARATIONS = {
    "setuptools": "from setuptools import setup\n\nsetup(name='pkg')\n",
    "qualified": "import setuptools\n\nsetuptools.setup(name='pkg')\n",
    "under-main": (
        "from setuptools import setup\n\nif __name__ == '__main__':\n    setup(name='pkg')\n"
    ),
}


def _root_of(repo: Path, file: str) -> str:
    result = run_torchlint("check", "--show-settings", file, cwd=repo)
    assert result.returncode == 0, result.stderr
    shown = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    return shown["project root"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "requirements.txt").write_text("torch>=1.8\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("import torch\n")
    return tmp_path


@pytest.mark.parametrize("text", list(HELPERS.values()), ids=list(HELPERS))
def test_a_helper_named_setup_is_not_a_project_root(repo: Path, text: str) -> None:
    (repo / "tools" / "setup.py").write_text(text)
    assert _root_of(repo, "tools/run.py") == str(repo.resolve())


@pytest.mark.parametrize("text", list(DECLARATIONS.values()), ids=list(DECLARATIONS))
def test_a_setup_py_that_calls_setup_is_a_project_root(repo: Path, text: str) -> None:
    (repo / "tools" / "setup.py").write_text(text)
    assert _root_of(repo, "tools/run.py") == str((repo / "tools").resolve())
