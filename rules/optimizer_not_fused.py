"""TL109 optimizer-not-fused."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import BindingKind, SemanticModel
from torchlint.analysis.nodes import is_attribute, is_name, walk
from torchlint.analysis.training import Training, optimizer_class
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

# The release from which each optimizer's `fused=True` is a documented option on CUDA.
_FUSED_SINCE = {"Adam": (2, 0), "AdamW": (2, 0), "SGD": (2, 3)}
# Arguments that decide the implementation, or that fused=True cannot be combined with.
_CHOSEN = frozenset({"fused", "foreach", "differentiable"})


def _parameters(node: cst.CSTNode) -> bool:
    """`X.parameters()` / `X.named_parameters()`."""
    return isinstance(node, cst.Call) and is_attribute(node.func, "parameters", "named_parameters")


def _appended(args: Sequence[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """`args` plus `new` at the end, laid out like the arguments before it (one per line stays one per line)."""
    if not args:
        return [new]
    last = args[-1]
    between = args[-2].comma if len(args) > 1 else cst.MaybeSentinel.DEFAULT
    if not isinstance(between, cst.Comma):
        between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(last.comma, cst.Comma):  # a trailing comma stays trailing
        new = new.with_changes(comma=last.comma)
    return [*args[:-1], last.with_changes(comma=between), new]


class OptimizerNotFused(Rule):
    code = "TL109"
    name = "optimizer-not-fused"
    summary = "Adam/AdamW/SGD on GPU parameters without `fused=True`"
    default_enabled = False
    fix_availability = FixAvailability.UNSAFE
    fix_versions = {
        "`fused=True` (Adam, AdamW; parameters already on the GPU)": "2.0",
        "`fused=True` (SGD)": "2.3",
        "`fused=True` (parameters still on the CPU when the optimizer is built)": "2.4",
    }
    tokens = ("Adam", "SGD")
    docs = """
## What it does
Flags `torch.optim.Adam`, `AdamW` and `SGD` built over a model's parameters (`model.parameters()`,
directly, filtered, in parameter groups, or through a variable) without a `fused` or `foreach`
argument, in a file that trains (it calls `backward()` or an optimizer's `step()`) and puts
its work on a GPU (`.cuda()`, `.to(device)`, a `"cuda"` device string; a run on XLA devices
or pinned to the CPU with `accelerator="cpu"` is none).

Only when the target torch version documents `fused=True` for the optimizer: 2.0 for Adam and
AdamW, 2.3 for SGD. Not flagged: optimizers given `fused=`, `foreach=` (the implementation
was chosen), `differentiable=` (which fused does not support) or `**kwargs`, optimizers over
plain tensors rather than a module's parameters, files with sparse embeddings
(`sparse=True`), whose gradients the fused kernels do not take, optimizers of a library
module's `__main__` demo or self-test (the module is imported by others of the project, and the
block trains a toy net on random tensors, reading neither a loader nor the command line),
files whose only training is such a block, and unit tests. This rule is opt-in: enable it
with `--extend-select TL109`.

## Why is this bad?
Without `fused`, the optimizer on CUDA uses the `foreach` implementation: it updates the
parameters tensor by tensor in groups, launching a handful of kernels for each of the many
elementwise operations of the update. The fused implementation does the whole update of every
parameter in a few kernel launches and reads each tensor once, which is measurably faster
when the model has many parameter tensors or the step is short.

## Example
```python
model = Net().to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
```

## Use instead
```python
model = Net().to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
```

## Fix safety
Unsafe. `fused=True` requires every parameter to be a floating-point tensor on a device the
fused kernels support: CUDA, and since torch 2.4 also the CPU (Adam, AdamW, SGD). Before 2.4,
a script that falls back to the CPU fails with `fused=True`, and the check runs when the
optimizer is built, so the model must be on the GPU by then; write
`fused=(device.type == "cuda")` for such scripts. The fused kernels also round differently
from the `foreach` path, so losses agree only to within floating-point tolerance.

