"""Fetches the pinned PyPI wheels the development set labels, and unpacks the labeled files.

Only labels live in the repository; the third-party code is downloaded by the ordinary client
(`pip download --no-deps`, never installed, so none of its dependencies is needed) into a cache
that survives between runs, checked against the pinned sha256, and only the labeled files are
extracted from the wheel.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "TORCHLINT_DEVSET_CACHE"


class FetchError(Exception):
    """A pinned wheel could not be downloaded, or is not the one that was labeled."""


def cache_dir() -> Path:
    """Where wheels and unpacked files are kept between runs (under the ignored .pytest_cache)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else ROOT / ".pytest_cache" / "torchlint-devset"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wheel_prefix(name: str, version: str) -> str:
    """The file-name prefix of a wheel: the project name normalised as wheels spell it."""
    return f"{name.replace('-', '_').replace('.', '_')}-{version}-"


def _find_wheel(directory: Path, name: str, version: str) -> Path | None:
    prefix = _wheel_prefix(name, version).lower()
    for path in sorted(directory.glob("*.whl")):
        if path.name.lower().startswith(prefix):
            return path
    return None


def download(packages: list[dict], wheels: Path) -> None:
    """One `pip download` for every wheel not yet in the cache."""
    wheels.mkdir(parents=True, exist_ok=True)
    missing = [p for p in packages if _find_wheel(wheels, p["name"], p["version"]) is None]
    if not missing:
        return
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(wheels),
        *(f"{p['name']}=={p['version']}" for p in missing),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise FetchError(f"pip download failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def verified_wheel(package: dict, wheels: Path) -> Path:
    """The downloaded wheel of `package`, checked against its pinned sha256."""
    name, version = package["name"], package["version"]
    wheel = _find_wheel(wheels, name, version)
    if wheel is None:
        raise FetchError(f"{name}=={version}: no wheel was downloaded")
    digest = _sha256(wheel)
    if digest != package["sha256"]:
        raise FetchError(f"{wheel.name}: sha256 {digest} is not the labeled {package['sha256']}")
    return wheel


def unpack(package: dict, wheels: Path, into: Path) -> Path:
    """Extract the package's labeled files; returns the directory they lie under."""
    name, version = package["name"], package["version"]
    target = into / f"{name}-{version}"
    paths = [f["path"] for f in package["file"]]
    if all((target / p).is_file() for p in paths):
        return target
    wheel = verified_wheel(package, wheels)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for path in paths:
            if path not in names:
                raise FetchError(f"{wheel.name} has no file {path}")
            archive.extract(path, target)
    return target


def fetch_all(packages: list[dict]) -> dict[str, Path]:
    """Download (once) and unpack every package; maps "name==version" to its unpacked root."""
    base = cache_dir()
    download(packages, base / "wheels")
    return {
        f"{p['name']}=={p['version']}": unpack(p, base / "wheels", base / "unpacked")
        for p in packages
    }
