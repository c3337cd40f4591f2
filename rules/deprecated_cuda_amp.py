"""TL106 deprecated-cuda-amp."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from torchlint.analysis.nodes import walk
from torchlint.analysis.symbols import dotted
from torchlint.analysis.text import may_use_cuda_amp
from torchlint.diagnostics import Applicability, FixAvailability
from torchlint.rule import Invalid, Rewrite, Rule, Valid

# torch.cuda.amp.* warns (FutureWarning) from torch 2.4, the release that added the last of the
# device-generic replacements (torch.amp.custom_fwd/custom_bwd; GradScaler came in 2.3).
_DEPRECATED_SINCE = (2, 4)
_AUTOCAST = ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast")
_SCALER = ("torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler")
_CUSTOM = {
    "torch.cuda.amp.custom_fwd": "custom_fwd",
    "torch.cuda.amp.autocast_mode.custom_fwd": "custom_fwd",
    "torch.cuda.amp.custom_bwd": "custom_bwd",
    "torch.cuda.amp.autocast_mode.custom_bwd": "custom_bwd",
}
_DEPRECATED = frozenset({*_AUTOCAST, *_SCALER, *_CUSTOM})
# What each replacement writes: its entry in the rule's `fix_versions`.
_WRITES = {
    "autocast": '`torch.amp.autocast("cuda", ...)`',
    "GradScaler": '`torch.amp.GradScaler("cuda", ...)`',
    "custom_fwd": "`torch.amp.custom_fwd`/`custom_bwd`",
    "custom_bwd": "`torch.amp.custom_fwd`/`custom_bwd`",
}
# torch.cuda.amp.autocast(enabled, dtype, cache_enabled) takes these positionally;
# torch.amp.autocast(device_type, dtype, enabled, cache_enabled) orders them differently.
_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")


# A test that picks an API by torch version or feature: `if TORCH_2_4:`, `if hasattr(torch, "amp")`.
_VERSION_TEST = re.compile(r"version|torch_?\d|hasattr|getattr", re.IGNORECASE)


# What every spelling the import table resolves to torch.cuda.amp has in the text:
# `torch.cuda.amp.X`, `from torch.cuda import amp`, `import torch.cuda as tc; tc.amp.X`.


def _short(qualname: str) -> str:
    return qualname.replace(".autocast_mode.", ".").replace(".grad_scaler.", ".")


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    equal = cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )
    return cst.Arg(value, keyword=cst.Name(name), equal=equal)


def _with_comma(arg: cst.Arg) -> cst.Arg:
    if arg.comma is cst.MaybeSentinel.DEFAULT:
        return arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return arg


class DeprecatedCudaAmp(Rule):
    code = "TL106"
    name = "deprecated-cuda-amp"
    tokens = ("amp",)
    text_tests = (may_use_cuda_amp,)
    summary = "`torch.cuda.amp.autocast`/`GradScaler`/`custom_fwd` are deprecated; use the `torch.amp` forms"
    fix_availability = FixAvailability.SAFE
    fix_versions = {
        '`torch.amp.autocast("cuda", ...)`': "1.10",
        '`torch.amp.GradScaler("cuda", ...)`': "2.3",
        "`torch.amp.custom_fwd`/`custom_bwd`": "2.4",
    }
    performance = False  # a deprecation: tests break on it too
    docs = """
## What it does
Flags uses of the CUDA-specific mixed-precision API, under any import alias
(`from torch.cuda.amp import autocast, GradScaler`, `from torch.cuda import amp`):

- `torch.cuda.amp.autocast(...)`, as a context manager or a decorator;
- `torch.cuda.amp.GradScaler(...)`;
- `torch.cuda.amp.custom_fwd` and `torch.cuda.amp.custom_bwd` (bare or called).

Not flagged: fallbacks for older torch releases, that is uses in an `except` handler
(`try: torch.amp.GradScaler("cuda") except AttributeError: ...`) or in a branch of an `if`
or conditional expression that tests the torch version or a feature (`if TORCH_2_4:`,
`hasattr(torch, "amp")`) or that uses the `torch.amp` form in its other branch, and names
imported from `torch.cuda.amp` in such a fallback (`except ImportError: from torch.cuda.amp
import GradScaler`).

