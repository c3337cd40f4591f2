"""Code that runs only where no GPU is available.

`if torch.cuda.is_available(): ... else: ...` is how a script keeps a CPU path: the `else`
branch (and the body of `if not torch.cuda.is_available():`) runs only on a machine without
CUDA, so advice about what GPUs do there (DataParallel's replication, for one) does not apply.
The test is read through `not`, `and`/`or` and names bound only to such a test
(`use_cuda = torch.cuda.is_available()`); anything else is unknown, and unknown is not CPU-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_AVAILABLE = frozenset({"torch.cuda.is_available"})
_MAX_DEPTH = 4  # names bound to names bound to the test


def runs_without_cuda(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether `node` sits in a branch (of an `if` or a conditional expression) that runs only
    when `torch.cuda.is_available()` is false."""
    scopes = ctx.fact(SemanticModel)
    child = node
    for parent in scopes.ancestors(node):
        if isinstance(parent, cst.If | cst.IfExp):
            outcome = _branch_outcome(parent, child)
            if outcome is not None and _rules_out_cuda(ctx, scopes, parent.test, outcome, 0):
                return True
        child = parent
    return False


def _branch_outcome(parent: cst.If | cst.IfExp, child: cst.CSTNode) -> bool | None:
    """The value of the test under which `child` runs: True in the body, False in the else."""
    if child is parent.body:
        return True
    if child is parent.orelse:
        return False
    return None  # the test itself


def _rules_out_cuda(
    ctx: FileContext, scopes: SemanticModel, test: cst.BaseExpression, value: bool, depth: int
) -> bool:
    """Whether `test` having the truth value `value` means CUDA is not available."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(test, cst.Call):
        return not value and ctx.symbols.qualname(test.func) in _AVAILABLE
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _rules_out_cuda(ctx, scopes, test.expression, not value, depth + 1)
    if isinstance(test, cst.BooleanOperation):
        # `a and b` true: both are true; `a or b` false: both are false. Either side then tells.
        if isinstance(test.operator, cst.And) == value:
            return any(
                _rules_out_cuda(ctx, scopes, side, value, depth + 1)
                for side in (test.left, test.right)
            )
        return False
    if isinstance(test, cst.Name):
        bindings = scopes.all_bindings(test)
        return bool(bindings) and all(
            b.exact is not None and _rules_out_cuda(ctx, scopes, b.exact, value, depth + 1)
            for b in bindings
        )
    return False
