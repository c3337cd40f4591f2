"""Run-output folders: the copies of model code a training run saves beside its checkpoints.

Training scripts often copy the model files into the run's output folder (`shutil.copy` into
`log/<task>/<run>/`, wandb's `files/code/`), beside the checkpoints and logs that run wrote.
Nothing runs those copies: the project imports its own modules, so a finding there repeats one
in the real file, or is stale. A directory walk leaves such a folder out by default, as it leaves
out `build/`: a folder below the walked one that holds a run's record (a checkpoint folder with
saved weights, TensorBoard event files, Hydra's `.hydra/`, wandb's run metadata), is no package,
and whose every source file is a copy by name of another file the walk found. A folder with
weights beside code of its own (a notebook and its checkpoint) keeps its findings, and so does
anything named on the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_torchlint

# A model file with one TL103 finding (a tensor built on the host, then moved, every forward).
MODEL = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        noise = torch.zeros(x.shape).to(x.device)
        return x + noise
"""


def _rows(cwd: Path, *paths: str) -> list[str]:
    result = run_torchlint(
        "check", "--isolated", "--select", "TL103", "--output-format", "json", *paths, cwd=cwd
    )
    assert result.returncode in (0, 1), result.stderr
    return sorted(Path(row["filename"]).as_posix() for row in json.loads(result.stdout))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "net.py").write_text(MODEL)
    return tmp_path


def _run_folder(project: Path, *parts: str) -> Path:
    run = project.joinpath(*parts)
    run.mkdir(parents=True)
    (run / "net.py").write_text(MODEL)  # the copy a training script saved with the run
    return run


def test_checkpoint_folder_beside_copies_is_left_out(project: Path) -> None:
    run = _run_folder(project, "log", "cls", "run1")
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "best_model.pth").write_bytes(b"")
    rows = _rows(project, ".")
    assert [Path(p).name for p in rows] == ["net.py"]
    assert not any("log" in p for p in rows)


@pytest.mark.parametrize(
    "record",
    ["events.out.tfevents.1700000000.host.1.0", "wandb-metadata.json", ".hydra/config.yaml"],
)
def test_tool_run_records_mark_the_folder(project: Path, record: str) -> None:
    run = _run_folder(project, "outputs", "2026-11-26")
    (run / record).parent.mkdir(parents=True, exist_ok=True)
    (run / record).write_text("")
    assert [Path(p).name for p in _rows(project, ".")] == ["net.py"]
    assert not any("outputs" in p for p in _rows(project, "."))


def test_code_below_the_record_is_left_out_too(project: Path) -> None:
    run = project / "wandb" / "run-20261126_101010-abc" / "files"
    run.mkdir(parents=True)
    (run / "wandb-metadata.json").write_text("{}")
    (run / "code" / "models").mkdir(parents=True)
    (run / "code" / "models" / "net.py").write_text(MODEL)
    assert not any("wandb" in p for p in _rows(project, "."))


def test_weights_beside_own_code_keep_their_findings(project: Path) -> None:
    """Pretrained weights next to the code that loads them are no run record."""
    demo = project / "demo"
    demo.mkdir()
    (demo / "net.py").write_text(MODEL)
    (demo / "weights.pth").write_bytes(b"")
    assert any("demo" in p for p in _rows(project, "."))


def test_original_code_beside_a_checkpoint_folder_keeps_its_findings(project: Path) -> None:
    """A folder whose code exists nowhere else is the project's own, checkpoints or not."""
    run = project / "experiments" / "tiny"
    run.mkdir(parents=True)
    (run / "tiny_net.py").write_text(MODEL)
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "last.ckpt").write_bytes(b"")
    assert any("experiments" in p for p in _rows(project, "."))


def test_a_package_is_never_a_run_folder(project: Path) -> None:
    run = _run_folder(project, "pkg", "runs")
    (run / "__init__.py").write_text("")
    (run / "events.out.tfevents.1").write_text("")
    (project / "pkg" / "__init__.py").write_text("")
    (project / "__init__.py").write_text("")
    assert any("pkg" in p for p in _rows(project, "."))


def test_named_paths_are_always_checked(project: Path) -> None:
    run = _run_folder(project, "log", "run1")
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "model.pt").write_bytes(b"")
    assert [Path(p).name for p in _rows(project, "log/run1/net.py")] == ["net.py"]
    assert [Path(p).name for p in _rows(project, "log/run1")] == ["net.py"]


def test_exclude_setting_replaces_the_default(project: Path) -> None:
    """`exclude` replaces the default exclusions, run-output folders among them, as in ruff."""
    run = _run_folder(project, "log", "run1")
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "model.pt").write_bytes(b"")
    (project / "pyproject.toml").write_text('[tool.torchlint]\nexclude = ["third_party/"]\n')
    result = run_torchlint(
        "check", "--select", "TL103", "--output-format", "json", ".", cwd=project
    )
    assert result.returncode == 1, result.stderr
    assert len(json.loads(result.stdout)) == 2
