"""TL115–TL119, the preview rules about DDP, loaders and compiled code: through the installed
command, with their fixes applied and the fixed scripts run under real torch on the CPU."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import FIXTURES, run_torchlint

from torchlint.analysis.text import may_compile

CODES = "TL115,TL116,TL117,TL118,TL119"

SCRIPT = textwrap.dedent(
    """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, Dataset


    class Clips(Dataset):
        def __getitem__(self, i):
            return self.clips[i].cuda()


    class Net(torch.nn.Module):
        def forward(self, x):
            h = self.body(x)
            print(h.shape)
            return h


    def main(rank):
        model = DDP(torch.compile(Net()).cuda(), device_ids=[rank])
        loader = DataLoader(Clips(), batch_size=8, num_workers=4)
        for epoch in range(3):
            for i, x in enumerate(loader):
                loss = model(x).sum() / 4
                loss.backward()
                if (i + 1) % 4 == 0:
                    optimizer.step()
                    optimizer.zero_grad()
    """
)


def _findings(path: Path, *extra: str) -> list[dict]:
    result = run_torchlint(
        "check",
        "--isolated",
        "--preview",
        "--select",
        CODES,
        "--output-format",
        "json",
        *extra,
        str(path),
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_each_rule_reports_its_pattern_once_in_one_script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    found = {(d["code"], d["location"]["row"]) for d in _findings(path)}
    assert found == {
        ("TL118", 9),  # `.cuda()` in Clips.__getitem__
        ("TL119", 15),  # print in the compiled module's forward
        ("TL115", 21),  # the loader of a DDP loop, without a DistributedSampler
        ("TL117", 21),  # four workers restarted every epoch
        ("TL116", 25),  # the micro-steps' backward all-reduces
    }


def test_ddp_accumulation_fix_is_unsafe_and_the_fixed_fixture_still_runs(tmp_path):
    """The unsafe fix of TL116 turns the fixture's before.py into code that runs and trains
    exactly as before.py does on one process (world size 1 on the CPU)."""
    before = FIXTURES / "ddp-accumulation-without-no-sync" / "before.py"
    fixed = tmp_path / "train.py"
    shutil.copy(before, fixed)
    safe = run_torchlint(
        "check", "--isolated", "--preview", "--select", "TL116", "--fix", str(fixed)
    )
    assert safe.returncode == 1 and fixed.read_text() == before.read_text(), safe.stdout
    result = run_torchlint(
        "check",
        "--isolated",
        "--preview",
        "--select",
        "TL116",
        "--fix",
        "--unsafe-fixes",
        str(fixed),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    text = fixed.read_text()
    assert (
        "with contextlib.nullcontext() if (i + 1) % accum_steps == 0 else model.no_sync():" in text
    )
    assert "import contextlib\n" in text
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    outputs = [
        subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env
        )
        for script in (before, fixed)
    ]
    for output in outputs:
        assert output.returncode == 0, output.stderr
    assert outputs[0].stdout == outputs[1].stdout and "epoch 1" in outputs[0].stdout


def test_persistent_workers_fix_is_unsafe_and_says_so_when_the_dataset_changes(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=8, num_workers=2)\n"
        "for epoch in range(5):\n"
        "    ds.resample(epoch)\n"
        "    for x in loader:\n"
        "        step(x)\n"
    )
    (finding,) = _findings(path)
    assert finding["fix"]["applicability"] == "unsafe"
    assert "the dataset changes between epochs" in finding["message"]
    result = run_torchlint(
        "check",
        "--isolated",
        "--preview",
        "--select",
        "TL117",
        "--fix",
        "--unsafe-fixes",
        str(path),
    )
    assert result.returncode == 0, result.stdout
    assert "num_workers=2, persistent_workers=True)" in path.read_text()


def test_unknown_devices_worker_counts_and_framework_loops_are_silent(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch
            from accelerate import Accelerator
            from torch.nn.parallel import DistributedDataParallel
            from torch.utils.data import DataLoader, Dataset


            class Rows(Dataset):
                def __getitem__(self, i):
                    return self.rows[i].to(self.device)


            accelerator = Accelerator()
            model = DistributedDataParallel(net)
            loader = accelerator.prepare(DataLoader(Rows(), num_workers=args.workers))
            for epoch in range(3):
                for i, x in enumerate(loader):
                    accelerator.backward(model(x).sum())
                    if (i + 1) % 4 == 0:
                        optimizer.step()
            """
        )
    )
    assert _findings(path) == []


def test_compiled_code_findings_are_the_graph_breaks_dynamo_reports_and_it_runs_on_cpu(tmp_path):
    """The lines TL119 flags in a compiled function are those where Dynamo itself breaks the
    graph (torch._dynamo.explain, no code generation); shapes, flags and NumPy calls are neither."""
    source = textwrap.dedent(
        """
        import numpy as np
        import torch


        def step(x, training: bool):
            y = x * 2
            if x.shape[0] > 1 and training:
                y = y + 1
            y = torch.from_numpy(np.clip(y.detach().numpy(), 0, 1))
            if torch.any(y > 0.5):
                y = y * 3
            print("step")
            return y + y.sum().item()


        step = torch.compile(step)
        """
    )
    path = tmp_path / "compiled.py"
    path.write_text(source)
    flagged = {d["location"]["row"] for d in _findings(path)}
    probe = tmp_path / "probe.py"
    probe.write_text(
        source.replace("step = torch.compile(step)", "")
        + textwrap.dedent(
            """
            import json, sys
            import torch._dynamo as dynamo
            # Ones take the branch on line 10; Dynamo reports no break for code it never traces.
            explained = dynamo.explain(step)(torch.ones(4), True)
            rows = set()
            for reason in explained.break_reasons:
                rows.update(frame.lineno for frame in reason.user_stack if frame.name == "step")
            print(json.dumps(sorted(rows)))
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(probe)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    breaks = set(json.loads(result.stdout.strip().splitlines()[-1]))
    assert flagged == {11, 13, 14}, flagged
    assert flagged == breaks, (flagged, breaks)


def test_compile_prefilter_skips_regular_expressions_only():
    assert not may_compile("import re\nPATTERN = re.compile(r'x+')\n")
    assert may_compile("import torch\n\n@torch.compile\ndef f(x):\n    return x\n")
    assert may_compile("import torch\nnet = torch.compile(  # fast\n    net)\n")
    assert may_compile("model.compile()\n")
    assert may_compile("import torch as re\nf = re.compile(f)\n")  # `re` may be torch itself
