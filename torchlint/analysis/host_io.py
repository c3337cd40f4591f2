"""Whether a value goes only into files and paths: the host needs it there, so its copy is the job.

A segmentation saved as a PNG, an array written with `np.save`, a predicted label that names an
output folder: bringing such a value to the host is what the code is for, and no rewrite
removes the sync. The value is followed forward through the file, from the expression that
reads it:

- methods called on it, indexing and arithmetic (`x.numpy().astype(np.uint8)`, `255 * x`);
- calls it is passed to that the file does not define: conversions (`str(label)`,
  `Image.fromarray(a)`, `os.path.join(root, name)`) hand on what they make of it;
- text it is formatted into (`f"{label}.png"`), and containers it is put in (`{"seg": seg}`);
- a name it is bound to: every read that binding reaches;
- a function of the file it is passed to (every read of the parameter), and what that
  function returns (back at the call that passed it);
- a `return`: every call of the function in the file;
- a loop over it (`for seed, image in zip(seeds, images):`): every read of what the loop binds
  from it, save looks at its form (`image.shape`, `len(image)`).

Each path has to end at a writer: a call named like one (`save`, `imwrite`, `save_image`,
`np.save`, `save_*`, `*_save`, `tofile`), `open`, or a path operation (`os.makedirs`,
`os.path.exists`). A value that is also printed, compared, kept or handed on elsewhere is not
only written, and the answer is no. Unknown ends are no, so a rule that asks stays as it was.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

# Calls that save their argument to a file (images, arrays): the data has to be in host memory.
_WRITER = re.compile(
    r"^(save|savez|savez_compressed|savetxt|imsave|imwrite|save_image|tofile|write_png|write_jpeg|write_video)$|^save_|_save$"
)
# Calls that open, create or test a path: a value in the path is needed on the host.
_PATH_IO = frozenset({"open", "makedirs", "mkdir", "exists", "isfile", "isdir"})
_MAX_DEPTH = 12  # steps followed from the read: methods, calls, bindings, returns
_MAX_STEPS = 400  # steps in all, over every branch of one question: an answer costs little


_FORM = frozenset({"shape", "dtype", "ndim", "device", "size"})  # attributes that read no data


def _names(target: cst.BaseExpression) -> list[cst.Name]:
    """The names a loop target binds: `image`, `(seed, image)`."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in _names(e.value)]
    return []


def _name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def is_writer(call: cst.Call) -> bool:
    """A call that writes its arguments to a file or names a path with them."""
    name = _name(call.func)
    return bool(_WRITER.search(name)) or name in _PATH_IO


