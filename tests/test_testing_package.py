"""Modules under a `testing` package are test code, like files under tests/.

Libraries ship their test harnesses there (a tester mixin that puts a model in eval mode and
compares outputs over a few inputs) without importing pytest or unittest; a held-out
measurement of production code saw TL001 flag them. A folder named like it elsewhere in the
path above the project root does not count, and `lint-tests` brings the findings back.
"""

from __future__ import annotations

import json

from conftest import run_torchlint

HARNESS = """\
import torch


class ModelTesterMixin:
    def check_batching(self, model, inputs):
        model.eval()
        parts = [model(x) for x in inputs]
        torch.testing.assert_close(model(torch.cat(inputs)), torch.cat(parts))
"""


def _tl001(root, *extra: str) -> list[str]:
    result = run_torchlint(
        "check", "--output-format", "json", "--no-cache", "--select", "TL001", *extra, ".",
        cwd=root,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return sorted(d["filename"].replace("\\", "/") for d in json.loads(result.stdout))


def test_testing_package_is_test_code(tmp_path) -> None:
    root = tmp_path / "testing" / "proj"  # a folder above the root named so changes nothing
    (root / "lib" / "testing").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    for folder in ("lib", "lib/testing"):
        (root / folder / "__init__.py").write_text("")
        (root / folder / "harness.py").write_text(HARNESS)
    assert _tl001(root) == ["lib/harness.py"]
    (root / "pyproject.toml").write_text("[tool.torchlint]\nlint-tests = true\n")
    assert _tl001(root) == ["lib/harness.py", "lib/testing/harness.py"]
