"""The fetched corpus: extraction, findings, seeded samples, judgements and scores.

The code under judgement never enters this repository. `manifest.toml` pins each repository at a
commit and assigns its split; its code is read from the `fetch` tool's bare mirrors
(`$TORCHLINT_MIRROR`, default /work/.mirror) and unpacked into a cache outside the tracked tree.
`judgements.toml` holds one verdict per finding, keyed by what survives small edits of the file
(repository, commit, path, rule and the stripped text of the finding's line), so a rerun after a
rule change asks only about findings it has not seen. `recall.toml` lists, for files labelled
completely, every place a rule should fire. Each repository belongs to a stratum: `scripts`
(books, courses, single-file research code) or `production` (research codebases and libraries
whose training is spread over modules, trainer classes and framework hooks); every figure is
reported per stratum beside the total.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import tomllib
from devset.score import RULES, torchlint_executable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest.toml"
JUDGEMENTS = HERE / "judgements.toml"
RECALL = HERE / "recall.toml"
# The preview rules of issue 26: measured here beside the others, to earn their way out of preview
# (the PyPI development set labels none of them, so `RULES` leaves them out).
PREVIEW_RULES = tuple(f"TL1{i}" for i in range(12, 20))
MEASURED = RULES + PREVIEW_RULES
SPLITS = ("tune", "validate")
STRATA = ("scripts", "production")
VERDICTS = ("TP", "FP", "debatable")
SOURCE_SUFFIXES = (".py", ".ipynb")
# What a repository declares its torch version in (`torchlint.torch_target` reads them): without
# them every file would be checked against the newest torch, whatever the project supports.
# Besides these names: requirements*.txt, constraints*.txt, the .txt files of a `requirements/`
# folder, and Dockerfiles (their `pip install torch==X` lines).
DECLARATIONS = ("pyproject.toml", "setup.cfg", "environment.yml", "environment.yaml")
# What an extraction holds; a different one is extracted again. The empty `.git` folder marks the
# repository's root as a clone's does, so every module of it belongs to one project (without it, a
# folder with no declaration of its own would be a project by itself). Every other file of the tree
# is there too, empty, so folders look as in a clone (a run's checkpoints and logs beside copies of
# the model code: a directory walk leaves such a folder out) without data nobody reads; not files
# that would say something empty (ignore files, TOML configuration).
# Configuration files are there in full below a size (the project index looks in them for the
# classes a configuration may build by name, `type: Unused`); a larger one is data.
CONFIGS = (".yaml", ".yml", ".json", ".toml", ".cfg", ".gin")
CONFIG_BYTES = 256 * 1024
_LAYOUT = (
    "sources+declarations+constraints+requirements-folders+dockerfiles+configs"
    "+git-root+empty-others"
)
_LAYOUT_TAG = hashlib.sha256(_LAYOUT.encode()).hexdigest()[:8]  # layouts never share a folder
SAMPLE_SIZE = 20
MIN_REPOS = 30
# Kept for an independent evaluation: never fetched, read or labelled here.
RESERVED = frozenset(
    {
        "pytorch/examples",
        "karpathy/nanogpt",
        "karpathy/mingpt",
        "kuangliu/pytorch-cifar",
        "huggingface/pytorch-image-models",
        "facebookresearch/deit",
        "facebookresearch/mae",
        "facebookresearch/mixup-cifar10",
        "facebookresearch/detectron2",
        "facebookresearch/fairseq",
        "facebookresearch/dino",
        "facebookresearch/detr",
        "bearpaw/pytorch-classification",
        "yunjey/pytorch-tutorial",
        "hunkim/pytorchzerotoall",
        "morvanzhou/pytorch-tutorial",
        "shusentang/dive-into-dl-pytorch",
        "eriklindernoren/pytorch-gan",
        "clovaai/deep-text-recognition-benchmark",
        "jcjohnson/pytorch-examples",
        "weiaicunzai/pytorch-cifar100",
        "mrdbourke/pytorch-deep-learning",
        "seungeunrho/minimalrl",
        "sfujim/td3",
        "grantsrb/pytorch-a2c",
        "qinghuixiao/flexo",
        "ciflord/shell_repo",
        "openai/clip",
        "compvis/stable-diffusion",
        "lucidrains/denoising-diffusion-pytorch",
        "lucidrains/vit-pytorch",
        "lightning-ai/pytorch-lightning",
        "open-mmlab/mmengine",
        "rasbt/llms-from-scratch",
        "nvidia/deeplearningexamples",
        "ultralytics/yolov5",
        "mlfoundations/open_clip",
        "facebookresearch/convnext",
        "microsoft/swin-transformer",
        "openai/improved-diffusion",
        "lightning-ai/litgpt",
        "karpathy/llm.c",
        "facebookresearch/dinov2",
        "pytorch/ignite",
        "facebookresearch/moco",
    }
)
# Reserved after they had joined the manifest: each keeps its place there (so its batch's seeded
# shuffle, and every other repository's split, stays as it was) and its labels and judgements,
# but it is never fetched, checked or labelled again, and no figure counts it.
RETIRED = frozenset({"ultralytics/yolov5"})
RESERVED_OWNERS = frozenset({"bentrevett", "sgrvinod"})
# Held-out batches: every repository is `validate`, with no seeded shuffle. Batch 10's validate
# repositories were read while its rules were fixed, so they no longer show whether a fix
# generalises; batch 11 was labelled for recall before torchlint ran on it, and has since been
# read. Batch 13 was labelled blind (by reading the code, never torchlint's findings), and has
# since been read too. Batch 14 is labelled blind the same way and is only measured, to show
# whether the rule fixes of issue 24 hold on production code nobody tuned for. Batch 15 is a fresh
# blind batch of the same kind, only measured, for the fixes made after batch 14 had been labelled.
# Batch 16 is another fresh blind batch, only measured, for the fixes made after batch 15, and
# batch 17 one more, only measured, for the fixes made after batch 16. Batch 18 is the next fresh
# blind batch, only measured, for the fixes made after batch 17; batches 19 and 20 the next two,
# each only measured, for the fixes made after the batch before it; batch 21 one more, only
# measured, for the fixes made after batch 20, batch 22 one more for those made after batch 21,
# batch 23 one more for those made after batch 22, batch 24 one more for those made after
# batch 23, and batch 25 one more for those made after batch 24.
HOLDOUT_BATCHES = frozenset({11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})
# Tune-only batches: every repository is `tune`, with no seeded shuffle. Batch 12 brings more
# production code to tune the rules on (model libraries of conv/BN nets, trainer frameworks, AMP
# written for older torch, detection and segmentation codebases), so that fixing rules on
# production code never needs to read a validate batch: those stay unread.
TUNE_BATCHES = frozenset({12})
Z95 = 1.959963984540054


class CorpusError(Exception):
    """A repository of the manifest cannot be read at its pinned commit."""


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    split: str
    batch: int = (
        1  # repositories added later are shuffled among themselves: no earlier one changes split
    )
    stratum: str = "scripts"  # or "production": the figures are reported per stratum

    @property
    def retired(self) -> bool:
        """Reserved after it joined the manifest: never fetched, checked or counted."""
        return self.name.lower() in RETIRED

    @property
    def slug(self) -> str:
        return self.name.replace("/", "+", 1)


@dataclass(frozen=True)
class Finding:
    repo: str
    commit: str
    path: str  # a notebook's findings name their cell: "book.ipynb#3" (rows count within it)
    row: int
    rule: str
    message: str
    text: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.repo, self.commit, self.path, self.rule, self.text)


def load_toml(path: Path) -> dict:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def manifest(path: Path = MANIFEST) -> tuple[int, list[Repo]]:
    """The sampling seed and the pinned repositories."""
    data = load_toml(path)
    return data["seed"], [
        Repo(r["name"], r["commit"], r["split"], r.get("batch", 1), r.get("stratum", "scripts"))
        for r in data["repo"]
    ]


def active(repos: list[Repo]) -> list[Repo]:
    """The repositories the figures are computed on: all but the retired ones."""
    return [r for r in repos if not r.retired]


def is_reserved(name: str) -> bool:
    lowered = name.lower()
    return lowered in RESERVED or lowered.split("/", 1)[0] in RESERVED_OWNERS


def batch_splits(names: list[str], seed: int, batch: int) -> dict[str, str]:
    """The split of each repository of batch `batch` of a manifest seeded `seed`: every one is
    `validate` in a held-out batch, `tune` in a tune-only batch, otherwise the batch's seeded
    shuffle."""
    if batch in HOLDOUT_BATCHES:
        return dict.fromkeys(names, "validate")
    if batch in TUNE_BATCHES:
        return dict.fromkeys(names, "tune")
    return assigned_splits(names, seed + batch - 1)


def split_problems(repos: list[Repo], seed: int) -> list[str]:
    """Where the manifest's splits differ from the assigned ones: a batch's seeded shuffle (about
    half each way), all `validate` for a held-out batch, or all `tune` for a tune-only batch."""
    problems = []
    for batch in sorted({r.batch for r in repos}):
        members = [r for r in repos if r.batch == batch]
        expected = batch_splits([r.name for r in members], seed, batch)
        problems += [
            f"{r.name} (batch {batch}): split {r.split}, assigned {expected[r.name]}"
            for r in members
            if r.split != expected[r.name]
        ]
    return problems


def assigned_splits(names: list[str], seed: int) -> dict[str, str]:
    """The split of each repository of one batch: a seeded shuffle of the sorted names, first half
    `tune`. Batch n is shuffled with `seed + n - 1`, so adding a batch moves no earlier repository."""
    order = sorted(names)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return {name: "tune" if i < half else "validate" for i, name in enumerate(order)}


def cache_dir() -> Path:
    """Outside this checkout: inside it, each repository would take torchlint's own project
    root, torch target and .gitignore (which ignores .pytest_cache) instead of its own."""
    configured = os.environ.get("TORCHLINT_CORPUS_CACHE")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "torchlint-corpus"


def git_dir(repo: Repo) -> Path:
    """The bare git directory the `fetch` tool left for this repository."""
    base = Path(os.environ.get("TORCHLINT_MIRROR", "/work/.mirror")) / repo.slug / "repo"
    nested = base / ".git"
    if nested.is_dir():
        return nested
    if base.is_dir():
        return base
    raise CorpusError(f"{repo.name}: no mirror at {base} (bring it with the fetch tool)")


def extract(repo: Repo) -> Path:
    """Unpack the repository's Python files, notebooks, torch declarations and configuration files
    at its commit (once) into the cache."""
    if repo.retired:
        raise CorpusError(f"{repo.name}: reserved for independent evaluation, never extracted")
    target = cache_dir() / "src" / f"{repo.slug}-{repo.commit[:12]}-{_LAYOUT_TAG}"
    done = target / ".complete"
    if done.exists() and done.read_text() == f"{repo.commit} {_LAYOUT}":
        return target
    git = ["git", "--git-dir", str(git_dir(repo))]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-l", "-z", repo.commit], capture_output=True, timeout=600
    )
    if listing.returncode != 0:
        raise CorpusError(
            f"{repo.name}@{repo.commit}: {listing.stderr.decode(errors='replace').strip()}"
        )
    blobs = {}  # path -> object id; the snapshot lacks its largest files, so no `git archive`
    others = []  # the rest of the tree's regular files, written empty
    for entry in listing.stdout.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        path = name.decode("utf-8", errors="replace")
        if len(fields) != 4 or fields[1] != b"blob":
            continue
        if _wanted(path) or (  # a size of "BAD": an object the snapshot left out
            path.endswith(CONFIGS) and fields[3].isdigit() and int(fields[3]) <= CONFIG_BYTES
        ):
            blobs[path] = fields[2].decode()
        elif fields[0] in (b"100644", b"100755") and _placeholder(path):
            others.append(path)
    for path in others:
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(b"")
    for path, blob in blobs.items():
        content = subprocess.run([*git, "cat-file", "blob", blob], capture_output=True, timeout=600)
        if content.returncode != 0:
            continue  # a file the snapshot left out (4 MiB or more): not source a person wrote
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content.stdout)
    (target / ".git").mkdir(parents=True, exist_ok=True)
    done.write_text(f"{repo.commit} {_LAYOUT}")
    return target


def _placeholder(path: str) -> bool:
    """A file of the tree that may stand empty: not an ignore file or TOML configuration, which
    would then say something the repository's own does not."""
    name = path.rsplit("/", 1)[-1]
    return not name.startswith(".git") and not name.endswith(".toml")


