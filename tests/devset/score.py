"""Scores the rules against the labeled development set (labels.toml; format in README.md).

A finding matches a label of its rule and file when its start row lies in the label's line range
(the narrowest range wins). Per rule and split:
- TP: a `finding` label matched by at least one finding (several findings on one label count once);
- FN: a `finding` label that no finding matched;
- FP: a finding on a `clean` label, or on no label at all in a file labeled completely for the rule;
- findings on `either` labels, and unlabeled findings in files not complete for the rule, are not counted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

LABELS = Path(__file__).resolve().parent / "labels.toml"
RULES = tuple(f"TL00{i}" for i in range(1, 7)) + tuple(f"TL1{i:02d}" for i in range(1, 12))
CORE = RULES[:6]
EXPECTS = ("finding", "clean", "either")
SPLITS = ("dev", "heldout")
INTERNAL_ERROR = "TL999"
PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.8


@dataclass(frozen=True)
class Label:
    package: str
    split: str
    path: str
    rule: str
    line: int
    end: int
    expect: str
    why: str

    def where(self) -> str:
        lines = f"{self.line}" if self.end == self.line else f"{self.line}-{self.end}"
        return f"{self.package} {self.path}:{lines}"


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)
    on_either: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def load_labels(path: Path = LABELS) -> dict:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def labels_of(data: dict) -> list[Label]:
    found = []
    for package in data["package"]:
        key = f"{package['name']}=={package['version']}"
        for entry in package["file"]:
            for raw in entry.get("labels", []):
                line = raw["line"]
                found.append(
                    Label(
                        key,
                        package["split"],
                        entry["path"],
                        raw["rule"],
                        line,
                        raw.get("end", line),
                        raw["expect"],
                        raw["why"],
                    )
                )
    return found


def problems(data: dict) -> list[str]:
    """What is malformed in the labels file (empty when it is sound)."""
    found = []
    for package in data["package"]:
        key = f"{package.get('name')}=={package.get('version')}"
        missing = {"name", "version", "sha256", "split", "target_torch_version", "file"} - set(
            package
        )
        if missing:
            found.append(f"{key}: missing {sorted(missing)}")
            continue
        if package["split"] not in SPLITS:
            found.append(f"{key}: split must be one of {SPLITS}")
        paths = [f["path"] for f in package["file"]]
        if len(paths) != len(set(paths)):
            found.append(f"{key}: a file is listed twice")
        for entry in package["file"]:
            unknown = set(entry.get("complete", [])) - set(RULES)
            if unknown:
                found.append(f"{key} {entry['path']}: unknown rules in complete: {sorted(unknown)}")
    for label in labels_of(data):
        if label.rule not in RULES:
            found.append(f"{label.where()}: unknown rule {label.rule}")
        if label.expect not in EXPECTS:
            found.append(f"{label.where()}: expect must be one of {EXPECTS}")
        if label.end < label.line:
            found.append(f"{label.where()}: end before line")
        if not label.why.strip():
            found.append(f"{label.where()}: no reason given")
    return found


def torchlint_executable() -> str:
    candidate = Path(sys.executable).parent / "torchlint"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("torchlint")
    if found is None:
        raise RuntimeError("the torchlint command is not installed")
    return found


def existing_rules() -> set[str]:
    """The codes the installed torchlint knows."""
    done = subprocess.run(
        [torchlint_executable(), "rules", "--output-format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"torchlint rules failed: {done.stderr.strip()}")
    return {row["code"] for row in json.loads(done.stdout)}


def run_torchlint(root: Path, paths: list[str], target: str) -> list[dict]:
    """Every rule, opt-in ones included, over the files (relative to root) of one package."""
    command = [
        torchlint_executable(),
        "check",
        "--isolated",
        "--select",
        "ALL",
        "--exit-zero",
        "--quiet",
        "--target-torch-version",
        target,
        "--output-format",
        "json",
        *paths,
    ]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)
    try:
        diagnostics = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise RuntimeError(
            f"torchlint check in {root} printed no JSON (exit {done.returncode}): {done.stderr.strip()}"
        ) from error
    for d in diagnostics:
        name = Path(d["filename"])
        d["filename"] = name.relative_to(root).as_posix() if name.is_absolute() else name.as_posix()
    return diagnostics


def _narrowest(candidates: list[Label]) -> Label | None:
    return min(candidates, key=lambda label: label.end - label.line, default=None)


@dataclass
class Result:
    tallies: dict[tuple[str, str], Tally]
    internal_errors: list[str]


def score(data: dict, roots: dict[str, Path], rules: set[str]) -> Result:
    """Runs torchlint on each package's labeled files and tallies the rules in `rules`."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    internal_errors: list[str] = []
    labels = labels_of(data)
    for package in data["package"]:
        key = f"{package['name']}=={package['version']}"
        files = {entry["path"]: set(entry.get("complete", [])) for entry in package["file"]}
        diagnostics = run_torchlint(roots[key], list(files), package["target_torch_version"])
        internal_errors += [
            f"{key} {d['filename']}: {d['message']}"
            for d in diagnostics
            if d["code"] == INTERNAL_ERROR
        ]
        mine = [label for label in labels if label.package == key and label.rule in rules]
        hit: set[Label] = set()
        for d in diagnostics:
            if d["code"] not in rules or d["filename"] not in files:
                continue
            row = d["location"]["row"]
            label = _narrowest(
                [
                    label
                    for label in mine
                    if label.path == d["filename"]
                    and label.rule == d["code"]
                    and label.line <= row <= label.end
                ]
            )
            tally = tallies[(package["split"], d["code"])]
            where = f"{key} {d['filename']}:{row}"
            if label is None:
                if d["code"] in files[d["filename"]]:
                    tally.fp += 1
                    tally.false_positives.append(f"{where} unlabeled: {d['message']}")
            elif label.expect == "finding":
                hit.add(label)
            elif label.expect == "clean":
                tally.fp += 1
                tally.false_positives.append(f"{where} labeled clean ({label.why}): {d['message']}")
            else:
                tally.on_either.append(f"{where} ({label.why}): {d['message']}")
        for label in mine:
            if label.expect != "finding":
                continue
            tally = tallies[(label.split, label.rule)]
            if label in hit:
                tally.tp += 1
            else:
                tally.fn += 1
                tally.false_negatives.append(f"{label.where()} missed: {label.why}")
    return Result(dict(tallies), internal_errors)


