"""The semantic model (torchlint.analysis.model) on small snippets parsed by real libcst: names and
bindings, scopes, reaching and dominating bindings, the same-file call graph, and the values
callers pass. Every test states the exact answer, so a change in what the model says shows here
before it shows as a rule's finding."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.analysis.grad import Shared
from torchlint.analysis.model import Binding, SemanticModel, passed_argument, target_names
from torchlint.engine.traversal import run_rules


def _model(source: str, traversed: bool = True) -> SemanticModel:
    """The model of a dedented snippet, built the way facts build it: after the engine's traversal
    (its parent map is shared), or before it (the model records parents itself)."""
    source = textwrap.dedent(source)
    ctx = FileContext("snippet.py", source, cst.parse_module(source), (2, 4))
    if traversed:
        run_rules(ctx, [])
    return ctx.fact(SemanticModel)


def _code(model: SemanticModel, node: cst.CSTNode | None) -> str | None:
    return None if node is None else model.module.code_for_node(node)


def _kind(binding: Binding) -> str:
    """The binding's kind as text, whether it is held as a string or as an enum member."""
    return getattr(binding.kind, "value", binding.kind)


def _name(model: SemanticModel, name: str, nth: int = 0) -> cst.Name:
    """The `nth` Name spelled `name`, in source order (loads and stores alike)."""
    return model.names[name][nth]


def _last(model: SemanticModel, name: str) -> cst.Name:
    return model.names[name][-1]


def _call(model: SemanticModel, text: str) -> cst.Call:
    found = [call for call in model.calls if _code(model, call) == text]
    assert len(found) == 1, f"{text!r} is not one call of the snippet"
    return found[0]


def _function(model: SemanticModel, name: str) -> cst.FunctionDef:
    (function,) = model.functions[name]
    return function


def _described(model: SemanticModel, bindings: list[Binding]) -> list[tuple[str, str | None]]:
    return [(_kind(b), _code(model, b.value)) for b in bindings]


# -- names and bindings ------------------------------------------------------------------------
KINDS = """
import torch.nn as nn
import os.path
from torch.utils.data import DataLoader as DL
lr = 0.1
x, (y, z) = 1, (2, 3)
a, b = pair()
lr += 0.5
n: int = 3
m: int
for i, (j, k) in batches:
    pass
with open("f") as fh, lock() as (p, q):
    pass
try:
    pass
except ValueError as err:
    pass
if (w := size()) > 2:
    pass
def fn(arg):
    pass
class Net:
    pass
"""


def test_every_kind_of_binding_is_recorded_at_module_scope_with_its_value():
    model = _model(KINDS)
    bound = {
        name: [(_kind(b), _code(model, b.value), b.path) for b in bindings]
        for name, bindings in model.bindings[model.module].items()
    }
    assert bound == {
        "nn": [("import", None, ())],
        "os": [("import", None, ())],
        "DL": [("import", None, ())],
        "lr": [("assign", "0.1", ()), ("augment", "0.5", ())],
        # a literal right-hand side gives each name its own element, exactly
        "x": [("assign", "1", ())],
        "y": [("assign", "2", ())],
        "z": [("assign", "3", ())],
        # anything else is the whole right-hand side and the name's place in the target
        "a": [("unpack", "pair()", (0,))],
        "b": [("unpack", "pair()", (1,))],
        "n": [("assign", "3", ())],
        "i": [("loop", "batches", (0,))],
        "j": [("loop", "batches", (1, 0))],
        "k": [("loop", "batches", (1, 1))],
        "fh": [("with", 'open("f")', ())],
        "p": [("other", "lock()", (0,))],
        "q": [("other", "lock()", (1,))],
        "err": [("other", None, ())],
        "w": [("assign", "size()", ())],
        "fn": [("def", None, ())],
        "Net": [("def", None, ())],
    }
    # `m: int` declares without binding
    assert "m" not in bound


def test_the_model_is_the_same_with_or_without_the_engines_traversal():
    alone, after = _model(KINDS, traversed=False), _model(KINDS)
    assert {
        name: _described(alone, bindings) for name, bindings in alone.bindings[alone.module].items()
    } == {
        name: _described(after, bindings) for name, bindings in after.bindings[after.module].items()
    }
    assert len(alone.calls) == len(after.calls) == 4


def test_exact_annotation_function_and_effect_of_a_binding():
    model = _model(
        """
        def f(x: np.ndarray, y):
            z = x
            for t in x:
                pass
        """
    )
    f = _function(model, "f")
    (x,) = model.bindings[f]["x"]
    (y,) = model.bindings[f]["y"]
    (z,) = model.bindings[f]["z"]
    (t,) = model.bindings[f]["t"]
    (fdef,) = model.bindings[model.module]["f"]
    assert _code(model, x.annotation) == "np.ndarray" and y.annotation is None
    assert _code(model, z.exact) == "x" and t.exact is None
    assert fdef.function is f and z.function is None
    # a loop target is bound before the body runs: the binding takes effect at the target
    assert t.effect is t.node.target and z.effect is z.node