def _wanted(path: str) -> bool:
    folders = path.split("/")[:-1]
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(SOURCE_SUFFIXES)
        or name in DECLARATIONS
        or (
            name.endswith(".txt")
            and (
                name.startswith(("requirements", "constraints")) or folders[-1:] == ["requirements"]
            )
        )
        or name.startswith("Dockerfile")
        or name.endswith((".Dockerfile", ".dockerfile"))
    )


def source_lines(root: Path, path: str) -> list[str]:
    """The lines a finding's row counts: for "book.ipynb#3", those of the notebook's third cell."""
    name, _, cell = path.partition("#")
    text = (root / name).read_text(encoding="utf-8", errors="replace")
    if not cell:
        return text.splitlines()
    try:
        cells = json.loads(text).get("cells", [])
        source = cells[int(cell) - 1].get("source", "")
    except (json.JSONDecodeError, AttributeError, IndexError, ValueError):
        return []
    return ("".join(source) if isinstance(source, list) else str(source)).splitlines()


def _line_text(root: Path, path: str, row: int, cache: dict[str, list[str]]) -> str:
    if path not in cache:
        cache[path] = source_lines(root, path)
    lines = cache[path]
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""


def findings(repo: Repo, root: Path) -> list[Finding]:
    """Every rule, opt-in and preview ones included, over the repository as a new user would run
    it: preview rules are measured here so they can earn their way out of preview."""
    command = [
        torchlint_executable(),
        "check",
        "--isolated",
        "--preview",
        "--select",
        "ALL",
        "--exit-zero",
        "--quiet",
        "--output-format",
        "json",
        ".",
    ]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=3600)
    try:
        rows = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise CorpusError(
            f"{repo.name}: torchlint printed no JSON (exit {done.returncode}): {done.stderr.strip()[-500:]}"
        ) from error
    texts: dict[str, list[str]] = {}
    found = []
    for row in rows:
        name = Path(row["filename"])
        path = (name.relative_to(root) if name.is_absolute() else name).as_posix()
        if row.get("cell") is not None:
            path = f"{path}#{row['cell']}"
        line = row["location"]["row"]
        found.append(
            Finding(
                repo.name,
                repo.commit,
                path,
                line,
                row["code"],
                row["message"],
                _line_text(root, path, line, texts),
            )
        )
    return found


