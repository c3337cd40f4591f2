"""TL004 data-parallel."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cached_property

import libcst as cst

from torchlint.analysis.availability import runs_without_cuda
from torchlint.analysis.dead_branches import DeadBranches
from torchlint.analysis.evaluation import Evaluation
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.nodes import find_all, is_name, past_methods
from torchlint.analysis.symbols import dotted
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rule, Valid

_NAMES = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
    }
)
# The functional form: replicates the module on every call, as DataParallel's forward does.
_FUNCTIONAL = frozenset(
    {"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"}
)
_MAX_DEPTH = 8
_ALIAS_TEXT = re.compile(r"=\s*[\w.]*\b(?:DataParallel|data_parallel)\s*(?:#.*)?$", re.MULTILINE)


# Methods of the wrapper that touch its weights or placement, never its forward.
_WEIGHT_METHODS = frozenset({"load_state_dict", "cuda", "to", "eval", "train", "cpu"})


class DataParallel(Rule):
    code = "TL004"
    name = "data-parallel"
    gpu_only = True  # DataParallel's cost is copying between GPUs
    summary = "`nn.DataParallel` is slower than `DistributedDataParallel`, even on one machine"
    fix_availability = FixAvailability.DISPLAY_ONLY
    tokens = ("DataParallel", "data_parallel")
    docs = """
## What it does
Flags constructions of `torch.nn.DataParallel` under any import alias, of classes derived from
it (in the file, or imported from another file of the project), and calls of its functional
form `torch.nn.parallel.data_parallel`.

