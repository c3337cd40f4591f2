"""TL003 tensor-from-numpy."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from torchlint.analysis.provenance import Evidence, NumpyProvenance
from torchlint.diagnostics import Applicability
from torchlint.analysis.symbols import dotted
from torchlint.rule import Invalid, Rewrite, Rule, Valid
from torchlint.analysis.text import may_use_numpy

# Legacy type constructors and the dtype each one converts to (None: the default dtype).
_LEGACY = {
    "Tensor": None,
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "CharTensor": "int8",
    "ByteTensor": "uint8",
    "BoolTensor": "bool",
}
_KEPT_KEYWORDS = frozenset({"dtype", "device"})
# Expressions that can carry numpy evidence; anything else (literals, lists) cannot.
_TRACEABLE = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.BinaryOperation, cst.IfExp)


class TensorFromNumpy(Rule):
    code = "TL003"
    name = "tensor-from-numpy"
    summary = "`torch.tensor` copies a numpy array; `torch.from_numpy`/`torch.as_tensor` share its memory"
    fix_availability = "unsafe"
    fix_versions = {
        '`torch.from_numpy`/`torch.as_tensor`': '1.0',
    }
    tokens = ("tensor", "Tensor")
    text_tests = (may_use_numpy,)
    docs = """
## What it does
Flags `torch.tensor(x)`, and the legacy constructors `torch.Tensor(x)`,
`torch.FloatTensor(x)`, `torch.LongTensor(x)` (and the other `torch.*Tensor` /
`torch.cuda.*Tensor` types), where `x` is evidently a numpy array from evidence in the same
file: the result of a numpy function that returns an array (`np.array`, `np.zeros`, `np.load`,
`np.stack`, ...), of `.numpy()`, of pandas' `.to_numpy()` or `.values`, a parameter annotated
`np.ndarray`, a name or `self.` attribute bound to one of these, indexing, slicing,
`.reshape`/`.astype`/`.T` or arithmetic of such a value, or the return value of a function in
the file that returns one. Python lists and scalars, and values of unknown origin, are never
flagged.

Not flagged: an array that may share memory with a tensor (`t.numpy()`, or a slice or reshape of
it), where `torch.tensor`'s copy is what keeps the new tensor apart from `t` (use `t.clone()`
there instead); `torch.tensor(x, device="cuda")` with a device written as an accelerator, because
the copy to the device happens either way and `as_tensor` would save nothing (a device held in
a variable may be the CPU, so those calls are flagged); and calls that pass `requires_grad=` or
`pin_memory=`, which `as_tensor` does not take.

## Why is this bad?
`torch.tensor` always copies its input. For a numpy array on the CPU that copy is wasted work:
`torch.from_numpy(x)` wraps the array's memory without copying, and `torch.as_tensor(x, dtype=...)`
copies only when the dtype or device has to change, so it is never slower and on the CPU saves
the whole copy. In a `Dataset.__getitem__` or a per-batch loop the copy is paid for every sample.

The legacy constructors are discouraged by the PyTorch docs. On a numpy array they silently
share its memory when the array's dtype matches theirs and copy it otherwise, and they reject
numpy scalars; `torch.as_tensor` with an explicit `dtype=` does the same conversion and says
what happens.

## Example
```python
import numpy as np
import torch

features = np.load("features.npy")
x = torch.tensor(features)
y = torch.tensor(features[:, 0], dtype=torch.float32)
z = torch.LongTensor(np.arange(10))
```

## Use instead
```python
import numpy as np
import torch

features = np.load("features.npy")
x = torch.from_numpy(features)
y = torch.as_tensor(features[:, 0], dtype=torch.float32)
z = torch.as_tensor(np.arange(10), dtype=torch.int64)
```

