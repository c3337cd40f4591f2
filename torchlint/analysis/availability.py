"""Code that runs only where no GPU is available, or where the data it tests is not on one.

`if torch.cuda.is_available(): ... else: ...` is how a script keeps a CPU path: the `else`
branch (and the body of `if not torch.cuda.is_available():`) runs only on a machine without
CUDA, so advice about what GPUs do there (DataParallel's replication, for one) does not apply.
A test of where a tensor lives picks such a path too: the `else` of `if x.is_cuda:` or of
`if x.device.type in ["cuda", "npu"]:`, and the body of `if x.device.type == "cpu":` or of
`if x.device.type != "cuda":`, run only when `x` is not on CUDA (a library's loop-heavy CPU
branch beside its vectorised GPU one), so a read there waits for no CUDA stream; so does the
code after an `if x.is_cuda:` whose body leaves (`return torch.nn.utils.clip_grad_norm_(...)`),
up to a move to a device.
The test is read through `not`, `and`/`or` and names bound only to such a test
(`use_cuda = torch.cuda.is_available()`); anything else is unknown, and unknown is not CPU-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import find_all

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_AVAILABLE = frozenset({"torch.cuda.is_available"})
# Attributes of a tensor that say where it lives, and the truth value that rules CUDA out.
_PLACED = {"is_cuda": False, "is_cpu": True}
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
        elif isinstance(parent, cst.IndentedBlock) and child in parent.body:
            earlier = list(parent.body[: parent.body.index(child)])
            if any(
                _leaves_on_cuda(ctx, scopes, guard) and not _moves(earlier[at + 1 :])
                for at, guard in enumerate(earlier)
            ):
                return True
        child = parent
    return False


def _moves(statements: list[cst.BaseStatement]) -> bool:
    """Whether the statements move something to a device (`x = x.cuda()`, `.to(device)`): what
    the guard tested may be on CUDA again after them."""
    return any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value in ("cuda", "to")
        for statement in statements
        for call in cast("list[cst.Call]", find_all(statement, cst.Call))
    )


def _leaves_on_cuda(ctx: FileContext, scopes: SemanticModel, statement: cst.CSTNode) -> bool:
    """`if parameters[0].is_cuda: return torch.nn.utils.clip_grad_norm_(...)`: an `if` without
    `else` whose body leaves (`return`, `raise`, `continue`, `break`) when CUDA may be in use,
    so the statements after it run only off CUDA."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    body = statement.body
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) else None
    return isinstance(small, cst.Return | cst.Raise | cst.Continue | cst.Break) and (
        _rules_out_cuda(ctx, scopes, statement.test, False, 0)
    )


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
    if isinstance(test, cst.Attribute) and test.attr.value in _PLACED:
        return value == _PLACED[test.attr.value]  # `x.is_cuda` false, `x.is_cpu` true
    if isinstance(test, cst.Comparison):
        return _device_type_rules_out_cuda(test, value)
    if isinstance(test, cst.Name):
        bindings = scopes.all_bindings(test)
        return bool(bindings) and all(
            b.exact is not None and _rules_out_cuda(ctx, scopes, b.exact, value, depth + 1)
            for b in bindings
        )
    return False


def _device_type_rules_out_cuda(test: cst.Comparison, value: bool) -> bool:
    """`x.device.type == "cpu"` true, `device.type in ["cuda", "npu"]` false: the test, having
    the truth value `value`, says the device type is not "cuda". Only a comparison of a
    `.type` attribute with string literals is read."""
    if len(test.comparisons) != 1 or not (
        isinstance(test.left, cst.Attribute) and test.left.attr.value == "type"
    ):
        return False
    target = test.comparisons[0]
    positive = isinstance(target.operator, cst.Equal | cst.In)
    if not positive and not isinstance(target.operator, cst.NotEqual | cst.NotIn):
        return False
    types = _strings(target.comparator)
    if not types:
        return False
    # The type is one of `types` when a positive test holds or a negative one fails.
    return ("cuda" in types) == (positive != value)


def _strings(value: cst.BaseExpression) -> frozenset[str]:
    """The string literals `"cuda"` or `["cuda", "npu"]` names; empty when any is not one."""
    items = (
        [e.value for e in value.elements]
        if isinstance(value, cst.List | cst.Tuple | cst.Set)
        else [value]
    )
    found = [i.evaluated_value for i in items if isinstance(i, cst.SimpleString)]
    if len(found) != len(items) or not all(isinstance(f, str) for f in found):
        return frozenset()
    return frozenset(cast("list[str]", found))