def in_stratum(found: list[Finding], repos: dict[str, Repo], stratum: str) -> list[Finding]:
    """The findings of the stratum's repositories."""
    return [f for f in found if repos[f.repo].stratum == stratum]


def _rank(seed: int, split: str, finding: Finding) -> str:
    """A finding's place in the draw: a hash of the seed and its key, not of its neighbours."""
    return hashlib.sha256(json.dumps([seed, split, *finding.key]).encode()).hexdigest()


def sample(
    found: list[Finding], seed: int, split: str, size: int = SAMPLE_SIZE
) -> dict[str, list[Finding]]:
    """Per rule, the `size` distinct findings ranked first by a seeded hash (all where fewer).

    Ranking each finding on its own key keeps the draw stable when a rule change adds or removes
    findings: a finding judged before stays drawn as long as it is still reported and still ranks
    in the first `size`, so a rerun asks only about findings new to the sample.
    """
    by_rule: dict[str, dict[tuple, Finding]] = defaultdict(dict)
    for f in found:
        if f.rule in MEASURED:  # not TL000 (unparsable file), TL100 or TL999 (internal error)
            by_rule[f.rule].setdefault(f.key, f)
    drawn = {}
    for rule, unique in sorted(by_rule.items()):
        ranked = sorted(unique.values(), key=lambda f: _rank(seed, split, f))[:size]
        drawn[rule] = sorted(ranked, key=lambda f: (f.repo, f.path, f.row))
    return drawn