class HostWrites:
    """`only_written(node)` for expressions of one file, via `ctx.fact(HostWrites)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.scopes = ctx.fact(SemanticModel)
        self._steps = 0

    def only_written(self, node: cst.BaseExpression) -> bool:
        """Whether every use of `node`'s value ends in a file or a path."""
        self._steps = 0
        return self._consumed(node, 0, ())

    def _consumed(self, node: cst.CSTNode, depth: int, calls: tuple[cst.Call, ...]) -> bool:
        """Whether `node`'s value ends at writers only. `calls`: the calls whose arguments are
        being followed inside their functions, innermost last; a `return` hands the value back
        to the last of them."""
        self._steps += 1
        if depth > _MAX_DEPTH or self._steps > _MAX_STEPS:
            return False
        parent = self.scopes.parents.get(node)
        step = depth + 1
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = self.scopes.parents.get(parent)
            if not isinstance(call, cst.Call) or call.func is not parent:
                return False
            return is_writer(call) or self._consumed(call, step, calls)
        if isinstance(parent, cst.Element | cst.DictElement) and parent.value is node:
            container = self.scopes.parents.get(parent)
            return container is not None and self._consumed(container, step, calls)
        if (isinstance(parent, cst.Subscript) and parent.value is node) or isinstance(
            parent, cst.BinaryOperation | cst.UnaryOperation | cst.FormattedString
        ):
            return self._consumed(parent, step, calls)
        if isinstance(parent, cst.FormattedStringExpression) and parent.expression is node:
            return self._consumed(parent, step, calls)
        if isinstance(parent, cst.Arg) and parent.value is node:
            return self._argument(parent, step, calls)
        if isinstance(parent, cst.Assign) and parent.value is node:
            return self._bound(parent, step, calls)
        if isinstance(parent, cst.Return):
            return self._returned(node, step, calls)
        if isinstance(parent, cst.For) and parent.iter is node:
            return self._iterated(parent, parent.target, step, calls)
        return False

    def _iterated(
        self,
        loop: cst.For,
        target: cst.BaseAssignTargetExpression,
        depth: int,
        calls: tuple[cst.Call, ...],
    ) -> bool:
        """`for image in images:`: every read of what the loop binds from the value (`target`:
        the loop's target, or its element for the value's place in a `zip`/`enumerate`) ends
        at a writer. Reads of its shape or type only (`image.shape[2] == 1`) are neither."""
        names = _names(target)
        if not names:
            return False
        scope = self.scopes.scope_of(loop)
        reads = [
            read
            for name in names
            for read in self.scopes.loads[scope].get(name.value, [])
            if any(b.node is loop for b in self.scopes.reaching(read)) and not self._inspected(read)
        ]
        return bool(reads) and all(self._consumed(read, depth, calls) for read in reads)

    def _inspected(self, read: cst.Name) -> bool:
        """`x.shape`, `x.dtype`, `x.ndim`, `len(x)`: a look at the value's form, not its data."""
        parent = self.scopes.parents.get(read)
        if isinstance(parent, cst.Attribute) and parent.value is read:
            return parent.attr.value in _FORM and not isinstance(
                self.scopes.parents.get(parent), cst.Call
            )
        call = self.scopes.parents.get(parent) if isinstance(parent, cst.Arg) else None
        return isinstance(call, cst.Call) and _name(call.func) == "len"

    def _argument(self, arg: cst.Arg, depth: int, calls: tuple[cst.Call, ...]) -> bool:
        call = self.scopes.parents.get(arg)
        if not isinstance(call, cst.Call):
            return False
        if is_writer(call):
            return True
        functions = self.scopes.callees.get(call, [])
        loop = self.scopes.parents.get(call)
        if (
            _name(call.func) in ("zip", "enumerate")
            and isinstance(loop, cst.For)
            and loop.iter is call
        ):
            return self._zipped(loop, call, arg, depth, calls)
        if len(functions) != 1:
            return self._consumed(call, depth, calls)  # a conversion: follow its result
        param = self._parameter(functions[0], call, arg)
        if param is None:
            return False
        reads = self.scopes.loads[functions[0]].get(param.name.value, [])
        return bool(reads) and all(self._consumed(read, depth, (*calls, call)) for read in reads)

    def _zipped(
        self,
        loop: cst.For,
        call: cst.Call,
        arg: cst.Arg,
        depth: int,
        calls: tuple[cst.Call, ...],
    ) -> bool:
        """`for seed, image in zip(seeds, images):`: the target element in the value's place."""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if arg not in positional or not isinstance(loop.target, cst.Tuple):
            return False
        place = positional.index(arg) + (1 if _name(call.func) == "enumerate" else 0)
        elements = loop.target.elements
        if place >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            return False
        return self._iterated(loop, elements[place].value, depth, calls)  # type: ignore[arg-type]

    def _parameter(
        self, function: cst.FunctionDef, call: cst.Call, arg: cst.Arg
    ) -> cst.Param | None:
        """The parameter of `function` that `call` binds to `arg`."""
        for param in (*function.params.posonly_params, *function.params.params):
            if any(c is call and v is arg.value for c, v in self.scopes.arguments(param)):
                return param
        return None

    def _bound(self, assign: cst.Assign, depth: int, calls: tuple[cst.Call, ...]) -> bool:
        """`seg = <value>`: every read that this binding reaches ends at a writer."""
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return False
        name = assign.targets[0].target
        scope = self.scopes.scope_of(name)
        reads = [
            read
            for read in self.scopes.loads[scope].get(name.value, [])
            if any(b.node is assign for b in self.scopes.reaching(read))
        ]
        return bool(reads) and all(self._consumed(read, depth, calls) for read in reads)

    def _returned(self, node: cst.CSTNode, depth: int, calls: tuple[cst.Call, ...]) -> bool:
        """`return <value>`: back at the call being followed, else at every call of the function."""
        if calls:
            return self._consumed(calls[-1], depth, calls[:-1])
        function = self.scopes.function_of(node)
        callers = self.scopes.callers.get(function, []) if function is not None else []
        return bool(callers) and all(self._consumed(call, depth, ()) for call in callers)
