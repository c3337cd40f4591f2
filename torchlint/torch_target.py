"""The torch version a project must run on, read from what it declares, never by running its code.

Sources, per directory: `[project]` dependencies and optional dependencies in pyproject.toml,
setup.cfg `install_requires`/`extras_require`, setup.py's `setup(...)` keywords read from its
syntax tree, requirements*.txt and the `.txt` files of a `requirements/` folder (following `-r`
and `-c`), pip constraints files (constraints*.txt: `pip install -r requirements.txt -c
constraints.txt` installs the torch they pin for a bare `torch` requirement), conda's environment.yml, and the exact pins (`torch==1.6.0+cu101`) of the `pip install` commands
in the Dockerfiles there or in its `docker/` folder: the environment a research codebase ships
and runs in (a Dockerfile's `torch>=1.6` or bare `torch` installs the newest, so only `==` counts).
Requirements whose environment marker is false here are skipped. The target is the lowest version any of them
allows, because the code must run there; a file gets the nearest directory that declares torch,
up to the repository's root (a folder whose declarations name no torch does not reset it).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint.folders import holds, holds_file, matching

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.requirements import Requirement


if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NEWEST_TORCH = (2, 13)
LAST_1X = (1, 13)
_TORCH_NAMES = ("torch", "pytorch")  # pytorch: conda's name for it
_CONDA_SPEC = re.compile(r"^\s*(?P<name>[A-Za-z0-9_.\-]+)\s*(?P<spec>[^#]*)")
_RELEASE = re.compile(r"(\d+)(?:\.(\d+))?")
_DOCKERFILES = ("Dockerfile", "Dockerfile.*", "Dockerfile-*", "*.Dockerfile", "*.dockerfile")
_PIP = re.compile(r"(?:^|/)pip(?:\d+(?:\.\d+)*)?$")  # pip, pip3, pip3.10, /opt/conda/bin/pip
_SHELL_OPERATORS = frozenset("();<>|&")


class DeclarationError(Exception):
    """A declaration pip itself would refuse (settings report it as a config error)."""


@dataclass(frozen=True)
class TorchTarget:
    version: tuple[int, int]
    source: str  # where it came from, shown by --show-settings

    def describe(self) -> str:
        return f"{self.version[0]}.{self.version[1]} ({self.source})"


def infer(directory: Path, stop: Path | None = None) -> TorchTarget | None:
    """The nearest declaration of torch at or above `directory`, up to `stop` (inclusive; None:
    the filesystem's root). A declaration file that names no torch is passed over."""
    for folder in [directory, *directory.parents]:
        found = declared_in(folder)
        if found is not None:
            return found
        if folder == stop:
            return None
    return None


def declared_in(folder: Path) -> TorchTarget | None:
    """The lowest torch version the declarations in `folder` allow, or None if none names torch."""
    found: list[TorchTarget] = []
    for path, requirements in _declarations(folder):
        for line in requirements:
            version = _lowest_torch(line)
            if version is not None:
                where = path.relative_to(folder).as_posix()
                found.append(TorchTarget(version, f"{where}: {line.strip()}"))
    return min(found, key=lambda t: t.version) if found else None


def _declarations(folder: Path) -> list[tuple[Path, list[str]]]:
    readers = (
        ("pyproject.toml", _pyproject),
        ("setup.cfg", _setup_cfg),
        ("setup.py", _setup_py),
        ("environment.yml", _conda),
        ("environment.yaml", _conda),
    )
    found = [
        (folder / name, read(folder / name)) for name, read in readers if holds_file(folder, name)
    ]
    requirements = matching(folder, "requirements*.txt") + matching(folder, "constraints*.txt")
    if holds(folder, "requirements"):
        requirements += matching(folder / "requirements", "*.txt")
    for path in requirements:
        found.append((path, _requirements(path, set())))
    for path in _dockerfiles(folder):
        found.append((path, _docker_pins(path)))
    return found


def _dockerfiles(folder: Path) -> list[Path]:
    """The folder's own Dockerfiles and those of its `docker/` folder; deeper ones build a
    subproject's image (a TensorRT export, a demo server), not this folder's environment."""
    places = [folder, folder / "docker"] if holds(folder, "docker") else [folder]
    found = [
        path for place in places for pattern in _DOCKERFILES for path in matching(place, pattern)
    ]
    return [path for path in dict.fromkeys(found) if path.is_file()]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _pyproject(path: Path) -> list[str]:
    """The declared requirements; a [project] table pip itself would refuse is a config error."""
    try:
        project = tomllib.loads(_text(path)).get("project", {})
    except tomllib.TOMLDecodeError:
        return []
    except RecursionError:
        raise DeclarationError(f"{path}: invalid TOML: nested too deeply") from None
    if not isinstance(project, dict):
        raise DeclarationError(f"{path}: [project] must be a table")
    if not isinstance(project.get("dependencies", []), list):
        raise DeclarationError(f"{path}: [project] dependencies must be a list of strings")
    found = _strings(project.get("dependencies"))
    optional = project.get("optional-dependencies")
    for group in optional.values() if isinstance(optional, dict) else ():
        found += _strings(group)
    return found


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _setup_cfg(path: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_text(path))
    except configparser.Error:
        return []
    found = parser.get("options", "install_requires", fallback="").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            found += value.splitlines()
    return found


def _setup_py(path: Path) -> list[str]:
    """`install_requires` and `extras_require` of the `setup(...)` call, as literals or names bound
    to literals at module level; anything computed stays unknown."""
    try:
        tree = ast.parse(_text(path))
    except (SyntaxError, ValueError, RecursionError):
        return []
    names = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == "setup":
            for keyword in node.keywords:
                if keyword.arg in ("install_requires", "extras_require"):
                    found += _literal_strings(keyword.value, names)
    return found


def _called(func: ast.expr) -> str | None:
    return (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else None
    )


def _literal_strings(node: ast.expr, names: dict[str, ast.expr]) -> list[str]:
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, ast.Dict):
        return [s for value in node.values for s in _literal_strings(value, names)]
    if isinstance(node, ast.List | ast.Tuple):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _requirements(path: Path, seen: set[Path]) -> list[str]:
    """Requirement lines, with `-r other.txt` includes and `-c pins.txt` constraints read in place
    (each file once)."""
    resolved = path.resolve()
    if resolved in seen or not path.is_file():
        return []
    seen.add(resolved)
    found: list[str] = []
    for raw in _text(path).splitlines():
        line = raw.split(" #", 1)[0].strip()
        include = re.match(r"^(?:-r|--requirement|-c|--constraint)[\s=]\s*(\S+)", line)
        if include:
            found += _requirements(path.parent / include.group(1), seen)
        elif line and not line.startswith(("#", "-")):
            found.append(line)
    return found


