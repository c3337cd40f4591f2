"""Per-rule precision (seeded samples, judged by hand) and recall on the fetched corpus, per split and stratum.

    python benchmarks/precision.py                      # one table per split: each stratum and all
    python benchmarks/precision.py --split tune --stratum production --pending /tmp/pending.md
                                                         # also write the drawn, unjudged findings
                                                         # of that split and stratum, to judge
    python benchmarks/precision.py --details            # plus every FP, debatable and missed label
    python benchmarks/precision.py --split validate --batch 11
                                                         # only batch 11's repositories (repeatable)

Each repository of tests/corpus/manifest.toml must have been brought with the `fetch` tool
(mirrors under $TORCHLINT_MIRROR, default /work/.mirror); its Python files, notebooks and configuration files at the
pinned commit are unpacked into $TORCHLINT_CORPUS_CACHE (default $TMPDIR/torchlint-corpus, outside
this checkout so each repository is its own project)
and checked by the installed `torchlint check --isolated --preview --select ALL` (preview rules
are measured so they can earn their way out of preview; the table marks them). Findings are cached per
repository commit and content hash of the torchlint package, so a rerun after judging costs
nothing, a new batch checks only its own repositories, and a rule change re-checks. Each stratum
draws its own sample (so a rule is judged on 20 findings of each, or --sample-size; the ranking
keeps the first 20 of a larger draw the same); "all" pools the two samples.
Judge a finding by adding it to tests/corpus/judgements.toml (the --pending file has a stub for
each); the validate split is judged only once a change is complete.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus.corpus import (  # noqa: E402
    PREVIEW_RULES,
    SAMPLE_SIZE,
    SPLITS,
    STRATA,
    CorpusError,
    Finding,
    Precision,
    Recall,
    Repo,
    active,
    cache_dir,
    extract,
    findings,
    in_stratum,
    judgement_problems,
    judgements,
    manifest,
    precision,
    recall,
    recall_files,
    recall_labels,
    sample,
    source_lines,
    wilson,
)

ROOT = Path(__file__).resolve().parents[1]
CODE = (ROOT / "torchlint", ROOT / "rules")  # the engine and the rules (rules/ is torchlint.rules)
CATALOGUE = ROOT / "torchlint" / "catalogue.json"
CONTEXT = 8


def _package_hash() -> str:
    """The rules' code and the extraction: any change to them re-checks every repository."""
    digest = hashlib.sha256()
    for path in sorted(
        p for folder in CODE for p in folder.rglob("*") if p.suffix in (".py", ".json")
    ):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update((ROOT / "tests" / "corpus" / "corpus.py").read_bytes())
    return digest.hexdigest()[:16]


def cached_findings(repo: Repo, root: Path, package: str) -> list[Finding]:
    """The repository's findings at its pinned commit, computed once per version of the rules."""
    path = cache_dir() / "findings" / f"{repo.slug}-{repo.commit[:12]}-{package}.json"
    if path.exists():
        return [Finding(**row) for row in json.loads(path.read_text())]
    found = findings(repo, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(f) for f in found]))
    return found


def split_findings(repos: list[Repo], split: str, roots: dict[str, Path]) -> list[Finding]:
    package = _package_hash()
    found = [
        f for r in repos if r.split == split for f in cached_findings(r, roots[r.name], package)
    ]
    return sorted(found, key=lambda f: (f.rule, f.repo, f.path, f.row))


def _markers() -> dict[str, str]:
    """What the table says beside a rule's code: opt-in (off by default) or preview, as the
    generated catalogue records them (the benchmark reads it as data, without importing rules)."""
    marks = {}
    for entry in json.loads(CATALOGUE.read_text()):
        if entry.get("preview"):
            marks[entry["code"]] = " (preview)"
        elif not entry.get("default_enabled", True):
            marks[entry["code"]] = " (opt-in)"
    return marks


def _cell(tally: Precision | None) -> str:
    if tally is None or tally.drawn == 0:
        return "- | - | -"
    low, high = wilson(tally.tp, tally.judged)
    value = f"{tally.tp / tally.judged:.2f} [{low:.2f}, {high:.2f}]" if tally.judged else "-"
    pending = f" ({tally.pending} unjudged)" if tally.pending else ""
    debatable = f", {tally.debatable} deb." if tally.debatable else ""
    return f"{tally.found} | {tally.tp}/{tally.judged}{debatable}{pending} | {value}"


def _recall_cell(tally: Recall | None) -> str:
    if tally is None or tally.value is None:
        return "-"
    return f"{tally.tp}/{tally.tp + tally.fn} = {tally.value:.2f}"


def table(results: dict[str, tuple[dict, dict]], rules: list[str], files: dict[str, int]) -> str:
    """A markdown table of one split: per rule and stratum (and all), findings, TP/judged, strict
    precision [95% Wilson], recall."""
    head = "| rule |" + "".join(
        f" {s}: findings | {s}: TP/judged | {s}: precision [95%] | {s}: recall ({files[s]} files) |"
        for s in results
    )
    lines = [head, "|" + "---|" * (1 + 4 * len(results))]
    marks = _markers()
    for rule in rules:
        cells = "".join(
            f" {_cell(precision_.get(rule))} | {_recall_cell(recall_.get(rule))} |"
            for precision_, recall_ in results.values()
        )
        lines.append(f"| {rule}{marks.get(rule, '')} |{cells}")
    return "\n".join(lines) + "\n"