## References
- [torch.optim: algorithms and their foreach and fused implementations](https://pytorch.org/docs/stable/optim.html#algorithms)
- [torch.optim.AdamW](https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html)
- [torch.optim.SGD](https://pytorch.org/docs/stable/generated/torch.optim.SGD.html)
- [PyTorch Performance Tuning Guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): use fused optimizers](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    _SETUP = "import torch\n\nmodel = Net().to('cuda')\n"
    valid = [
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.Adam(model.parameters(), foreach=False)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.SGD(model.parameters(), lr=0.1, **extra)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            target_torch_version="2.2",
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.AdamW(model.parameters())
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            target_torch_version="1.13",
        ),
        Valid(
            """
            import torch

            model = Net()
            opt = torch.optim.AdamW(model.parameters())
            for x in loader:
                model(x).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.AdamW(model.parameters())
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            w = torch.zeros(3, requires_grad=True)
            opt = torch.optim.Adam([w])
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.RMSprop(model.parameters())
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
        Valid(
            """
            import torch

            model = Net().to('cuda')
            emb = torch.nn.Embedding(10, 3, sparse=True)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch

            model = Net().to('cuda')
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            fixed="""
            import torch

            model = Net().to('cuda')
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            line=4,
            column=7,
            message="`AdamW` on GPU parameters without `fused=True`, which updates them all in a few kernels",
        ),
        Invalid(
            """
            from torch import optim

            device = torch.device('cuda')
            net.to(device)
            params = [p for p in net.parameters() if p.requires_grad]
            optimizer = optim.SGD(
                params,
                lr=0.1,
                momentum=0.9,
            )
            for x in loader:
                net(x.to(device)).sum().backward()
                optimizer.step()
            """,
            fixed="""
            from torch import optim

            device = torch.device('cuda')
            net.to(device)
            params = [p for p in net.parameters() if p.requires_grad]
            optimizer = optim.SGD(
                params,
                lr=0.1,
                momentum=0.9,
                fused=True,
            )
            for x in loader:
                net(x.to(device)).sum().backward()
                optimizer.step()
            """,
            line=6,
            column=13,
            message="`SGD` on GPU parameters without `fused=True`, which updates them all in a few kernels",
        ),
        Invalid(
            """
            import torch

            model = Net().to('cuda')
            from torch.optim import Adam
            opt = Adam([{'params': model.head.parameters(), 'lr': 1e-2}, {'params': model.body.parameters()}])
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            fixed="""
            import torch

            model = Net().to('cuda')
            from torch.optim import Adam
            opt = Adam([{'params': model.head.parameters(), 'lr': 1e-2}, {'params': model.body.parameters()}], fused=True)
            for x in loader:
                model(x.cuda()).sum().backward()
                opt.step()
            """,
            line=5,
            column=7,
            message="`Adam` on GPU parameters without `fused=True`, which updates them all in a few kernels",
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.sparse = False
        self.optimizers: list[tuple[cst.Call, str]] = []

    def visit_Arg(self, node: cst.Arg) -> None:
        if is_name(node.keyword, "sparse") and is_name(node.value, "True"):
            self.sparse = True

    def visit_Call(self, node: cst.Call) -> None:
        name = optimizer_class(self.ctx.symbols.qualname(node.func))
        since = _FUSED_SINCE.get(name or "")
        if (
            name is not None
            and since is not None
            and self.ctx.target_torch_version >= since
            and self._defaults_apply(node)
        ):
            self.optimizers.append((node, name))

    def finish(self) -> None:
        if self.sparse or not self.optimizers:
            return
        training, demo = self.ctx.fact(Training), self.ctx.fact(LibraryDemo)
        if not training.trains or not self.ctx.fact(LoopFacts).uses_gpu:
            return
        if demo.only_in_self_test(training.step_calls):
            return  # a library module's `__main__` self-test: the project trains elsewhere
        for call, name in self.optimizers:
            if demo.only_in_self_test([call]):
                continue
            params = (
                call.args[0].value
                if call.args and call.args[0].keyword is None
                else self._keyword(call, "params")
            )
            if params is None or not self._module_parameters(params):
                continue
            fused = cst.Arg(
                cst.Name("True"),
                keyword=cst.Name("fused"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            edit = self.ctx.replace(call, call.with_changes(args=_appended(call.args, fused)))
            fix = self.make_fix(
                "Pass `fused=True`",
                Applicability.UNSAFE,
                edit,
                writes=self._fused_entry(call, name),
            )
            self.report(
                call,
                f"`{name}` on GPU parameters without `fused=True`, which updates them all in a few kernels",
                fix,
            )

    def _fused_entry(self, call: cst.Call, name: str) -> str:
        """Before torch 2.4 the fused kernels refuse parameters still on the CPU when the
        optimizer is built; they are evidently on the GPU when their module was moved earlier."""
        if not self._moved_before(call):
            return "`fused=True` (parameters still on the CPU when the optimizer is built)"
        return (
            "`fused=True` (SGD)"
            if name == "SGD"
            else "`fused=True` (Adam, AdamW; parameters already on the GPU)"
        )

    def _moved_before(self, call: cst.Call) -> bool:
        owners = {
            self.ctx.code(n.func.value)
            for n in walk(call)
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and _parameters(n)
        }
        before = "\n".join(self.ctx.line(row) for row in range(1, self.ctx.start(call).row))
        return bool(owners) and all(
            re.search(
                rf"(^|[^\w.]){re.escape(owner)}\s*(=.*)?\.\s*(to|cuda)\s*\(", before, re.MULTILINE
            )
            for owner in owners
        )

    @staticmethod
    def _defaults_apply(call: cst.Call) -> bool:
        """No argument chooses the implementation and none could (`**kwargs`)."""
        return not any(
            a.star or (a.keyword is not None and a.keyword.value in _CHOSEN) for a in call.args
        )

    @staticmethod
    def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
        return next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None
        )

    def _module_parameters(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether `node` is built from some module's `.parameters()`, directly or through variables."""
        if depth > 3:
            return False
        scopes = self.ctx.fact(SemanticModel)
        for current in walk(node):
            if _parameters(current):
                return True
            if isinstance(current, cst.Name) and scopes.all_bindings(current):
                values = [
                    b.value
                    for b in scopes.all_bindings(current)
                    if b.kind in (BindingKind.ASSIGN, BindingKind.AUGMENT) and b.value is not None
                ]
                if any(self._module_parameters(v, depth + 1) for v in values):
                    return True
        return False
