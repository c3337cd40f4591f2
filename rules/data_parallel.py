"""TL004 data-parallel."""

from __future__ import annotations

import libcst as cst

from torchlint.diagnostics import Applicability
from torchlint.rule import Invalid, Rule

_NAMES = (
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
)


class DataParallel(Rule):
    code = "TL004"
    name = "data-parallel"
    gpu_only = True  # DataParallel's cost is copying between GPUs
    summary = "`nn.DataParallel` is slower than `DistributedDataParallel`, even on one machine"
    fix_availability = "display-only"
    tokens = ("DataParallel",)
    docs = """
## What it does
Flags constructions of `torch.nn.DataParallel`, under any import alias.

## Why is this bad?
`DataParallel` runs one Python process that drives every GPU from threads: the GIL
serialises them, the model is replicated to every device on every forward pass, and outputs
and gradients are gathered on GPU 0, which runs out of memory first. PyTorch's own docs
recommend `DistributedDataParallel` (one process per GPU) instead, even on a single machine;
it overlaps the gradient all-reduce with the backward pass and is usually much faster.

## Example
```python
model = nn.DataParallel(model)
```

## Use instead
```python
# launched with: torchrun --nproc_per_node=NUM_GPUS train.py
dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])
# and a DistributedSampler for the training DataLoader
```

## Fix safety
Display-only: the move needs a launcher, process-group setup and a distributed sampler,
which a codemod cannot write for you.

## References
- [DataParallel](https://pytorch.org/docs/stable/generated/torch.nn.DataParallel.html)
- [DistributedDataParallel](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)
- [PyTorch Performance Tuning Guide: use DistributedDataParallel](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn), tip 14](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        "import torch\nok = isinstance(m, torch.nn.DataParallel)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(m)\n",
        "# nn.DataParallel(model)\nname = 'nn.DataParallel(model)'\n",
        "class DataParallel:\n    pass\nm = DataParallel(m)\n",
        "import torch\nwrapped = type(m) is torch.nn.DataParallel\n",
    ]
    invalid = [
        Invalid("import torch\nmodel = torch.nn.DataParallel(model)\n"),
        Invalid("from torch import nn\nmodel = nn.DataParallel(model, device_ids=[0, 1])\n"),
        Invalid("from torch.nn import DataParallel as DP\nmodel = DP(model)\n"),
        Invalid("import torch as T\nmodel = T.nn.parallel.DataParallel(model)\n"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.symbols.qualname(node.func) not in _NAMES:
            return
        fix = self.make_fix(
            "Launch with `torchrun` and wrap the model in `DistributedDataParallel` instead",
            Applicability.DISPLAY_ONLY,
        )
        self.report(node, "`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`", fix)
