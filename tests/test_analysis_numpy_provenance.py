"""The numpy provenance fact TL003 asks: which expressions hold numpy arrays, and which may view a tensor."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

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
