"""TL005 bias-before-batchnorm."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.dead_branches import DeadBranches
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import is_attribute, is_name, walk
from torchlint.analysis.symbols import dotted
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# Layers with a per-output-channel bias, and the positional index of their `bias` parameter.
_BIAS_AT = {
    **dict.fromkeys(
        ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"), 7
    ),
    **dict.fromkeys(
        (
            "LazyConv1d",
            "LazyConv2d",
            "LazyConv3d",
            "LazyConvTranspose1d",
            "LazyConvTranspose2d",
            "LazyConvTranspose3d",
        ),
        6,
    ),
    "Linear": 2,
    "LazyLinear": 1,
}
_NORMS = frozenset(
    {
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "LazyBatchNorm1d",
        "LazyBatchNorm2d",
        "LazyBatchNorm3d",
    }
)
_MODULES = frozenset(
    {
        "torch.nn",
        "torch.nn.modules",
        "torch.nn.modules.conv",
        "torch.nn.modules.linear",
        "torch.nn.modules.batchnorm",
    }
)
_SEQUENTIAL = frozenset(
    {"torch.nn.Sequential", "torch.nn.modules.Sequential", "torch.nn.modules.container.Sequential"}
)
# Reading these from the layer is harmless; anything else (`.bias`, passing the layer on) is not.
# `ModelForConvBNFusion`, `test_fuse_conv_bn_eval`: fixtures for folding a BatchNorm into the layer.
_BN_FUSION = re.compile(r"(?i)fus.*(bn|batch_?norm)|(bn|batch_?norm).*fus")
_HARMLESS_ATTRS = frozenset(
    "weight in_channels out_channels in_features out_features kernel_size stride padding dilation groups".split()
)


@dataclass(frozen=True)
class _Layer:
    kind: str  # "Conv2d", "BatchNorm2d", ...
    call: cst.Call  # the constructor call


class BiasBeforeBatchnorm(Rule):
    code = "TL005"
    name = "bias-before-batchnorm"
    summary = "A convolution or linear layer feeding straight into a BatchNorm does not need a bias"
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`bias=False`": "1.0",
    }
    tokens = ("BatchNorm",)
    docs = """
## What it does
Flags a `Conv1d`/`Conv2d`/`Conv3d` (also `ConvTranspose*d` and the lazy variants) or a `Linear`
whose bias is on (the default) when its output goes straight into a `BatchNorm1d`/`2d`/`3d` or
`SyncBatchNorm`. The order is read from:
- the arguments of `nn.Sequential(...)`, positional or an `OrderedDict`, including
  `super().__init__(...)` in a subclass of `nn.Sequential` and a list built with literals,
  `+=`, `.append` and `.extend` that is passed as `nn.Sequential(*layers)`;
- the data flow of a custom module, where both layers are `self.` attributes of the same class:
  `self.bn(self.conv(x))`, or `x = self.conv(x)` followed by `x = self.bn(x)`.

Not flagged: a layer with `bias=False` (or a bias that is not a literal); anything between the
two layers (an activation, a dropout, a reshape); a conditional BatchNorm; `GroupNorm`,
`LayerNorm` and `InstanceNorm`, which normalise other axes; a layer whose output is also used
elsewhere, or whose `.bias` the code reads; a
`Linear` whose `out_features` is not written the same way as the BatchNorm's `num_features`; a
class or function whose name speaks of fusion (`ModelForConvBNFusion`, `test_fuse_conv_bn`)
together with BatchNorm, whose bias is there to test that folding the BatchNorm into the layer
keeps it; a layer of a class whose BatchNorms the project trains frozen ("partial BN"): a
`train()` override, or a function the code calls or hands to `model.apply`, that walks the model's
modules and puts each BatchNorm it finds by `isinstance` in eval mode and, in the same block,
sets its `weight` and `bias` `requires_grad = False` (or calls `requires_grad_(False)`). The
BatchNorm then subtracts fixed running statistics and learns no shift, so the bias is the
layer's only trainable shift. A walk over `self.modules()` covers its own class and the classes
of the file it builds; a walk over another model (`self.base_model.modules()`, a model handed
in), or one in a module that imports the file, covers all the file's classes. Eval mode alone,
with the BatchNorm's affine still trained, does not count. Nor is a layer whose bias the code
takes off training by hand (`self.projector[6].bias.requires_grad = False`). Nor is a layer of a
module-level class
that the project never builds flagged, or of a function only such dead code calls (a block the
models no longer use): no file, notebook or configuration of the project builds it, and no
module looks class names up from text (`eval(name)`).

## Why is this bad?
BatchNorm subtracts the per-channel mean of its input, so a constant per-channel bias added just
before it is cancelled exactly: in training (batch statistics) its gradient is zero, and in
evaluation it only shifts the running mean by the same amount. The bias is wasted parameters,
memory and a wasted kernel (or a fused epilogue) on every forward and backward pass. This holds
with `affine=False` too, because the mean is subtracted either way; the BatchNorm's own `beta`,
when it has one, already provides the learnable shift.

