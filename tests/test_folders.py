"""Folder listings kept for the project-root and torch-target walks must never go stale: a
declaration file created, removed or renamed later is seen by the next lookup, also when the
change lands within the same tick of the file system's clock as the listing."""

from __future__ import annotations

import os
import time
from pathlib import Path

from torchlint.folders import holds_file, matching
from torchlint.torch_target import infer


def _age(folder: Path, seconds: float) -> None:
    """Set the folder's modification time `seconds` into the past: a settled folder."""
    stamp = time.time_ns() - int(seconds * 1e9)
    os.utime(folder, ns=(stamp, stamp))


def test_a_file_created_after_a_lookup_is_seen(tmp_path: Path) -> None:
    _age(tmp_path, 10)
    assert matching(tmp_path, "requirements*.txt") == []
    assert infer(tmp_path, stop=tmp_path) is None
    (tmp_path / "requirements-train.txt").write_text("torch>=1.10\n")
    assert matching(tmp_path, "requirements*.txt") == [tmp_path / "requirements-train.txt"]
    found = infer(tmp_path, stop=tmp_path)
    assert found is not None and found.version == (1, 10)


def test_a_removed_file_is_gone(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    _age(tmp_path, 10)
    assert holds_file(tmp_path, "pyproject.toml")
    (tmp_path / "pyproject.toml").unlink()
    assert not holds_file(tmp_path, "pyproject.toml")


def test_a_change_stamped_with_the_listing_time_is_seen(tmp_path: Path) -> None:
    """A folder changed just now is listed again on every lookup: a second change within the
    clock's tick may carry the very same modification time."""
    stamp = time.time_ns()
    os.utime(tmp_path, ns=(stamp, stamp))
    assert matching(tmp_path, "requirements*.txt") == []
    (tmp_path / "requirements.txt").write_text("torch==2.1\n")
    os.utime(tmp_path, ns=(stamp, stamp))  # the same stamp as before the file existed
    assert matching(tmp_path, "requirements*.txt") == [tmp_path / "requirements.txt"]


def test_glob_order_and_case(tmp_path: Path) -> None:
    for name in ("requirements-b.txt", "requirements-a.txt", "Requirements.txt", "requirements.in"):
        (tmp_path / name).write_text("")
    _age(tmp_path, 10)
    assert matching(tmp_path, "requirements*.txt") == sorted(tmp_path.glob("requirements*.txt"))
