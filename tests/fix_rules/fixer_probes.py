"""Rules that exist only to probe the fixer through the real command (never shipped).

tests/test_fix_command.py puts this folder on the rule package's search path in a
subprocess, so the registry discovers these rules exactly as it discovers the real ones.
Each one names a call by what its fix does: `slow()` gets a safe fix, `risky()` an unsafe
one, `shown()` a display-only one that carries an edit, `forever()` a fix that always asks
for another, `broken()` a fix whose result does not parse, and `grad_off()` one that needs
`import torch`.
"""

from __future__ import annotations

import libcst as cst

from torchlint.diagnostics import Applicability
from torchlint.rule import Rule


def _called(node: cst.Call, name: str) -> bool:
    return isinstance(node.func, cst.Name) and node.func.value == name


class SafeProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL901",
        "probe-safe",
        "probe",
        "",
        "safe",
        ("slow",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "slow"):
            return
        self.report(
            node,
            "`slow()` is slow",
            self.make_fix("Call `fast()`", Applicability.SAFE, self.ctx.replace(node.func, "fast")),
        )


class UnsafeProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL902",
        "probe-unsafe",
        "probe",
        "",
        "unsafe",
        ("risky",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "risky"):
            return
        fix = self.make_fix(
            "Call `careful()`", Applicability.UNSAFE, self.ctx.replace(node.func, "careful")
        )
        self.report(node, "`risky()` is risky", fix)


class DisplayProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL903",
        "probe-display",
        "probe",
        "",
        "display-only",
        ("shown",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "shown"):
            return
        fix = self.make_fix(
            "Call `hidden()`", Applicability.DISPLAY_ONLY, self.ctx.replace(node.func, "hidden")
        )
        self.report(node, "`shown()` has a display-only fix", fix)


class EndlessProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL904",
        "probe-endless",
        "probe",
        "",
        "safe",
        ("forever",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "forever"):
            return
        fix = self.make_fix(
            "Add another argument", Applicability.SAFE, self.ctx.insert_after(node.func, "(0)")
        )
        self.report(node, "`forever()` is never done", fix)


class BreakingProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL905",
        "probe-breaking",
        "probe",
        "",
        "safe",
        ("broken",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "broken"):
            return
        self.report(
            node,
            "`broken()` gets a bad fix",
            self.make_fix("Break it", Applicability.SAFE, self.ctx.replace(node, "broken((")),
        )


class ImportProbe(Rule):
    code, name, summary, docs, fix_availability, tokens = (
        "TL906",
        "probe-import",
        "probe",
        "",
        "safe",
        ("grad_off",),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _called(node, "grad_off"):
            return
        alias, import_edit = self.ctx.torch_alias()
        fix = self.make_fix(
            "Use `torch.no_grad()`",
            Applicability.SAFE,
            import_edit,
            self.ctx.replace(node.func, f"{alias}.no_grad"),
        )
        self.report(node, "`grad_off()` needs torch", fix)
