"""TL003's text test `may_name_torch_tensor` answers as the regular expressions it stands for
(an attribute `.tensor`, or `from torch import` and `tensor` with no name character on either
side), and lets through every spelling of a call the rule reads. A wrong answer would skip a
file the rule can match."""

from __future__ import annotations

import random
import re

from conftest import check_json

from torchlint.analysis.text import may_name_torch_tensor

_WHOLE_WORD = re.compile(r"(?<!\w)tensor\b")
_DOTTED = re.compile(r"\.(?:[\s\\]|#[^\r\n]*[\r\n])*tensor\b")
_FROM_TORCH = re.compile(r"from(?:[\s\\]|#[^\r\n]*[\r\n])*torch(?:[\s\\]|#[^\r\n]*[\r\n])*import\b")
_PIECES = ["tensor", "Tensor", "tensors", "2", "_", "é", ".", " ", "\n", "uint", "to_", "(", "#"]
_PIECES += ["from torch import ", "from", " torch ", "import", "\\\n", "# c\n"]


def test_the_word_test_is_the_regexes_answer() -> None:
    rnd = random.Random(24)
    texts = ["", "tensor", "xtensor", "tensor_", "torch.tensor(", "uint2tensor3(x)", "étensor"]
    texts += ["".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 8))) for _ in range(20000)]
    for text in texts:
        expected = bool(_DOTTED.search(text)) or bool(
            _FROM_TORCH.search(text) and _WHOLE_WORD.search(text)
        )
        assert may_name_torch_tensor(text) == expected, repr(text)


def test_every_spelling_of_torch_tensor_names_it() -> None:
    for source in (
        "torch.tensor(a)",
        "from torch import tensor as T\nT(a)",
        "to_tensor = torch.tensor\n",
        "torch.\\\n    tensor(a)",
        "import torch.tensor as t\n",
        "from torch import (\n    zeros,\n    tensor,\n)\n",
        "from torch \\\n    import tensor\n",
    ):
        assert may_name_torch_tensor(source), source
    assert not may_name_torch_tensor("util.uint2tensor3(img)\nto_tensor(x)\nTensor(x)\n")
    assert not may_name_torch_tensor("import torch\n# HWC to CHW, numpy to tensor\n")


def test_tl003_still_fires_through_an_imported_alias(tmp_path) -> None:
    script = tmp_path / "load.py"
    script.write_text(
        "import numpy as np\nfrom torch import tensor as T\n\n\n"
        "def batches(paths):\n    for p in paths:\n        yield T(np.load(p))\n"
    )
    found = check_json("load.py", select="TL003", cwd=tmp_path)
    assert [d["code"] for d in found] == ["TL003"]