def _ratio(value: float | None) -> str:
    return "   -" if value is None else f"{value:.2f}"


def table(result: Result, rules: list[str]) -> str:
    """One row per rule: TP/FP/FN/precision/recall for the dev split, then the held-out split."""
    header = f"{'rule':<6} | {'dev: TP':>7} {'FP':>3} {'FN':>3} {'prec':>5} {'rec':>5} | {'held-out: TP':>12} {'FP':>3} {'FN':>3} {'prec':>5} {'rec':>5}"
    lines = [header, "-" * len(header)]
    for rule in rules:
        cells = []
        for split, width in (("dev", 7), ("heldout", 12)):
            t = result.tallies.get((split, rule), Tally())
            cells.append(
                f"{t.tp:>{width}} {t.fp:>3} {t.fn:>3} {_ratio(t.precision):>5} {_ratio(t.recall):>5}"
            )
        lines.append(f"{rule:<6} | {cells[0]} | {cells[1]}")
    return "\n".join(lines) + "\n"


def details(result: Result, rules: list[str]) -> str:
    """Every false positive and false negative (and the uncounted findings on `either` labels)."""
    out = []
    for rule in rules:
        for split in SPLITS:
            t = result.tallies.get((split, rule))
            if t is None:
                continue
            out += [f"{rule} [{split}] FP {text}" for text in t.false_positives]
            out += [f"{rule} [{split}] FN {text}" for text in t.false_negatives]
            out += [f"{rule} [{split}] either {text}" for text in t.on_either]
    out += [f"internal error: {text}" for text in result.internal_errors]
    return "\n".join(out) + ("\n" if out else "")