def judgements(path: Path = JUDGEMENTS) -> dict[tuple, dict]:
    """Verdicts keyed like Finding.key."""
    if not path.exists():
        return {}
    return {
        (j["repo"], j["commit"], j["path"], j["rule"], j["text"]): j
        for j in load_toml(path).get("judgement", [])
    }


def judgement_problems(path: Path = JUDGEMENTS) -> list[str]:
    found = []
    seen = set()
    for j in load_toml(path).get("judgement", []) if path.exists() else []:
        key = (j.get("repo"), j.get("commit"), j.get("path"), j.get("rule"), j.get("text"))
        if None in key:
            found.append(f"{key}: repo, commit, path, rule and text are required")
        if j.get("verdict") not in VERDICTS:
            found.append(f"{key}: verdict must be one of {VERDICTS}")
        if not str(j.get("reason", "")).strip():
            found.append(f"{key}: no reason given")
        if key in seen:
            found.append(f"{key}: judged twice")
        seen.add(key)
    return found


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (stays inside [0, 1] for small samples)."""
    if total == 0:
        return (0.0, 1.0)
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Precision:
    found: int = 0
    drawn: int = 0
    tp: int = 0
    fp: int = 0
    debatable: int = 0

    @property
    def judged(self) -> int:
        return self.tp + self.fp + self.debatable

    @property
    def pending(self) -> int:
        return self.drawn - self.judged


def precision(
    found: list[Finding], drawn: dict[str, list[Finding]], verdicts: dict[tuple, dict]
) -> dict[str, Precision]:
    result: dict[str, Precision] = defaultdict(Precision)
    for f in {f.key: f for f in found}.values():
        if f.rule in MEASURED:
            result[f.rule].found += 1
    for rule, items in drawn.items():
        tally = result[rule]
        tally.drawn = len(items)
        for f in items:
            verdict = verdicts.get(f.key, {}).get("verdict")
            if verdict == "TP":
                tally.tp += 1
            elif verdict == "FP":
                tally.fp += 1
            elif verdict == "debatable":
                tally.debatable += 1
    return dict(result)


@dataclass
class Recall:
    tp: int = 0
    fn: int = 0
    missed: list[str] = field(default_factory=list)

    @property
    def value(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def recall_labels(path: Path = RECALL) -> list[dict]:
    return load_toml(path).get("file", []) if path.exists() else []


def _counted(repo: Repo, split: str, stratum: str | None) -> bool:
    """Whether a labelled file of `repo` counts toward the split (and stratum, when one is given)."""
    return not repo.retired and repo.split == split and (stratum is None or repo.stratum == stratum)


def recall(
    found: list[Finding],
    files: list[dict],
    repos: dict[str, Repo],
    split: str,
    stratum: str | None = None,
) -> dict[str, Recall]:
    """Per rule: `finding` labels in completely labelled files of the split (and stratum) that a
    finding hit. Retired repositories are not checked, so their labels count neither way."""
    rows: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for f in found:
        rows[(f.repo, f.path, f.rule)].append(f.row)
    result: dict[str, Recall] = defaultdict(Recall)
    for entry in files:
        if not _counted(repos[entry["repo"]], split, stratum):
            continue
        for label in entry.get("labels", []):
            if label["expect"] != "finding":
                continue
            end = label.get("end", label["line"])
            path = f"{entry['path']}#{label['cell']}" if "cell" in label else entry["path"]
            hit = any(label["line"] <= r <= end for r in rows[(entry["repo"], path, label["rule"])])
            tally = result[label["rule"]]
            if hit:
                tally.tp += 1
            else:
                tally.fn += 1
                tally.missed.append(f"{entry['repo']} {path}:{label['line']} {label['why']}")
    return dict(result)


def recall_files(
    files: list[dict], repos: dict[str, Repo], split: str, stratum: str | None = None
) -> int:
    return sum(1 for entry in files if _counted(repos[entry["repo"]], split, stratum))
