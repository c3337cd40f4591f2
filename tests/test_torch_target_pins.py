"""The torch a project pins where research codebases pin it: a `requirements/` folder beside the
code (installed by the project's Dockerfile) and the exact `pip install torch==X` of a Dockerfile
at the project's root or in its `docker/` folder. Only the project's own pins count: a Dockerfile
deeper in a subproject, a commented line or a pip line that installs whatever is newest leaves
the target alone."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_torchlint

from torchlint.torch_target import NEWEST_TORCH, declared_in, infer

# Deprecated from torch 2.4 on (TL106): silent on a project pinned to an older torch.
_AMP_STEP = """\
import torch

def train(model, loader, optimizer):
    scaler = torch.cuda.amp.GradScaler()
    for x in loader:
        with torch.cuda.amp.autocast():
            loss = model(x.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""

_DOCKERFILE = """\
FROM nvidia/cuda:10.1-cudnn7-devel
# See https://pytorch.org/ for other options if you use a different version of CUDA
RUN pip install --user tensorboard cmake
RUN pip install --user torch==1.6.0+cu101 torchvision==0.7.0+cu101 \\
\t-f https://download.pytorch.org/whl/cu101/torch_stable.html
"""


def _project(root: Path) -> Path:
    """A repository whose training code sits two folders below its root."""
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    code = root / "algorithms" / "offline"
    code.mkdir(parents=True)
    (code / "train.py").write_text(_AMP_STEP)
    return code


def _findings(root: Path) -> list[tuple[str, int]]:
    result = run_torchlint(
        "check", "--output-format", "json", "--no-cache", "--select", "TL106", ".", cwd=root
    )
    assert result.returncode in (0, 1), result.stderr
    return [(d["code"], d["location"]["row"]) for d in json.loads(result.stdout)]


def test_a_requirements_folder_at_the_root_pins_the_code_below(tmp_path):
    code = _project(tmp_path)
    assert _findings(tmp_path)  # no pin: the newest torch, where torch.cuda.amp is deprecated
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "requirements.txt").write_text(
        "tqdm==4.64.0\n--extra-index-url https://download.pytorch.org/whl/cu113\n"
        "torch==1.11.0+cu113\n"
    )
    found = infer(code, stop=tmp_path)
    assert found is not None and found.version == (1, 11)
    assert found.source == "requirements/requirements.txt: torch==1.11.0+cu113"
    assert _findings(tmp_path) == []


def test_the_lowest_of_the_requirements_folder_files_counts(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "runtime.txt").write_text("torch>=1.8\n")
    (tmp_path / "requirements" / "docs.txt").write_text("sphinx\n-r runtime.txt\n")
    (tmp_path / "requirements" / "tests.txt").write_text("torch>=2.0\npytest\n")
    found = declared_in(tmp_path)
    assert found is not None and found.version == (1, 8)


def test_a_docker_folder_dockerfile_pins_the_repository(tmp_path):
    code = _project(tmp_path)
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(_DOCKERFILE)
    found = infer(code, stop=tmp_path)
    assert found is not None and found.version == (1, 6)
    assert found.source == "docker/Dockerfile: torch==1.6.0+cu101"
    assert _findings(tmp_path) == []


def test_a_root_dockerfile_with_a_chained_pip_line(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "ARG FROM_IMAGE_NAME=pytorch/pytorch:1.3-cuda10.1-cudnn7-runtime\nFROM ${FROM_IMAGE_NAME}\n"
        'RUN apt-get update && python -m pip install "torch==1.3.1" numpy && rm -rf /tmp/x\n'
    )
    found = declared_in(tmp_path)
    assert found is not None and found.version == (1, 3)


def test_dockerfile_lines_that_pin_nothing_leave_the_target_alone(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "FROM nvcr.io/nvidia/pytorch:20.06-py3\n"
        "#RUN python -m pip install torch==1.4.0\n"  # commented out
        "RUN pip install torch torchvision\n"  # unpinned: the newest
        "RUN pip3 install 'torch>=1.6'\n"  # a lower bound installs the newest too
        "RUN pip install torch==${TORCH_VERSION}\n"  # a build argument: unknown
        "RUN pip uninstall -y torch==1.2.0\n"
        "RUN echo torch==1.1.0 > pinned.txt\n"
        "RUN pip install --no-cache-dir \\\n"
        "    # pip install torch==1.0.0 \\\n"  # a comment inside a continued RUN
        "    numpy\n"
    )
    assert declared_in(tmp_path) is None


def test_a_subprojects_dockerfile_does_not_pin_the_repository(tmp_path):
    code = _project(tmp_path)
    nested = tmp_path / "projects" / "FastRT" / "docker" / "trt7cu102_torch160"
    nested.mkdir(parents=True)
    (nested / "Dockerfile").write_text("RUN pip install torch==1.6.0 torchvision==0.7.0\n")
    vendored = tmp_path / "third_party" / "lib"
    (vendored / "docker").mkdir(parents=True)
    (vendored / "docker" / "Dockerfile").write_text("RUN pip install torch==1.2.0\n")
    assert infer(code, stop=tmp_path) is None
    assert _findings(tmp_path)
    assert infer(vendored, stop=tmp_path).version == (1, 2)  # its own folder's environment


def test_a_declared_requirement_beside_a_dockerfile_pin_gives_the_lowest(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=1.13\n")
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "cu118.Dockerfile").write_text("RUN pip install torch==2.1.2+cu118\n")
    assert declared_in(tmp_path).version == (1, 13)
    (tmp_path / "requirements.txt").write_text("torch\n")
    assert declared_in(tmp_path).version == (2, 1)
    assert NEWEST_TORCH > (2, 1)


def test_a_constraints_file_pins_the_torch_a_bare_requirement_installs(tmp_path):
    code = _project(tmp_path)
    (tmp_path / "requirements.txt").write_text("torch\ntorchvision\n")
    assert _findings(tmp_path)  # a bare requirement: the newest torch
    (tmp_path / "constraints.txt").write_text("numpy==1.23.5\ntorch==1.13.0\n")
    found = infer(code, stop=tmp_path)
    assert found is not None and found.version == (1, 13)
    assert found.source == "constraints.txt: torch==1.13.0"
    assert _findings(tmp_path) == []


def test_a_constraints_file_named_by_a_requirements_file_counts_wherever_it_lies(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch\n-c ci/pins.txt\n")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "pins.txt").write_text("torch==1.12.1\n")
    assert declared_in(tmp_path).version == (1, 12)
    (tmp_path / "requirements.txt").write_text("torch\n--constraint=ci/pins.txt\n")
    assert declared_in(tmp_path).version == (1, 12)