def _docker_pins(path: Path) -> list[str]:
    """The exact torch pins its `RUN` instructions hand to `pip install`."""
    return [pin for line in _instructions(_text(path)) for pin in _pip_pins(line)]


def _instructions(text: str) -> list[str]:
    """The Dockerfile's instructions, continued lines joined; comment lines are dropped, also
    inside a continued instruction, as Docker drops them."""
    found: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        found.append(current + line)
        current = ""
    return [*found, current] if current else found


def _pip_pins(instruction: str) -> list[str]:
    """`torch==X` arguments of the `pip install` commands of a `RUN` instruction (shell form);
    an instruction the shell lexer cannot read (an open quote) pins nothing."""
    keyword, _, command = instruction.partition(" ")
    if keyword.upper() != "RUN":
        return []
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    found: list[str] = []
    start = 0
    for end in [*(i for i, t in enumerate(tokens) if set(t) <= _SHELL_OPERATORS), len(tokens)]:
        found += _installed_pins(tokens[start:end])
        start = end + 1
    return found


def _installed_pins(words: list[str]) -> list[str]:
    """The exact torch pins of one simple command, when it is `pip install` (also `python -m
    pip`, `uv pip`, with pip's own options before `install`)."""
    pip = next((i for i, word in enumerate(words) if _PIP.search(word)), None)
    if pip is None:
        return []
    rest = words[pip + 1 :]
    verb = next((i for i, word in enumerate(rest) if not word.startswith("-")), None)
    if verb is None or rest[verb] != "install":
        return []
    return [word for word in rest[verb + 1 :] if _exact_torch_pin(word)]