SCOPES = """
rate = 1
class Model:
    rate = 2
    def forward(self, x):
        return x * rate
    double = lambda self, v: v * 2
squares = [v * v for v in range(3)]
"""


def test_each_name_lives_in_the_innermost_scope_and_a_defs_name_in_the_scope_around_it():
    model = _model(SCOPES)
    klass = model.classes["Model"]
    forward = _function(model, "forward")
    (lam,) = [s for s in model.scope_parent if isinstance(s, cst.Lambda)]
    (comp,) = [s for s in model.scope_parent if isinstance(s, cst.ListComp)]
    assert model.scope_of(_name(model, "forward")) is klass
    assert model.scope_of(_name(model, "Model")) is model.module
    assert model.scope_of(_name(model, "x")) is forward
    assert model.scope_of(_name(model, "v", 1)) is lam
    assert model.scope_of(_name(model, "v", 2)) is comp
    assert model.scope_parent[forward] is klass
    assert model.scope_parent[lam] is klass
    assert model.scope_parent[comp] is model.module
    assert model.scope_parent[klass] is model.module


def test_a_method_does_not_see_its_class_body_and_a_comprehension_keeps_its_names():
    model = _model(SCOPES)
    forward = _function(model, "forward")
    scope, bindings = model.resolve("rate", forward)
    assert scope is model.module and _described(model, bindings) == [("assign", "1")]
    assert model.resolve("rate", model.classes["Model"])[0] is model.classes["Model"]
    assert "v" not in model.bindings[model.module]
    assert model.resolve("missing", forward) == (model.module, [])


def test_global_and_nonlocal_declarations_send_a_name_to_the_scope_they_name():
    model = _model(
        """
        count = 0
        def reset():
            global count
            count = 0
        def outer():
            total = 0
            def inner():
                nonlocal total
                total = total + 1
            inner()
            return total
        """
    )
    reset, outer, inner = (_function(model, n) for n in ("reset", "outer", "inner"))
    assert model.declared[reset] == {"count": "global"}
    assert model.declared[inner] == {"total": "nonlocal"}
    assert model.resolve("count", reset)[0] is model.module
    scope, bindings = model.resolve("total", inner)
    assert scope is outer and _described(model, bindings) == [("assign", "0")]


def test_loads_stores_mutations_and_nested_reads():
    model = _model(
        """
        def f(batch, keys):
            size = 1
            unused = 2
            for k in keys:
                batch[k] = batch[k].to(size)
            def g():
                return size
            return g
        """
    )
    f = _function(model, "f")
    assert sorted(model.loads[f]) == ["batch", "g", "k", "keys", "size"]
    assert [model.order[n] for n in model.uses(f, "size")] == sorted(
        model.order[n] for n in model.uses(f, "size")
    )
    assert len(model.uses(f, "size")) == 2  # the store and the load in f itself; g's is g's
    assert model.mutated[f] == {"batch"}
    assert model.read_in_nested_scope("size", f) is True
    assert model.read_in_nested_scope("unused", f) is False
    assert model.read_in_nested_scope("batch", f) is False


def test_reaching_is_the_last_plain_binding_before_the_use_and_the_augments_after_it():
    model = _model(
        """
        x = 1
        x = 2
        x += 3
        print(x)
        for step in range(3):
            print(y)
            y = step
        """
    )
    assert _described(model, model.reaching(_last(model, "x"))) == [
        ("assign", "2"),
        ("augment", "3"),
    ]
    # nothing binds `y` before its use: a loop's back edge may bring any binding
    assert _described(model, model.reaching(_name(model, "y"))) == [("assign", "step")]


def test_a_binding_in_a_branch_that_leaves_the_function_reaches_nothing_after_it():
    """TL101 round 9 (a loader rebound for a one-off `--phase analysis` pass that returns): the
    binding in the branch that returns or raises never reaches the code after the `if`; inside
    that branch it does, and a branch that goes on reaches past it as before."""
    model = _model(
        """
        def main(args):
            loader = build("val")
            if args.phase == "analysis":
                loader = build("shuffled")
                analyse(loader)
                return
            elif args.phase == "bad":
                loader = build("bad")
                raise ValueError(args.phase)
            if args.debug:
                loader = build("debug")
            validate(loader)
        """
    )
    assert _described(model, model.reaching(_name(model, "loader", 2))) == [
        ("assign", 'build("shuffled")')
    ]
    assert _described(model, model.reaching(_last(model, "loader"))) == [
        ("assign", 'build("debug")')
    ]
    after_branches = _model(
        """
        def main(args):
            loader = build("val")
            if args.phase == "analysis":
                loader = build("shuffled")
                return analyse(loader)
            validate(loader)
        """
    )
    assert _described(after_branches, after_branches.reaching(_last(after_branches, "loader"))) == [
        ("assign", 'build("val")')
    ]