def pending_report(drawn: dict[str, list[Finding]], verdicts: dict, roots: dict[str, Path]) -> str:
    """Each drawn, unjudged finding with its context and a judgement stub to complete."""
    out = []
    for rule, items in drawn.items():
        for f in items:
            if f.key in verdicts:
                continue
            lines = source_lines(roots[f.repo], f.path)
            first = max(1, f.row - CONTEXT)
            context = "\n".join(
                f"{n:5d}{'>' if n == f.row else ' '} {lines[n - 1]}"
                for n in range(first, min(len(lines), f.row + CONTEXT) + 1)
            )
            out.append(
                f"## {rule} {f.repo} {f.path}:{f.row}\n{f.message}\n```\n{context}\n```\n```toml\n[[judgement]]\n"
                f"repo = {json.dumps(f.repo)}\ncommit = {json.dumps(f.commit)}\npath = {json.dumps(f.path)}\n"
                f'line = {f.row}\nrule = {json.dumps(rule)}\ntext = {json.dumps(f.text)}\nverdict = ""\nreason = ""\n```\n'
            )
    return "\n".join(out)


def pooled(samples: list[dict[str, list[Finding]]]) -> dict[str, list[Finding]]:
    """The strata's samples together, per rule: what the "all" column is judged on."""
    merged: dict[str, list[Finding]] = {}
    for drawn in samples:
        for rule, items in drawn.items():
            merged[rule] = merged.get(rule, []) + items
    return dict(sorted(merged.items()))


def details(
    drawn: dict[str, list[Finding]], verdicts: dict, recall_: dict[str, Recall], split: str
) -> list[str]:
    out = []
    for rule, items in drawn.items():
        for f in items:
            judged = verdicts.get(f.key)
            if judged and judged["verdict"] != "TP":
                out.append(
                    f"{rule} [{split}] {judged['verdict']} {f.repo} {f.path}:{f.row}: {judged['reason']}"
                )
    for rule, tally in sorted(recall_.items()):
        out += [f"{rule} [{split}] missed {text}" for text in tally.missed]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--split", choices=SPLITS, action="append", help="only this split (repeatable)"
    )
    parser.add_argument(
        "--stratum", choices=STRATA, help="only this stratum's repositories (tables and --pending)"
    )
    parser.add_argument(
        "--batch",
        type=int,
        action="append",
        help="only this manifest batch's repositories: tables, recall and --pending (repeatable)",
    )
    parser.add_argument(
        "--pending", type=Path, help="write the drawn, unjudged findings with context here"
    )
    parser.add_argument(
        "--sample-size",
        type=int,
        default=SAMPLE_SIZE,
        help=f"findings drawn per rule and stratum (default {SAMPLE_SIZE}): more narrows the interval",
    )
    parser.add_argument(
        "--details", action="store_true", help="list every FP, debatable and missed label"
    )
    args = parser.parse_args()
    problems = judgement_problems()
    if problems:
        sys.exit("judgements.toml: " + "; ".join(problems[:5]))
    seed, manifested = manifest()
    by_name = {r.name: r for r in manifested}
    strata = [args.stratum] if args.stratum else list(STRATA)
    splits = args.split or list(SPLITS)
    repos = [
        r
        for r in active(manifested)
        if r.split in splits and r.stratum in strata and (not args.batch or r.batch in args.batch)
    ]
    verdicts = judgements()
    chosen = {r.name for r in repos}  # recall counts only the labelled files of those repositories
    labelled = [entry for entry in recall_labels() if entry["repo"] in chosen]
    tables, pending, notes = [], [], []
    try:
        roots = {r.name: extract(r) for r in repos}
        for split in splits:
            found = split_findings(repos, split, roots)
            results, samples, files = {}, [], {}
            for stratum in strata:
                own = in_stratum(found, by_name, stratum)
                drawn = sample(own, seed, split, args.sample_size)
                recall_ = recall(own, labelled, by_name, split, stratum)
                results[stratum] = (precision(own, drawn, verdicts), recall_)
                files[stratum] = recall_files(labelled, by_name, split, stratum)
                samples.append(drawn)
                pending.append(pending_report(drawn, verdicts, roots))
                notes += details(drawn, verdicts, recall_, f"{split} {stratum}")
            if len(strata) > 1:
                every = pooled(samples)
                results["all"] = (
                    precision(found, every, verdicts),
                    recall(found, labelled, by_name, split),
                )
                files["all"] = recall_files(labelled, by_name, split)
            rules = sorted(  # every preview rule has its row, found or not: it is on trial
                {rule for tallies, missed in results.values() for rule in [*tallies, *missed]}
                | set(PREVIEW_RULES)
            )
            tables.append(f"{split}:\n\n{table(results, rules, files)}")
    except CorpusError as error:
        sys.exit(f"corpus: {error}")
    print("\n".join(tables), end="")
    if args.details:
        print("\n".join(notes))
    if args.pending:
        args.pending.write_text("\n".join(p for p in pending if p))
        print(f"unjudged findings written to {args.pending}")


if __name__ == "__main__":
    main()