def _exact_torch_pin(word: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement

    if word.startswith("-"):
        return False
    try:
        requirement = Requirement(word)
    except InvalidRequirement:
        return False
    specifiers = list(requirement.specifier)
    return (
        requirement.name.lower() in _TORCH_NAMES
        and bool(specifiers)
        and all(spec.operator in ("==", "===") for spec in specifiers)
    )


def _conda(path: Path) -> list[str]:
    """Items of the `dependencies:` list and of its `pip:` sub-list; a line reader is enough for
    the shape conda documents, and spares the lint path a YAML parser."""
    found: list[str] = []
    inside = False
    for raw in _text(path).splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "-", "\t")):
            inside = line.strip() == "dependencies:"
            continue
        item = line.strip()
        if inside and item.startswith("- ") and not item.endswith(":"):
            found.append(_from_conda(item[2:].strip().strip("'\"")))
    return found


def _from_conda(item: str) -> str:
    """`pytorch=1.8` (conda's "1.8.*") and `pytorch 1.8.*` as pip would write them; a build
    string after the version (`pytorch=1.9.0=py3.7_cuda11.1_0`, as `conda env export` writes
    every pin) is left out, or the whole pin would not parse and the newest torch be assumed."""
    item = item.split("::", 1)[-1]
    match = _CONDA_SPEC.match(item)
    if match is None:
        return item
    name, spec = match.group("name"), match.group("spec").strip()
    if re.match(r"^=?\d", spec) or re.match(r"^=[^=]", spec):
        spec = "==" + re.split(r"[=\s]", spec.lstrip("="), maxsplit=1)[0]
        spec = spec if "*" in spec or spec.count(".") > 1 else spec + ".*"
    return f"{name}{spec.replace(' ', '')}"


def _lowest_torch(line: str) -> tuple[int, int] | None:
    """The lowest major.minor `line` allows when it requires torch under this environment."""
    # Imported here: most runs find no requirement to read, and packaging costs 20 ms of start-up.
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(line.strip())
    except InvalidRequirement:
        return None
    if requirement.name.lower() not in _TORCH_NAMES or not _applies(requirement.marker):
        return None
    return _lowest(requirement)


def _applies(marker: Marker | None) -> bool:
    from packaging.markers import (
        InvalidMarker,
        UndefinedComparison,
        UndefinedEnvironmentName,
    )

    if marker is None:
        return True
    try:
        # Optional groups count: a project's extras must run on its target as well.
        return marker.evaluate({"extra": ""}) or "extra" in str(marker)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def _lowest(requirement: Requirement) -> tuple[int, int]:
    lower: tuple[int, int] | None = None
    upper: tuple[int, int] | None = None
    for spec in requirement.specifier:
        match = _RELEASE.match(spec.version)
        if match is None:
            continue
        version = (int(match.group(1)), int(match.group(2) or 0))
        if spec.operator in ("==", "~=", ">=", ">", "==="):
            lower = max(lower, version) if lower else version
        elif spec.operator == "<=":
            upper = min(upper, version) if upper else version
        elif spec.operator == "<":
            below = (
                (version[0], version[1] - 1)
                if version[1] > 0
                else (LAST_1X if version[0] == 2 else NEWEST_TORCH)
            )
            upper = min(upper, below) if upper else below
    # Only an upper bound: the newest release it allows is the one a fresh install gets.
    return lower or upper or NEWEST_TORCH
