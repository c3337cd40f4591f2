"""A file named like a test module outside a test folder (`tools/test_net.py`, the evaluation
script of a detection codebase) is a script when it has no test function and runs code at the
top level: a `__main__` guard, the command line parsed there (`args = parser.parse_args()`), or a
loop there (`add_test.py`, a benchmark's training script run top to bottom): performance rules
report there. With a test function, running nothing at the top level, under tests/, or importing
pytest, it stays test code."""

from __future__ import annotations

from conftest import check_json, run_torchlint

EVAL = """\
import torch
from model import Detector


def main():
    model = Detector().cuda()
    model.load_state_dict(torch.load("ckpt.pth"))
    model.eval()
    for images in loader:
        boxes = model(images.cuda())
        print(boxes)


{tail}
"""
GUARD = 'if __name__ == "__main__":\n    main()\n'
TOP_LEVEL = "args = parser.parse_args()\nfor epoch in range(args.epochs):\n    main()\n"


def _findings(tmp_path, files: dict[str, str]) -> dict[str, list[str]]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found: dict[str, list[str]] = {}
    for d in check_json(".", select="TL001", cwd=tmp_path):
        found.setdefault(d["filename"], []).append(d["code"])
    return found


def test_a_test_named_script_is_linted(tmp_path):
    found = _findings(
        tmp_path,
        {
            "tools/test_net.py": EVAL.format(tail=GUARD),
            "tools/eval_test.py": EVAL.format(tail=GUARD),
            "adding/add_test.py": EVAL.format(tail=TOP_LEVEL),
            "adding/copy_test.py": EVAL.format(tail="for epoch in range(10):\n    main()\n"),
        },
    )
    assert found == {
        "tools/test_net.py": ["TL001"],
        "tools/eval_test.py": ["TL001"],
        "adding/add_test.py": ["TL001"],
        "adding/copy_test.py": ["TL001"],
    }


def test_test_modules_stay_quiet(tmp_path):
    found = _findings(
        tmp_path,
        {
            "test_no_guard.py": EVAL.format(tail=""),
            "test_with_tests.py": EVAL.format(tail="def test_runs():\n    main()\n\n\n" + GUARD),
            "test_loop_with_tests.py": EVAL.format(
                tail="def test_runs():\n    main()\n\n\n" + TOP_LEVEL
            ),
            "tests/test_in_folder.py": EVAL.format(tail=GUARD),
            "test_pytest.py": "import pytest\n" + EVAL.format(tail=GUARD),
            "conftest.py": EVAL.format(tail=GUARD),
        },
    )
    assert found == {}


def test_show_settings_says_a_test_named_script_is_no_test_code(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "test_net.py").write_text(EVAL.format(tail=GUARD))
    (tmp_path / "test_module.py").write_text(EVAL.format(tail=""))
    shown = run_torchlint("check", "--show-settings", "test_net.py", cwd=tmp_path)
    assert dict(line.split(": ", 1) for line in shown.stdout.splitlines())["test code"] == "no"
    shown = run_torchlint("check", "--show-settings", "test_module.py", cwd=tmp_path)
    lines = dict(line.split(": ", 1) for line in shown.stdout.splitlines())
    assert lines["test code"].startswith("yes")