def test_a_list_comprehension_runs_in_place_and_a_generator_may_run_later():
    model = _model(
        """
        a = 1
        now = [a for _ in range(3)]
        later = (a for _ in range(3))
        a = 2
        """
    )
    assert _described(model, model.reaching(_name(model, "a", 1))) == [("assign", "1")]
    assert _described(model, model.reaching(_name(model, "a", 2))) == [
        ("assign", "1"),
        ("assign", "2"),
    ]


DOMINATING = """
lr = 0.1
def f(flag):
    x = 1
    if flag:
        x = 2
    use(x)
    y = x
    use(y)
    for _ in range(2):
        use(z)
        z = 4
    use(flag)
    return lr
"""


def test_dominating_is_the_one_binding_that_surely_ran_or_none():
    model = _model(DOMINATING)
    # the last binding before the use sits in a branch that may not have run
    assert model.dominating(_last(model, "x")) is None
    assert _described(model, model.dominating(_last(model, "y"))) == [("assign", "x")]
    # the loop rebinds `z` after the use: unclear
    assert model.dominating(_name(model, "z")) is None
    assert _described(model, model.dominating(_last(model, "flag"))) == [("param", None)]
    # from an enclosing scope, every binding there
    assert _described(model, model.dominating(_last(model, "lr"))) == [("assign", "0.1")]


def test_value_of_and_alias_of_follow_one_dominating_binding():
    model = _model(DOMINATING)
    assert _code(model, model.value_of(_last(model, "y"))) == "x"
    assert _code(model, model.value_of(_last(model, "lr"))) == "0.1"
    assert model.value_of(_last(model, "x")) is None
    assert model.value_of(_last(model, "flag")) is None
    aliases = _model("import torch\nto_tensor = torch.tensor\nto_tensor([1])\n")
    assert _code(aliases, aliases.alias_of(_last(aliases, "to_tensor"))) == "torch.tensor"


def test_what_self_attributes_hold_in_the_methods_of_a_class():
    model = _model(
        """
        class Trainer:
            def __init__(self, frame, loader):
                self.data = frame
                self.data = self.data.values
                self.loader = loader
            def fit(self):
                for batch in self.loader:
                    pass
        """
    )
    klass = model.classes["Trainer"]
    # the first assignment is always overwritten by the next in the same block
    assert [_code(model, v) for v in model.attribute_values(klass, "data")] == ["self.data.values"]
    assert [_code(model, v) for v in model.attribute_values(klass, "loader")] == ["loader"]
    assert _described(model, model.all_bindings(model.attributes["loader"][-1])) == [
        ("assign", "loader")
    ]
    assert model.self_class(model.attributes["loader"][-1]) is klass


# -- the call graph --------------------------------------------------------------------------
CALLS = """
def helper(x):
    return x

class Net(nn.Module):
    def forward(self, x):
        return self.block(x)

    def block(self, x):
        return helper(x)

def closure():
    return 1

def make_step(scale):
    def step(x):
        return x * scale
    return step

model = Net().cuda()
model(1)
optimizer.step(closure)
train_step = make_step(2)
train_step(3)
print(model)
"""


def _edges(model: SemanticModel) -> dict[str, list[str]]:
    return {
        model.module.code_for_node(call): [f.name.value for f in functions]
        for call, functions in model.callees.items()
    }


def test_calls_reach_functions_methods_forward_callbacks_and_returned_closures():
    model = _model(CALLS)
    assert _edges(model) == {
        "self.block(x)": ["block"],
        "helper(x)": ["helper"],
        "model(1)": ["forward"],  # a module built from the file's class runs its forward
        "optimizer.step(closure)": ["closure"],  # a function passed as an argument
        "make_step(2)": ["make_step"],
        "train_step(3)": ["step"],  # the closure the factory returns
    }
    assert model.callbacks == {
        (_call(model, "optimizer.step(closure)"), _function(model, "closure"))
    }
    assert model.callers[_function(model, "helper")] == [_call(model, "helper(x)")]
    assert [_code(model, c) for c in model.calls] == [
        "self.block(x)",
        "helper(x)",
        "Net().cuda()",
        "Net()",
        "model(1)",
        "optimizer.step(closure)",
        "make_step(2)",
        "train_step(3)",
        "print(model)",
    ]