Only when the target torch version is 2.4 or newer: that release deprecated these names and
has every replacement (`torch.amp.GradScaler` exists since 2.3, `torch.amp.custom_fwd` and
`custom_bwd` since 2.4). Before 2.4 the `torch.cuda.amp` names are the documented API and are
not flagged. Imports and references that are not calls (`isinstance(s, GradScaler)`) are not
flagged either.

## Why is this bad?
Since torch 2.4 every construction emits a `FutureWarning`, and the CUDA-specific names are
slated for removal. The device-generic `torch.amp` API does the same thing given
`"cuda"` as the device, and makes it a one-word change to run the same code on another
accelerator (`"xpu"`, `"mps"`, `"cpu"`).

## Example
```python
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
for x, y in loader:
    with torch.cuda.amp.autocast(enabled=use_amp):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
```

## Use instead
```python
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
for x, y in loader:
    with torch.amp.autocast("cuda", enabled=use_amp):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
```
`@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)` becomes
`@torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)`.

## Fix safety
Safe: torch implements each deprecated name as the generic one with `"cuda"` filled in.
Positional arguments of `autocast` (`enabled`, `dtype`, `cache_enabled`) become keyword
arguments, because `torch.amp.autocast` orders its parameters differently. The fix rewrites
the call site and spells the new name through the `torch` import in scope there (adding
`import torch` at the top when there is none). When the fixes rewrite every use of a name
imported from `torch.cuda.amp` (`from torch.cuda.amp import autocast`, `from torch.cuda import
amp`), each of them rewrites all those uses and removes the import it leaves unused; an import
that is also mentioned elsewhere (another use, `__all__`, a comment) or sits in an `__init__.py`
stays.
A call that unpacks `*args` into `autocast` is reported without a fix.

