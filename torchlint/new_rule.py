"""`python -m torchlint.new_rule NAME`: the skeleton of a new rule, written from the repository root.

Writes `rules/<name>.py` (a preview rule with the next free code, every docs section and one
example of each kind, all to be filled in) and the fixture pair `fixtures/<name>/before.py` and
`after.py`, then names the steps left (CONTRIBUTING.md). It overwrites nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
CODE = re.compile(r'^    code = "TL(\d{3})"$', re.MULTILINE)
INTERNAL = 999  # TL999 internal-error belongs to the engine

RULE = '''"""{code} {name}."""

from __future__ import annotations

import libcst as cst

from torchlint.rule import Invalid, Rule, Valid


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    summary = "TODO: what is slow, in one line"
    preview = True  # until its precision on the validate split holds the bar (CONTRIBUTING.md)
    tokens = ("torch",)
    docs = """
## What it does
TODO

## Why is this bad?
TODO

## Example
```python
TODO
```

## Use instead
```python
TODO
```

## Fix safety
TODO

## References
- TODO
"""
    valid = [
        Valid(
            """
            import torch
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            TODO
            """,
            line=2,
            column=1,
            message="TODO",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        """TODO: `self.report(node, message, fix)` where the pattern is."""
'''

SCRIPT = '''"""{code} {half}: TODO what this version shows.

`python {half}.py [--scale N]` trains a small model on synthetic data.
"""

import argparse

import torch
from torch import nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Linear(16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(8 * args.scale):
        x = torch.randn(32, 16)
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
'''


def next_code(rules: Path) -> str:
    """One above the highest rule code in `rules/` (the engine's TL999 aside)."""
    used = [int(n) for path in rules.glob("*.py") for n in CODE.findall(path.read_text())]
    return f"TL{max((n for n in used if n < INTERNAL), default=0) + 1:03d}"


def scaffold(root: Path, name: str) -> list[Path]:
    """Write the rule and its fixture pair under `root`; the paths written."""
    rule = root / "rules" / f"{name.replace('-', '_')}.py"
    pair = root / "fixtures" / name
    if rule.exists() or pair.exists():
        raise FileExistsError(f"{rule if rule.exists() else pair} already exists")
    code = next_code(root / "rules")
    cls = "".join(part.capitalize() for part in name.split("-"))
    rule.write_text(RULE.format(code=code, name=name, cls=cls))
    pair.mkdir()
    written = [rule]
    for half in ("before", "after"):
        script = pair / f"{half}.py"
        script.write_text(SCRIPT.format(code=code, half=half))
        written.append(script)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not NAME.fullmatch(argv[0]):
        print(
            "usage: python -m torchlint.new_rule NAME (kebab-case, like tensor-from-numpy)",
            file=sys.stderr,
        )
        return 2
    root = Path.cwd()
    if not (root / "rules" / "__init__.py").is_file() or not (root / "fixtures").is_dir():
        print(
            "torchlint.new_rule: run it from the repository root (rules/ and fixtures/ not found)",
            file=sys.stderr,
        )
        return 2
    try:
        written = scaffold(root, argv[0])
    except FileExistsError as error:
        print(f"torchlint.new_rule: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(root)}")
    print("next: fill in the TODOs, then follow CONTRIBUTING.md (Add a rule, steps 2 to 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
