"""The real code the fix sweep runs over: the installed torch package and pinned PyPI wheels.

Each tree is held in memory as its original bytes, so the sweep can write a scratch copy and
tell afterwards exactly which files a fix changed. Wheels come from the development set's
download cache (`tests/devset/fetch.py`): fetched once with `pip download --no-deps`, checked
against the pinned sha256, and read straight from the archive (every `.py` file, not only the
labeled ones). torch is found with `importlib.util.find_spec`, never imported.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from devset.fetch import cache_dir, download, verified_wheel

# Training code from PyPI, pinned like the development set's packages (and sharing its cache).
# Chosen for dense training loops whose fixes between them exercise every rule with a fix but
# the opt-in TL110 (d2l, deepod, torchensemble, yolov5), trainers and callbacks (ignite, fastai),
# training strategies and plugins (avalanche), fit loops of libraries (skorch, tabnet), and a size
# that keeps each to seconds next to torch's 2,300 files.
PACKAGES = [
    {
        "name": "d2l",
        "version": "1.0.3",
        "sha256": "c625a01e66eb5d793a7e0a6f8582b1e1e35dfad02b5e77f3d2ab299d07177ba6",
        "target_torch_version": "2.0",
    },
    {
        "name": "pytorch-ignite",
        "version": "0.5.5",
        "sha256": "9a397b0899968612efd00ac75bad64f20a9a91a8244f37bdcb8888af61455cf9",
        "target_torch_version": "2.2",
    },
    {
        "name": "fastai",
        "version": "2.8.12",
        "sha256": "50474575768679ba7352bebd0fdf8e7d2c4ddc10242455bec79a19c964f03fd0",
        "target_torch_version": "2.0",
    },
    {
        "name": "yolov5",
        "version": "7.0.14",
        "sha256": "67d0e3f7cb055cc7ff0c9d66fc993577f7394ca83a16ab097c0343ee4db3ca4b",
        "target_torch_version": "2.4",
    },
    {
        "name": "deepod",
        "version": "0.4.1",
        "sha256": "3783561cb0f584882058a2273679ac817cf1b949d74a1088a6c0ba3424465981",
        "target_torch_version": "1.10",
    },
    {
        "name": "torchensemble",
        "version": "0.2.0",
        "sha256": "8c191b6bdc9d8e2346f540951f52e7d638c3a05fcf2c5ffa5236bbe8c0d4c81d",
        "target_torch_version": "1.4",
    },
    {
        "name": "skorch",
        "version": "1.1.0",
        "sha256": "2a444993bc34d31f3582d6ba7198fcd0e7b8df27bd9d0b853c6da6b85ffd5f41",
        "target_torch_version": "2.0",  # declares no torch bound; its tests run on 2.x
    },
    {
        "name": "pytorch-tabnet",
        "version": "4.1.0",
        "sha256": "70e8c9803f68f7cb26930d4cdb88857d1d98c745e0daf99d0f870fc70698515f",
        "target_torch_version": "1.3",
    },
    {
        "name": "avalanche-lib",
        "version": "0.6.0",
        "sha256": "3ab3817d627363e045cdf0a9b9439901f96da7ac43be46471093842e6ec5e9d7",
        "target_torch_version": "2.0",  # declares no torch bound
    },
]


@dataclass(frozen=True)
class Tree:
    name: str  # what the summary calls it, e.g. "d2l==1.0.3"
    target: str  # --target-torch-version
    files: dict[str, bytes] = field(
        repr=False
    )  # path relative to the tree's root -> original bytes

    def write(self, root: Path) -> None:
        for relative, data in self.files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def torch_tree() -> Tree:
    """Every .py file of the installed torch, checked against the version torch reports."""
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations, "torch is not installed"
    package = Path(next(iter(spec.submodule_search_locations)))
    version = importlib.metadata.version("torch")
    files = {
        p.relative_to(package.parent).as_posix(): p.read_bytes()
        for p in sorted(package.rglob("*.py"))
    }
    return Tree(f"torch=={version}", ".".join(version.split(".")[:2]), files)


def wheel_trees() -> dict[str, Tree]:
    """Every pinned package, downloaded once (one pip call for all that are missing)."""
    wheels = cache_dir() / "wheels"
    download(PACKAGES, wheels)
    return {p["name"]: wheel_tree(p, verified_wheel(p, wheels)) for p in PACKAGES}


def wheel_tree(package: dict, wheel: Path) -> Tree:
    with zipfile.ZipFile(wheel) as archive:
        files = {n: archive.read(n) for n in sorted(archive.namelist()) if n.endswith(".py")}
    return Tree(f"{package['name']}=={package['version']}", package["target_torch_version"], files)