def test_a_redefined_function_is_called_in_the_version_bound_before_the_call():
    model = _model(
        """
        def train():
            return 1
        train()
        def train():
            return 2
        train()
        """
    )
    first, second = model.functions["train"]
    calls = [c for c in model.calls if _code(model, c) == "train()"]
    assert [model.callees[c] for c in calls] == [[first], [second]]


def test_model_calls_run_the_forward_of_the_class_bound_last_before_them():
    model = _model(
        """
        class A(nn.Module):
            def forward(self, x):
                return x
        class B(nn.Module):
            def forward(self, x):
                return x
        model = A() if small else B()
        model(1)
        other = A()
        if small:
            other = B()
        other(2)
        """
    )
    forward_a, forward_b = model.functions["forward"]
    # one binding that may hold either class: no known forward
    assert _call(model, "model(1)") not in model.callees
    # straight-line code: the binding last before the call, as a notebook's cells run
    assert model.callees[_call(model, "other(2)")] == [forward_b]
    assert model.callers[forward_a] == []


# -- values callers pass ---------------------------------------------------------------------
def test_arguments_are_what_each_caller_passes_for_a_parameter():
    model = _model(
        """
        def train(model, loader, epochs=1, *, lr):
            pass
        train(net, dl, lr=0.1)
        train(net, loader=dl2, epochs=3, lr=0.2)
        train(*parts, lr=0.3)
        run(train)
        """
    )
    params = {p.name.value: p for p in _function(model, "train").params.params}
    params.update({p.name.value: p for p in _function(model, "train").params.kwonly_params})

    def passed(name: str) -> list[str | None]:
        return [_code(model, value) for _, value in model.arguments(params[name])]

    assert passed("loader") == ["dl", "dl2", None]  # unknown after a *args
    assert passed("epochs") == [None, "3", None]
    assert passed("lr") == ["0.1", "0.2", "0.3"]
    # `run(train)` hands the function over: its callee passes the arguments, not that call
    assert _call(model, "run(train)") in model.callers[_function(model, "train")]
    assert len(model.arguments(params["model"])) == 3


def test_a_methods_receiver_binds_its_first_parameter():
    model = _model(
        """
        class Net(nn.Module):
            def forward(self, x, mask=None):
                return x
            def run(self, batch):
                return self.forward(batch, mask=m)
        net = Net()
        net(inputs)
        """
    )
    forward = _function(model, "forward")
    x, mask = forward.params.params[1:]
    assert [_code(model, v) for _, v in model.arguments(x)] == ["batch", "inputs"]
    assert [_code(model, v) for _, v in model.arguments(mask)] == ["m", None]


@pytest.mark.parametrize(
    ("call", "name", "index", "expected"),
    [
        ("f(a, b)", "y", 1, "b"),
        ("f(a, y=b)", "y", 1, "b"),
        ("f(a)", "y", 1, None),
        ("f(*a, b)", "y", 1, None),
        ("f(a, b)", "y", None, None),
    ],
)
def test_passed_argument(call, name, index, expected):
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    value = passed_argument(node, name, index)
    assert (None if value is None else cst.Module([]).code_for_node(value)) == expected


def test_target_names_walk_a_destructuring_with_positions():
    target = cst.parse_expression("a, (b, *c), d.e")
    found = [(cst.Module([]).code_for_node(n), path) for n, path in target_names(target)]
    assert found == [("a", (0,)), ("b", (1, 0)), ("c", (1, 1)), ("d.e", (2,))]


@pytest.mark.parametrize("traversed", [True, False])
def test_method_class_is_the_one_walk_from_a_def_to_its_class(traversed: bool) -> None:
    """`method_class` answers for every fact that asks which class a def is a method of (Grad's
    `enclosing_class`), after the engine's traversal and before it alike: a method is a
    statement of its class's body; a def under an `if` of that body, one nested in a method and
    a module-level one are no methods."""
    source = textwrap.dedent(
        """\
        class Net:
            def forward(self, x):
                def inner(y):
                    return y
                return inner(x)

            if FAST:
                def fast(self):
                    pass


        def helper(x):
            return x
        """
    )
    ctx = FileContext("snippet.py", source, cst.parse_module(source), (2, 4))
    if traversed:
        run_rules(ctx, [])
    model = ctx.fact(SemanticModel)
    owners = {
        name: _code(model, model.method_class(model.functions[name][0]))
        for name in ("forward", "inner", "fast", "helper")
    }
    assert {name: (code or "").split(":")[0] or None for name, code in owners.items()} == {
        "forward": "class Net",
        "inner": None,
        "fast": None,
        "helper": None,
    }
    grad = Shared(ctx)
    for name in owners:
        function = model.functions[name][0]
        assert grad.enclosing_class(function) is model.method_class(function)