## References
- [Automatic Mixed Precision package: torch.amp](https://pytorch.org/docs/stable/amp.html)
- [torch.amp.autocast](https://pytorch.org/docs/stable/amp.html#torch.autocast)
- [torch.amp.GradScaler](https://pytorch.org/docs/stable/amp.html#gradient-scaling)
- [Automatic Mixed Precision recipe](https://pytorch.org/tutorials/recipes/recipes/amp_recipe.html)
- [PyTorch Performance Tuning Guide: use mixed precision and AMP](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
- [Faster Deep Learning Training with PyTorch (L. Kuhn): use automatic mixed precision](https://efficientdl.com/faster-deep-learning-in-pytorch-a-guide/)
"""
    valid = [
        Valid(
            """
            import torch
            scaler = torch.amp.GradScaler('cuda')
            with torch.amp.autocast('cuda'):
                y = model(x)
            """
        ),
        Valid(
            """
            import torch
            scaler = torch.cuda.amp.GradScaler()
            with torch.cuda.amp.autocast():
                y = model(x)
            """,
            target_torch_version="2.3",
        ),
        Valid(
            """
            from torch.cuda.amp import autocast
            with autocast(dtype=torch.bfloat16):
                y = model(x)
            """,
            target_torch_version="1.10",
        ),
        Valid(
            """
            from torch.cuda.amp import GradScaler
            assert isinstance(scaler, GradScaler)
            """
        ),
        Valid(
            """
            import torch
            with torch.autocast(device_type='cuda', dtype=torch.float16):
                y = model(x)
            """
        ),
        Valid(
            """
            import apex
            from apex import amp
            model, opt = amp.initialize(model, opt)
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
            """
        ),
        Valid(
            """
            def autocast(enabled=True):
                pass

            with autocast():
                pass
            """
        ),
        Valid(
            """
            import torch
            try:
                scaler = torch.amp.GradScaler('cuda')
            except AttributeError:
                scaler = torch.cuda.amp.GradScaler()
            """
        ),
        Valid(
            """
            import torch
            ctx = torch.amp.autocast('cuda') if TORCH_2_4 else torch.cuda.amp.autocast()
            """
        ),
        Valid(
            """
            try:
                from torch.amp import GradScaler
            except ImportError:
                from torch.cuda.amp import GradScaler
            scaler = GradScaler()
            """
        ),
        Valid(
            """
            import torch
            if hasattr(torch, 'amp'):
                ctx = torch.amp.autocast(device_type='cuda')
            else:
                ctx = torch.cuda.amp.autocast()
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            import torch

            scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
            with torch.cuda.amp.autocast(enabled=use_amp):
                loss = model(x)
            """,
            fixed="""
            import torch

            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
            with torch.amp.autocast("cuda", enabled=use_amp):
                loss = model(x)
            """,
            count=2,
            line=3,
            column=10,
            message='`torch.cuda.amp.GradScaler` is deprecated since torch 2.4; use `torch.amp.GradScaler("cuda")`',
        ),
        Invalid(
            """
            import torch as T
            from torch.cuda.amp import autocast, GradScaler

            scaler = GradScaler(2.0**10)


            @autocast()
            def forward(x):
                return net(x)
            """,
            fixed="""
            import torch as T

            scaler = T.amp.GradScaler("cuda", 2.0**10)


            @T.amp.autocast("cuda")
            def forward(x):
                return net(x)
            """,
            count=2,
            line=4,
            column=10,
            message='`torch.cuda.amp.GradScaler` is deprecated since torch 2.4; use `torch.amp.GradScaler("cuda")`',
        ),
        Invalid(
            """
            from torch.cuda import amp

            with amp.autocast(False, torch.bfloat16):
                y = model(x)
            """,
            fixed="""
            import torch

            with torch.amp.autocast("cuda", enabled=False, dtype=torch.bfloat16):
                y = model(x)
            """,
            line=3,
            column=6,
            message='`torch.cuda.amp.autocast` is deprecated since torch 2.4; use `torch.amp.autocast("cuda")`',
        ),
        Invalid(
            """
            import torch


            class F(torch.autograd.Function):
                @staticmethod
                @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.cuda.amp.custom_bwd
                def backward(ctx, g):
                    return g
            """,
            fixed="""
            import torch


            class F(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
                def forward(ctx, x):
                    return x

                @staticmethod
                @torch.amp.custom_bwd(device_type="cuda")
                def backward(ctx, g):
                    return g
            """,
            count=2,
            line=6,
            column=6,
            message='`torch.cuda.amp.custom_fwd` is deprecated since torch 2.4; use `torch.amp.custom_fwd("cuda")`',
        ),
        Invalid(
            """
            import torch
            ctx = torch.cuda.amp.autocast(**amp_kwargs)
            """,
            fixed="""
            import torch
            ctx = torch.amp.autocast("cuda", **amp_kwargs)
            """,
            target_torch_version="2.4",
            line=2,
            column=7,
            message='`torch.cuda.amp.autocast` is deprecated since torch 2.4; use `torch.amp.autocast("cuda")`',
        ),
        Invalid(
            """
            import torch
            ctx = torch.cuda.amp.autocast(*flags)
            """,
            line=2,
            column=7,
            message='`torch.cuda.amp.autocast` is deprecated since torch 2.4; use `torch.amp.autocast("cuda")`',
        ),
    ]

    def __init__(self, ctx, options) -> None:
        super().__init__(ctx, options)
        self.compat_names: set[str] = set()  # imported from torch.cuda.amp as a fallback
        self.rewrites: list[Rewrite] = []

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """`try: from torch.amp import GradScaler / except ImportError: from torch.cuda.amp import GradScaler`."""
        module = dotted(node.module) if node.module is not None else None
        if (
            module in ("torch.cuda.amp", "torch.cuda")
            and not isinstance(node.names, cst.ImportStar)
            and self._fallback()
        ):
            self.compat_names.update(
                dotted(a.asname.name if a.asname else a.name) or "" for a in node.names
            )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.target_torch_version < _DEPRECATED_SINCE:
            return
        qualname = self.ctx.symbols.qualname(node.func)
        if qualname not in _DEPRECATED or self._compat(node.func) or self._fallback():
            return
        if qualname in _AUTOCAST:
            self._report(node, qualname, "autocast", self._autocast_args(node.args))
        elif qualname in _SCALER:
            self._report(
                node, qualname, "GradScaler", [cst.Arg(cst.SimpleString('"cuda"')), *node.args]
            )
        elif qualname in _CUSTOM:
            self._report(node, qualname, _CUSTOM[qualname], self._custom_args(node.args))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """Bare `@torch.cuda.amp.custom_fwd` / `@custom_bwd`, which become calls with a device."""
        if self.ctx.target_torch_version < _DEPRECATED_SINCE or isinstance(
            node.decorator, cst.Call
        ):
            return
        qualname = self.ctx.symbols.qualname(node.decorator)
        if qualname in _CUSTOM and not self._compat(node.decorator) and not self._fallback():
            self._report(node.decorator, qualname, _CUSTOM[qualname], self._custom_args([]))

    def _fallback(self) -> bool:
        """Whether the node being visited is the old-torch branch of a version or feature switch."""
        for parent in self.ctx.stack:
            if isinstance(parent, cst.ExceptHandler):
                return True
            if isinstance(parent, cst.If | cst.IfExp):
                if _VERSION_TEST.search(self.ctx.code(parent.test)) or self._uses_generic_amp(
                    parent
                ):
                    return True
        return False

    def _compat(self, func: cst.BaseExpression) -> bool:
        return (dotted(func) or "").split(".")[0] in self.compat_names

    def _uses_generic_amp(self, root: cst.CSTNode) -> bool:
        generic = ("torch.amp.", "torch.autocast", "torch.GradScaler")
        return any(
            isinstance(node, cst.Attribute)
            and (self.ctx.symbols.qualname(node) or "").startswith(generic)
            for node in walk(root)
        )

    def _report(
        self, node: cst.BaseExpression, qualname: str, new: str, args: list[cst.Arg] | None
    ) -> None:
        message = (
            f'`{_short(qualname)}` is deprecated since torch 2.4; use `torch.amp.{new}("cuda")`'
        )
        if args is None:
            self.rewrites.append(Rewrite(node, message, None))
            return
        alias, import_edit = self.ctx.torch_alias(node)
        func = cst.parse_expression(f"{alias}.amp.{new}")
        call = (
            node.with_changes(func=func, args=_commas(args))
            if isinstance(node, cst.Call)
            else cst.Call(func, _commas(args))
        )
        fix = self.make_fix(
            f'Use `torch.amp.{new}` with the "cuda" device',
            Applicability.SAFE,
            import_edit,
            self.ctx.replace(node, call),
            writes=_WRITES[new],
        )
        old = node.func if isinstance(node, cst.Call) else node
        self.rewrites.append(Rewrite(node, message, fix, (dotted(old) or "").split(".")[0] or None))

    def finish(self) -> None:
        self.report_rewrites(self.rewrites)

    @staticmethod
    def _autocast_args(args: Sequence[cst.Arg]) -> list[cst.Arg] | None:
        """`"cuda"` first, then the old positional arguments as keywords; None when `*args` hides them."""
        new = [cst.Arg(cst.SimpleString('"cuda"'))]
        for i, arg in enumerate(args):
            if arg.star == "*":
                return None
            if arg.keyword is None and arg.star == "" and i < len(_AUTOCAST_POSITIONAL):
                arg = _keyword(_AUTOCAST_POSITIONAL[i], arg.value).with_changes(comma=arg.comma)
            new.append(arg)
        return new

    @staticmethod
    def _custom_args(args: Sequence[cst.Arg]) -> list[cst.Arg]:
        """The old arguments with `device_type="cuda"` after the positional ones (the decorated function)."""
        positional = [a for a in args if a.keyword is None and a.star == ""]
        rest = [a for a in args if a not in positional]
        return [*positional, _keyword("device_type", cst.SimpleString('"cuda"')), *rest]


def _commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Every argument but the last followed by a comma; the last keeps what it had."""
    return [_with_comma(a) if i < len(args) - 1 else a for i, a in enumerate(args)]
