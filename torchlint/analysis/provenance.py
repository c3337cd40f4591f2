"""Whether a value is evidently a numpy array, from evidence in the same file.

Evidence is what a reader of the file would accept without running it: the result of a
numpy function that returns an array (`np.zeros`, `np.load`, `np.stack`), `.numpy()`,
pandas' `.to_numpy()`/`.values`, a parameter annotated `np.ndarray`, and names, `self.`
attributes, indexing, slicing, `.reshape`/`.astype`/`.T` and arithmetic of such values, plus
calls of functions and methods of the file whose every `return` gives one (also a method called
on an instance of a class of the file, and one element of the tuples a function returns:
`image, label = load(path)`).

Names are resolved per scope. Inside the scope that binds a name, the binding that reaches a
use must dominate it (sit in a block that encloses the use) and no later binding in an
enclosing loop may flow back to it; where none does but an `if`/`else` before the use binds it
in every branch, every binding of the name in its scope must be evidence. A name of an
enclosing scope (a global, a closure) and a `self.` attribute count only when every binding of
it is evidence. Anything else is unknown: the fact answers "evidently numpy" or nothing, never
"evidently not".

Name resolution is the semantic model's (`SemanticModel.dominating`), shared with every
other fact.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.nodes import is_attribute, is_name

__all__ = ["Evidence", "NumpyProvenance"]

# numpy functions whose result is an ndarray whatever they are given (or they raise).
_CONSTRUCTORS = frozenset(
    """array asarray asanyarray ascontiguousarray asfortranarray copy zeros ones empty full zeros_like
    ones_like empty_like full_like arange linspace logspace geomspace eye identity tri diag diagflat stack
    vstack hstack dstack column_stack row_stack concatenate concat block tile repeat fromfile frombuffer
    fromiter fromstring loadtxt genfromtxt indices outer kron cumsum cumprod diff sort argsort argwhere
    flatnonzero pad atleast_1d broadcast_to expand_dims squeeze reshape ravel transpose swapaxes moveaxis
    rollaxis roll flip fliplr flipud rot90 tril triu take_along_axis bincount vander convolve correlate
    linalg.inv linalg.pinv linalg.cholesky linalg.matrix_power fft.fft fft.ifft fft.rfft fft.irfft fft.fft2
    fft.ifft2 fft.fftn fft.ifftn fft.fftshift fft.ifftshift fft.fftfreq fft.rfftfreq""".split()
)
# numpy readers of whole data files.
_DATA_READERS = frozenset(
    {
        *(f"numpy.{name}" for name in ("load", "loadtxt", "genfromtxt", "fromfile")),
        "scipy.io.loadmat",
    }
)
# Element-wise and similar: an ndarray when an argument is an array (or a list), else a scalar.
_TRANSFORMS = frozenset(
    """abs absolute exp exp2 expm1 log log2 log10 log1p sqrt cbrt square sin cos tan arcsin arccos arctan
    arctan2 sinh cosh tanh floor ceil round around rint trunc sign negative reciprocal power add subtract
    multiply divide true_divide floor_divide mod maximum minimum fmax fmin clip where dot matmul nan_to_num
    isnan isinf isfinite logical_and logical_or logical_not equal greater less interp deg2rad rad2deg
    radians degrees""".split()
)
# Reductions give an array only along an axis, and even then a scalar for 1-d input.
_REDUCTIONS = frozenset(
    """sum mean std var max min amax amin prod median argmax argmin any all nansum nanmean nanstd nanmax
    nanmin average percentile quantile ptp count_nonzero""".split()
)
# numpy random functions and Generator/RandomState methods: the positional index of `size`.
_RANDOM_SIZE_AT = {
    "rand": 0,
    "randn": 0,
    "random": 0,
    "random_sample": 0,
    "standard_normal": 0,
    "sample": 0,
    "ranf": 0,
    "uniform": 2,
    "normal": 2,
    "randint": 2,
    "integers": 2,
    "binomial": 2,
    "beta": 2,
    "gamma": 2,
    "poisson": 1,
    "exponential": 1,
    "choice": 1,
    "permutation": None,
}
_GENERATORS = frozenset(
    {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}
)
# ndarray methods that return an ndarray for an ndarray receiver.
_ARRAY_METHODS = frozenset(
    "reshape transpose swapaxes squeeze ravel flatten astype copy view clip repeat cumsum cumprod round conj".split()
)
_ARRAY_ATTRS = frozenset({"T", "real", "imag"})
# What returns a view of its input (or the input itself) rather than a fresh array.
_VIEWING_METHODS = frozenset("reshape transpose swapaxes squeeze ravel view".split())
_VIEWING_FUNCTIONS = frozenset(
    """asarray asanyarray ascontiguousarray reshape transpose swapaxes moveaxis squeeze expand_dims ravel
    atleast_1d atleast_2d atleast_3d broadcast_to""".split()
)
# numpy functions whose result `torch.from_numpy`/`torch.as_tensor` cannot share cleanly: a view
# with a negative stride (a reversed axis), which they refuse, and an array over a buffer that
# may be read-only (`bytes`), on which they warn and give a tensor that must not be written.
_UNSHAREABLE_FUNCTIONS = frozenset({"flip", "flipud", "fliplr", "rot90", "frombuffer"})
_ORDERING = (
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
    cst.Equal,
    cst.NotEqual,
)
_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Power,
    cst.Modulo,
    cst.MatrixMultiply,
)
# Tensor methods whose result has a `.values` field that is a tensor, not a pandas one.
_TORCH_VALUES = frozenset(
    "max min topk sort median mode kthvalue cummax cummin aminmax unique_consecutive".split()
)
# numpy functions whose result is a tuple of arrays.
_ARRAY_TUPLES = frozenset(
    "histogram histogram2d histogramdd meshgrid nonzero broadcast_arrays linalg.svd linalg.eig linalg.eigh linalg.qr".split()
)
# Other libraries' readers that return an ndarray, and ones that return a dict of them.
_FOREIGN_ARRAYS = frozenset(
    {
        "cv2.imread",
        "cv2.imdecode",
        "cv2.resize",
        "cv2.cvtColor",
        "imageio.imread",
        "imageio.v2.imread",
        "imageio.v3.imread",
        "skimage.io.imread",
        "tifffile.imread",
    }
)
_FOREIGN_ARCHIVES = frozenset({"scipy.io.loadmat"})
_ANNOTATIONS = frozenset({"numpy.ndarray", "numpy.typing.NDArray"})
# numpy functions that build an array out of the objects of a list they are given.
_LIST_BUILDERS = frozenset({"array", "asarray", "stack", "concatenate", "hstack", "vstack"})
# Builtins that return a Python number, and list methods that neither add to a list nor hand it on.
_NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool", "round"})
_LIST_READS = frozenset({"sort", "reverse", "pop", "index", "count", "copy", "clear"})
_MAX_DEPTH = 40
_MAX_CALL_DEPTH = 4  # factories followed to find an instance's class
_SCOPES = (
    cst.Module,
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


class Kind(enum.Enum):
    ARRAY = "array"  # certainly an ndarray
    NUMPY = "numpy"  # an ndarray or a numpy scalar (indexing an array of unknown rank)
    ARCHIVE = (
        "archive"  # what np.load may return besides an array: an .npz archive, pickled objects
    )
    GENERATOR = "generator"  # a numpy random generator
    PENDING = "pending"  # a self-reference met while its own value is being worked out


@dataclass(frozen=True)
class Evidence:
    """Why a value is numpy: `exact` when it is certainly an ndarray (not a numpy scalar)."""

    exact: bool
    origin: cst.CSTNode  # the expression the evidence starts from (a call, an annotation)


class NumpyProvenance:
    """Answers `evidence(expr)`: why `expr` is a numpy array, or None when that is not evident."""

    def __init__(self, ctx) -> None:
        self.b = ctx.fact(SemanticModel)
        self.symbols = ctx.symbols
        self._active: set[cst.CSTNode] = set()
        self._attrs_active: set[tuple[cst.ClassDef, str]] = set()
        self._memo: dict[cst.CSTNode, tuple[Kind, cst.CSTNode] | None] = {}
        self.uses_pandas = any(
            q == "pandas" or q.startswith("pandas.") for q in self.symbols.aliases.values()
        )

    def evidence(self, expr: cst.BaseExpression) -> Evidence | None:
        """Why `expr` is a numpy array (or numpy scalar), or None when that is not evident."""
        found = self._kind(expr, 0)
        if found is None or found[0] not in (Kind.ARRAY, Kind.NUMPY):
            return None
        return Evidence(found[0] is Kind.ARRAY, found[1])

    def reads_data_set(self, evidence: Evidence) -> bool:
        """Whether the array comes whole from a data file or table (`np.load`, `np.loadtxt`,
        `np.genfromtxt`, `np.fromfile`, a key of `scipy.io.loadmat(...)`, pandas'
        `.values`/`.to_numpy()`): a data set, large
        enough that even a single copy of it doubles its memory."""
        origin = evidence.origin
        if isinstance(origin, cst.Attribute):
            return origin.attr.value == "values" and self.uses_pandas
        if not isinstance(origin, cst.Call):
            return False
        if isinstance(origin.func, cst.Attribute) and origin.func.attr.value == "to_numpy":
            return True
        return (self.symbols.qualname(origin.func) or "") in _DATA_READERS

    def from_python_numbers(self, evidence: Evidence) -> bool:
        """Whether numpy has just built the array from a list of Python numbers: `np.array(scores)`
        after `scores.extend(out.tolist())` or `.append(x.item())`, `np.concatenate` of
        `[i] * len(atoms)` lists, `np.array([len(s) for s in batch])`. Converting each Python
        object costs far more than copying the array that results, and such lists hold a number or
        a few per sample (ids, lengths, scores): the copy is never what a loop waits on."""
        origin = evidence.origin
        if not isinstance(origin, cst.Call):
            return False
        name = self.symbols.qualname(origin.func) or ""
        args = self._positional(origin)
        if not name.startswith("numpy.") or name[len("numpy.") :] not in _LIST_BUILDERS or not args:
            return False
        return self._numbers(args[0].value, origin, 0)

    def _numbers(self, expr: cst.BaseExpression, built: cst.Call, depth: int) -> bool:
        """A list (or tuple, or nested lists) whose items are evidently Python numbers."""
        if depth > 3:
            return False
        if isinstance(expr, cst.List | cst.Tuple):
            return all(
                self._number(e.value, depth) or self._numbers(e.value, built, depth + 1)
                for e in expr.elements
                if isinstance(e, cst.Element)
            )
        if isinstance(expr, cst.ListComp):
            return self._number(expr.elt, depth) or self._numbers(expr.elt, built, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            return (  # `[i] * len(atoms)`
                isinstance(expr.left, cst.List)
                and self._numbers(expr.left, built, depth + 1)
                and self._number(expr.right, depth)
            )
        if isinstance(expr, cst.Call):
            return is_attribute(expr.func, "tolist")
        return isinstance(expr, cst.Name) and self._filled_with_numbers(expr, built, depth)

    def _filled_with_numbers(self, name: cst.Name, built: cst.Call, depth: int) -> bool:
        """A list bound to numbers (`scores = []`) that its scope only fills with numbers
        (`.append(x.item())`, `.extend(out.tolist())`) and hands to nothing but `built` and `len`."""
        reaching = self.b.reaching(name)
        if not reaching or not all(
            b.exact is not None and self._numbers(b.exact, built, depth + 1) for b in reaching
        ):
            return False
        scope = self.b.scope_of(name)
        return all(
            self._number_use(read, built, depth)
            for read in self.b.reads_of(name.value, scope)
            if any(b in reaching for b in self.b.reaching(read))  # the list, not a later rebinding
        )

    def _number_use(self, read: cst.Name, built: cst.Call, depth: int) -> bool:
        parent = self.b.parents.get(read)
        if isinstance(parent, cst.Attribute) and parent.value is read:
            call = self.b.parents.get(parent)
            if not isinstance(call, cst.Call) or call.func is not parent:
                return False
            method = parent.attr.value
            if method in _LIST_READS:
                return True
            items = [a.value for a in self._positional(call)]
            if method in ("append", "insert") and items:
                return self._number(items[-1], depth) or self._numbers(items[-1], built, depth + 1)
            return (
                method == "extend" and len(items) == 1 and self._numbers(items[0], built, depth + 1)
            )
        if isinstance(parent, cst.Arg):
            call = self.b.parents.get(parent)
            return call is built or (isinstance(call, cst.Call) and is_name(call.func, "len"))
        if isinstance(parent, cst.Subscript):  # an item read, not one stored
            return not isinstance(self.b.parents.get(parent), cst.AssignTarget | cst.AugAssign)
        return not isinstance(parent, cst.AssignTarget | cst.AugAssign | cst.Element)

    def _number(self, expr: cst.BaseExpression, depth: int) -> bool:
        """A Python number: a literal, `len(x)`, `int(x)`, `x.item()`, arithmetic of such, or a
        counter from `range(...)`/`enumerate(...)`."""
        if isinstance(expr, cst.Integer | cst.Float):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return self._number(expr.expression, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self._number(expr.left, depth) and self._number(expr.right, depth)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name):
                return func.value in _NUMBER_BUILTINS and self.symbols.qualname(func) is None
            return is_attribute(func, "item") and not expr.args
        if not isinstance(expr, cst.Name) or depth > 3:
            return False
        reaching = self.b.reaching(expr)
        return bool(reaching) and all(self._counter(b, depth) for b in reaching)

    def _counter(self, binding: Binding, depth: int) -> bool:
        """`i` of `for i in range(n)` or `for i, x in enumerate(xs)`, or a name bound to a number."""
        if binding.exact is not None:
            return self._number(binding.exact, depth + 1)
        if binding.kind is not BindingKind.LOOP or not isinstance(binding.value, cst.Call):
            return False
        func = binding.value.func
        if is_name(func, "range"):
            return binding.path == ()
        return is_name(func, "enumerate") and binding.path == (0,)

    def is_numpy(self, expr: cst.BaseExpression) -> bool:
        return self.evidence(expr) is not None

    def may_view_tensor(self, expr: cst.BaseExpression) -> bool:
        """Whether the array may share memory with a tensor: `t.numpy()`, or a view of it.

        Views are what indexing without a list, `.reshape`/`.T`/`np.asarray` and friends give;
        arithmetic, `astype`, `np.copy` and numpy constructors make fresh arrays.
        """
        return self._views(expr, 0, set())

    def _views(self, expr: cst.CSTNode, depth: int, seen: set[cst.CSTNode]) -> bool:
        if depth > _MAX_DEPTH or expr in seen:
            return False
        seen.add(expr)
        if isinstance(expr, cst.Call):
            return self._call_views(expr, depth, seen)
        if isinstance(expr, cst.Subscript):
            return not any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.List)
                for e in expr.slice
            ) and self._views(expr.value, depth + 1, seen)
        if isinstance(expr, cst.IfExp):
            return self._views(expr.body, depth + 1, seen) or self._views(
                expr.orelse, depth + 1, seen
            )
        if isinstance(expr, cst.Name):
            reaching = self.b.dominating(expr) or []
            return any(
                b.exact is not None and self._views(b.exact, depth + 1, seen) for b in reaching
            )
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in _ARRAY_ATTRS:
                return self._views(expr.value, depth + 1, seen)
            owner = self.b.self_class(expr)
            values = self.b.attribute_values(owner, expr.attr.value) if owner is not None else []
            return any(v is not None and self._views(v, depth + 1, seen) for v in values)
        return False

    def may_not_share(self, expr: cst.BaseExpression) -> bool:
        """Whether the array may be one `torch.from_numpy`/`torch.as_tensor` cannot share: a view
        with a negative stride (`a[::-1]`, `np.flip(a)`, or a view of one), which they refuse, or
        a read-only array over a buffer (`np.frombuffer(blob)`, or a view of one), on which they
        warn; `torch.tensor` copies either into memory of its own."""
        return self._unshareable(expr, 0, set())

    def _unshareable(self, expr: cst.CSTNode, depth: int, seen: set[cst.CSTNode]) -> bool:
        if depth > _MAX_DEPTH or expr in seen:
            return False
        seen.add(expr)
        if isinstance(expr, cst.Subscript):
            if any(isinstance(e.slice, cst.Slice) and _negative(e.slice.step) for e in expr.slice):
                return True
            copies = any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.List)
                for e in expr.slice
            )
            return not copies and self._unshareable(expr.value, depth + 1, seen)
        if isinstance(expr, cst.Call):
            qualname = self.symbols.qualname(expr.func) or ""
            name = qualname[len("numpy.") :] if qualname.startswith("numpy.") else ""
            if name in _UNSHAREABLE_FUNCTIONS:
                return True
            args = self._positional(expr)
            if name in _VIEWING_FUNCTIONS and args:
                return self._unshareable(args[0].value, depth + 1, seen)
            method = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else ""
            if method in _VIEWING_METHODS and isinstance(expr.func, cst.Attribute):
                return self._unshareable(expr.func.value, depth + 1, seen)
            return False
        if isinstance(expr, cst.Attribute) and expr.attr.value in _ARRAY_ATTRS:
            return self._unshareable(expr.value, depth + 1, seen)
        if isinstance(expr, cst.Name):
            reaching = self.b.dominating(expr) or []
            return any(
                b.exact is not None and self._unshareable(b.exact, depth + 1, seen)
                for b in reaching
            )
        return False

    def _call_views(self, call: cst.Call, depth: int, seen: set[cst.CSTNode]) -> bool:
        qualname = self.symbols.qualname(call.func) or ""
        if qualname.startswith("numpy."):
            args = self._positional(call)
            return (
                qualname[len("numpy.") :] in _VIEWING_FUNCTIONS
                and bool(args)
                and self._views(args[0].value, depth + 1, seen)
            )
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            if method == "numpy":
                return True
            if method in _VIEWING_METHODS:
                return self._views(call.func.value, depth + 1, seen)
        function = self._called_function(call)
        if function is None:
            return False
        returns = [
            n
            for n in self.b.own_nodes(function)
            if isinstance(n, cst.Return) and n.value is not None
        ]
        return any(self._views(r.value, depth + 1, seen) for r in returns if r.value is not None)

    # -- evaluation --------------------------------------------------------------------
    def _kind(self, expr: cst.CSTNode, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        if depth > _MAX_DEPTH or expr in self._active or self.b.enter(expr) is None:
            return None
        if expr in self._memo:
            return self._memo[expr]
        self._active.add(expr)
        try:
            found = self._evaluate(expr, depth + 1)
        finally:
            self._active.discard(expr)
        if not self._attrs_active:
            self._memo[expr] = found
        return found

    def _evaluate(self, expr: cst.CSTNode, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, cst.Name):
            return self._name(expr, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, depth)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, depth)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            return self._arithmetic(expr, depth)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            return self._compared(expr, depth)
        if isinstance(expr, cst.IfExp):
            return self._join([self._kind(expr.body, depth), self._kind(expr.orelse, depth)])
        return None

    def _name(self, name: cst.Name, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        narrowed = self._narrowed(name)
        if narrowed is not None:
            return Kind.ARRAY, narrowed
        reaching = self.b.dominating(name) or self._all_plain_bindings(name)
        if not reaching:
            return None
        return self._join([self._binding_kind(b, depth) for b in reaching])

    def _all_plain_bindings(self, name: cst.Name) -> list[Binding]:
        """Where no one binding dominates the use but an `if`/`else` before it binds the name in every
        branch (`if cached: x = f() else: x = g()`), every binding of the name in its scope, so that
        the value is evident only when each one is; none when one of them updates it in place."""
        scope = self.b.scope_of(name)
        found_in, found = self.b.resolve(name.value, scope)
        if found_in is not scope or not found or any(b.kind is BindingKind.AUGMENT for b in found):
            return []
        return found if self._bound_before(name, scope, found) else []

    def _bound_before(self, use: cst.Name, scope: cst.CSTNode, bindings: list[Binding]) -> bool:
        """Whether a statement before the use, in its block or an enclosing one, binds on every path."""
        statement = self.b.statement_of(use)
        while statement is not None and statement is not scope:
            block = self.b.parents.get(statement)
            if block is None:
                return False
            if isinstance(block, cst.Module | cst.IndentedBlock):  # else an `elif` inside its `if`
                at = next(i for i, s in enumerate(block.body) if s is statement)
                if any(self._binds_always(earlier, bindings) for earlier in block.body[:at]):
                    return True
            statement = self.b.statement_of(block)
        return False

    def _binds_always(self, statement: cst.CSTNode, bindings: list[Binding]) -> bool:
        if isinstance(statement, cst.SimpleStatementLine):
            return any(
                b.kind in (BindingKind.ASSIGN, BindingKind.UNPACK)
                and self.b.is_ancestor(statement, b.node)
                for b in bindings
            )
        if not isinstance(statement, cst.If) or statement.orelse is None:
            return False
        orelse = statement.orelse
        other = (
            self._binds_always(orelse, bindings)
            if isinstance(orelse, cst.If)
            else self._block_binds(orelse.body, bindings)
        )
        return other and self._block_binds(statement.body, bindings)

    def _block_binds(self, block: cst.BaseSuite, bindings: list[Binding]) -> bool:
        return any(self._binds_always(s, bindings) for s in getattr(block, "body", ()))

    def _narrowed(self, name: cst.Name) -> cst.CSTNode | None:
        """The `isinstance(x, np.ndarray)` test of an `if` whose body holds this use of `x`."""
        child, parent = name, self.b.parents.get(name)
        while parent is not None and not isinstance(parent, _SCOPES):
            if (
                isinstance(parent, cst.If)
                and child is parent.body
                and self._checks_array(parent.test, name.value)
            ):
                rebound = self.b.bindings[self.b.scope_of(name)].get(name.value, [])
                if any(self.b.is_ancestor(parent.body, b.effect) for b in rebound):
                    return None
                return parent.test
            child, parent = parent, self.b.parents.get(parent)
        return None

    def _checks_array(self, test: cst.BaseExpression, name: str) -> bool:
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._checks_array(test.left, name) or self._checks_array(test.right, name)
        if not (
            isinstance(test, cst.Call)
            and is_name(test.func, "isinstance")
            and len(test.args) == 2
            and is_name(test.args[0].value, name)
        ):
            return False
        return self.symbols.qualname(test.args[1].value) == "numpy.ndarray"

    def _binding_kind(self, binding: Binding, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        if binding.exact is not None:
            return self._kind(binding.exact, depth)
        if (
            binding.kind is BindingKind.UNPACK
            and len(binding.path) == 1
            and isinstance(binding.value, cst.Call)
        ):
            if self._returns_arrays(binding.value):
                return Kind.ARRAY, binding.value  # `_, inverse = np.unique(y, return_inverse=True)`
            function = self._called_function(binding.value)
            if function is not None:
                return self._returned_element(
                    function, binding.path[0], depth
                )  # `image, label = load(path)`
        if binding.annotation is not None and self._is_array_annotation(binding.annotation):
            return Kind.NUMPY, binding.annotation
        return None

    def _returns_arrays(self, call: cst.Call) -> bool:
        """A numpy function that returns a tuple of arrays (`np.unique` asked for more than the values)."""
        name = (self.symbols.qualname(call.func) or "").removeprefix("numpy.")
        if name == "unique":
            return any(
                a.keyword is not None and a.keyword.value.startswith("return_") for a in call.args
            )
        if name == "where":
            return len(self._positional(call)) == 1
        return name in _ARRAY_TUPLES

    def _is_array_annotation(self, annotation: cst.BaseExpression) -> bool:
        if isinstance(annotation, cst.Subscript):
            annotation = annotation.value
        return self.symbols.qualname(annotation) in _ANNOTATIONS

    def _attribute(self, expr: cst.Attribute, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        attr = expr.attr.value
        if attr in _ARRAY_ATTRS:
            base = self._kind(expr.value, depth)
            return base if base and base[0] in (Kind.ARRAY, Kind.NUMPY, Kind.PENDING) else None
        if attr == "values" and self.uses_pandas and not self._torch_result(expr.value):
            return Kind.NUMPY, expr
        owner = self.b.self_class(expr)
        if owner is None:
            return None
        if (owner, attr) in self._attrs_active:
            return (
                Kind.PENDING,
                expr,
            )  # `self.y = self.y.astype(...)`: numpy if the other values are
        values = self.b.attribute_values(owner, attr)
        if not values or any(v is None for v in values):
            return None
        self._attrs_active.add((owner, attr))
        try:
            return self._join([self._kind(v, depth) for v in values if v is not None])
        finally:
            self._attrs_active.discard((owner, attr))

    def _torch_result(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is evidently the result of a torch call (whose `.values` is a tensor)."""
        if isinstance(expr, cst.Name):
            reaching = self.b.dominating(expr) or []
            return any(b.exact is not None and self._torch_result(b.exact) for b in reaching)
        if not isinstance(expr, cst.Call):
            return False
        qualname = self.symbols.qualname(expr.func) or ""
        if qualname == "torch" or qualname.startswith("torch."):
            return True
        return isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _TORCH_VALUES

    def _subscript(self, expr: cst.Subscript, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        base = self._kind(expr.value, depth)
        if base is None:
            return None
        kind, origin = base
        if kind is Kind.PENDING:
            return base
        if kind is Kind.ARCHIVE:
            index = expr.slice[0].slice if len(expr.slice) == 1 else None
            keyed = isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)
            return (Kind.ARRAY, origin) if keyed else None
        if kind is not Kind.ARRAY:
            return (Kind.NUMPY, origin) if kind is Kind.NUMPY else None
        return (Kind.ARRAY if self._keeps_array(expr) else Kind.NUMPY), origin

    @staticmethod
    def _keeps_array(expr: cst.Subscript) -> bool:
        """An index with a slice, `...`, `None` or a list gives an array; integers may give a scalar."""
        for element in expr.slice:
            index = element.slice
            if not isinstance(index, cst.Index):  # a slice
                return True
            value = index.value
            if isinstance(value, cst.Ellipsis | cst.List) or is_name(value, "None"):
                return True
        return False

    def _arithmetic(self, expr: cst.BinaryOperation, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        return self._combine(expr.left, expr.right, depth)

    def _compared(self, expr: cst.Comparison, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        """`a > 0` on an array is a boolean array (`is`, `in` and friends give a bool)."""
        if not isinstance(expr.comparisons[0].operator, _ORDERING):
            return None
        return self._combine(expr.left, expr.comparisons[0].comparator, depth)

    def _combine(
        self, left: cst.BaseExpression, right: cst.BaseExpression, depth: int
    ) -> tuple[Kind, cst.CSTNode] | None:
        """Element-wise result of two operands: numpy when one is and the other is numpy or a number."""
        sides = [self._operand(left, depth), self._operand(right, depth)]
        if None in sides:
            return None
        arrays = [s for s in sides if s is not True]
        if not arrays or any(a[0] not in (Kind.ARRAY, Kind.NUMPY, Kind.PENDING) for a in arrays):  # type: ignore[index]
            return None
        known = [a for a in arrays if a[0] is not Kind.PENDING]  # type: ignore[index]
        if not known:
            return arrays[0]  # type: ignore[return-value]
        return Kind.NUMPY, known[0][1]  # type: ignore[index]  # a 0-d array gives a numpy scalar

    def _operand(
        self, expr: cst.BaseExpression, depth: int
    ) -> tuple[Kind, cst.CSTNode] | bool | None:
        """An arithmetic operand: numpy evidence, True for a number literal, None otherwise.

        An unknown operand might be a tensor, and `ndarray * tensor` is a tensor.
        """
        if isinstance(expr, cst.Integer | cst.Float):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(
            expr.expression, cst.Integer | cst.Float
        ):
            return True
        return self._kind(expr, depth)

    # -- calls -------------------------------------------------------------------------
    def _call(self, call: cst.Call, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        qualname = self.symbols.qualname(call.func) or ""
        if qualname.startswith("numpy."):
            return self._numpy_call(call, qualname[len("numpy.") :], depth)
        if qualname in _FOREIGN_ARRAYS:
            return Kind.ARRAY, call
        if qualname in _FOREIGN_ARCHIVES:
            return Kind.ARCHIVE, call
        if not isinstance(call.func, cst.Attribute):
            return self._user_function(call, depth)
        method = call.func.attr.value
        if method == "numpy" or method == "to_numpy":
            return Kind.ARRAY, call
        receiver = self._kind(call.func.value, depth)
        if receiver is None:
            return self._user_function(call, depth)
        kind, origin = receiver
        if kind is Kind.GENERATOR:
            return self._random(call, method, call)
        if kind in (Kind.ARRAY, Kind.NUMPY, Kind.PENDING) and method in _ARRAY_METHODS:
            return kind, origin
        if kind in (Kind.ARRAY, Kind.NUMPY) and method in _REDUCTIONS and self._has_axis(call, 0):
            return Kind.NUMPY, origin
        return None

    def _numpy_call(self, call: cst.Call, name: str, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        if "numpy." + name in _GENERATORS:
            return Kind.GENERATOR, call
        if name.startswith("random."):
            return self._random(call, name[len("random.") :], call)
        if name == "load":
            return self._load(call)
        if name == "where" and len(self._positional(call)) != 3:
            return None  # one-argument where gives a tuple of index arrays
        if name in _CONSTRUCTORS:
            return Kind.ARRAY, call
        if name in _TRANSFORMS:
            return self._transform(call, depth)
        if name in _REDUCTIONS and self._has_axis(call, 1):
            return Kind.NUMPY, call
        return None

    def _transform(self, call: cst.Call, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        found: tuple[Kind, cst.CSTNode] | None = None
        for arg in self._positional(call):
            if isinstance(arg.value, cst.List | cst.Tuple | cst.ListComp):
                return Kind.ARRAY, call
            kind = self._kind(arg.value, depth)
            if kind is not None and kind[0] is Kind.ARRAY:
                return Kind.ARRAY, call
            if kind is not None and kind[0] is Kind.NUMPY:
                found = (Kind.NUMPY, call)
        return found

    def _load(self, call: cst.Call) -> tuple[Kind, cst.CSTNode]:
        args = self._positional(call)
        path = args[0].value if args else None
        pickled = any(
            a.keyword and a.keyword.value == "allow_pickle" and not is_name(a.value, "False")
            for a in call.args
        )
        name = path.evaluated_value if isinstance(path, cst.SimpleString) else ""
        archive = (name.decode(errors="replace") if isinstance(name, bytes) else name).endswith(
            ".npz"
        )
        return (Kind.ARCHIVE if pickled or archive else Kind.ARRAY), call

    def _random(
        self, call: cst.Call, name: str, origin: cst.CSTNode
    ) -> tuple[Kind, cst.CSTNode] | None:
        if name not in _RANDOM_SIZE_AT:
            return None
        at = _RANDOM_SIZE_AT[name]
        sized = (
            at is None
            or len(self._positional(call)) > at
            or any(a.keyword and a.keyword.value == "size" for a in call.args)
        )
        return (Kind.ARRAY, origin) if sized else None

    def _user_function(self, call: cst.Call, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        function = self._called_function(call)
        return self._returns(function, depth) if function is not None else None

    def _called_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of this file that `f(...)`, `self.f(...)` or `obj.f(...)` calls, when that is
        evident (`obj` built from a class of the file, directly or by a function of the file)."""
        func = call.func
        if isinstance(func, cst.Name):
            reaching = self.b.dominating(func)
            return reaching[0].function if reaching and len(reaching) == 1 else None
        if not isinstance(func, cst.Attribute):
            return None
        owner = self.b.self_class(func) or self._instance_class(func.value, 0)
        if owner is None:
            return None
        methods = [
            s
            for s in owner.body.body
            if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value
        ]
        return methods[0] if len(methods) == 1 else None

    def _instance_class(self, expr: cst.BaseExpression, depth: int) -> cst.ClassDef | None:
        """The class of the file `expr` is an instance of: `Ct(uid)`, a name bound to one, or the call
        of a function of the file whose every return is one."""
        if depth > _MAX_CALL_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            value = self.b.value_of(expr)
            return self._instance_class(value, depth + 1) if value is not None else None
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name):
            return None
        reaching = self.b.dominating(expr.func)
        if not reaching or len(reaching) != 1:
            return None
        node = reaching[0].node
        if isinstance(node, cst.ClassDef):
            return node
        if not isinstance(node, cst.FunctionDef):
            return None
        returned = self._return_values(node)
        classes = {self._instance_class(value, depth + 1) for value in returned or ()}
        return classes.pop() if len(classes) == 1 else None

    def _return_values(self, function: cst.FunctionDef) -> list[cst.BaseExpression] | None:
        """What the function's `return`s give; None for generators, bare returns and no return."""
        values: list[cst.BaseExpression] = []
        for node in self.b.own_nodes(function):
            if isinstance(node, cst.Yield):
                return None
            if isinstance(node, cst.Return):
                if node.value is None:
                    return None
                values.append(node.value)
        return values or None

    def _returns(self, function: cst.FunctionDef, depth: int) -> tuple[Kind, cst.CSTNode] | None:
        """The join over the function's `return`s; None for generators and bare returns."""
        values = self._return_values(function)
        return self._join([self._kind(value, depth) for value in values]) if values else None

    def _returned_element(
        self, function: cst.FunctionDef, index: int, depth: int
    ) -> tuple[Kind, cst.CSTNode] | None:
        """The join over element `index` of the tuples every `return` of the function writes out."""
        values = self._return_values(function)
        tuples = [v for v in values or () if isinstance(v, cst.Tuple) and len(v.elements) > index]
        if not values or len(tuples) != len(values):
            return None
        if any(isinstance(e, cst.StarredElement) for t in tuples for e in t.elements[: index + 1]):
            return None
        return self._join([self._kind(t.elements[index].value, depth) for t in tuples])

    # -- helpers -----------------------------------------------------------------------
    @staticmethod
    def _positional(call: cst.Call) -> list[cst.Arg]:
        return [a for a in call.args if a.keyword is None and not a.star]

    def _has_axis(self, call: cst.Call, position: int) -> bool:
        if any(
            a.keyword and a.keyword.value == "axis" and not is_name(a.value, "None")
            for a in call.args
        ):
            return True
        return len(self._positional(call)) > position

    @staticmethod
    def _join(found: list[tuple[Kind, cst.CSTNode] | None]) -> tuple[Kind, cst.CSTNode] | None:
        """Evidence common to all `found`: ARRAY only when every one is, None if any is unknown.

        PENDING entries (self-references) take the kind of the others.
        """
        if not found or any(f is None for f in found):
            return None
        known = [f for f in found if f is not None and f[0] is not Kind.PENDING]
        if not known:
            return found[0]
        kinds = {f[0] for f in known}
        origin = known[0][1]
        if len(kinds) == 1:
            return kinds.pop(), origin
        if kinds <= {Kind.ARRAY, Kind.NUMPY}:
            return Kind.NUMPY, origin
        return None


def _negative(step: cst.BaseExpression | None) -> bool:
    """`-1`, `-k`: a slice step written negative."""
    return isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus)
