"""Unsafe fixes that used to break code, each reproduced and then run with real torch on CPU.

Every test writes the reproduction, fixes it through the installed `torchlint fix --apply
--unsafe-fixes`, and runs the original and the fixed script in a subprocess: the fix must
change the file (or, where no fix can be right, say why and leave it alone) and the fixed
script must run and print what the original printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import run_torchlint


def _write(tmp_path: Path, source: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def _fix(path: Path, *select: str) -> str:
    done = run_torchlint(
        "fix",
        "--apply",
        "--unsafe-fixes",
        "--isolated",
        "--select",
        ",".join(select),
        path.name,
        cwd=path.parent,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return path.read_text()


def _run(path: Path, *code: str) -> str:
    """Run the script (or `code` with the script's globals in `g`) with real torch on CPU."""
    program = (
        [sys.executable, str(path)]
        if not code
        else [
            sys.executable,
            "-c",
            f"import runpy\ng = runpy.run_path({str(path)!r})\n" + "\n".join(code),
        ]
    )
    done = subprocess.run(program, capture_output=True, text=True, timeout=300, cwd=path.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _findings(path: Path, code: str) -> list[dict]:
    done = run_torchlint(
        "check",
        "--isolated",
        "--select",
        code,
        "--output-format",
        "json",
        path.name,
        cwd=path.parent,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


# -- TL002: int() only for sums that are evidently integral --------------------------------
ACCURACY = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(4, 3).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # the predictions stay what they were
    xs = [torch.randn(4, 4) for _ in range(2)]
    with torch.no_grad():
        labels = [model(x.to(device)).argmax(1).cpu() for x in xs]
    labels[1][0] = (labels[1][0] + 1) % 3  # the second batch is 3 in 4 right
    loader = list(zip(xs, labels))

    total, hits, correct = 0, 0, 0
    for x, y in loader:
        out = model(x.to(device))
        loss = nn.functional.cross_entropy(out, y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        pred = out.argmax(1)
        total += (pred == y.to(device)).float().mean().item()
        hits += (pred == y.to(device)).sum().item() / len(y)
        correct += (pred == y.to(device)).sum().item()
    print(total, hits, correct)
"""


def test_tl002_float_accumulators_keep_their_fraction(tmp_path):
    path = _write(tmp_path, ACCURACY)
    assert _run(path).split() == ["1.75", "1.75", "7"]
    fixed = _fix(path, "TL002")
    assert ".item()" not in fixed, fixed  # all three were rewritten
    assert "print(float(total), float(hits), int(correct))" in fixed, fixed
    assert _run(path).split() == ["1.75", "1.75", "7"]


# -- TL005: no fix where an init loop reads the bias ---------------------------------------
INIT_LOOP = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.constant_(m.bias, 0)


    net = Net()
    print(net.features[0].bias is None)
"""


def test_tl005_offers_no_fix_when_an_init_loop_reads_the_bias(tmp_path):
    path = _write(tmp_path, INIT_LOOP)
    [finding] = _findings(path, "TL005")
    assert finding["fix"] is None
    assert "(no fix: line 12 reads it)" in finding["message"]
    before = path.read_text()
    assert _fix(path, "TL005") == before
    assert _run(path).strip() == "False"


def test_tl005_fixes_when_the_init_loop_checks_for_none(tmp_path):
    path = _write(
        tmp_path,
        INIT_LOOP.replace(
            "if isinstance(m, nn.Conv2d):", "if isinstance(m, nn.Conv2d) and m.bias is not None:"
        ),
    )
    fixed = _fix(path, "TL005")
    assert "nn.Conv2d(3, 8, 3, bias=False)" in fixed
    assert _run(path).strip() == "True"  # the fixed model builds, without the bias


def test_tl005_ignores_bias_reads_of_other_layer_classes(tmp_path):
    path = _write(
        tmp_path, INIT_LOOP.replace("isinstance(m, nn.Conv2d)", "isinstance(m, nn.Linear)")
    )
    assert "bias=False" in _fix(path, "TL005")
    assert _run(path).strip() == "True"


# -- TL110: the inserted line needs `torch` bound at module level --------------------------
TORCH_IN_MAIN = '''
    """Train a small conv net."""
    from torch import nn


    def main():
        import torch
        model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()).to("cuda")
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x in torch.randn(2, 1, 3, 8, 8):
            model(x.cuda()).sum().backward()
            opt.step()


    if __name__ == "__main__":
        main()
'''


def test_tl110_imports_torch_where_only_a_function_did(tmp_path):
    path = _write(tmp_path, TORCH_IN_MAIN)
    fixed = _fix(path, "TL110")
    assert "torch.backends.cudnn.benchmark = True" in fixed
    # Module level runs (not main(), which needs a GPU): no NameError, and the flag is set.
    assert _run(path, "print(g['torch'].backends.cudnn.benchmark)").strip() == "True"


# -- TL104: only the loss, never what is unpacked beside it --------------------------------
UNPACKED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]


    def criterion(out, y):
        loss = ((out - y) ** 2).mean()
        return loss, len(y), {"mse": loss.item()}


    total_loss, seen, history = 0.0, 0, []
    for x, y in loader:
        opt.zero_grad()
        loss, n, logs = criterion(model(x), y)
        loss.backward()
        opt.step()
        total_loss += loss
        seen += n
        history.append(logs)
    print(f"{float(total_loss):.6f}", seen, len(history), total_loss.requires_grad)
"""


def test_tl104_flags_and_fixes_only_the_loss(tmp_path):
    path = _write(tmp_path, UNPACKED)
    assert [f["location"]["row"] for f in _findings(path, "TL104")] == [22]
    before = _run(path).split()
    fixed = _fix(path, "TL104")
    assert (
        "total_loss += loss.detach()" in fixed
        and "n.detach()" not in fixed
        and "logs.detach()" not in fixed
    )
    after = _run(path).split()
    assert after[:3] == before[:3] and (before[3], after[3]) == ("True", "False")


# -- TL106 and TL003: imports left unused are removed --------------------------------------
AMP = """
    import torch
    from torch import nn
    from torch.cuda.amp import autocast, GradScaler

    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(enabled=False)
    for x in torch.randn(2, 8, 4):
        with autocast(enabled=False):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    print(type(scaler).__module__)
"""


def test_tl106_removes_the_import_it_leaves_unused(tmp_path):
    path = _write(tmp_path, AMP)
    fixed = _fix(path, "TL106")
    assert "torch.cuda.amp" not in fixed, fixed
    assert (
        'torch.amp.GradScaler("cuda", enabled=False)' in fixed
        and 'torch.amp.autocast("cuda", enabled=False)' in fixed
    )
    assert _run(path).strip() == "torch.amp.grad_scaler"


def test_tl106_keeps_an_import_still_used_elsewhere(tmp_path):
    path = _write(tmp_path, textwrap.dedent(AMP) + "print(isinstance(scaler, GradScaler))\n")
    fixed = _fix(path, "TL106")
    assert "from torch.cuda.amp import GradScaler\n" in fixed, (
        fixed
    )  # autocast went, GradScaler is still read
    assert "autocast(enabled" not in fixed.replace("torch.amp.autocast", "")


def test_tl003_removes_a_constructor_import_it_leaves_unused(tmp_path):
    path = _write(
        tmp_path,
        """
        import numpy as np
        from torch import tensor

        for n in (3,):
            t = tensor(np.arange(n))
            print(t.tolist())
    """,
    )
    fixed = _fix(path, "TL003")
    assert "from torch import tensor" not in fixed and "torch.from_numpy(np.arange(n))" in fixed, (
        fixed
    )
    assert _run(path).strip() == "[0, 1, 2]"


# -- Multi-line nodes keep their place -----------------------------------------------------
def test_multi_line_calls_keep_their_indentation(tmp_path):
    path = _write(
        tmp_path,
        """
        import numpy as np
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.layers = nn.Sequential(
                    nn.Conv2d(
                        c,
                        c,
                        3,
                    ),
                    nn.BatchNorm2d(c),
                )


        def prepare(xs):
            if xs:
                wh = torch.tensor(
                    np.concatenate([x * 2 for x in xs])
                ).float()
            return wh


        def load(model, loader, opt):
            scaler = torch.cuda.amp.GradScaler(
                init_scale=2.0,
            )
            for x in loader:
                with torch.cuda.amp.autocast(
                    enabled=True
                ):
                    loss = model(x)
                scaler.scale(loss).backward()
                scaler.step(opt)
    """,
    )
    fixed = _fix(path, "TL003", "TL005", "TL106")
    assert (
        "        wh = torch.from_numpy(\n            np.concatenate([x * 2 for x in xs])\n        ).float()\n"
        in fixed
    ), fixed
    assert (
        '    scaler = torch.amp.GradScaler(\n        "cuda", init_scale=2.0,\n    )\n' in fixed
    ), fixed
    assert (
        '        with torch.amp.autocast(\n            "cuda", enabled=True\n        ):\n' in fixed
    ), fixed
    assert "                3,\n                bias=False,\n            ),\n" in fixed, fixed