## Fix safety
Unsafe. `torch.from_numpy(x)` and `torch.as_tensor(x)` return a tensor that shares memory with
the array whenever no conversion is needed, so in-place writes to the array after the call
show up in the tensor, and in-place writes to the tensor change the array; code that relied on
`torch.tensor` taking a private copy (for example of a buffer it refills) changes behaviour.
A read-only array (`np.frombuffer`, a memory-mapped `np.load`) gives a warning and a tensor
that must not be written to. `torch.from_numpy` is chosen only when the value is certainly an
ndarray and no `dtype=` is given; otherwise the fix uses `torch.as_tensor`, keeping `dtype=`
and `device=`. For the legacy constructors the fix passes their dtype explicitly
(`torch.Tensor` becomes the default dtype, `torch.float32`, or `torch.get_default_dtype()` in a
file that changes the default) and `device="cuda"` for `torch.cuda.*Tensor`.
A constructor imported by name (`from torch import tensor`) is spelled through `torch`, and
the import is removed once the fixes leave it unused.

## References
- [torch.from_numpy](https://pytorch.org/docs/stable/generated/torch.from_numpy.html)
- [torch.as_tensor](https://pytorch.org/docs/stable/generated/torch.as_tensor.html)
- [torch.tensor: "always copies data"](https://pytorch.org/docs/stable/generated/torch.tensor.html)
- [torch.Tensor: legacy constructors](https://pytorch.org/docs/stable/tensors.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): create tensors without copies](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        "import torch\nx = torch.tensor([1.0, 2.0, 3.0])\ny = torch.tensor(3.5)\n",
        "import torch\nimport numpy as np\nscale = torch.tensor(np.log(10.0))\n",
        "import torch\nimport numpy as np\nx = torch.tensor(np.zeros(3), device='cuda')\n",
        "import torch\nimport numpy as np\nx = torch.tensor(np.zeros(3), device=torch.device('cuda', 0))\n",
        "import torch\n\ndef to_numpy(t):\n    return t.cpu().numpy()\n\ndef f(t):\n    x = to_numpy(t)\n    return torch.tensor(x[:, ::2].T)\n",
        "import torch\nimport numpy as np\nx = torch.tensor(np.zeros(3), requires_grad=True)\n",
        "import torch\nimport numpy as np\nx = np.zeros(3)\nfor x in batches:\n    t = torch.tensor(x)\n",
        "import torch\nimport numpy as np\nif flag:\n    x = np.zeros(3)\nt = torch.tensor(x)\n",
        "import torch\nimport numpy as np\ndef f(x):\n    return torch.tensor(x)\n",
        "import torch\nimport numpy as np\nimport pandas as pd\nt = torch.tensor(torch.max(a, dim=1).values)\n",
        "import torch\nimport numpy as np\nt = torch.tensor(np.zeros(3) * weight)\n",
        "import numpy as np\ntensor = lambda x: x\nt = tensor(np.zeros(3))\n",
        Valid("import numpy as np\nx = np.zeros(3)\nt = tensor(x)\n"),
        "import torch\n\nclass Scale:\n    def double(self):\n        self.a = self.a * 2\n        return torch.tensor(self.a)\n",
        "import torch\nimport numpy as np\nif isinstance(x, np.ndarray):\n    pass\nelse:\n    t = torch.tensor(x)\n",
        "import torch\nimport numpy as np\nx = np.zeros(3)\nfor i in range(3):\n    t = torch.tensor(x)\n    x = t.tolist()\n",
    ]
    invalid = [
        Invalid(
            "import numpy as np\nimport torch\nfeatures = np.load('features.npy')\nx = torch.tensor(features)\n",
            fixed="import numpy as np\nimport torch\nfeatures = np.load('features.npy')\nx = torch.from_numpy(features)\n",
        ),
        Invalid(
            "import numpy as np\nimport torch\nx = torch.tensor(np.stack(rows), dtype=torch.float32)\n",
            fixed="import numpy as np\nimport torch\nx = torch.as_tensor(np.stack(rows), dtype=torch.float32)\n",
        ),
        Invalid(
            "import numpy\nimport torch as T\nx = T.LongTensor(numpy.arange(9).reshape(3, 3))\n",
            fixed="import numpy\nimport torch as T\nx = T.as_tensor(numpy.arange(9).reshape(3, 3), dtype=T.int64)\n",
        ),
        Invalid(
            "import numpy as np\nfrom torch import FloatTensor\ngrid = np.ones((4, 4))\nx = FloatTensor(np.sin(grid[:, 0::2]))\n",
            fixed="import numpy as np\nimport torch\ngrid = np.ones((4, 4))\nx = torch.as_tensor(np.sin(grid[:, 0::2]), dtype=torch.float32)\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\n\nclass Data(torch.utils.data.Dataset):\n"
            "    def __init__(self, path):\n        self.images = np.load(path)\n\n"
            "    def __getitem__(self, i):\n        return torch.tensor(self.images[i])\n",
            fixed="import torch\nimport numpy as np\n\nclass Data(torch.utils.data.Dataset):\n"
            "    def __init__(self, path):\n        self.images = np.load(path)\n\n"
            "    def __getitem__(self, i):\n        return torch.as_tensor(self.images[i])\n",
        ),
        Invalid(
            "import torch\n\ndef to_numpy(t):\n    return t.detach().cpu().numpy()\n\n"
            "def double(t):\n    return torch.tensor(to_numpy(t) * 2, device='cpu')\n",
            fixed="import torch\n\ndef to_numpy(t):\n    return t.detach().cpu().numpy()\n\n"
            "def double(t):\n    return torch.as_tensor(to_numpy(t) * 2, device='cpu')\n",
        ),
        Invalid(
            "import torch\nimport pandas as pd\ndf = pd.read_csv('train.csv')\ny = torch.Tensor(df['label'].values)\n",
            fixed="import torch\nimport pandas as pd\ndf = pd.read_csv('train.csv')\ny = torch.as_tensor(df['label'].values, dtype=torch.float32)\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\ndef load(path: str, rows: np.ndarray):\n    return torch.cuda.FloatTensor(rows)\n",
            fixed="import torch\nimport numpy as np\ndef load(path: str, rows: np.ndarray):\n    return torch.as_tensor(rows, dtype=torch.float32, device=\"cuda\")\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\n\ndef predict(data, device):\n    if isinstance(data, np.ndarray):\n"
            "        return torch.tensor(data, device=device)\n    return data\n",
            fixed="import torch\nimport numpy as np\n\ndef predict(data, device):\n    if isinstance(data, np.ndarray):\n"
            "        return torch.as_tensor(data, device=device)\n    return data\n",
        ),
        Invalid(
            "import numpy as np\nimport pandas as pd\nimport torch\n\nclass Table(torch.utils.data.Dataset):\n"
            "    def __init__(self, df, classify):\n        self.y = df['y'].values\n        if classify:\n"
            "            self.y = self.y.astype(np.int64)\n\n    def __getitem__(self, i):\n        return torch.tensor(self.y[i])\n",
            fixed="import numpy as np\nimport pandas as pd\nimport torch\n\nclass Table(torch.utils.data.Dataset):\n"
            "    def __init__(self, df, classify):\n        self.y = df['y'].values\n        if classify:\n"
            "            self.y = self.y.astype(np.int64)\n\n    def __getitem__(self, i):\n        return torch.as_tensor(self.y[i])\n",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []
        self.rewrites: list[Rewrite] = []

    def visit_Call(self, node: cst.Call) -> None:
        if node.args and m.matches(node.func, m.Name() | m.Attribute()):
            self.calls.append(node)

    def finish(self) -> None:
        for call in self.calls:
            self._check(call)
        self.report_rewrites(self.rewrites)

    def _check(self, call: cst.Call) -> None:
        qualname = self.ctx.symbols.qualname(call.func) or ""
        head, _, last = qualname.rpartition(".")
        if qualname == "torch.tensor":
            self._check_tensor(call)
        elif head in ("torch", "torch.cuda") and last in _LEGACY:
            self._check_legacy(call, last, cuda=head == "torch.cuda")

    def _check_tensor(self, call: cst.Call) -> None:
        data, keywords = call.args[0], call.args[1:]
        if data.keyword is not None or data.star or not all(self._kept(a) for a in keywords):
            return
        device = next((a.value for a in keywords if a.keyword and a.keyword.value == "device"), None)
        if device is not None and self._is_accelerator(device):
            return
        evidence = self._evidence(data.value)
        if evidence is None or self.ctx.fact(NumpyProvenance).may_view_tensor(data.value):
            return  # copying an array that views a tensor keeps the new tensor apart from it
        torch, import_edit = self.ctx.torch_alias(call)
        exact = evidence.exact and not keywords
        func = "from_numpy" if exact else "as_tensor"
        new = call.with_changes(func=cst.parse_expression(f"{torch}.{func}"))
        fix = self.make_fix(f"Use `torch.{func}`, which shares the array's memory", Applicability.UNSAFE, import_edit, self.ctx.replace(call, new), writes="`torch.from_numpy`/`torch.as_tensor`")
        message = f"`torch.tensor` copies the numpy array {self._origin(data.value, evidence)}; `torch.{func}` shares it"
        self.rewrites.append(Rewrite(call, message, fix, _head(call)))

    def _check_legacy(self, call: cst.Call, kind: str, cuda: bool) -> None:
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return
        data = call.args[0]
        evidence = self._evidence(data.value)
        if evidence is None:
            return
        torch, import_edit = self.ctx.torch_alias(call)
        dtype = _LEGACY[kind] or ("get_default_dtype()" if "set_default_dtype" in self.ctx.source else "float32")
        args = [data, self._keyword("dtype", f"{torch}.{dtype}")] + ([self._keyword("device", '"cuda"')] if cuda else [])
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [a.with_changes(comma=separator) for a in args[:-1]] + [args[-1]]
        new = call.with_changes(func=cst.parse_expression(f"{torch}.as_tensor"), args=args)
        fix = self.make_fix(f"Use `torch.as_tensor(..., dtype=torch.{dtype})`", Applicability.UNSAFE, import_edit, self.ctx.replace(call, new), writes="`torch.from_numpy`/`torch.as_tensor`")
        shown = "torch.cuda." + kind if cuda else "torch." + kind
        message = f"legacy `{shown}` copies numpy array {self._origin(data.value, evidence)}; use `torch.as_tensor`"
        self.rewrites.append(Rewrite(call, message, fix, _head(call)))

    # -- helpers -----------------------------------------------------------------------
    def _evidence(self, value: cst.BaseExpression) -> Evidence | None:
        if not isinstance(value, _TRACEABLE):
            return None  # literals, comprehensions: no need to index the file
        return self.ctx.fact(NumpyProvenance).evidence(value)

    def _origin(self, value: cst.BaseExpression, evidence: Evidence) -> str:
        """`x` (from line N) or the inline expression, to show the user why it is numpy."""
        text = self.ctx.code(value).strip()
        shown = f"`{text}`" if len(text) <= 40 else "argument"
        if evidence.origin is value or self._contains(value, evidence.origin):
            return shown
        return f"{shown} (from line {self.ctx.start(evidence.origin).row})"

    def _contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return any(a is outer for a in self.ctx.ancestors(inner))

    @staticmethod
    def _kept(arg: cst.Arg) -> bool:
        return arg.keyword is not None and arg.keyword.value in _KEPT_KEYWORDS

    def _is_accelerator(self, device: cst.BaseExpression) -> bool:
        """A device written as a literal other than the CPU (`"cuda"`, `torch.device("cuda", 0)`)."""
        if isinstance(device, cst.SimpleString):
            return not str(device.evaluated_value).startswith("cpu")
        if isinstance(device, cst.Call) and self.ctx.symbols.qualname(device.func) == "torch.device" and device.args:
            return self._is_accelerator(device.args[0].value)
        return False

    @staticmethod
    def _keyword(name: str, value: str) -> cst.Arg:
        return cst.Arg(
            keyword=cst.Name(name),
            value=cst.parse_expression(value),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        )


def _head(call: cst.Call) -> str | None:
    """The imported name the call is written through: `tensor` in `tensor(x)`, `torch` in `torch.tensor(x)`."""
    return (dotted(call.func) or "").split(".")[0] or None