Not flagged: a construction that runs only where CUDA is unavailable (the `else` of
`if torch.cuda.is_available():`, also through `not`, `and`/`or` and a name bound to that test),
which scripts keep so that `model.module` works on the CPU path: without a GPU, DataParallel
calls the module directly. Nor a wrap bound to a name that is only unwrapped again
(`model = model.module`), given weights (`model.load_state_dict(...)`) or read for them
(`torch.save(model.state_dict(), path)`): the usual way to load a checkpoint saved from a
wrapped model, or to save one under its `module.` names, whose wrapper never runs a forward; such a
wrapper may also be stored (`nets.fan = fan`) once it is given its inner module's method
(`fan.get_heatmap = fan.module.get_heatmap`), through which its callers reach the module. The
wrap may be placed on the way (`nn.DataParallel(net).to(device)`) and returned by a
checkpoint's loader, a module-level function of a module no other file imports whose name is
only ever called, when every call of it binds the result to a name that is only unwrapped too,
there or in a module-level function of the file it is handed to by position
(`model.module.forward(x)` in `synthesis(model, text)`).
Nor a wrap in a module-level class that the project never builds: called only from
functions that are never called themselves (a vendored generator or trainer left unused), and
never handed over, decorated, derived from or reached through a module attribute, with no
notebook or configuration naming it or its builder and no module looking class names up from
text (`eval(name)`). A function that nothing calls is still flagged: it is an entry point or
API, whose callers are its users.
Nor a wrap bound to a name whose every forward gets one example made into a batch of one
(`model(img)` after `img = transform(img).unsqueeze(0)`), the name otherwise only placed,
put in eval mode or unwrapped: DataParallel splits a batch along its first dimension, so a
batch of one runs on one GPU and the wrapper only calls its module. The same holds for a wrap
stored on the instance (`self.model = nn.DataParallel(self.model)` in a predictor's
`__init__`) when every `self.model` of its class is such a forward, a placement or `.module`,
and no code outside the class (another receiver's `.model`, a module importing this one that
writes the name) may feed it something else.

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
        Valid(
            """
            import torch
            net = torch.nn.DataParallel(Net())
            net.load_state_dict(torch.load(path))
            net = net.module
            net.cuda().eval()
            """
        ),
        # Wrapped only to save the weights under the `module.` names a wrapped model's checkpoint has.
        Valid(
            """
            import torch
            net = torch.nn.DataParallel(build_net())
            torch.save({"model_state": net.state_dict()}, "net.pth")
            """
        ),
        # The wrapper hands its method to callers from the inner module: only its weights' names
        # (`module.`-prefixed, as the checkpoint has them) are kept, its forward never runs.
        Valid(
            """
            import torch
            fan = torch.nn.DataParallel(FAN().eval())
            fan.get_heatmap = fan.module.get_heatmap
            nets.fan = fan
            """
        ),
        Valid(
            """
            import torch
            ok = isinstance(m, torch.nn.DataParallel)
            """
        ),
        Valid(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            m = DDP(m)
            """
        ),
        Valid(
            """
            # nn.DataParallel(model)
            name = 'nn.DataParallel(model)'
            """
        ),
        Valid(
            """
            class DataParallel:
                pass
            m = DataParallel(m)
            """
        ),
        Valid(
            """
            import torch
            wrapped = type(m) is torch.nn.DataParallel
            """
        ),
        # Without CUDA, DataParallel calls the module directly: the wrap only keeps `.module`.
        Valid(
            """
            import torch
            use_cuda = torch.cuda.is_available()
            if use_cuda:
                model = model.cuda()
            else:
                model = torch.nn.DataParallel(model)
            """
        ),
        Valid(
            """
            import torch
            if not torch.cuda.is_available() and not args.force:
                model = torch.nn.DataParallel(model)
            """
        ),
        # A name bound in the function, or a parameter, is not torch's
        Valid(
            """
            from torch.nn import DataParallel
            def wrap(model):
                DataParallel = MyWrapper
                return DataParallel(model)
            """
        ),
        Valid(
            """
            from torch import nn
            def build(model, nn=my_layers):
                return nn.DataParallel(model)
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch
            model = torch.nn.DataParallel(model)
            """,
            line=2,
            column=9,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            from torch import nn
            model = nn.DataParallel(model, device_ids=[0, 1])
            """,
            line=2,
            column=9,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
        Invalid(
            """
            from torch.nn import DataParallel as DP
            model = DP(model)
            """,
            line=2,
            column=9,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
        Invalid(
            """
            import torch as T
            model = T.nn.parallel.DataParallel(model)
            """,
            line=2,
            column=9,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
        Invalid(
            """
            from torch import nn
            class Balanced(nn.DataParallel):
                pass
            class Chunked(Balanced):
                pass
            model = Chunked(model, device_ids=[0, 1])
            """,
            line=6,
            column=9,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
        Invalid(
            """
            from torch.nn import DataParallel
            def other(model):
                DataParallel = MyWrapper
                return DataParallel(model)
            model = DataParallel(model)
            """,
            line=5,
            column=9,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch
            net = torch.nn.DataParallel(Net())
            net.load_state_dict(torch.load(path))
            out = net(batch)
            """,
            line=2,
            column=7,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch
            net = torch.nn.DataParallel(Net())
            loss = net(batch).sum()
            torch.save(net.state_dict(), path)
            """,
            line=2,
            column=7,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch
            fan = torch.nn.DataParallel(FAN())
            fan.get_heatmap = fan.module.get_heatmap
            heatmaps = fan(images)
            """,
            line=2,
            column=7,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch
            Parallel = torch.nn.DataParallel
            model = Parallel(model)
            """,
            line=3,
            column=9,
            message="use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch.nn as nn
            class Net(nn.Module):
                def forward(self, x):
                    if self.ngpu > 1:
                        return nn.parallel.data_parallel(self.body, x, range(self.ngpu))
                    return self.body(x)
            """,
            line=5,
            column=20,
            message="`data_parallel` replicates the module to every GPU on each call; use `DistributedDataParallel`",
        ),
        Invalid(
            """
            import torch
            if torch.cuda.is_available():
                model = torch.nn.DataParallel(model).cuda()
            else:
                model = torch.nn.DataParallel(model)
            """,
            line=3,
            column=13,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
        # The else of `a and is_available()` may run with CUDA (when `a` is false).
        Invalid(
            """
            import torch
            if args.single and torch.cuda.is_available():
                model = model.cuda()
            else:
                model = torch.nn.DataParallel(model)
            """,
            line=5,
            column=13,
            message="`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        name = self._qualname(node.func)
        if name not in _FUNCTIONAL and name not in _NAMES and not self._is_subclass(node.func):
            return
        if runs_without_cuda(self.ctx, node):
            return  # no GPU there: DataParallel runs the module as it is
        if self._only_unwrapped(node):
            return  # the wrapper's forward, the only place it splits batches, never runs
        if self.ctx.fact(DeadBranches).unbuilt(node):
            return  # vendored code the project never builds: the wrap never runs
        if self._fed_one_example(node) or self._attribute_fed_one_example(node):
            return  # batches of one: DataParallel splits nothing, the wrapper only calls the module
        if name in _FUNCTIONAL:
            fix = self.make_fix(
                "Wrap the model once in `DistributedDataParallel`, launched with `torchrun`",
                Applicability.DISPLAY_ONLY,
            )
            self.report(
                node,
                "`data_parallel` replicates the module to every GPU on each call; use `DistributedDataParallel`",
                fix,
            )
            return
        fix = self.make_fix(
            "Launch with `torchrun` and wrap the model in `DistributedDataParallel` instead",
            Applicability.DISPLAY_ONLY,
        )
        self.report(
            node,
            "`nn.DataParallel` drives all GPUs from one process; use `DistributedDataParallel` with `torchrun`",
            fix,
        )

    def _only_unwrapped(self, node: cst.Call) -> bool:
        """A wrap bound to a plain name whose every read takes the wrapped module back
        (`model = model.module`) or handles the wrapper's weights and placement
        (`model.load_state_dict(...)`, `model.cuda()` as a statement): a checkpoint saved from a
        wrapped model is loaded so. The wrapper is never called nor handed on, and returned only
        to callers that unwrap it too (`_callers_unwrap`), so DataParallel never runs. It may be stored (`nets.fan = fan`) once the code has given it
        its inner module's method (`fan.get_heatmap = fan.module.get_heatmap`): callers are
        routed around the wrapper's forward, which keeps only the checkpoint's names."""
        model = self.ctx.fact(SemanticModel)
        target = _bound_name(model, node)
        if target is None:
            return False
        if model.read_in_nested_scope(target.value, model.scope_of(target)):
            return False
        reads, delegates, stored = 0, False, False
        for use in _reads(
            model,
            target,
            lambda b: b.value is not None and past_methods(b.value, _WEIGHT_METHODS) is node,
        ):
            parent = model.parents.get(use)
            if isinstance(parent, cst.Return) and parent.value is use:
                if not self._callers_unwrap(model, model.function_of(use)):
                    return False
                reads += 1
                continue
            if _delegates(model, use):
                delegates = True
            elif _stored(model, use):
                stored = True
                continue
            elif not self._unwraps(model, use):
                return False
            reads += 1
        return reads > 0 and (delegates or not stored)

    def _callers_unwrap(self, model: SemanticModel, function: cst.FunctionDef | None) -> bool:
        """Whether `function`, which returns the wrapper, is a module-level function of a module
        no other file of the project imports, whose name the file reads only to call it, and
        every call binds the result to a plain name that is only unwrapped (`_only_unwraps`): a
        checkpoint's loader whose callers run the inner module (`model.module.forward(x)`)."""
        if function is None or not self._called_only_here(model, function):
            return False
        calls = model.callers.get(function, [])
        return bool(calls) and all(self._result_unwrapped(model, call) for call in calls)

    def _called_only_here(self, model: SemanticModel, function: cst.FunctionDef) -> bool:
        """A module-level function that only this file's plain calls can reach: no other file
        of the project imports its module, and every read of its name, in any scope, is the
        callee of a call (not handed over as a value, `partial(load)`, `{"dp": load}`)."""
        project = self.ctx.project
        if project is None or not isinstance(model.parents.get(function), cst.Module):
            return False
        if project.imported_by_others(self.ctx.absolute_path):
            return False
        name = function.name.value
        for (_, spelled), uses in model.names_in.items():
            if spelled != name:
                continue
            for use in uses:
                parent = model.parents.get(use)
                if (
                    use is function.name
                    or (isinstance(parent, cst.Call) and parent.func is use)
                    or (isinstance(parent, cst.Attribute) and parent.attr is use)  # `torch.load`
                    or (isinstance(parent, cst.Arg) and parent.keyword is use)
                ):
                    continue
                return False
        return True

    def _result_unwrapped(self, model: SemanticModel, call: cst.Call) -> bool:
        assign = model.parents.get(call)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return False
        target = assign.targets[0].target
        return isinstance(target, cst.Name) and self._only_unwraps(
            model, target, lambda b: b.value is call, 0
        )

    def _only_unwraps(
        self,
        model: SemanticModel,
        target: cst.Name,
        holds: Callable[[Binding], bool],
        depth: int,
    ) -> bool:
        """Whether every read of `target`'s name that a binding `holds` reaches takes the inner
        module back or handles the weights (`_unwraps`), or hands the name to a function of the
        file whose parameter is read so in turn (`synthesis(model, text)`), and there is one."""
        if depth > _MAX_DEPTH or model.read_in_nested_scope(target.value, model.scope_of(target)):
            return False
        reads = 0
        for use in _reads(model, target, holds):
            if not (self._unwraps(model, use) or self._handed_unwrapped(model, use, depth)):
                return False
            reads += 1
        return reads > 0

    def _handed_unwrapped(self, model: SemanticModel, use: cst.Name, depth: int) -> bool:
        """`f(use, ...)`: the one function the call runs is a module-level function of the file
        (not a callback handed to it, nor a class's `forward`), and its parameter that takes
        `use` by position (`SemanticModel.arguments`) is only unwrapped there."""
        arg = model.parents.get(use)
        call = model.parents.get(arg) if isinstance(arg, cst.Arg) and arg.keyword is None else None
        targets = model.callees.get(call, []) if isinstance(call, cst.Call) else []
        if len(targets) != 1 or not isinstance(model.parents.get(targets[0]), cst.Module):
            return False
        params = targets[0].params
        param = next(
            (
                p
                for p in [*params.posonly_params, *params.params]
                if (call, use) in model.arguments(p)
            ),
            None,
        )
        return param is not None and self._only_unwraps(
            model, param.name, lambda b: b.node is param, depth + 1
        )

    def _fed_one_example(self, node: cst.Call) -> bool:
        """A wrap bound to a plain name whose every forward gets one example made into a batch
        of one (`model(img)` after `img = transform(img).unsqueeze(0)`: `Evaluation.one_example`)
        and whose other reads only place it or take weights (`model.to(device)`, `model =
        model.eval()`, `model.module`): DataParallel splits a batch along its first dimension,
        so a batch of one runs on the first GPU alone and the wrapper only calls its module (a
        predict script's one image at a time). Every read of the name after the wrap is asked,
        and every later binding must be a wrap or such a method of the wrapper (wraps in the two
        branches of an `if` are read alike); a wrap handed on, returned or stored, or a name
        bound to something else later, may be fed anything: it stays a finding."""
        model = self.ctx.fact(SemanticModel)
        target = _bound_name(model, node)
        if target is None:
            return False
        name = target.value
        scope = model.scope_of(target)
        start = model.order.get(target)
        if start is None or model.read_in_nested_scope(name, scope):
            return False
        if self.ctx.fact(LoopFacts).enclosing_loops(node):
            return False  # a read earlier in the loop may run after the wrap
        for binding in model.resolve(name, scope)[1]:
            if binding.order > start and not (
                binding.kind is BindingKind.ASSIGN
                and binding.value is not None
                and (self._wraps(binding.value) or self._wrapper_method(binding.value, name))
            ):
                return False  # bound to something else later
        forwards = False
        for use in model.uses(scope, name):
            at = model.order.get(use)
            parent = model.parents.get(use)
            if at is None or at <= start or isinstance(parent, cst.AssignTarget):
                continue
            if isinstance(parent, cst.Attribute) and parent.attr is use:
                continue  # `x.model`: an attribute that shares the name
            if isinstance(parent, cst.Call) and parent.func is use:
                if not self._given_one_example(parent):
                    return False
                forwards = True
                continue
            if parent is None:
                return False
            call = model.parents.get(parent)
            if isinstance(parent, cst.Arg) and isinstance(call, cst.Call) and self._wraps(call):
                continue  # the module wrapped in the other branch of an `if`
            if isinstance(parent, cst.Attribute) and parent.value is use:
                if parent.attr.value == "module":
                    continue  # the inner module, called around the wrapper
                if (
                    call is not None
                    and self._wrapper_method(call, name)
                    and isinstance(model.parents.get(call), cst.Expr | cst.Assign)
                ):
                    continue  # `model.to(device)`, `model = model.eval()`
            return False
        return forwards

    def _attribute_fed_one_example(self, node: cst.Call) -> bool:
        """`_fed_one_example` for a wrap stored on the instance (`self.model =
        nn.DataParallel(self.model)` in a predictor's `__init__`): every `self.model` of the
        class is a forward on a batch of one, the module wrapped (or bound before the wrap, in
        the function that wraps it), `.module` or a weights or placement method called as a
        statement, and nothing outside the class reads the attribute (no `.model` of another
        class of the file, a subclass's `self.model` included, no importing module that writes
        the name)."""
        model = self.ctx.fact(SemanticModel)
        found = _self_attribute(model, node)
        if found is None:
            return False
        owner, name = found
        project = self.ctx.project
        uses = find_all(owner, cst.Attribute)
        own = {id(use) for use in uses}
        if any(
            a.attr.value == name and id(a) not in own  # another class's, a subclass's too
            for a in find_all(self.ctx.module, cst.Attribute)
            if isinstance(a, cst.Attribute) and model.enter(a) is not None  # not an import's
        ) or (project is not None and project.named_by_importers(self.ctx.absolute_path, name)):
            return False
        forwards = False
        for use in uses:
            if not (isinstance(use, cst.Attribute) and use.attr.value == name):
                continue
            parent = model.parents.get(use)
            if self._before(model, use, node):
                continue  # the module to be wrapped, built or given its weights
            if isinstance(parent, cst.AssignTarget):
                assign = model.parents.get(parent)
                if not (isinstance(assign, cst.Assign) and self._rewraps(assign.value, name)):
                    return False
            elif isinstance(parent, cst.Call) and parent.func is use:
                if not self._given_one_example(parent):
                    return False
                forwards = True
            elif isinstance(parent, cst.Arg):
                if not self._wraps(model.parents.get(parent)):
                    return False  # handed on: whoever takes it may feed it anything
            elif not (
                isinstance(parent, cst.Attribute)
                and (parent.attr.value == "module" or self._placed(model, parent))
            ):
                return False
        return forwards

    def _given_one_example(self, forward: cst.Call) -> bool:
        """A forward whose first argument, positional, is exactly a batch of one."""
        first = forward.args[0] if forward.args else None
        return (
            first is not None
            and first.keyword is None
            and not first.star
            and self.ctx.fact(Evaluation).one_example(first.value)
        )

    def _rewraps(self, value: cst.BaseExpression, name: str) -> bool:
        """A wrap, or `self.<name>.eval()`-like method of the wrapper that returns it."""
        return self._wraps(value) or (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and dotted(value.func.value) == f"self.{name}"
            and value.func.attr.value in _WEIGHT_METHODS
        )

    @staticmethod
    def _before(model: SemanticModel, use: cst.CSTNode, wrap: cst.Call) -> bool:
        """`self.model = Net(model=self.model)` earlier in the function that wraps it."""
        return model.function_of(use) is model.function_of(wrap) and (
            model.order.get(use, -1) < model.order.get(wrap, -1)
        )

    @staticmethod
    def _placed(model: SemanticModel, attribute: cst.Attribute) -> bool:
        """`self.model.eval()`, `self.model.to(device)` called as a statement."""
        call = model.parents.get(attribute)
        return (
            attribute.attr.value in _WEIGHT_METHODS
            and isinstance(call, cst.Call)
            and isinstance(model.parents.get(call), cst.Expr | cst.Assign)
        )

    def _wraps(self, value: cst.CSTNode | None) -> bool:
        return isinstance(value, cst.Call) and self._qualname(value.func) in _NAMES

    @staticmethod
    def _wrapper_method(value: cst.CSTNode | None, name: str) -> bool:
        """`model.eval()`, `model.to(device)`: a method of the wrapper that returns it."""
        return (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and is_name(value.func.value, name)
            and value.func.attr.value in _WEIGHT_METHODS
        )

    @staticmethod
    def _unwraps(model: SemanticModel, use: cst.Name) -> bool:
        """`use.module`, its weights read out (`use.state_dict()`), or a weights or placement
        method of the wrapper called as a statement."""
        attribute = model.parents.get(use)
        if not isinstance(attribute, cst.Attribute) or attribute.value is not use:
            return False
        if attribute.attr.value == "module":
            return True
        call = model.parents.get(attribute)
        if attribute.attr.value == "state_dict" and isinstance(call, cst.Call):
            return True  # its weights read out, under the `module.` names a checkpoint keeps
        if attribute.attr.value not in _WEIGHT_METHODS or not isinstance(call, cst.Call):
            return False
        return isinstance(model.parents.get(call), cst.Expr)

    def _qualname(self, func: cst.BaseExpression) -> str | None:
        """What `func` names where it is used. The import table is file-wide, so a name it calls
        DataParallel is asked again of the model, which reads the bindings that reach the use
        (a local `DataParallel = MyWrapper` is not torch's)."""
        name = self.ctx.symbols.qualname(func)
        if name in _NAMES or name in _FUNCTIONAL or self._may_alias(func):
            return self.ctx.fact(SemanticModel).qualname(func)
        return name

    def _may_alias(self, func: cst.BaseExpression) -> bool:
        """A plain name the import table does not know, bound in the file (`Parallel = ...`):
        only those may alias DataParallel through an assignment."""
        return (
            isinstance(func, cst.Name)
            and func.value not in self._classes
            and func.value in self._aliases
        )

    @cached_property
    def _aliases(self) -> frozenset[str]:
        """Names the file assigns from an attribute or name chain naming DataParallel (the text
        is asked first, so most files never build the model for this)."""
        if not _ALIAS_TEXT.search(self.ctx.source):
            return frozenset()
        return frozenset(
            dotted(target) or ""
            for target, value in self.ctx.fact(SemanticModel).assigns
            if isinstance(value, cst.Name | cst.Attribute)
            and (dotted(value) or "").rsplit(".", 1)[-1] in ("DataParallel", "data_parallel")
        )

    def _is_subclass(self, func: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether `func` names a class derived from DataParallel: one of the file's own
        (through its bases) or one imported from another file of the project."""
        name = dotted(func)
        if name is None or depth > _MAX_DEPTH:
            return False
        if self._qualname(func) in _NAMES:
            return True
        own = self._classes.get(name)
        if own is not None:
            return any(self._is_subclass(base.value, depth + 1) for base in own.bases)
        if self.ctx.project is None:
            return False
        return self._derived(name)

    def _derived(self, name: str) -> bool:
        """Whether `name`, as imported here, is a DataParallel class of another file of the
        project: asked once per name, since most files call the same names many times."""
        if name not in self._answers:
            project = self.ctx.project
            self._answers[name] = project is not None and bool(
                project.derives_from(self.ctx.absolute_path, name, _NAMES)
            )
        return self._answers[name]

    @cached_property
    def _answers(self) -> dict[str, bool]:
        return {}

    @cached_property
    def _classes(self) -> dict[str, cst.ClassDef]:
        """The file's module-level classes by name."""
        return {s.name.value: s for s in self.ctx.module.body if isinstance(s, cst.ClassDef)}


def _bound_name(model: SemanticModel, node: cst.Call) -> cst.Name | None:
    """The plain name a wrap is the whole value of (`model = nn.DataParallel(model)`, also
    placed on the way, `nn.DataParallel(net).to(device)`: those methods return the wrapper),
    whose later reads say what the wrapper is used for."""
    statement = model.statement_of(node)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    if past_methods(assign.value, _WEIGHT_METHODS) is not node:
        return None
    target = assign.targets[0].target
    return target if isinstance(target, cst.Name) else None


def _reads(
    model: SemanticModel, target: cst.Name, holds: Callable[[Binding], bool]
) -> Iterator[cst.Name]:
    """The reads of `target`'s name in its scope that a binding `holds` reaches: not the name
    bound there, a later rebinding or a parameter, nor an attribute spelled the same (`x.model`)."""
    for use in model.uses(model.scope_of(target), target.value):
        parent = model.parents.get(use)
        if use is target or isinstance(parent, cst.AssignTarget | cst.Param):
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is use:
            continue
        if any(holds(b) for b in model.reaching(use)):
            yield use


def _self_attribute(model: SemanticModel, node: cst.Call) -> tuple[cst.ClassDef, str] | None:
    """The class and attribute name a wrap is the whole value of, stored on the instance in a
    method of that class (`self.model = nn.DataParallel(self.model)`)."""
    statement = model.statement_of(node)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if not isinstance(assign, cst.Assign) or assign.value is not node or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, cst.Attribute):
        return None
    owner = model.self_class(target)  # `self` being the method's first parameter
    return (owner, target.attr.value) if owner is not None else None


def _delegates(model: SemanticModel, use: cst.Name) -> bool:
    """`use.m = use.module.m`: the wrapper's attribute set to its inner module's method."""
    attribute = model.parents.get(use)
    target = model.parents.get(attribute) if attribute is not None else None
    assign = model.parents.get(target) if target is not None else None
    if not (
        isinstance(attribute, cst.Attribute)
        and attribute.value is use
        and isinstance(target, cst.AssignTarget)
        and isinstance(assign, cst.Assign)
    ):
        return False
    value = assign.value
    return (
        isinstance(value, cst.Attribute)
        and value.attr.value == attribute.attr.value
        and dotted(value.value) == f"{use.value}.module"
    )


def _stored(model: SemanticModel, use: cst.Name) -> bool:
    """`nets.fan = use`: the wrapper stored in an attribute or item, as the whole value."""
    assign = model.parents.get(use)
    return (
        isinstance(assign, cst.Assign)
        and assign.value is use
        and all(isinstance(t.target, cst.Attribute | cst.Subscript) for t in assign.targets)
    )