## Example
```python
model = nn.Sequential(
    nn.Conv2d(3, 64, kernel_size=3, padding=1),
    nn.BatchNorm2d(64),
    nn.ReLU(),
)
```

## Use instead
```python
model = nn.Sequential(
    nn.Conv2d(3, 64, kernel_size=3, padding=1, bias=False),
    nn.BatchNorm2d(64),
    nn.ReLU(),
)
```

## Fix safety
Unsafe. Without a bias the layer's `state_dict` has no `<layer>.bias` key, so loading a
checkpoint saved before the change with `load_state_dict(..., strict=True)` fails on the
unexpected key (load with `strict=False`, or drop the key, after checking the model). The
outputs stay the same up to the running mean, which a model trained from scratch relearns.
Code that touches the layer's bias must handle `None`: where the file reads `m.bias` on a
module it finds by walking a model (`for m in self.modules():`, a function given to
`model.apply`) or narrows with `isinstance(m, nn.Conv2d)`, with no `m.bias is not None` check,
or where it reads or sets a Sequential's layer bias by position (`seq[0].bias.data.fill_(0.1)`),
the finding says so and offers no fix, since the fixed model would raise `AttributeError`
when built.

## References
- [BatchNorm2d](https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html)
- [Conv2d `bias` parameter](https://pytorch.org/docs/stable/generated/torch.nn.Conv2d.html)
- [PyTorch Performance Tuning Guide: disable bias for convolutions directly followed by a batch norm](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-bias-for-convolutions-directly-followed-by-a-batch-norm)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): turn off bias before BatchNorm](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8))
            """
        ),
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.BatchNorm2d(8))
            """
        ),
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(4, 8))
            """
        ),
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32))
            """
        ),
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3, bias=use_bias), nn.BatchNorm2d(8))
            """
        ),
        Valid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(seq_len))
            """
        ),
        Valid(
            """
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.bn = nn.BatchNorm2d(8)

                def forward(self, x):
                    y = self.conv(x)
                    return self.bn(y) + y
            """
        ),
        Valid(
            """
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.bn = nn.BatchNorm2d(8)

                def forward(self, x):
                    x = self.conv(x)
                    if self.use_bn:
                        x = self.bn(x)
                    return x
            """
        ),
        Valid(
            """
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3)
                    self.bn = nn.BatchNorm2d(8)

                def forward(self, x):
                    return self.bn(self.conv(x)) + self.conv(x)
            """
        ),
        Valid(
            """
            import torch.nn as nn

            def make(cfg, batch_norm):
                layers = []
                conv = nn.Conv2d(3, 8, 3)
                if batch_norm:
                    layers += [conv, nn.BatchNorm2d(8)]
                else:
                    layers += [conv, nn.ReLU()]
                return nn.Sequential(*layers)
            """
        ),
        Valid(
            """
            import torch.nn as nn

            class LinearBNFusionModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
            """
        ),
        Valid(
            """
            class Sequential:
                pass
            class Conv2d:
                pass
            class BatchNorm2d:
                pass
            m = Sequential(Conv2d(3, 8, 3), BatchNorm2d(8))
            """
        ),
        Valid(
            """
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.projector = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32))
                    self.projector[0].bias.requires_grad = False
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bottleneck = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32))
                    self.bottleneck[0].bias.data.fill_(0.1)
            """,
            fixed=None,
            line=6,
            column=41,
            message="`Linear` feeds into `BatchNorm1d` (line 6), which cancels its bias (no fix: line 7 reads it)",
        ),
        Invalid(
            """
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bottleneck = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32))
                    self.bottleneck[1].bias.data.zero_()
            """,
            fixed="""
            import torch.nn as nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bottleneck = nn.Sequential(nn.Linear(16, 32, bias=False), nn.BatchNorm1d(32))
                    self.bottleneck[1].bias.data.zero_()
            """,
            line=6,
            column=41,
            message="`Linear` feeds straight into `BatchNorm1d` (line 6), which cancels its bias",
        ),
        Invalid(
            """
            from torch import nn

            class Down(nn.Module):
                def __init__(self, c, project):
                    super().__init__()
                    if project:
                        self.conv = nn.LazyConv2d(c, 1)
                        self.bn = nn.LazyBatchNorm2d()
                    else:
                        self.conv = None

                def forward(self, x):
                    if self.conv:
                        x = self.bn(self.conv(x))
                    return x
            """,
            fixed="""
            from torch import nn

            class Down(nn.Module):
                def __init__(self, c, project):
                    super().__init__()
                    if project:
                        self.conv = nn.LazyConv2d(c, 1, bias=False)
                        self.bn = nn.LazyBatchNorm2d()
                    else:
                        self.conv = None

                def forward(self, x):
                    if self.conv:
                        x = self.bn(self.conv(x))
                    return x
            """,
            line=7,
            column=25,
            message="`LazyConv2d` feeds straight into `LazyBatchNorm2d` (line 8), which cancels its bias",
        ),
        Invalid(
            """
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
            """,
            fixed="""
            import torch.nn as nn
            m = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU())
            """,
            line=2,
            column=19,
            message="`Conv2d` feeds straight into `BatchNorm2d` (line 2), which cancels its bias",
        ),
        Invalid(
            """
            import torch
            m = torch.nn.Sequential(
                torch.nn.Linear(16, 32, bias=True),
                torch.nn.BatchNorm1d(32, affine=False),
            )
            """,
            fixed="""
            import torch
            m = torch.nn.Sequential(
                torch.nn.Linear(16, 32, bias=False),
                torch.nn.BatchNorm1d(32, affine=False),
            )
            """,
            line=3,
            column=5,
            message="`Linear` feeds straight into `BatchNorm1d` (line 4), which cancels its bias",
        ),
        Invalid(
            """
            from collections import OrderedDict
            from torch import nn
            m = nn.Sequential(OrderedDict([
                ('conv', nn.Conv3d(
                    1,
                    4,
                    3,
                )),
                ('bn', nn.SyncBatchNorm(4)),
            ]))
            """,
            fixed="""
            from collections import OrderedDict
            from torch import nn
            m = nn.Sequential(OrderedDict([
                ('conv', nn.Conv3d(
                    1,
                    4,
                    3,
                    bias=False,
                )),
                ('bn', nn.SyncBatchNorm(4)),
            ]))
            """,
            line=4,
            column=14,
            message="`Conv3d` feeds straight into `SyncBatchNorm` (line 9), which cancels its bias",
        ),
        Invalid(
            """
            from torch import nn

            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    self.conv = nn.Conv2d(c, c, 3, padding=1)
                    self.bn = nn.BatchNorm2d(c)
                    self.act = nn.ReLU()

                def forward(self, x):
                    x = self.conv(x)
                    x = self.bn(x)
                    return self.act(x)
            """,
            fixed="""
            from torch import nn

            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
                    self.bn = nn.BatchNorm2d(c)
                    self.act = nn.ReLU()

                def forward(self, x):
                    x = self.conv(x)
                    x = self.bn(x)
                    return self.act(x)
            """,
            line=6,
            column=21,
            message="`Conv2d` feeds straight into `BatchNorm2d` (line 7), which cancels its bias",
        ),
        Invalid(
            """
            import torch.nn as tnn

            class Head(tnn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = tnn.Linear(64, 10)
                    self.norm = tnn.BatchNorm1d(10)

                def forward(self, x):
                    return tnn.functional.relu(self.norm(self.fc(x)))
            """,
            fixed="""
            import torch.nn as tnn

            class Head(tnn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = tnn.Linear(64, 10, bias=False)
                    self.norm = tnn.BatchNorm1d(10)

                def forward(self, x):
                    return tnn.functional.relu(self.norm(self.fc(x)))
            """,
            line=6,
            column=19,
            message="`Linear` feeds straight into `BatchNorm1d` (line 7), which cancels its bias",
        ),
        Invalid(
            """
            import torch.nn as nn

            def make(channels):
                layers = []
                for c in channels:
                    layers.append(nn.Conv2d(c, c, 3, 1, 1, 1, 1, True))
                    layers.append(nn.BatchNorm2d(c))
                return nn.Sequential(*layers)
            """,
            fixed="""
            import torch.nn as nn

            def make(channels):
                layers = []
                for c in channels:
                    layers.append(nn.Conv2d(c, c, 3, 1, 1, 1, 1, False))
                    layers.append(nn.BatchNorm2d(c))
                return nn.Sequential(*layers)
            """,
            line=6,
            column=23,
            message="`Conv2d` feeds straight into `BatchNorm2d` (line 7), which cancels its bias",
        ),
        Invalid(
            """
            from torch import nn

            class ConvBN(nn.Sequential):
                def __init__(self, cin, cout, device=None, dtype=None):
                    dd = {'device': device, 'dtype': dtype}
                    conv = nn.Conv2d(cin, cout, 1, **dd)
                    super().__init__(conv, nn.BatchNorm2d(cout, **dd))
            """,
            fixed="""
            from torch import nn

            class ConvBN(nn.Sequential):
                def __init__(self, cin, cout, device=None, dtype=None):
                    dd = {'device': device, 'dtype': dtype}
                    conv = nn.Conv2d(cin, cout, 1, **dd, bias=False)
                    super().__init__(conv, nn.BatchNorm2d(cout, **dd))
            """,
            line=6,
            column=16,
            message="`Conv2d` feeds straight into `BatchNorm2d` (line 7), which cancels its bias",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.calls: list[cst.Call] = []
        self.classes: list[cst.ClassDef] = []
        self.reported: set[cst.Call] = set()
        self.bias_reads: list[cst.Attribute] | None = None
        self.bias_attributes: list[cst.Attribute] | None = None
        self.frozen_classes: frozenset[str] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def finish(self) -> None:
        if not any((layer := self._layer(c)) and layer.kind in _NORMS for c in self.calls):
            return
        self.b = self.ctx.fact(SemanticModel)
        for call in self.calls:
            elements = self._sequential_elements(call)
            if elements is not None:
                self._check_run(elements, self._bias_reads_by_position(call))
        for run in self._list_runs():
            self._check_run(run, {})
        for owner in self.classes:
            self._check_class(owner)

    # -- layers ------------------------------------------------------------------------
    def _layer(self, call: cst.CSTNode) -> _Layer | None:
        if not isinstance(call, cst.Call):
            return None
        qualname = self.ctx.symbols.qualname(call.func) or ""
        module, _, kind = qualname.rpartition(".")
        if module not in _MODULES or (kind not in _BIAS_AT and kind not in _NORMS):
            return None
        return _Layer(kind, call)

    def _constructed(self, expr: cst.BaseExpression | None) -> _Layer | None:
        """The layer `expr` constructs, directly or through a name used only here."""
        if isinstance(expr, cst.Name):
            uses = self.b.uses(self.b.scope_of(expr), expr.value)
            if sum(1 for u in uses if not self._is_store(u)) != 1:
                return None  # the same layer object also goes somewhere else
            expr = self.b.value_of(expr)
        return self._layer(expr) if isinstance(expr, cst.Call) else None

    def _is_store(self, name: cst.Name) -> bool:
        parent = self.b.parents.get(name)
        return isinstance(parent, cst.AssignTarget) or (
            isinstance(parent, cst.AnnAssign | cst.For) and parent.target is name
        )

    # -- nn.Sequential -----------------------------------------------------------------
    def _sequential_elements(self, call: cst.Call) -> list[cst.BaseExpression | None] | None:
        """The modules in order, None for an element whose content is unknown (`*rest`)."""
        if not self._is_sequential_call(call):
            return None
        if len(call.args) == 1 and not call.args[0].star:
            ordered = self._ordered_dict_values(call.args[0].value)
            if ordered is not None:
                return ordered
        return [
            None if arg.star or arg.keyword else arg.value
            for arg in call.args
            if arg.value is not None
        ]

    def _is_sequential_call(self, call: cst.Call) -> bool:
        if self.ctx.symbols.qualname(call.func) in _SEQUENTIAL:
            return True
        func = call.func
        if not (
            is_attribute(func, "__init__")
            and isinstance(func.value, cst.Call)  # type: ignore[attr-defined]
            and is_name(func.value.func, "super")  # type: ignore[attr-defined]
        ):
            return False
        owner = next((a for a in self.ctx.ancestors(call) if isinstance(a, cst.ClassDef)), None)
        return owner is not None and any(
            self.ctx.symbols.qualname(base.value) in _SEQUENTIAL for base in owner.bases
        )

    def _ordered_dict_values(
        self, expr: cst.BaseExpression
    ) -> list[cst.BaseExpression | None] | None:
        if not isinstance(expr, cst.Call) or len(expr.args) != 1:
            return None
        if self.ctx.symbols.qualname(expr.func) != "collections.OrderedDict" and not is_name(
            expr.func, "OrderedDict"
        ):
            return None
        items = expr.args[0].value
        if isinstance(items, cst.Dict):
            return [e.value if isinstance(e, cst.DictElement) else None for e in items.elements]
        if not isinstance(items, cst.List | cst.Tuple):
            return None
        pairs = [e.value for e in items.elements]
        return [
            p.elements[1].value if isinstance(p, cst.Tuple) and len(p.elements) == 2 else None
            for p in pairs
        ]

    # -- lists passed as nn.Sequential(*layers) ----------------------------------------
    def _list_runs(self) -> list[list[cst.BaseExpression | None]]:
        """Runs of modules added in order to a list that only grows and goes into a Sequential."""
        runs: list[list[cst.BaseExpression | None]] = []
        for call in self.calls:
            if not self._is_sequential_call(call):
                continue
            for arg in call.args:
                if arg.star == "*" and isinstance(arg.value, cst.Name):
                    runs.extend(self._runs_of(arg.value))
        return runs

    def _runs_of(self, name: cst.Name) -> list[list[cst.BaseExpression | None]]:
        scope = self.b.scope_of(name)
        statements: list[cst.SimpleStatementLine] = []
        for use in self.b.uses(scope, name.value):
            if use is name:
                continue
            statement = self._growing_statement(use)
            if statement is None:
                return []  # the list is used in some other way: order unknown
            statements.append(statement)
        runs: list[list[cst.BaseExpression | None]] = []
        previous: cst.SimpleStatementLine | None = None
        for statement in statements:
            items, resets = self._added(statement)
            if resets or previous is None or not self._next_sibling(previous, statement):
                runs.append([])
            runs[-1].extend(items)
            previous = statement
        return runs

    def _growing_statement(self, use: cst.Name) -> cst.SimpleStatementLine | None:
        """The one-statement line that grows the list `use` names, or None for any other use."""
        outer = self.b.parents.get(use)
        line = self.b.parents.get(outer) if outer is not None else None
        while line is not None and not isinstance(line, cst.SimpleStatementLine):
            line = self.b.parents.get(line)
        if line is None or len(line.body) != 1:
            return None
        statement = line.body[0]
        grows = (
            (
                isinstance(statement, cst.Assign)
                and len(statement.targets) == 1
                and is_name(statement.targets[0].target, use.value)
                and isinstance(statement.value, cst.List)
            )
            or (
                isinstance(statement, cst.AugAssign)
                and is_name(statement.target, use.value)
                and isinstance(statement.operator, cst.AddAssign)
                and isinstance(statement.value, cst.List)
            )
            or (
                isinstance(statement, cst.Expr)
                and isinstance(statement.value, cst.Call)
                and is_attribute(statement.value.func, "append", "extend")
                and is_name(statement.value.func.value, use.value)  # type: ignore[attr-defined]
            )
        )
        return line if grows else None

    @staticmethod
    def _added(line: cst.SimpleStatementLine) -> tuple[list[cst.BaseExpression | None], bool]:
        """The modules a growing statement adds, and whether it starts the list afresh."""
        statement = line.body[0]
        if isinstance(statement, cst.Assign | cst.AugAssign) and isinstance(
            statement.value, cst.List
        ):
            values = [
                None if isinstance(e, cst.StarredElement) else e.value
                for e in statement.value.elements
            ]
            return values, isinstance(statement, cst.Assign)
        call = statement.value if isinstance(statement, cst.Expr) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return [None], False  # not a growing statement (`_growing_statement` keeps none)
        arg = call.args[0].value if len(call.args) == 1 and not call.args[0].star else None
        if call.func.attr.value == "append":
            return [arg], False
        return (
            [None if isinstance(e, cst.StarredElement) else e.value for e in arg.elements]
            if isinstance(arg, cst.List)
            else [None]
        ), False

    def _next_sibling(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        parent = self.b.parents.get(first)
        if (
            parent is None
            or parent is not self.b.parents.get(second)
            or not hasattr(parent, "body")
        ):
            return False
        body = list(parent.body)
        return (
            body.index(first) + 1 == body.index(second)
            if first in body and second in body
            else False
        )

    # -- a run of modules in order ------------------------------------------------------
    def _check_run(
        self, elements: list[cst.BaseExpression | None], reads: dict[int | None, cst.Attribute]
    ) -> None:
        for position, (first, second) in enumerate(zip(elements, elements[1:])):
            if first is None or second is None:
                continue
            layer, norm = self._constructed(first), self._constructed(second)
            if layer and norm and layer.kind in _BIAS_AT and norm.kind in _NORMS:
                self._report(layer, norm, reads.get(position, reads.get(None)))

    def _bias_reads_by_position(self, call: cst.Call) -> dict[int | None, cst.Attribute]:
        """The `seq[i].bias` reads of the Sequential `call` builds for a name or attribute
        (`self.bottleneck[0].bias.data.fill_(0.1)`) by position `i`, None for a position that is
        no literal: the fix must not take away a bias the code sets or reads."""
        parent = self.b.parents.get(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return {}
        holder = dotted(parent.targets[0].target)
        if holder is None:
            return {}
        positions: dict[int | None, cst.Attribute] = {}
        for read in self._bias_attributes():
            if not isinstance(read.value, cst.Subscript) or dotted(read.value.value) != holder:
                continue
            index = read.value.slice[0].slice if len(read.value.slice) == 1 else None
            value = index.value if isinstance(index, cst.Index) else None
            positions.setdefault(int(value.value) if isinstance(value, cst.Integer) else None, read)
        return positions

    def _bias_attributes(self) -> list[cst.Attribute]:
        """Every `<expr>.bias` of the file, collected once."""
        if self.bias_attributes is None:
            self.bias_attributes = [
                n
                for n in walk(self.ctx.module)
                if type(n) is cst.Attribute and n.attr.value == "bias"
            ]
        return self.bias_attributes

    # -- custom modules: forward data flow ---------------------------------------------
    def _check_class(self, owner: cst.ClassDef) -> None:
        feeds: dict[str, list[cst.Call]] = {}  # conv attribute -> its calls that feed a BatchNorm
        norms: dict[str, _Layer] = {}
        for node in walk(owner.body):
            if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
                continue
            norm = self._attribute_layer(owner, node.func)
            if norm is None or norm.kind not in _NORMS:
                continue
            fed = self._fed_call(owner, node)
            if fed is not None and isinstance(fed.func, cst.Attribute):
                feeds.setdefault(fed.func.attr.value, []).append(fed)
                norms[fed.func.attr.value] = norm
        for attr, calls in feeds.items():
            layer = self._held_layer(owner, attr)
            if layer is not None and self._only_feeds(owner, attr, calls):
                self._report(layer, norms[attr])

    def _attribute_layer(self, owner: cst.ClassDef, attribute: cst.Attribute) -> _Layer | None:
        """The layer behind `self.<attr>` in a method of `owner`."""
        return (
            self._held_layer(owner, attribute.attr.value)
            if self.b.self_class(attribute) is owner
            else None
        )

    def _held_layer(self, owner: cst.ClassDef, attr: str) -> _Layer | None:
        """The layer `self.<attr>` holds when the class assigns it one constructor (or None)."""
        values = [
            v for v in self.b.attribute_values(owner, attr) if v is None or not is_name(v, "None")
        ]
        if len(values) != 1 or values[0] is None:
            return None  # `self.conv = None` in another branch is fine: the layer is then absent
        return self._layer(values[0])

    def _fed_call(self, owner: cst.ClassDef, norm_call: cst.Call) -> cst.Call | None:
        """The `self.<layer>(...)` call whose output is the BatchNorm call's input, if straight."""
        if len(norm_call.args) != 1 or norm_call.args[0].keyword or norm_call.args[0].star:
            return None
        value = norm_call.args[0].value
        if isinstance(value, cst.Call):
            return self._layer_call(owner, value)
        if isinstance(value, cst.Name):
            return self._through_name(owner, value)
        return None

    def _layer_call(self, owner: cst.ClassDef, call: cst.Call) -> cst.Call | None:
        if not isinstance(call.func, cst.Attribute):
            return None
        layer = self._attribute_layer(owner, call.func)
        return call if layer is not None and layer.kind in _BIAS_AT else None

    def _through_name(self, owner: cst.ClassDef, arg: cst.Name) -> cst.Call | None:
        """`y = self.conv(x)` then `... self.bn(y) ...` on the next line that mentions `y`."""
        reaching = self.b.dominating(arg)
        if not reaching or len(reaching) != 1 or not isinstance(reaching[0].node, cst.Assign):
            return None
        assign = reaching[0].node
        if len(assign.targets) != 1 or not isinstance(reaching[0].exact, cst.Call):
            return None
        fed = self._layer_call(owner, reaching[0].exact)
        first, second = self.b.parents.get(assign), self._line(arg)
        if fed is None or first is None or second is None:
            return None
        if not self._next_mention(first, second, arg.value):
            return None
        uses = [
            u
            for u in self.b.uses(self.b.scope_of(arg), arg.value)
            if u is not arg and not self._is_store(u)
        ]
        in_second = [u for u in uses if self.b.is_ancestor(second, u)]
        opening = second.body[0]
        rebinds = (
            isinstance(opening, cst.Assign)
            and len(opening.targets) == 1
            and is_name(opening.targets[0].target, arg.value)
        ) or isinstance(opening, cst.Return)
        if in_second or (uses and not rebinds):
            return None  # the layer's output is also read elsewhere, where its bias matters
        return fed

    def _line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.SimpleStatementLine):
                return ancestor if len(ancestor.body) == 1 else None
            if isinstance(ancestor, cst.BaseCompoundStatement):
                return None
        return None

    def _next_mention(self, first: cst.CSTNode, second: cst.CSTNode, name: str) -> bool:
        """`second` comes after `first` in the same block, with no mention of `name` between."""
        parent = self.b.parents.get(first)
        if parent is None or parent is not self.b.parents.get(second):
            return False
        body = list(parent.body)  # type: ignore[attr-defined]
        start, end = body.index(first), body.index(second)
        if end <= start:
            return False
        between = body[start + 1 : end]
        return not any(
            isinstance(n, cst.Name) and n.value == name for s in between for n in walk(s)
        )

    def _only_feeds(self, owner: cst.ClassDef, attr: str, calls: list[cst.Call]) -> bool:
        """Every use of `self.<attr>` in the class is one of `calls`, or a harmless attribute read."""
        fed = {c.func for c in calls}
        for node in walk(owner.body):
            if (
                not isinstance(node, cst.Attribute)
                or not isinstance(node.value, cst.Name)
                or node.attr.value != attr
                or self.b.self_class(node) is not owner
            ):
                continue
            parent = self.b.parents.get(node)
            if node in fed or isinstance(parent, cst.AssignTarget):
                continue
            if (
                isinstance(parent, cst.Attribute)
                and parent.value is node
                and parent.attr.value in _HARMLESS_ATTRS
            ):
                continue
            if (isinstance(parent, cst.If) and parent.test is node) or (
                parent is not None
                and isinstance(parent, cst.Comparison)
                and len(parent.comparisons) == 1
                and isinstance(parent.comparisons[0].operator, cst.Is | cst.IsNot)
            ):
                continue  # `if self.conv:` / `self.conv is not None`: whether the layer exists
            return False
        return True

    # -- reporting and the fix ---------------------------------------------------------
    def _report(self, layer: _Layer, norm: _Layer, reader: cst.Attribute | None = None) -> None:
        if (
            layer.call in self.reported
            or not self._bias_on(layer)
            or not self._same_features(layer, norm)
        ):
            return
        if self._fusion_fixture(layer.call) or self._trained_frozen(layer.call):
            return
        if self.ctx.fact(DeadBranches).unbuilt(layer.call):
            return  # a block the project never builds: its bias costs nothing
        self.reported.add(layer.call)
        new = self._without_bias(layer)
        fix = (
            self.make_fix(
                "Pass `bias=False`",
                Applicability.UNSAFE,
                self.ctx.replace(layer.call, new),
                writes="`bias=False`",
            )
            if new
            else None
        )
        line = self.ctx.start(norm.call).row
        message = f"`{layer.kind}` feeds straight into `{norm.kind}` (line {line}), which cancels its bias"
        reader = reader or self._bias_reader(layer.kind)
        if reader is not None and self._freezes(reader, layer):
            return  # `seq[6].bias.requires_grad = False`: the author already keeps it untrained
        if reader is not None:
            fix = None
            read = self.ctx.start(reader).row
            message = f"`{layer.kind}` feeds into `{norm.kind}` (line {line}), which cancels its bias (no fix: line {read} reads it)"
        self.report(layer.call, message, fix)

    def _freezes(self, read: cst.Attribute, layer: _Layer) -> bool:
        """`<layer>.bias.requires_grad = False` or `<layer>.bias.requires_grad_(False)`: the
        bias is taken off training by hand, so it costs no gradient and no optimizer update.
        Only a Sequential's layer named by its literal position (`seq[6]`, not `seq[-2]` or
        `seq[i]`), in the class that builds it, outside any branch."""
        indexed = read.value
        if not (
            isinstance(indexed, cst.Subscript)
            and len(indexed.slice) == 1
            and isinstance(indexed.slice[0].slice, cst.Index)
            and isinstance(indexed.slice[0].slice.value, cst.Integer)
            and self._owner(read) is self._owner(layer.call)
            and not any(isinstance(a, cst.If | cst.IfExp) for a in self._up_to_function(read))
        ):
            return False
        parent = self.b.parents.get(read)
        if not isinstance(parent, cst.Attribute) or parent.value is not read:
            return False
        holder = self.b.parents.get(parent)
        if parent.attr.value == "requires_grad":
            target = self.b.parents.get(holder) if isinstance(holder, cst.AssignTarget) else None
            return isinstance(target, cst.Assign) and is_name(target.value, "False")
        return (
            parent.attr.value == "requires_grad_"
            and isinstance(holder, cst.Call)
            and len(holder.args) == 1
            and is_name(holder.args[0].value, "False")
        )

    def _owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        return next((a for a in self.b.ancestors(node) if isinstance(a, cst.ClassDef)), None)

    def _up_to_function(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The ancestors of `node` inside its function."""
        found = []
        for ancestor in self.b.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                break
            found.append(ancestor)
        return found

    # -- reads of `.bias` through modules found by walking a model ---------------------
    def _bias_reader(self, kind: str) -> cst.Attribute | None:
        """A `.bias` read that would fail on a `kind` layer without one: on a module found by
        walking a model (`for m in self.modules()`, a function given to `.apply`) or narrowed by
        `isinstance(m, nn.<kind>)`, with no `m.bias is None` check around it."""
        if self.bias_reads is None:
            self.bias_reads = [n for n in self._bias_attributes() if isinstance(n.value, cst.Name)]
        for read in self.bias_reads:
            assert isinstance(read.value, cst.Name)  # as collected above
            name = read.value.value
            classes = self._isinstance_classes(read, name)
            if classes is not None and not self._may_be(classes, kind):
                continue
            if (classes is not None or self._walked_module(read, name)) and not self._none_checked(
                read, name
            ):
                return read
        return None

    def _isinstance_classes(self, read: cst.CSTNode, name: str) -> list[cst.BaseExpression] | None:
        """The classes of the `isinstance(name, ...)` tests of the `if`s around `read`, or None."""
        found: list[cst.BaseExpression] | None = None
        for ancestor in self.ctx.ancestors(read):
            if not isinstance(ancestor, cst.If):
                continue
            for call in walk(ancestor.test):
                if (
                    isinstance(call, cst.Call)
                    and is_name(call.func, "isinstance")
                    and len(call.args) == 2
                    and is_name(call.args[0].value, name)
                ):
                    classes = call.args[1].value
                    found = (found or []) + (
                        [e.value for e in classes.elements]
                        if isinstance(classes, cst.Tuple)
                        else [classes]
                    )
        return found

    def _may_be(self, classes: list[cst.BaseExpression], kind: str) -> bool:
        """Whether a module passing the isinstance test may be a `kind` layer (an unknown class may)."""
        for cls in classes:
            qualname = self.ctx.symbols.qualname(cls) or ""
            last = qualname.rsplit(".", 1)[-1]
            if not qualname.startswith("torch.nn.") or last == kind or last.startswith("_"):
                return True
        return False

    def _walked_module(self, read: cst.CSTNode, name: str) -> bool:
        for ancestor in self.ctx.ancestors(read):
            if (
                isinstance(ancestor, cst.For | cst.CompFor)
                and _walks_modules(ancestor.iter)
                and _binds(ancestor.target, name)
            ):
                return True
            if isinstance(ancestor, cst.FunctionDef) and any(
                p.name.value == name for p in ancestor.params.params
            ):
                return (
                    re.search(
                        rf"\.apply\(\s*(?:self\.)?{re.escape(ancestor.name.value)}\s*\)",
                        self.ctx.source,
                    )
                    is not None
                )
        return False

    def _none_checked(self, read: cst.CSTNode, name: str) -> bool:
        """A `m.bias is None` / `is not None` test in the loop or function body around the read."""
        for ancestor in self.ctx.ancestors(read):
            if isinstance(ancestor, cst.For | cst.FunctionDef | cst.Module):
                return (
                    re.search(
                        rf"\b{re.escape(name)}\.bias\s+is\s+(?:not\s+)?None\b",
                        self.ctx.code(ancestor),
                    )
                    is not None
                )
        return False

    def _trained_frozen(self, node: cst.CSTNode) -> bool:
        """In a class whose BatchNorms the project trains in eval mode with their affine frozen
        (`ProjectIndex.batchnorms_frozen`): the bias is then the layer's only trainable shift."""
        owner = next((a for a in self.ctx.ancestors(node) if isinstance(a, cst.ClassDef)), None)
        if owner is None or self.ctx.project is None:
            return False
        if self.frozen_classes is None:
            self.frozen_classes = (
                self.ctx.project.batchnorms_frozen(self.ctx.absolute_path) or frozenset()
            )
        return owner.name.value in self.frozen_classes

    def _fusion_fixture(self, node: cst.CSTNode) -> bool:
        """Inside a class or function named for BatchNorm fusion, where the bias is what is tested."""
        return any(
            isinstance(a, cst.ClassDef | cst.FunctionDef) and _BN_FUSION.search(a.name.value)
            for a in self.ctx.ancestors(node)
        )

    def _bias_arg(self, layer: _Layer) -> cst.Arg | None:
        positional = [a for a in layer.call.args if not a.keyword and not a.star]
        keyword = next(
            (a for a in layer.call.args if a.keyword and a.keyword.value == "bias"), None
        )
        at = _BIAS_AT[layer.kind]
        return keyword or (positional[at] if len(positional) > at else None)

    def _bias_on(self, layer: _Layer) -> bool:
        arg = self._bias_arg(layer)
        if arg is not None:
            return is_name(arg.value, "True")
        if any(a.star == "*" for a in layer.call.args):
            return False
        return all(self._no_bias_key(a.value) for a in layer.call.args if a.star == "**")

    def _no_bias_key(self, expr: cst.BaseExpression) -> bool:
        """Whether `**expr` evidently holds no `bias` key: a dict literal or `dict(...)` bound here."""
        value = self.b.value_of(expr) if isinstance(expr, cst.Name) else expr
        if isinstance(value, cst.Dict):
            keys = [e.key for e in value.elements if isinstance(e, cst.DictElement)]
            return len(keys) == len(value.elements) and all(
                isinstance(k, cst.SimpleString) and k.evaluated_value != "bias" for k in keys
            )
        if isinstance(value, cst.Call) and is_name(value.func, "dict"):
            return all(a.keyword is not None and a.keyword.value != "bias" for a in value.args)
        return False

    def _same_features(self, layer: _Layer, norm: _Layer) -> bool:
        """A BatchNorm after a Linear normalises dim 1, which is the Linear's output only for 2-d input."""
        out = self._arg_text(
            layer.call, 0 if layer.kind.startswith("Lazy") else 1, "out_channels", "out_features"
        )
        features = self._arg_text(norm.call, 0, "num_features")
        if layer.kind.endswith("Linear"):
            return out is not None and out == features
        return not (out and features and out.isdigit() and features.isdigit() and out != features)

    def _arg_text(self, call: cst.Call, at: int, *keywords: str) -> str | None:
        keyword = next((a for a in call.args if a.keyword and a.keyword.value in keywords), None)
        positional = [a for a in call.args if not a.keyword and not a.star]
        arg = keyword or (positional[at] if len(positional) > at else None)
        return "".join(self.ctx.code(arg.value).split()) if arg is not None else None

    def _without_bias(self, layer: _Layer) -> cst.Call | None:
        arg = self._bias_arg(layer)
        if arg is not None:
            args = [
                a.with_changes(value=cst.Name("False")) if a is arg else a for a in layer.call.args
            ]
            return layer.call.with_changes(args=args)
        args = list(layer.call.args)
        new = cst.Arg(
            keyword=cst.Name("bias"),
            value=cst.Name("False"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        if not args:
            return layer.call.with_changes(args=[new])
        last = args[-1]
        if isinstance(
            last.comma, cst.Comma
        ):  # trailing comma: keep the one-argument-per-line layout
            separator = (
                args[-2].comma
                if len(args) > 1 and isinstance(args[-2].comma, cst.Comma)
                else last.comma
            )
            args[-1] = last.with_changes(comma=separator)
            args.append(new.with_changes(comma=last.comma))
        else:
            args[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                whitespace_after_arg=cst.SimpleWhitespace(""),
            )
            args.append(new.with_changes(whitespace_after_arg=last.whitespace_after_arg))
        return layer.call.with_changes(args=args)


def _walks_modules(iterable: cst.BaseExpression) -> bool:
    """`model.modules()`, `self.children()`, `net.named_modules()`: every submodule, any class."""
    return isinstance(iterable, cst.Call) and is_attribute(
        iterable.func, "modules", "children", "named_modules", "named_children"
    )


def _binds(target: cst.BaseExpression, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(target))
