"""TL111 adam-with-weight-decay."""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.model import BindingKind, SemanticModel
from torchlint.analysis.training import optimizer_class
from torchlint.diagnostics import Applicability, Edit, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_WEIGHT_DECAY_POSITION = 4  # Adam(params, lr, betas, eps, weight_decay, amsgrad)


def _nonzero_number(node: cst.BaseExpression) -> bool | None:
    """True/False for a numeric literal (`1e-4`, `0`, `0.0`), None for anything else."""
    if isinstance(node, cst.Integer | cst.Float):
        return node.evaluated_value != 0
    return None


class AdamWithWeightDecay(Rule):
    code = "TL111"
    name = "adam-with-weight-decay"
    summary = (
        "`Adam(weight_decay=...)` is L2 regularization, not decoupled weight decay; use `AdamW`"
    )
    default_enabled = False
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`torch.optim.AdamW`": "1.2",
    }
    tokens = ("Adam",)
    docs = """
## What it does
Flags `torch.optim.Adam` (under any import alias) given a nonzero `weight_decay`, as a keyword
or as the fifth positional argument: a number, or a name bound once in the file to a number.
Not flagged: a weight decay of 0, one whose value is not known in the file
(`weight_decay=args.wd`), `decoupled_weight_decay=...` (already AdamW's behaviour), and calls
that pass `**kwargs`, and unit tests. This rule is opt-in, because L2 regularization inside Adam is
occasionally what the author means: enable it with `--extend-select TL111`.

## Why is this bad?
`Adam`'s `weight_decay` adds `weight_decay * param` to the gradient before the adaptive
scaling, so parameters with large gradient history are barely regularized and the
regularization interacts with the learning-rate schedule. That is usually not what
"weight decay" is meant to do. `AdamW` decays the weights directly, separately from the
gradient step (Loshchilov and Hutter, "Decoupled Weight Decay Regularization"), which
generalizes better and is the standard choice for training with Adam-style optimizers.

## Example
```python
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-2)
```

## Use instead
```python
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
```

## Fix safety
Unsafe: the training changes. AdamW shrinks each weight by `lr * weight_decay` per step,
while Adam's L2 term is rescaled by the adaptive denominator, so the same number gives a very
different amount of regularization: values tuned for Adam's L2 usually need retuning (AdamW
is commonly used with weight decays around 1e-2 to 1e-1). The fix renames the class and keeps
every argument; `AdamW` takes the same ones in the same order. A name imported with
`from torch.optim import Adam` becomes the file's `AdamW` import if there is one, else
`torch.optim.AdamW`.

## References
- [torch.optim.Adam](https://pytorch.org/docs/stable/generated/torch.optim.Adam.html)
- [torch.optim.AdamW](https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html)
- [I. Loshchilov, F. Hutter: Decoupled Weight Decay Regularization (ICLR 2019)](https://arxiv.org/abs/1711.05101)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): use AdamW](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.0)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=args.weight_decay)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), weight_decay=1e-2, decoupled_weight_decay=True)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), weight_decay=1e-2, **extra)
            """
        ),
        Valid(
            """
            import torch
            opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=5e-4)
            """
        ),
        Valid(
            """
            from keras.optimizers import Adam
            opt = Adam(weight_decay=1e-4)
            """
        ),
        Valid(
            """
            import pytest
            import torch

            def test_trainer(model):
                opt = torch.optim.Adam(model.parameters(), lr=3e-4, weight_decay=1e-4)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-2)
            """,
            fixed="""
            import torch
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
            """,
            line=2,
            column=7,
            message="`Adam` with `weight_decay` adds L2 decay that the adaptive step scales away; use `AdamW`",
        ),
        Invalid(
            """
            from torch import optim
            WD = 5e-4
            opt = optim.Adam(net.parameters(), 1e-3, (0.9, 0.99), 1e-8, WD)
            """,
            fixed="""
            from torch import optim
            WD = 5e-4
            opt = optim.AdamW(net.parameters(), 1e-3, (0.9, 0.99), 1e-8, WD)
            """,
            line=3,
            column=7,
            message="`Adam` with `weight_decay` adds L2 decay that the adaptive step scales away; use `AdamW`",
        ),
        Invalid(
            """
            from torch.optim import Adam
            opt = Adam(net.parameters(), weight_decay=1e-4)
            """,
            fixed="""
            from torch.optim import Adam
            import torch
            opt = torch.optim.AdamW(net.parameters(), weight_decay=1e-4)
            """,
            line=2,
            column=7,
            message="`Adam` with `weight_decay` adds L2 decay that the adaptive step scales away; use `AdamW`",
        ),
        Invalid(
            """
            from torch.optim import Adam, AdamW
            opt = Adam(net.parameters(), weight_decay=1e-4)
            """,
            fixed="""
            from torch.optim import Adam, AdamW
            opt = AdamW(net.parameters(), weight_decay=1e-4)
            """,
            line=2,
            column=7,
            message="`Adam` with `weight_decay` adds L2 decay that the adaptive step scales away; use `AdamW`",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.symbols.qualname(node.func)
        if optimizer_class(qualname) != "Adam" or not self._decays(node):
            return
        edits = self._rename(node.func, qualname or "")
        fix = self.make_fix(
            "Use `AdamW` (decoupled weight decay)",
            Applicability.UNSAFE,
            *edits,
            writes="`torch.optim.AdamW`",
        )
        self.report(
            node,
            "`Adam` with `weight_decay` adds L2 decay that the adaptive step scales away; use `AdamW`",
            fix,
        )

    def _decays(self, call: cst.Call) -> bool:
        decay = None
        for i, arg in enumerate(call.args):
            if arg.star == "**" or (
                arg.keyword is not None and arg.keyword.value == "decoupled_weight_decay"
            ):
                return False
            if arg.star:
                continue
            if (arg.keyword is None and i == _WEIGHT_DECAY_POSITION) or (
                arg.keyword is not None and arg.keyword.value == "weight_decay"
            ):
                decay = arg.value
        return decay is not None and bool(self._value_nonzero(decay))

    def _value_nonzero(self, node: cst.BaseExpression) -> bool | None:
        known = _nonzero_number(node)
        if known is not None or not isinstance(node, cst.Name):
            return known
        bindings = self.ctx.fact(SemanticModel).all_bindings(node)
        if (
            len(bindings) != 1
            or bindings[0].kind is not BindingKind.ASSIGN
            or bindings[0].value is None
        ):
            return None
        return _nonzero_number(bindings[0].value)

    def _rename(self, func: cst.BaseExpression, qualname: str) -> list[Edit | None]:
        if isinstance(func, cst.Attribute) and qualname == "torch.optim.Adam":
            return [self.ctx.replace(func.attr, "AdamW")]
        imported = next(
            (
                local
                for local, full in self.ctx.symbols.aliases.items()
                if full == "torch.optim.AdamW"
            ),
            None,
        )
        if imported is not None:
            return [self.ctx.replace(func, imported)]
        alias, import_edit = self.ctx.torch_alias(func)
        return [import_edit, self.ctx.replace(func, f"{alias}.optim.AdamW")]
