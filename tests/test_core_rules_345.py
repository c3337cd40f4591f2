"""TL003/TL005/TL006 beyond their examples: the numpy provenance fact, the fixture pairs, config."""

from __future__ import annotations

import json
import textwrap

import libcst as cst
import pytest
from conftest import FIXTURES, run_torchlint

from torchlint.analysis.context import FileContext
from torchlint.analysis.provenance import NumpyProvenance
from torchlint.engine.traversal import run_rules


def _probe(source: str) -> tuple[FileContext, cst.BaseExpression]:
    """The file's context and the argument of its `probe(...)` call."""
    source = textwrap.dedent(source)
    module = cst.parse_module(source)
    ctx = FileContext("probe.py", source, module, (2, 4))
    run_rules(ctx, [])  # the engine's traversal: imports and parents, as rules see them in `finish`
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "probe":
                found.append(node)

    module.visit(Finder())
    assert len(found) == 1
    return ctx, found[0].args[0].value


def evidence(source: str):
    ctx, expr = _probe(source)
    return ctx.fact(NumpyProvenance).evidence(expr)


@pytest.mark.parametrize(
    ("source", "exact"),
    [
        ("import numpy as np\nprobe(np.zeros((2, 3)))\n", True),
        ("import numpy\nx = numpy.load('a.npy')\nprobe(x[:, 1:])\n", True),
        ("import numpy as np\nx = np.load('a.npy')\nprobe(x[0])\n", False),
        ("from numpy import arange\nprobe(arange(6).reshape(2, 3).T.astype('f4'))\n", True),
        (
            "import numpy as np\nrng = np.random.default_rng(0)\nprobe(rng.normal(size=(4,)))\n",
            True,
        ),
        ("import numpy as np\nprobe(np.load('w.npz')['weights'])\n", True),
        ("import numpy as np\ndef make():\n    return np.ones(3)\nprobe(make())\n", True),
        (
            "import numpy as np\nclass A:\n    def __init__(self):\n        self.buf = np.empty(8)\n    def f(self):\n        probe(self.buf)\n",
            True,
        ),
        ("import numpy as np\ndef f(x: np.ndarray):\n    probe(x)\n", False),
        ("import numpy as np\nx = np.zeros(3)\nprobe(x * 2 + 1)\n", False),
        ("import numpy as np\nx = np.zeros(3)\nprobe(x > 0)\n", False),
        (
            "import numpy as np\ndef f(x):\n    if isinstance(x, np.ndarray):\n        probe(x)\n",
            True,
        ),
        ("import pandas as pd\ndf = pd.read_csv('t.csv')\nprobe(df['a'].values)\n", False),
        ("def f(t):\n    probe(t.detach().cpu().numpy())\n", True),
    ],
)
def test_numpy_evidence(source, exact):
    found = evidence(source)
    assert found is not None, source
    assert found.exact is exact


@pytest.mark.parametrize(
    "source",
    [
        "probe([1.0, 2.0])\n",
        "import numpy as np\nprobe(np.random.rand())\n",  # a Python float
        "import numpy as np\nx = np.ones(3)\nprobe(np.sum(x))\n",  # a numpy scalar, no axis
        "import numpy as np\nprobe(np.where(np.ones(3) > 0))\n",  # a tuple of index arrays
        "import numpy as np\nx = np.ones(3)\nx = x.tolist()\nprobe(x)\n",
        "import numpy as np\nif c:\n    x = np.ones(3)\nprobe(x)\n",
        "import numpy as np\nx = np.ones(3)\nwhile c:\n    probe(x)\n    x = [1]\n",
        "import numpy as np\nx = np.ones(3)\nprobe(x * weight)\n",  # weight may be a tensor: the result is then one
        "import numpy as np\nx = np.ones(3)\ndef f(x):\n    probe(x)\n",
        "import numpy as np\nprobe(np.load('ckpt.npz'))\n",
        "import pandas as pd\nimport torch\nprobe(torch.topk(t, 2).values)\n",
        "values = None\nprobe(d.values)\n",  # no pandas in the file
        "import numpy as np\nclass A:\n    def __init__(self, data):\n        self.x = np.ones(3)\n        if data:\n            self.x = data\n    def f(self):\n        probe(self.x)\n",
        "import numpy as np\ndef f(x):\n    if isinstance(x, np.ndarray):\n        x = x.tolist()\n        probe(x)\n",
    ],
)
def test_no_numpy_evidence(source):
    assert evidence(source) is None, source


def test_self_attribute_reassigned_in_place_keeps_its_evidence():
    source = """
    import numpy as np
    import pandas as pd
    class Table:
        def __init__(self, df, classify):
            self.y = df[["y"]].values
            if classify:
                self.y = self.y.astype(np.int64)
            self.x = df
            self.x = self.x.values
        def get(self, i):
            probe((self.y + self.x)[i])
    """
    assert evidence(source) is not None


@pytest.mark.parametrize(
    ("source", "views"),
    [
        ("def f(t):\n    probe(t.numpy())\n", True),
        ("def f(t):\n    a = t.cpu().numpy()\n    probe(a[1:].reshape(2, -1).T)\n", True),
        ("import numpy as np\ndef f(t):\n    probe(np.asarray(t.numpy()))\n", True),
        ("def f(t):\n    probe(t.numpy() * 2)\n", False),
        ("def f(t):\n    probe(t.numpy().astype('f4'))\n", False),
        ("import numpy as np\nprobe(np.zeros(3)[1:])\n", False),
    ],
)
def test_arrays_that_may_view_a_tensor(source, views):
    ctx, expr = _probe(source)
    assert ctx.fact(NumpyProvenance).may_view_tensor(expr) is views


PAIRS = [
    ("tensor-from-numpy", "TL003"),
    ("data-parallel", "TL004"),
    ("bias-before-batchnorm", "TL005"),
    ("zero-grad-without-set-to-none", "TL006"),
]


@pytest.mark.parametrize(("folder", "code"), PAIRS)
def test_fixture_pair_shows_the_rule_before_and_not_after(folder, code):
    pair = FIXTURES / folder
    result = run_torchlint(
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        code,
        "--output-format",
        "json",
        "before.py",
        "after.py",
        cwd=pair,
    )
    assert result.returncode == 1, result.stderr
    files = {d["filename"] for d in json.loads(result.stdout) if d["code"] == code}
    assert files == {"before.py"}


def _without_docstring(text: str) -> str:
    module = cst.parse_module(text)
    return module.with_changes(body=module.body[1:]).code


@pytest.mark.parametrize(
    "folder", ["tensor-from-numpy", "zero-grad-without-set-to-none", "bias-before-batchnorm"]
)
def test_unsafe_fixes_turn_before_into_after(folder, tmp_path):
    """Below the docstring, `fix --apply --unsafe-fixes` writes exactly the after's code."""
    script = tmp_path / "train.py"
    script.write_text((FIXTURES / folder / "before.py").read_text())
    result = run_torchlint(
        "fix", "--isolated", "--apply", "--unsafe-fixes", "train.py", cwd=tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    assert _without_docstring(script.read_text()) == _without_docstring(
        (FIXTURES / folder / "after.py").read_text()
    )


def test_bare_zero_grad_follows_the_configured_torch_version(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n\ndef step(opt, loss):\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "1.13"\n')
    old = run_torchlint(
        "check",
        "--no-cache",
        "--select",
        "TL006",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    assert [d["location"]["row"] for d in json.loads(old.stdout)] == [4]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch-version = "2.1"\n')
    new = run_torchlint(
        "check",
        "--no-cache",
        "--select",
        "TL006",
        "--output-format",
        "json",
        "train.py",
        cwd=tmp_path,
    )
    assert new.returncode == 0 and json.loads(new.stdout) == []
