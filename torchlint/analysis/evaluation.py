"""The evaluation layer, on top of the grad mode: which calls are forward passes of modules,
and which of them run for evaluation, repeatedly: TL001's judgement.

- Forward passes: a call whose callee is a module (`model(x)`, `self.net(x)`,
  `model.forward(x)`, a module class's method that runs one).
- Evaluation scopes: a function named like evaluation, a loop over a validation/test loader,
  code after `model.eval()`, a forward on test data or after training, a global module in eval
  mode, an inference-only script; only where the evaluation repeats (a loop, a function run
  every step or epoch, a function that may run many times).

It leans towards "not known" whenever the code is dynamic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.demos import LibraryDemo
from torchlint.analysis.entry_points import EntryPoints
from torchlint.analysis.frameworks import FORWARD_METHOD_NAMES, framework_of
from torchlint.analysis.grad import (
    Block,
    Grad,
    GradMode,
    Shared,
    is_dunder,
    literal_bool,
)
from torchlint.analysis.leaves import TrainedLeaves
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import Binding, BindingKind, SemanticModel, passed_argument
from torchlint.analysis.names import (
    EVAL_DATA_WORDS,
    NOT_CALLABLE_MODULES,
    RUN_ONCE_NAMES,
    is_eval_data_name,
    is_eval_input_name,
    is_eval_name,
    is_module_name,
    name_tokens,
)
from torchlint.analysis.nodes import (
    COMPREHENSIONS,
    find_all,
    in_loop_body,
    is_attribute,
    is_name,
    own_returns,
    past_methods,
)
from torchlint.analysis.numpy_reads import reaches_numpy
from torchlint.analysis.symbols import dotted
from torchlint.analysis.tensors import TensorFacts
from torchlint.analysis.text import may_evaluate
from torchlint.analysis.writes import written_after

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext


# -- evaluation ---------------------------------------------------------------------------

# Model wrappers whose __call__ already runs inference without grad.
_NO_GRAD_WRAPPERS = (
    "ultralytics.",
    "transformers.pipeline",
    "detectron2.engine.DefaultPredictor",
    "detectron2.engine.defaults.",
    # PyG's label propagation holds no parameters and decorates its forward `@torch.no_grad()`.
    "torch_geometric.nn.LabelPropagation",
    "torch_geometric.nn.models.LabelPropagation",
    "torch_geometric.nn.models.label_prop.LabelPropagation",
)
# Libraries that build no module: what their functions return is a table, an array or an
# import machinery object, never a module, and neither are its attributes (`frame.head(n)` on
# `frame = pd.read_csv(path)`, `spec.loader.exec_module(m)` on `spec =
# importlib.util.spec_from_file_location(...)`).
_DATA_LIBRARIES = ("pandas.", "numpy.", "importlib.")
# Methods whose result has left autograd: nobody backpropagates through it.
_AUTOGRAD_EXITS = frozenset({"item", "tolist", "numpy", "detach"})
# torch.nn layers that hold no parameters: activations, pooling, resampling, reshaping,
# distances.
_PARAMETERLESS = frozenset(
    {
        *("ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "ELU", "SELU", "Mish", "Hardswish"),
        *("Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus", "Identity", "Flatten"),
        *("Unflatten", "Dropout", "Dropout2d", "Dropout3d", "Upsample", "UpsamplingBilinear2d"),
        *("UpsamplingNearest2d", "PixelShuffle", "PixelUnshuffle", "MaxPool1d", "MaxPool2d"),
        *("MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d"),
        *("AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"),
        *("CosineSimilarity", "PairwiseDistance"),
    }
)
# What a value flows through, graph and all, on its way to where it is read: arithmetic,
# indexing, containers, arguments of the calls and methods computing on it.
_GRAPH_KEEPING = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Subscript,
    cst.SubscriptElement,
    cst.Index,
    cst.Slice,
    cst.Element,
    cst.StarredElement,
    cst.List,
    cst.Tuple,
    cst.Arg,
    cst.Call,
    cst.Attribute,
)
_LITERALS = (cst.SimpleString, cst.Integer, cst.Float)
# What runs its body more than once per run of the code around it (`_in_own_loop`), by exact type.
_REPEATING = frozenset((*COMPREHENSIONS, cst.Lambda))
# Entry points a script runs once.
_EXPORTS = frozenset(
    {
        "torch.onnx.export",
        "torch.onnx.dynamo_export",
        "torch.jit.trace",
        "torch.jit.trace_module",
        "torch.jit.script",
        "torch.export.export",
    }
)
_MODULE_CONSTRUCTOR_PREFIXES = ("torch.nn.", "torchvision.models.", "timm.create_model")
_SYNTHETIC_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "arange",
        "linspace",
        "eye",
    )
)
# Factories of tensors filled with one value: an input made of them holds no data to evaluate.
_CONSTANT_FILLS = frozenset(f"torch.{name}" for name in ("zeros", "ones", "empty", "full"))
_FILL_DEPTH = 3  # bindings of a made-up input followed back through its own moves and casts
# Random factories: given a leading size of 1 (one made-up sample), a probe like the fills above.
_RANDOM_FILLS = frozenset(f"torch.{name}" for name in ("rand", "randn"))
# nn.Module's own methods: calling them runs no forward.
_MODULE_API = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "eval",
        "train",
        "half",
        "float",
        "double",
        "bfloat16",
        "type",
        "apply",
        "state_dict",
        "load_state_dict",
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "children",
        "named_children",
        "modules",
        "named_modules",
        "register_buffer",
        "register_parameter",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "add_module",
        "get_submodule",
        "requires_grad_",
        "zero_grad",
        "share_memory",
        "extra_repr",
        "to_empty",
        "set_extra_state",
        "get_extra_state",
    }
)
# Calls that say a script loads trained weights.
_LOADS_WEIGHTS = ("load_state_dict", "torch.load(", "jit.load(", "from_pretrained(")
# Loaders that return whatever was saved: a name bound to one and then called holds a whole module.
_WHOLE_MODEL_LOADS = frozenset({"torch.load", "torch.jit.load"})
_FACTORY_DEPTH = (
    3  # factories calling factories: `build()` -> `make_backbone()` -> `nn.Sequential(...)`
)
_MODULE_CHAIN_METHODS = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "eval",
        "train",
        "half",
        "float",
        "double",
        "bfloat16",
        "requires_grad_",
        "to_empty",
    }
)
# Tensor methods that change only a tensor's device, dtype or layout: a fill stays a fill
# through them (`torch.zeros(...).to(d).type_as(w)`).
_ONE_EXAMPLE_DEPTH = 4  # bindings followed back from a forward's input to its batch of one
# Methods of a tensor that keep its batch as it is (`Evaluation.one_example`), and the calls
# that convert one without changing it.
_BATCH_KEEPING = frozenset(
    {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "long", "int", "type"}
    | {"contiguous", "detach", "requires_grad_", "pin_memory"}
)
_BATCH_CONVERSIONS = frozenset(
    {"torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.autograd.Variable"}
)
_TENSOR_CASTS = _MODULE_CHAIN_METHODS | frozenset(
    {"type", "type_as", "long", "int", "short", "byte", "bool", "contiguous"}
)


def _freezes(assign: cst.CSTNode) -> bool:
    """`x.requires_grad = False`, one target."""
    return (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and is_attribute(assign.targets[0].target, "requires_grad")
        and is_name(assign.value, "False")
    )


def _is_forward_name(name: str) -> bool:
    return name == "__call__" or "forward" in name_tokens(name)


@dataclass(frozen=True)
class EvalScope:
    """Where an evaluation forward runs: a whole function, or one statement of a block.

    `key` groups the forwards of one scope; `block`/`index` locate the statement holding the
    forward in the block the fix wraps (None for a function scope, which gets a decorator).
    `after` is the code that runs after the forwards while the scope's evidence still holds
    (the rest of a `model.eval()` region): if it needs grad, so may the forwards.
    """

    key: tuple
    reason: str
    function: cst.FunctionDef | None = None
    block: Block | None = None
    index: int = 0
    after: tuple[cst.CSTNode, ...] = ()
    detached: bool = (
        False  # the function returns only Python values: its result cannot feed a backward
    )
    flagged: bool = False  # a shared loop whose training a flag turns off (`flag_scope`)
    # a call the file also makes under `no_grad` with the same flags (`twin_scope`): what it
    # runs needs no graph there, so the training the callee may do elsewhere does not count
    twin: bool = False


class Evaluation(Shared):
    """Forward passes of modules and the evaluation scope they run in."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self._eval_functions: dict[cst.FunctionDef | None, cst.FunctionDef | None] = {}
        self._regions: dict[tuple, tuple[cst.CSTNode, ...]] = {}
        self._value_returners: dict[cst.FunctionDef, bool] = {}
        self._factories: dict[
            cst.FunctionDef, bool
        ] = {}  # functions of the file that return a new module
        self._repeating: dict[cst.FunctionDef, bool] = {}
        self._dead: dict[cst.FunctionDef, bool] = {}  # `_never_runs`, asked per forward
        self._forward_helpers: dict[cst.FunctionDef, bool] = {}  # see `runs_forward`
        self._flags: dict[cst.FunctionDef, tuple[cst.Call, str] | None] = {}  # `flag_scope`
        self._eval_loaders: dict[cst.FunctionDef, bool] = {}
        self._project_loaders: dict[str, bool] = {}  # asked for every call bound to a name
        # What `is_module` learnt of each name from its assignments (`_assigned`)
        self._wrapper_keys: dict[str, bool] = {}
        self._module_keys: dict[str, bool] = {}
        self._non_module_keys: dict[str, bool] = {}
        self._param_modules: dict[cst.Param, bool] = {}
        self._graph_droppers: dict[cst.FunctionDef, bool] = {}  # `_drops_graphs`

    # -- forward passes -----------------------------------------------------------------
    def is_forward(self, call: cst.Call) -> bool:
        """Whether `call` runs a module's forward: `model(x)`, `self.net(x)`, `model.forward(x)`, `self(x)`."""
        name = self.callee(call)
        if name is None or not call.args:
            return False  # a forward takes inputs; `solver.model()` is something else
        if _takes_only_numbers(call):
            return False  # `data.head(1)`, `df.tail(5)`: a forward takes tensors, not literals
        if name == "self":
            function = self.enclosing_function(call)
            owner = self.enclosing_class(function) if function is not None else None
            return owner is not None and owner.name.value in self.module_classes
        if dotted(call.func) is None:  # an item of a container: `self.nets["policy"](obs)`
            return self._holds_modules(name, call)
        return self.is_module(name, call) or self._runs_module_method(call)

    def _holds_modules(self, name: str, at: cst.CSTNode) -> bool:
        """Whether the container `name` holds modules, so that calling one of its items runs a
        forward: the file builds it as an `nn.ModuleDict`/`nn.ModuleList` (`self.nets =
        nn.ModuleDict()`), or it is a module itself (an `nn.Sequential`'s layer)."""
        for value in self._assigned.get(self._binding_key(name, at), ()):
            built = _chain_base(value)
            if type(built) is cst.Call:
                qualname = self.ctx.symbols.qualname(built.func) or ""
                if qualname in _MODULE_CONTAINERS:
                    return True
        return self.is_module(name, at)

    def runs_forward(self, call: cst.Call) -> bool:
        """`pred, true = self._process_one_batch(x, y)` in a loop: a call of one function of the
        file that returns a value and runs a forward of its own with grad recording, which code
        that is not evaluation calls with grad on too, so no evaluation scope of its own reports
        it (a helper training shares with evaluation): the call is the forward pass of the
        evaluation loop that makes it. Outside a loop of its own function (an API method's one
        call of a helper) it is left alone."""
        model = self.model
        callees = model.callees.get(call)
        if not callees:
            return False  # most calls: no function of the file (the rule asks of every call)
        targets = [f for f in callees if (call, f) not in model.callbacks]
        if len(targets) != 1 or not self._in_own_loop(call):
            return False  # not one function of the file; or a helper's one call from an API method
        helper = targets[0]
        if helper not in self._forward_helpers:
            self._forward_helpers[helper] = self._runs_own_forward(helper)
        return self._forward_helpers[helper]

    def _runs_own_forward(self, helper: cst.FunctionDef) -> bool:
        if self._is_module_forward(helper) or not any(
            ret.value is not None for ret in own_returns(helper)
        ):
            return False  # a module's forward is is_forward's; a helper returning nothing feeds nothing
        if not self._called_with_grad(helper, frozenset()):
            return False  # only evaluation calls it: its grad mode is theirs (`_helps_evaluation`)
        # A forward on a made-up input (`model(torch.randn(1, 2, n))`, a conversion check)
        # evaluates no data, however often the helper runs.
        forwards = [
            c for c in self.calls_in(helper) if self.is_forward(c) and not self._warms_up(c)
        ]
        grad = self.ctx.fact(Grad)
        return (
            bool(forwards)
            and any(grad.call_mode(c) is GradMode.RECORDING for c in forwards)
            and all(self.scope(c) is None for c in forwards)
        )

    def _is_module_forward(self, function: cst.FunctionDef) -> bool:
        """A function named for a forward (`forward`, `__call__`, `forward_features`) inside a
        class or function: a module's forward, which `is_forward` answers at the call (or one
        patched onto a module). A function at module level named
        `forward(model, i, data)` belongs to no class: it is a helper training and evaluation
        share, so its call is the forward of the loop that makes it."""
        return _is_forward_name(function.name.value) and not isinstance(
            self.parent(function), cst.Module
        )

    def _runs_module_method(self, call: cst.Call) -> bool:
        """`agent.act(obs)`: a method of a module class of this file that runs a forward itself."""
        func = call.func
        if type(func) is not cst.Attribute or is_dunder(func.attr.value):
            return False
        receiver = dotted(func.value) or ""
        owner = self._bound_classes.get(self._binding_key(receiver, call))
        if owner is None:
            return (
                self._feeds_eval_module(call, receiver)
                or self._runs_project_method(call, receiver)
                or self._runs_project_submodule(call, receiver)
                or self._runs_named_project_method(call, receiver)
                or self._runs_framework_method(func)
            )
        if owner.name.value not in self.module_classes:
            return False
        body = owner.body.body if isinstance(owner.body, cst.IndentedBlock) else ()
        method = next(
            (s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value),
            None,
        )
        if method is None:
            return False
        return any(self._is_direct_forward(inner) for inner in self.calls_in(method))

    def _feeds_eval_module(self, call: cst.Call, receiver: str) -> bool:
        """`agent.get_action(torch.Tensor(obs))` on an object the file puts in eval mode, whose class is
        elsewhere: a module method that takes a tensor runs the module, unless it is nn.Module's own API."""
        if not isinstance(call.func, cst.Attribute):
            return False
        if call.func.attr.value in _MODULE_API or receiver not in self._eval_receivers:
            return False
        if receiver == "self" and not self._is_eval_receiver("self", self.enclosing_function(call)):
            return False  # `self.eval()` in a class that is no module calls its own `eval` method
        tensors = self.ctx.fact(TensorFacts)
        return any(arg.keyword is None and tensors.is_tensor(arg.value) for arg in call.args)

    def _runs_project_method(self, call: cst.Call, receiver: str) -> bool:
        """`model.inference(image=x)` on a model built from a module class of another file of
        the project (`Reader(...)`, `Reader.from_pretrained(path)`) whose method runs the
        module's forward itself: the call is that forward, run with this caller's grad mode."""
        if self.ctx.project is None or not isinstance(call.func, cst.Attribute):
            return False
        klass = _class_written(self._built_classes.get(self._binding_key(receiver, call), ""))
        return bool(klass) and self.ctx.project.method_runs_forward(
            self.ctx.absolute_path, klass, call.func.attr.value
        )

    def _runs_project_submodule(self, call: cst.Call, receiver: str) -> bool:
        """`self.rnd.target(obs)` on a model built from a module class of another file of the
        project (`self.rnd = RNDModel(...)`) whose constructor assigns that attribute a module
        (`self.target = nn.Sequential(...)`): the call is the submodule's forward."""
        if self.ctx.project is None or not isinstance(call.func, cst.Attribute):
            return False
        klass = _class_written(self._built_classes.get(self._binding_key(receiver, call), ""))
        return bool(klass) and self.ctx.project.attribute_holds_module(
            self.ctx.absolute_path, klass, call.func.attr.value
        )

    def _runs_named_project_method(self, call: cst.Call, receiver: str) -> bool:
        """`model.predict(seqs, items)` in `evaluate(model, ...)` of a utility module: a receiver
        the file binds to nothing it builds, named like a module (a parameter, say), calling a
        method that every class of the project defining it runs as its own module's forward
        (`ProjectIndex.forwards_by_name`): whatever instance the caller passes, the call runs a
        forward with this code's grad mode."""
        method = cast(cst.Attribute, call.func).attr.value  # `_runs_module_method` asked it
        if method in _MODULE_API or self.ctx.project is None:
            return False  # (`model.forward(x)` is `is_forward`'s: `callee` drops `forward`)
        if not is_module_name(receiver.rpartition(".")[2]):
            return False  # asked first: most receivers are no module by their name
        if self._binding_key(receiver, call) in self._built_classes:
            return False  # bound to something built here: `_runs_project_method` knows it
        return self.is_module(receiver, call) and self.ctx.project.forwards_by_name(method)

    def _runs_framework_method(self, func: cst.Attribute) -> bool:
        """`vae.decode(latents)` where everything `vae` may hold there was built by a library
        whose module classes run their forward in that method (`AutoencoderKL.from_pretrained(
        ...)`: the framework table's `forward_methods`): the call is a forward pass."""
        if func.attr.value not in FORWARD_METHOD_NAMES:
            return False
        built = self.model.builders(func.value)
        return bool(built) and all(
            (framework := framework_of(self.ctx.symbols.qualname(b) or "")) is not None
            and func.attr.value in framework.forward_methods
            for b in built
        )

    @cached_property
    def _eval_receivers(self) -> set[str]:
        return {
            receiver
            for switches in self._switches_by_statement.values()
            for kind, receiver in switches
            if kind == "eval" and receiver
        }

    def _is_direct_forward(self, call: cst.Call) -> bool:
        name = self.callee(call)
        if name is None or not call.args:
            return False
        if name == "self":
            return True  # inside a method of a module class
        return self.is_module(name, call)

    @cached_property
    def _bound_classes(self) -> dict[str, cst.ClassDef | None]:
        """The class of this file each name is built from (`agent = Agent(envs).to(device)`); None when two differ."""
        found: dict[str, cst.ClassDef | None] = {}
        for target, value in self.model.assigns:
            while (
                type(value) is cst.Call
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _MODULE_CHAIN_METHODS
            ):
                value = value.func.value
            name = dotted(target)
            if not name or type(value) is not cst.Call or type(value.func) is not cst.Name:
                continue
            owner = self.model.classes.get(value.func.value)
            if owner is None:
                continue
            key = self._binding_key(name, target)
            found[key] = owner if found.get(key, owner) is owner else None
        return found

    def callee(self, call: cst.Call) -> str | None:
        """The dotted module a forward-looking call calls (`model` for `model.forward_features(x)`), else None."""
        name = dotted(call.func)
        if name is None:
            name = self._container_item(call.func)
            if name is None:
                return None  # not a plain name, nor an item of a named container
        elif self.ctx.symbols.qualname(call.func) is not None and not self._rebound(call.func):
            return None  # an imported function or class
        parts = name.split(".")
        if parts[-1].startswith("forward") and len(parts) > 1:
            parts.pop()  # model.forward(x), model.forward_features(x)
        return ".".join(parts)

    def _rebound(self, func: cst.BaseExpression) -> bool:
        """Whether the imported head of `func` holds a value the file bound instead
        (`model = model.RNNModel(...)` after `import model`): the call is asked of that value."""
        while type(func) is cst.Attribute:
            func = func.value
        return type(func) is cst.Name and self.model.shadows_import(func)

    def _container_item(self, func: cst.BaseExpression) -> str | None:
        """`self.nets` for `self.nets["policy"]` and `self.nets.forward_step` for
        `self.nets["policy"].forward_step`: an item of a named container (an nn.ModuleDict or
        ModuleList, a dict of models) picked by one plain key runs what the container holds, so
        the call is asked of the container's name. Not an imported name's item."""
        attrs: list[str] = []
        while type(func) is cst.Attribute:
            attrs.append(func.attr.value)
            func = func.value
        if type(func) is not cst.Subscript or len(func.slice) != 1:
            return None
        element = func.slice[0].slice
        if type(element) is not cst.Index or type(element.value) not in _PLAIN_KEYS:
            return None
        base = dotted(func.value)
        if base is None or self.ctx.symbols.qualname(func.value) is not None:
            return None
        return ".".join([base, *reversed(attrs)])

    def is_module(self, name: str, at: cst.CSTNode) -> bool:
        """Whether the dotted `name`, used at `at`, evidently holds an nn.Module (by construction or by its name)."""
        last = name.rsplit(".", 1)[-1]
        if not last:
            return False
        if last[0].isupper() and not self._binds_module(self._binding_key(name, at)):
            return False  # a class: this call constructs; `G = Generator()` holds a module
        if not self._module_evidence(name, last, at):
            return False
        # `model(path)` for `model` in `(RWKV7, Qwen)`: a constructor call. Asked last: it
        # resolves the name, and only overturns a yes.
        return "." in name or not self._holds_classes(name, at)

    def _module_evidence(self, name: str, last: str, at: cst.CSTNode) -> bool:
        """What the bindings and the name of `name` (not a class's, `last` its last part) say
        of it holding a module, before asking whether it holds classes."""
        key = self._binding_key(name, at)
        if self._binds_wrapper(key):
            return False
        if self._binds_module(key):
            return True
        if self._binds_non_module(key):
            return False  # `encoder = Tokenizer()`: a class that is no nn.Module, whatever the name
        if "." in name and name.split(".", 1)[0] in self._bound_data_values:
            return False  # `frame.head(n)`: an attribute of a pandas or numpy value
        if "." not in name and self._is_file_function(name, at):
            return (
                False  # `efficientnet(width=...)`: a function of this file, whatever its name says
            )
        return is_module_name(last) or ("." not in name and self._passed_modules(name, at))

    def _holds_classes(self, name: str, at: cst.CSTNode) -> bool:
        """Whether every binding of the plain `name` seen from `at` gives it a class, not an
        instance: `model = Net`, or a loop target over a literal tuple of classes (`for model,
        path in ((RWKV7, P1), (Qwen, P2)):`). Calling it builds an object."""
        bindings = self.model.resolve(name, self.model.scope_of(at))[1]
        return bool(bindings) and all(self._binds_classes(b) for b in bindings)

    def _binds_classes(self, binding: Binding) -> bool:
        values: list[cst.BaseExpression] = []
        if binding.kind is BindingKind.ASSIGN and binding.value is not None:
            values = [binding.value]
        elif binding.kind is BindingKind.LOOP and isinstance(binding.value, cst.Tuple | cst.List):
            if len(binding.path) > 1:
                return False
            for element in binding.value.elements:
                value = element.value
                if binding.path:
                    if (
                        not isinstance(value, cst.Tuple | cst.List)
                        or len(value.elements) <= binding.path[0]
                    ):
                        return False
                    value = value.elements[binding.path[0]].value
                values.append(value)
        return bool(values) and all(self._names_class(value) for value in values)

    def _names_class(self, value: cst.BaseExpression) -> bool:
        """`value` is a name of a class: one the file defines, or a capitalised import (not a
        constant written in capitals, `MODEL`, which may hold an instance)."""
        if not isinstance(value, cst.Name):
            return False
        bindings = self.model.resolve(value.value, self.model.scope_of(value))[1]
        return bool(bindings) and all(
            isinstance(b.node, cst.ClassDef)
            or (
                b.kind is BindingKind.IMPORT
                and value.value[:1].isupper()
                and not value.value.isupper()
            )
            for b in bindings
        )

    def _passed_modules(self, name: str, at: cst.CSTNode) -> bool:
        """`separator(mix)` in `def separate(audio, separator)`: a parameter, whatever its name,
        for which every call of its function in this file passes a module (`separate(x, model)`).
        A parameter with no known caller, or one passed anything else, stays unknown."""
        bindings = self.model.resolve(name, self.model.scope_of(at))[1]
        if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Param):
            return False
        param = bindings[0].node
        if param not in self._param_modules:
            self._param_modules[param] = False  # a recursive chain of parameters proves nothing
            passed = self.model.arguments(param)
            self._param_modules[param] = bool(passed) and all(
                arg is not None and bool(dotted(arg)) and self.is_module(dotted(arg) or "", call)
                for call, arg in passed
            )
        return self._param_modules[param]

    def _is_file_function(self, name: str, at: cst.CSTNode) -> bool:
        scopes = self.ctx.fact(SemanticModel)
        bindings = scopes.resolve(name, scopes.scope_of(at))[1]
        return bool(bindings) and all(
            b.kind == "def" and isinstance(b.node, cst.FunctionDef) for b in bindings
        )

    def is_frozen(self, name: str) -> bool:
        """Whether the file turns off `requires_grad` on `name`'s parameters: its forward builds no graph."""
        return any(name == f or name.startswith(f + ".") for f in self._frozen)

    def turned_into_numpy(self, call: cst.Call) -> bool:
        """Whether the file turns what `call` computes into numpy without detaching it
        (`model(x).cpu().numpy()`, or a helper of the file doing so to what it is handed):
        `.numpy()` raises on a tensor that requires grad, so the forward records no graph
        there, whatever the file shows of its grad mode (`numpy_reads`)."""
        return reaches_numpy(self.model, call)

    def holds_no_parameters(self, call: cst.Call) -> bool:
        """Whether the module `call` runs is built, wherever the file binds it, from one project
        class that holds no parameters or submodules (`cache = FeatureCache(root).eval()`, a
        reader of cached features) or from a torch layer without weights (`nn.Upsample`): its
        forward records no graph of its own, whatever `.eval()` says."""
        name = self.callee(call)
        if not name:
            return False
        built = self._built_classes.get(self._binding_key(name, call))
        if not built:
            return False
        qualname = self.ctx.symbols.resolve(built) or ""
        if qualname.startswith("torch.nn.") and qualname[len("torch.nn.") :] in _PARAMETERLESS:
            return True  # `us = nn.Upsample(size)`: a layer with no weights of its own
        if self.ctx.project is None:
            return False
        return self.ctx.project.holds_no_parameters(self.ctx.absolute_path, built)

    def method_turns_grad_on(self, call: cst.Call) -> bool:
        """`model.forward_itm(samples)` on a model whose class the file does not resolve, where a
        class of the project defines a method of that name that turns autograd on itself
        (`with torch.set_grad_enabled(True):` for a Grad-CAM that calls `backward()`): the
        method needs the graph, so the call evaluates nothing to put under `no_grad`."""
        func = call.func
        if self.ctx.project is None or not isinstance(func, cst.Attribute):
            return False
        method = func.attr.value
        if method == "forward" or is_dunder(method):
            return False  # the module's own forward: its grad mode is the caller's
        receiver = dotted(func.value) or ""
        if self._bound_classes.get(self._binding_key(receiver, call)) is not None:
            return False  # a class of this file: the file sees its methods' grad mode
        return self.ctx.project.method_turns_grad_on(method)

    @cached_property
    def _built_classes(self) -> dict[str, str]:
        """The class each name is built from as written (`readers.FeatureCache`), where every
        binding of the name builds the same one; "" where they differ or one builds nothing. A
        `self.` attribute bound to a move of what it holds (`self.rnd = self.rnd.to(device)`)
        keeps its class (a plain name's key spans the file's functions, so its moves count)."""
        found: dict[str, str] = {}
        for target, value in self.model.assigns:
            name = dotted(target)
            if not name or (name.startswith("self.") and dotted(_chain_base(value)) == name):
                continue
            callee = _built_callee(value)
            written = (dotted(callee) or "") if callee is not None else ""
            key = self._binding_key(name, target)
            found[key] = written if found.get(key, written) == written else ""
        return found

    @cached_property
    def _frozen(self) -> set[str]:
        """Names whose module's parameters are frozen: `net.requires_grad_(False)`, also chained
        (`sampler.eval().requires_grad_(False).to(device)`, `G = copy.deepcopy(G).eval()
        .requires_grad_(False)`), or `p.requires_grad = False` / `p.requires_grad_(False)` in a
        loop over `net.parameters()`. A forward through such a module records no graph unless
        its inputs require grad."""
        frozen = set()
        for call in self.model.calls:
            if (
                is_attribute(call.func, "requires_grad_")
                and call.args
                and literal_bool(call.args[0].value) is False
            ):
                frozen.add(self._chain_root(cst.ensure_type(call.func, cst.Attribute).value))
                frozen.add(self._chained_target(call))
        for loop in self.model.for_loops:
            source = loop.iter
            if (
                isinstance(source, cst.Call)
                and is_attribute(source.func, "parameters", "named_parameters")
                and self._freezes_each(loop)
            ):
                func = cst.ensure_type(cst.ensure_type(source, cst.Call).func, cst.Attribute)
                frozen.add(dotted(func.value) or "")
        frozen.discard("")
        return frozen

    @staticmethod
    def _chain_root(receiver: cst.BaseExpression) -> str:
        """`sampler` for `sampler.eval().to(device)`: the name a chain of module methods starts from."""
        return dotted(past_methods(receiver, _MODULE_CHAIN_METHODS)) or ""

    @staticmethod
    def _freezes_each(loop: cst.For) -> bool:
        """`for p in net.parameters(): p.requires_grad = False` (or `p.requires_grad_(False)`)."""
        return any(_freezes(assign) for assign in find_all(loop.body, cst.Assign)) or any(
            is_attribute(call.func, "requires_grad_")
            and len(call.args) == 1
            and is_name(call.args[0].value, "False")
            for call in find_all(loop.body, cst.Call)
            if isinstance(call, cst.Call)
        )

    @property
    def module_classes(self) -> set[str]:
        """The file's nn.Module classes: the model's answer (`SemanticModel.module_classes`)."""
        return self.model.module_classes

    @cached_property
    def _assigned(self) -> dict[str, list[cst.BaseExpression]]:
        """The values assigned to each name (keyed by `_binding_key`), in textual order.

        `is_module` asks about the few names that are called (on the torch training slice, 50
        assignments of 3,200 bind one), so each question below reads only that name's values,
        once, instead of judging every assignment of the file."""
        found: dict[str, list[cst.BaseExpression]] = defaultdict(list)
        for target, value in self.model.assigns:
            name = dotted(target)
            if name:
                found[self._binding_key(name, target)].append(value)
        return found

    def _binds_wrapper(self, key: str) -> bool:
        """`key` is assigned a model wrapper that runs without grad by itself (`YOLO(...)`,
        `pipeline(...)`)."""
        if key not in self._wrapper_keys:
            self._wrapper_keys[key] = any(
                isinstance(built := _chain_base(value), cst.Call)
                and (self.ctx.symbols.qualname(built.func) or "").startswith(_NO_GRAD_WRAPPERS)
                for value in self._assigned.get(key, ())
            )
        return self._wrapper_keys[key]

    def _binds_module(self, key: str) -> bool:
        """`key` is assigned a module construction: `model = Net().to(device)`, `self.enc =
        nn.LSTM(...)`, or a `self.` attribute assigned one (`model_with_loss =
        self.model_with_loss`, or its `.module`, what a DataParallel wraps)."""
        if key not in self._module_keys:
            self._module_keys[key] = False  # an attribute bound to itself, through others
            self._module_keys[key] = key in self._factory_built_modules or any(
                self._constructs_module(value) or self._holds_module_attribute(value)
                for value in self._assigned.get(key, ())
                if not self._reaches_factory(value)
            )
        return self._module_keys[key]

    def _holds_module_attribute(self, value: cst.BaseExpression) -> bool:
        """`self.model_with_loss` or `self.model_with_loss.module`, where the class assigns that
        attribute a module construction."""
        if isinstance(value, cst.Attribute) and value.attr.value == "module":
            value = value.value
        name = dotted(value) if isinstance(value, cst.Attribute) else None
        if not name or not name.startswith("self.") or name.count(".") != 1:
            return False
        return self._binds_module(self._binding_key(name, value))

    @cached_property
    def _factory_built_modules(self) -> set[str]:
        """The names assigned a module by a factory of the file (`net = create_net()`), judged for
        every such assignment in textual order when the first name is asked about: a factory's
        verdict is remembered at the depth it is first reached from, so the order is kept."""
        return {
            self._binding_key(name, target)
            for target, value in self.model.assigns
            if (name := dotted(target))
            and self._reaches_factory(value)
            and self._constructs_module(value)
        }

    def _reaches_factory(self, value: cst.BaseExpression) -> bool:
        """Whether `_constructs_module(value)` asks a factory of the file (`_returns_module`):
        the call itself, or the receiver of a chain of module methods, calls a function of the
        file by name."""
        while type(value) is cst.Call:
            func = value.func
            if type(func) is cst.Name:
                return bool(self.model.callees.get(value))
            if not isinstance(func, cst.Attribute) or func.attr.value not in _MODULE_CHAIN_METHODS:
                return False
            if func.attr.value == "eval" and not value.args and isinstance(func.value, cst.Call):
                return False  # `Encoder(dim).eval()`: a module, asking nothing further
            value = func.value
        return False

    def _binds_non_module(self, key: str) -> bool:
        """`key` is assigned an instance of a class known not to be an nn.Module (a class of the
        file or the project that derives from nothing and defines no `forward`)."""
        if key not in self._non_module_keys:
            self._non_module_keys[key] = any(
                (callee := _built_callee(value)) is not None
                and self.model.class_is_module(callee) is False
                for value in self._assigned.get(key, ())
            )
        return self._non_module_keys[key]

    @cached_property
    def _bound_data_values(self) -> set[str]:
        """Plain names every binding of which is a call into a data library (`frame = pd.read_csv(p)`)."""
        data: set[str] = set()
        other: set[str] = set()
        for target, value in self.model.assigns:
            if type(target) is not cst.Name:
                continue
            callee = _built_callee(value)
            qualname = (self.ctx.symbols.qualname(callee) or "") if callee is not None else ""
            (data if qualname.startswith(_DATA_LIBRARIES) else other).add(target.value)
        return data - other

    def _binding_key(self, name: str, at: cst.CSTNode) -> str:
        """`name`, with `self.` attributes told apart by their class."""
        if not name.startswith("self."):
            return name
        function = self.enclosing_function(at)
        owner = self.enclosing_class(function) if function is not None else None
        return f"{owner.name.value if owner is not None else ''}:{name}"

    def _constructs_module(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        if not isinstance(value, cst.Call) or depth > _FACTORY_DEPTH:
            return False
        func = value.func
        factories = self.model.callees.get(value, ())
        if isinstance(func, cst.Name) and factories:
            return all(
                self._returns_module(f, depth + 1) for f in factories
            )  # `net = create_net()`
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "eval"
            and not value.args
            and isinstance(func.value, cst.Call)
        ):
            return (
                True  # `Encoder(dim).eval()`: only a module is built and put in eval mode like this
            )
        if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_CHAIN_METHODS:
            return self._constructs_module(func.value)
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
            owner = name_tokens((dotted(func.value) or "").rsplit(".", 1)[-1])
            return "model" in owner or "for" in owner  # not a tokenizer, config or processor
        if isinstance(func, cst.Name) and func.value in self.module_classes:
            return not _names_criterion(
                func.value
            )  # a criterion: the cost is the forward it follows
        if not factories and self._project_eval_loader(value):
            return True  # `detector = metric_utils.get_feature_detector(url)`
        qualname = self.ctx.symbols.qualname(func) or ""
        if qualname in _WHOLE_MODEL_LOADS:
            return not any(
                a.keyword and a.keyword.value == "weights_only" for a in value.args
            )  # a pickled module, once called
        if not qualname.startswith(_MODULE_CONSTRUCTOR_PREFIXES):
            # A class of another module of the project (`Scorer()` from `nets.py`)
            last = (dotted(func) or "").rsplit(".", 1)[-1]
            return not _names_criterion(last) and self.model.class_is_module(func) is True
        last = qualname.rsplit(".", 1)[-1]
        if last in NOT_CALLABLE_MODULES or last.endswith("Loss"):
            return False
        return qualname.startswith("torch.nn.") == last[:1].isupper()

    def _returns_module(self, function: cst.FunctionDef, depth: int) -> bool:
        """A factory of the file whose every return builds a module (`return nn.Sequential(...)`, or a
        local name bound only to one)."""
        if function not in self._factories:
            self._factories[function] = self._all_returns_modules(function, depth)
        return self._factories[function]

    def _all_returns_modules(self, function: cst.FunctionDef, depth: int) -> bool:
        values = self._returned_values(function)
        return bool(values) and all(self._constructs_module(v, depth) for v in values)

    def _returned_values(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        """What `function`'s returns give, through a local name's bindings and through a
        module-level cache dict (`return _cache[key]`, every `_cache[k] = ...` of the file);
        empty when one return gives something unknown."""
        found: list[cst.BaseExpression] = []
        for ret in own_returns(function):
            value = ret.value
            if isinstance(value, cst.Name):
                bindings = self.model.reaching(value)
                if not bindings or any(b.value is None for b in bindings):
                    return []
                found.extend(b.value for b in bindings if b.value is not None)
            elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
                stored = self._stored_items(value.value.value)
                if not stored:
                    return []
                found.extend(stored)
            elif value is None:
                return []
            else:
                found.append(value)
        return found

    def _stored_items(self, name: str) -> list[cst.BaseExpression]:
        """The values stored into the items of the module-level dict `name` (`name[k] = v`)."""
        if not any(
            isinstance(t, cst.Name) and t.value == name and isinstance(v, cst.Dict | cst.Call)
            for t, v in self.model.assigns
            if self.enclosing_function(t) is None
        ):
            return []
        return [
            v
            for t, v in self.model.assigns
            if isinstance(t, cst.Subscript)
            and isinstance(t.value, cst.Name)
            and t.value.value == name
        ]

    def _returns_eval_module(self, function: cst.FunctionDef) -> bool:
        """A loader of the file whose every return gives a module put in eval mode
        (`return torch.jit.load(f).eval().to(device)`, also through a cache dict)."""
        if function not in self._eval_loaders:
            self._eval_loaders[function] = self._returns_eval_module_now(function)
        return self._eval_loaders[function]

    def _returns_eval_module_now(self, function: cst.FunctionDef) -> bool:
        values = self._returned_values(function)
        return (
            bool(values)
            and all(self._chained_eval(v) for v in values)
            and self._all_returns_modules(function, 0)
        )

    @staticmethod
    def _chained_eval(value: cst.BaseExpression) -> bool:
        """`X.eval().to(device)`: a chain of module methods that holds a plain `.eval()`."""
        while (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _MODULE_CHAIN_METHODS
        ):
            if value.func.attr.value == "eval" and not value.args:
                return True
            value = value.func.value
        return False

    # -- evaluation scopes --------------------------------------------------------------
    def scope(self, call: cst.Call) -> EvalScope | None:
        """The evaluation scope `call` runs in, or None when nothing says it runs for evaluation.
        Whether the method runs at all is asked last, of scopes found: it scans the project."""
        found = self._scope(call)
        function = self.enclosing_function(call) if found is not None else None
        if function is not None and self._never_runs(function):
            return None  # a method no code of the project calls: dead code evaluates nothing
        return found

    def _scope(self, call: cst.Call) -> EvalScope | None:
        if self.ctx.fact(LibraryDemo).runs_only_in_demo(call):
            return None  # a library module's `__main__` demo or self-check evaluates nothing
        if self._warms_up(call):
            return None  # `model(torch.ones(1, 3, h, w))` once: a warm-up or a shape check
        function = self.enclosing_function(call)
        if function is not None and (
            self._is_framework_hook(function) or is_dunder(function.name.value)
        ):
            return None  # hooks a framework runs without grad; construction code probing shapes
        if function is not None and not self._in_own_loop(call) and self._self_test(function):
            return None  # a self-test's single forward (`def test(): ... out = net(x)`) runs once
        if function is not None and self._hands_out_result(call, function):
            return None  # a model function its factory returns: the holder chooses the grad mode
        if function not in self._eval_functions:
            self._eval_functions[function] = self._evaluation_function(function)
        evaluating = self._eval_functions[function]
        if evaluating is not None:
            return EvalScope(
                ("function", evaluating), f"in `{evaluating.name.value}`", function=evaluating
            )
        if function is not None and _is_forward_name(function.name.value):
            return None  # a module's forward: its caller decides the grad mode
        if self._warms_up_export(function) and (
            not self._in_own_loop(call) or self._after_export(call, function)
        ):
            return None  # a warm-up, or a check of the exported graph against the module
        found = self._loop_scope(call, function) or self._region_scope(call, function)
        if found is None:
            # A forward on evaluation data, after training in the same run, or in a script that
            # only loads weights and runs them is the workload itself even when it runs once
            # (`net(test_x)` after the training loop, `fake = netG(noise)` in generate.py).
            found = (
                self._input_scope(call, function)
                or self._after_training_scope(call, function)
                or self._inference_script_scope(call, function)
            )
            if found is not None:
                if not self.repeats(call) and self._on_one_example(call):
                    return None  # `net(clip.unsqueeze(0))` once: a demo on one example
                return found
            found = (
                self._global_eval_scope(call, function)
                or self._attribute_eval_scope(call, function)
                or self._periodic_scope(call)
                or self._dropped_graph_scope(call, function)
            )
        return found if found is not None and self.repeats(call) else None

    def flag_scope(self, call: cst.Call) -> EvalScope | None:
        """`iteration(epoch, loader, train=True)` runs the forward in a loop and trains only
        under `if train:` (or `if phase == "train":`); a call of the file that passes another
        value (`self.iteration(epoch, self.test_data, train=False)`) with grad on runs the same
        loop as evaluation, recording a graph nobody uses. The training calls still need it, so
        the scope is the loop's function, reported without an automatic fix."""
        function = self.enclosing_function(call)
        if function is None or not self._in_own_loop(call):
            return None
        if function not in self._flags:
            self._flags[function] = self._evaluating_call(function)
        found = self._flags[function]
        if found is None:
            return None
        site, written = found
        caller = self.enclosing_function(site)
        where = f"`{caller.name.value}`" if caller is not None else "the module"
        return EvalScope(
            ("flag", function),
            f"when {where} runs `{function.name.value}` with `{written}`",
            function=function,
            flagged=True,
        )

    def twin_scope(self, call: cst.Call) -> EvalScope | None:
        """`run_epoch(model, trainloader, criterion, None)` with grad on, where the file also makes
        the same call under `no_grad` with the same flags (`None`, `True`, `False`, positional
        strings: `run_epoch(model, validloader, criterion, None)`): the author's own `no_grad`
        says the call evaluates. It counts where the callee is a function of the file that runs
        forwards in a loop (and no evaluation scope of its own, nor `flag_scope`, reports them),
        or, where the file cannot see the callee, one named for evaluation (`trainer.val(0,
        loader)` beside `with torch.no_grad(): trainer.val(epoch, loader)`). The statement of
        the call is the scope. Asked of the calls of `twins` only."""
        twin = self.twins.get(call)
        statement = _call_statement(call, self.parent)
        if twin is None or statement is None:
            return None
        if not self._evaluates_as_twin(call, dotted(call.func) or ""):
            return None
        if self._backpropagated(statement):
            return None  # `loss, acc = self.cpc_loss(samples)` then `loss.backward()`: training
        found = self._statement_scope(
            statement,
            f"as `{self.ctx.code(twin.func)}(...)` does under `no_grad` on line "
            f"{self.ctx.start(twin).row}",
        )
        return replace(found, twin=True) if found is not None else None

    def _backpropagated(self, statement: cst.CSTNode) -> bool:
        """Whether a name the assignment `statement` binds reaches a statement line that needs
        autograd later in its function (`loss = cpc_loss + act_loss; loss.backward()`), followed
        through the plain names later lines assign from it: the same call as its `no_grad`
        twin, here a training step."""
        grad = self.ctx.fact(Grad)
        first = cast("cst.SimpleStatementLine", statement).body[0]
        bound = _plain_targets(first)
        block = self.parent(statement)
        if not bound or not isinstance(block, cst.IndentedBlock | cst.Module):
            return False
        at = next(i for i, s in enumerate(block.body) if s is statement)
        function = self.enclosing_function(statement)
        for following in self._rest(block, at, function):
            lines = (
                [following]
                if type(following) is cst.SimpleStatementLine
                else find_all(following, cst.SimpleStatementLine)
            )
            for line in lines:
                used = {n.value for n in find_all(line, cst.Name)}  # type: ignore[attr-defined]
                if used.isdisjoint(bound):
                    continue
                if grad.needs_grad([line]):
                    return True
                for small in line.body:  # type: ignore[attr-defined]
                    bound |= _plain_targets(small)
        return False

    @cached_property
    def twins(self) -> dict[cst.Call, cst.Call]:
        """Each call making a whole statement (`x = f(...)`, `f(...)`) with grad on, mapped to a
        call of the same callee, as written, with the same flags (`_same_flags`), that makes a
        statement of the body of a `with torch.no_grad():` (or `inference_mode`); only for
        callees `_evaluates_as_twin` may accept (named for evaluation, or like a function of
        the file)."""
        off: dict[str, list[cst.Call]] = defaultdict(list)
        for block in self._grad_off_bodies():
            for statement in block.body:
                call = _statement_call(statement)
                last = _last_name(call.func) if call is not None else None
                if call is not None and last and self._may_evaluate(last):
                    off[dotted(call.func) or ""].append(call)
        off.pop("", None)
        if not off:
            return {}
        lasts = {name.rpartition(".")[2] for name in off}
        grad = self.ctx.fact(Grad)
        found: dict[cst.Call, cst.Call] = {}
        for call in self.model.calls:
            if _last_name(call.func) not in lasts or _call_statement(call, self.parent) is None:
                continue
            same = off.get(dotted(call.func) or "", [])
            twin = next((t for t in same if t is not call and _same_flags(call, t)), None)
            if twin is not None and grad.disabled(twin) and not grad.disabled(call):
                found[call] = twin
        return found

    def _grad_off_bodies(self) -> Iterator[cst.IndentedBlock]:
        """The bodies of the file's `with` statements entering `no_grad()` or
        `inference_mode()` (found through the calls the semantic model lists)."""
        if "no_grad" not in self.ctx.source and "inference_mode" not in self.ctx.source:
            return
        for call in self.model.calls:
            func = call.func
            if type(func) is cst.Attribute:
                if func.attr.value not in _GRAD_OFF_CONTEXTS:
                    continue
            elif type(func) is not cst.Name or func.value not in _GRAD_OFF_CONTEXTS:
                continue
            item = self.parent(call)
            statement = self.parent(item) if type(item) is cst.WithItem else None
            if type(statement) is cst.With and type(statement.body) is cst.IndentedBlock:
                yield statement.body

    def _may_evaluate(self, last: str) -> bool:
        """The cheap half of `_evaluates_as_twin`, asked of a callee's last name: named for
        evaluation (not nn.Module's own API), or like a function the file defines."""
        return last in self.model.functions or (last not in _MODULE_API and is_eval_name(last))

    def _evaluates_as_twin(self, call: cst.Call, name: str) -> bool:
        """The callee evaluates: a function of the file looping over forwards that nothing else
        reports, or a callee the file cannot see that is named for evaluation."""
        callees = self.model.callees.get(call)
        if not callees:
            method = name.rpartition(".")[2]
            # `model.eval()` switches a mode: nn.Module's own API evaluates nothing
            if not call.args or method in _MODULE_API or not is_eval_name(method):
                return False
            # It must run in a loop, or over evaluation data (`trainer.val(0, val_loader)`):
            # `model.predict(one_user)` once is a demo on one example, and a closure a policy
            # export traces (`action = self._impl.predict(x)` in `_func`) runs once too.
            return self._in_own_loop(call) or any(self.is_eval_data(a.value) for a in call.args)
        targets = [f for f in callees if (call, f) not in self.model.callbacks]
        if len(targets) != 1:
            return False
        helper = targets[0]
        if helper not in self._flags:
            self._flags[helper] = self._evaluating_call(helper)
        if self._flags[helper] is not None or not self._loops_forwards(helper):
            return False  # `flag_scope` reports the loop's forward itself
        return all(self.scope(c) is None for c in self.calls_in(helper) if self.is_forward(c))

    def _evaluating_call(self, function: cst.FunctionDef) -> tuple[cst.Call, str] | None:
        """The first call of `function` in the file, with grad on, that passes a value turning
        its training guard off, and that argument as written."""
        guard = self._training_guard(function)
        sites = self.ctx.fact(Grad).call_sites(function) if guard is not None else None
        if guard is None or not sites:
            return None
        name, trained = guard
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        if self.enclosing_class(function) is not None and params[:1] in (["self"], ["cls"]):
            params = params[1:]
        grad = self.ctx.fact(Grad)
        for site in sites:
            value = passed_argument(site, name, params.index(name) if name in params else None)
            if (
                value is not None
                and _turns_training_off(value, trained)
                and grad.call_mode(site) is GradMode.RECORDING
                and not self._run_without_grad_elsewhere(self.enclosing_function(site))
            ):
                return site, f"{name}={self.ctx.code(value)}"
        return None

    def _run_without_grad_elsewhere(self, function: cst.FunctionDef | None) -> bool:
        """A module-level function or method the file never calls, which the project's other
        modules call only under `no_grad` (`with torch.no_grad(): trainer.val(...)`)."""
        grad = self.ctx.fact(Grad)
        if function is None or self.ctx.project is None or grad.call_sites(function) != []:
            return False
        owner = grad.enclosing_class(function)
        key = f"{owner.name.value}.{function.name.value}" if owner else function.name.value
        return self.ctx.project.always_called_without_grad(self.ctx.absolute_path, key)

    def _training_guard(self, function: cst.FunctionDef) -> tuple[str, str | None] | None:
        """The parameter whose test guards every training step of `function`'s own body, with the
        string it is compared with (`if phase == "train":`), None for a truth test (`if train:`);
        None when some step runs unguarded, or none runs."""
        needy = self.ctx.fact(Grad).needy_within(function)
        params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)}
        guards = {self._guard_of(node, function, params) for node in needy}
        if len(guards) != 1:
            return None
        return next(iter(guards))

    def _guard_of(
        self, node: cst.CSTNode, function: cst.FunctionDef, params: set[str]
    ) -> tuple[str, str | None] | None:
        child = node
        for parent in self.ctx.ancestors(node):
            if parent is function:
                return None
            if isinstance(parent, cst.If) and child is parent.body:
                found = _parameter_test(parent.test, params)
                if found is not None:
                    return found
            child = parent
        return None

    def _warms_up(self, call: cst.Call) -> bool:
        """A forward outside any loop of its function whose every input is a tensor holding no
        data (`model(torch.ones(1, 3, h, w).cuda())`, or a name bound once to one and never
        written into: `batch = torch.FloatTensor(1, *shape)`): a warm-up, a shape check or a
        FLOPs count, which evaluates no data, whatever the code around it.
        `features = torch.zeros(n, k)` filled afterwards (`features[:, i] = x[i:]`) holds data.
        A forward whose result is dropped (`model(input)` as a statement, its hooks counting
        FLOPs) on random noise of any size evaluates nothing either: the noise a generator is
        sampled with is kept, as its output is."""
        inputs = [a.value for a in call.args if a.keyword is None and not a.star]
        dropped = isinstance(self.model.parents.get(call), cst.Expr)
        return (
            bool(inputs)
            and all(self._is_constant_fill(v, noise=dropped) for v in inputs)
            and not self._in_own_loop(call)
        )

    def _is_constant_fill(
        self, expr: cst.BaseExpression, noise: bool = False, depth: int = _FILL_DEPTH
    ) -> bool:
        """`torch.zeros(...)`, `torch.ones(...).cuda()`, `torch.FloatTensor(1, 3, h, w)`: a
        made-up tensor with no data in it, also through a name never written into, whose
        binding may itself move or cast the name's earlier fill (`x = torch.rand(1, 8)`, then
        `if on_gpu: x = x.cuda()`). With `noise`, random fills of any size count."""
        if isinstance(expr, cst.Name):
            reaching = self.model.reaching(expr)
            value = reaching[0].value if len(reaching) == 1 else None
            if value is None or written_after(self.model, expr, value) is not None:
                return False
            expr = value
        if isinstance(expr, cst.Tuple | cst.List):
            return self._fills_only(expr)
        while isinstance(expr, cst.Call):
            name = self.ctx.symbols.qualname(expr.func) or ""
            if name in _CONSTANT_FILLS or _is_sized_constructor(name, expr):
                return True
            if name in _RANDOM_FILLS and (noise or _leading_size_one(expr)):
                return True  # `torch.rand(1, 3, h, w)`: one random sample, as for a FLOPs count
            if not (isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _TENSOR_CASTS):
                return False
            expr = expr.func.value
        return (
            isinstance(expr, cst.Name)
            and depth > 0
            and self._is_constant_fill(expr, noise, depth - 1)
        )

    def _fills_only(self, expr: cst.Tuple | cst.List) -> bool:
        """`(x, None)` with `x` a made-up tensor: a batch of fills, and None for the targets a
        forward is not given."""
        values = [e.value for e in expr.elements if not isinstance(e, cst.StarredElement)]
        filled = [v for v in values if not is_name(v, "None")]
        return (
            len(values) == len(expr.elements)
            and bool(filled)
            and all(not isinstance(v, cst.Tuple | cst.List) for v in filled)
            and all(self._is_constant_fill(v) for v in filled)
        )

    def _hands_out_result(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """`def model_fn(x): model.eval(); return model(x)`, returned by its factory
        (`get_model_fn(model)`): whoever holds the closure decides what its output is for, and
        may differentiate through it (`torch.autograd.grad(score_fn(x), x)` in a likelihood), so
        a forward whose result the closure returns is not known to be evaluation."""
        outer = self.enclosing_function(function)
        if outer is None or not self._returns_name(outer, function.name.value):
            return False
        return self._returned_whole(call, function)

    @staticmethod
    def _returns_name(function: cst.FunctionDef, name: str) -> bool:
        """Whether a return of `function` gives `name` itself (or a tuple holding it)."""
        for ret in own_returns(function):
            value = ret.value
            values = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            if any(isinstance(v, cst.Name) and v.value == name for v in values):
                return True
        return False

    def _returned_whole(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """Whether `function` returns what `call` computes with its graph: `return model(x)`,
        `return -model(x) / std`, or a name bound to it; not `.item()`, `.detach()` or `float(...)` of it."""
        node: cst.CSTNode = call
        for parent in self.ctx.ancestors(call):
            if parent is function:
                return False
            if self._exits_autograd(parent, node):
                return False
            if isinstance(parent, cst.Return):
                return True
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                target = parent.targets[0].target
                return isinstance(target, cst.Name) and self._returns_name(function, target.value)
            if isinstance(parent, cst.BaseStatement):
                return False
            node = parent
        return False

    def _dropped_graph_scope(
        self, call: cst.Call, function: cst.FunctionDef | None
    ) -> EvalScope | None:
        """`policy, value = self.model(state)` in an agent's `get_action`, each output read only
        through `.data`, `.detach()`, `.item()` or `float(...)` (also after arithmetic and calls
        on it, and through the names it is bound to), in a function whose every other forward
        drops its graph too (`_drops_graphs`): nothing can reach the graphs they record, so
        whoever runs the function again and again evaluates (`repeats` decides). An output
        unpacked into a local nothing reads drops its graph too (`action, _, _ =
        self.policy.sample(state)`; `_unread_local`), but a result no name of which is read is
        no evaluation (a warm-up)."""
        if function is None or not self._drops_graphs(function):
            return None
        if not self._graph_dropped(call, function, set()):
            return None
        reason = f"in `{function.name.value}`, which keeps none of its graph"
        return EvalScope(("function", function), reason, function=function, detached=True)

    def _drops_graphs(self, function: cst.FunctionDef) -> bool:
        """Whether `function` needs no autograd itself and drops the graph of each of its
        forwards, asked once per function. Not a method the module's own `forward` calls (part
        of that forward), nor a step a framework runs (`EntryPoints`), whose values it handles;
        and only where the text shows what the rule's prefilter reads as evaluation
        (`may_evaluate`: an RL agent's module trains it, `backward`), so that the prefilter
        hides no such finding."""
        if function not in self._graph_droppers:
            self._graph_droppers[function] = (
                self._text_may_evaluate
                and not self.ctx.fact(Grad).needy_within(function)
                and self.ctx.fact(EntryPoints).period(function) != "step"
                and not any(
                    (caller := self.enclosing_function(site)) is not None
                    and _is_forward_name(caller.name.value)
                    for site in self.model.callers.get(function, ())
                )
                and all(
                    self._graph_dropped(c, function, set())
                    for c in self.calls_in(function)
                    if self.is_forward(c)
                )
            )
        return self._graph_droppers[function]

    @cached_property
    def _text_may_evaluate(self) -> bool:
        return may_evaluate(self.ctx.source)

    def _graph_dropped(
        self, value: cst.CSTNode, function: cst.FunctionDef, followed: set[str]
    ) -> bool:
        """Whether every way `value` leaves its statement drops its graph (see above)."""
        node = value
        for parent in self.ctx.ancestors(value):
            if parent is function or isinstance(parent, cst.BaseCompoundStatement):
                return False
            if self._exits_autograd(parent, node) or (
                isinstance(parent, cst.Attribute)
                and parent.value is node
                and parent.attr.value == "data"
            ):
                return True
            if isinstance(parent, cst.Assign):
                names = _assigned_names(parent)
                if names is None or not names:
                    return False
                read = [name for name in names if not self._unread_local(name, parent)]
                return bool(read) and all(
                    self._reads_drop_graph(name, parent, function, followed) for name in read
                )
            if (
                isinstance(parent, cst.Call)
                and parent.func is node
                and not isinstance(node, cst.Attribute)
            ):
                return False  # the value itself is called, not a method of it
            if not isinstance(parent, _GRAPH_KEEPING):
                return False  # returned, stored, yielded, tested, handed to a statement
            node = parent
        return False

    def _unread_local(self, name: str, at: cst.CSTNode) -> bool:
        """A name of the assignment's own scope that nothing reads, whose value can leave no
        other way: not declared `global` or `nonlocal` (another function may backpropagate
        it), in a scope that hands none of its locals over (`locals()`, `vars()`)."""
        scope = self.model.scope_of(at)
        if not isinstance(scope, cst.FunctionDef) or self.model.declared[scope].get(name):
            return False
        if self.model.reads_of(name, scope):
            return False
        return not any(
            isinstance(c.func, cst.Name) and c.func.value in ("locals", "vars")
            for c in self.calls_in(scope)
        )

    def _reads_drop_graph(
        self, name: str, at: cst.CSTNode, function: cst.FunctionDef, followed: set[str]
    ) -> bool:
        if name in followed:
            return True  # already being followed: its other reads decide
        followed.add(name)
        reads = self.model.reads_of(name, self.model.scope_of(at))
        return bool(reads) and all(self._graph_dropped(read, function, followed) for read in reads)

    @staticmethod
    def _exits_autograd(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        """`inner.item()`, `inner.detach()`, `float(inner)`: the value leaves autograd."""
        if isinstance(outer, cst.Attribute) and outer.value is inner:
            return outer.attr.value in _AUTOGRAD_EXITS
        return (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Name)
            and outer.func.value in ("int", "float", "bool")
        )

    # -- how often evaluation runs ----------------------------------------------------------
    def _in_own_loop(self, node: cst.CSTNode) -> bool:
        """Whether a loop or comprehension of `node`'s own function (or module) runs it."""
        child = node
        for parent in self.ctx.ancestors(node):
            kind = type(parent)  # exact types: isinstance against libcst's classes is slow
            if kind is cst.For or kind is cst.While:
                if in_loop_body(cast("cst.For | cst.While", parent), child):
                    return True
            if kind in _REPEATING:
                return True
            if kind is cst.FunctionDef:
                return False
            child = parent
        return False

    def repeats(self, node: cst.CSTNode) -> bool:
        """Whether `node` may run more than once per run of the program: inside a loop or a
        comprehension, or in a function that does not evidently run once. Module-level code, a
        `main` and functions only called from code that runs once run once: a single forward
        there (a demo, a shape check) costs nothing worth a finding."""
        if self._in_own_loop(node):
            return True
        function = self.enclosing_function(node)
        if function is None:
            return False
        if self._before_own_training(node, function):
            return False
        return self._function_repeats(function)

    def _before_own_training(self, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """Code of a function that trains in a loop of its own, before that loop, where neither a
        framework nor a loop of the file runs the function again (`fit` checking one batch's
        output shape before its epochs): it runs once per training run, a debug check."""
        at = self.model.enter(node) or 0
        if not any(
            (self.model.enter(loop) or 0) > at
            for loop in self._training_loops
            if self.model.function_of(loop) is function
        ):
            return False
        if self.ctx.fact(EntryPoints).period(function) is not None:
            return False
        sites = self.call_sites(function)
        return sites is not None and not any(self.repeats(site) for site in sites)

    @cached_property
    def _training_loops(self) -> list[cst.CSTNode]:
        """The loops that train: those among the training statements (`_training_statements`)."""
        return [s for s in self._training_statements if isinstance(s, cst.For | cst.While)]

    def _function_repeats(self, function: cst.FunctionDef) -> bool:
        if function in self._repeating:
            return self._repeating[function]
        self._repeating[function] = True  # recursion: it calls itself again
        found = self._function_repeats_now(function)
        self._repeating[function] = found
        return found

    def _function_repeats_now(self, function: cst.FunctionDef) -> bool:
        if self.ctx.fact(EntryPoints).period(function) is not None:
            return True  # a framework runs it every step or epoch
        sites = self.call_sites(function)
        if sites is None:
            return True  # handed over or stored: whoever holds it may call it again
        if not sites:  # library API: its callers in other modules decide
            return (
                function.name.value not in RUN_ONCE_NAMES
                and not self._runs_once_elsewhere(function)
                and not self._self_test(function)
            )
        return any(self.repeats(site) for site in sites)

    def _self_test(self, function: cst.FunctionDef) -> bool:
        """A module-level function that takes nothing and carries no decorator, which no code of
        the project calls (`def test():` building its own module and inputs, in a library
        module): run by hand or by a test runner, once per run, like a `main`. A decorated one
        may be registered to run on every request or event; one with parameters is API."""
        params = function.params
        if (
            function.decorators
            or params.params
            or params.posonly_params
            or params.kwonly_params
            or isinstance(params.star_arg, cst.Param)
            or params.star_kwarg is not None
            or not isinstance(self.parent(function), cst.Module)
            or self.call_sites(function) != []
        ):
            return False
        project = self.ctx.project
        return project is not None and project.never_called(
            self.ctx.absolute_path, function.name.value
        )

    def _never_runs(self, function: cst.FunctionDef) -> bool:
        """An undecorated method of a module-level class of the file that the project calls
        only on its other classes, and no framework runs (`ProjectIndex.method_never_called`:
        `Trainer.test_step` left behind beside other trainers' own `test_step`): dead code,
        which evaluates nothing."""
        if function not in self._dead:
            self._dead[function] = self._never_runs_now(function)
        return self._dead[function]

    def _never_runs_now(self, function: cst.FunctionDef) -> bool:
        owner = self.enclosing_class(function)
        project = self.ctx.project
        if (
            owner is None
            or project is None
            or function.decorators
            or self.parent(function) is not owner.body
            or not isinstance(self.parent(owner), cst.Module)
            or self.call_sites(function) != []
            or self.ctx.fact(EntryPoints).period(function) is not None
        ):
            return False
        return project.method_never_called(
            self.ctx.absolute_path, owner.name.value, function.name.value
        )

    def _runs_once_elsewhere(self, function: cst.FunctionDef) -> bool:
        """Whether the project's other modules call `function` only from code that runs once
        (`get_model_summary(model, x)` in a tool's `main()`)."""
        owner = self.enclosing_class(function)
        key = f"{owner.name.value}.{function.name.value}" if owner else function.name.value
        project = self.ctx.project
        return project is not None and project.runs_once(self.ctx.absolute_path, key)

    def _warms_up_export(self, function: cst.FunctionDef | None) -> bool:
        """Code that exports or traces a module (`torch.onnx.export`, `torch.jit.trace`): its
        forward is a warm-up or a check of the exported graph, run once."""
        return function in self._exporters

    def _after_export(self, call: cst.Call, function: cst.FunctionDef | None) -> bool:
        """A forward in a statement of the exporting function's body that follows the export
        (`torch.onnx.export(...)`, then a loop comparing `model(x)` with the exported run)."""
        if function is None or not isinstance(function.body, cst.IndentedBlock):
            return False
        index = {id(s): i for i, s in enumerate(function.body.body)}
        own = self._body_index(call, index)
        if own is None:
            return False
        return any(
            (at := self._body_index(c, index)) is not None and at < own
            for c in self.calls_in(function)
            if (self.ctx.symbols.qualname(c.func) or "") in _EXPORTS
        )

    def _body_index(self, node: cst.CSTNode, index: dict[int, int]) -> int | None:
        """The position, in its function's body, of the statement holding `node`."""
        return next(
            (index[id(s)] for s in self._block_statements_around(node) if id(s) in index), None
        )

    @cached_property
    def _exporters(self) -> set[cst.FunctionDef | None]:
        return {
            self.enclosing_function(call)
            for call in self.model.calls
            if (self.ctx.symbols.qualname(call.func) or "") in _EXPORTS
        }

    def leaf_exit_scope(self, call: cst.Call) -> EvalScope | None:
        """`return ((val_x @ w - val_y) ** 2).mean().item()`: a function that computes from a tensor
        trained by hand and returns only Python values records a graph nobody can use, whoever calls it."""
        operand = TrainedLeaves.exit_operand(call)
        function = self.enclosing_function(call)
        if (
            operand is None
            or function is None
            or self._is_framework_hook(function)
            or is_dunder(function.name.value)
        ):
            return None
        if not self._returns_only_values(function):
            return None
        leaf = self.ctx.fact(TrainedLeaves).leaf_read(operand, function)
        if leaf is None:
            return None
        reason = f"returns numbers computed from `{leaf}`, which requires grad"
        return EvalScope(("function", function), reason, function=function, detached=True)

    def _returns_only_values(self, function: cst.FunctionDef) -> bool:
        """Whether `function` returns, and every return gives Python values (`.item()`, `float(...)`, tuples of them)."""
        if function not in self._value_returners:
            returns = [node for node in self.model.own_nodes(function) if type(node) is cst.Return]
            self._value_returners[function] = bool(returns) and all(
                r.value is not None and self._is_value(r.value) for r in returns
            )
        return self._value_returners[function]

    def _is_value(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Tuple | cst.List):
            return all(self._is_value(element.value) for element in expr.elements)
        if isinstance(expr, cst.Name):
            expr = self.model.value_of(expr) or expr
        return isinstance(expr, cst.Call) and TrainedLeaves.exit_operand(expr) is not None

    def _global_eval_scope(
        self, call: cst.Call, function: cst.FunctionDef | None
    ) -> EvalScope | None:
        """A function's forward of a global module that the script puts in eval mode at module level
        (`model.eval()` after loading it), or that a loader function of the file does, and never
        back in training mode."""
        if function is None or self.enclosing_class(function) is not None:
            return None
        callee = self.callee(call) or ""
        root = callee.split(".")[0]
        where = self._module_level_evals.get(root)
        if (
            where is None
            or self.ctx.fact(SemanticModel).resolve(root, function)[0] is not self.ctx.module
        ):
            return None
        if where != "from module level" and callee != root:
            return (
                None  # a loader's global: only its own forward, not a method that may set its mode
            )
        return EvalScope(
            ("function", function), f"`{root}` is in eval mode {where}", function=function
        )

    def _attribute_eval_scope(
        self, call: cst.Call, function: cst.FunctionDef | None
    ) -> EvalScope | None:
        """A method's forward of `self.classifier` in a helper class (a metric, a scorer: not a
        module) whose every binding of the attribute puts it in eval mode
        (`self.classifier = classifier.eval()`) and that never switches it back to training:
        the class only evaluates with it, and its callers run the method per batch."""
        owner = self.enclosing_class(function) if function is not None else None
        if function is None or owner is None or owner.name.value in self.module_classes:
            return None
        callee = self.callee(call) or ""
        parts = callee.split(".")
        if len(parts) != 2 or parts[0] != "self":
            return None
        values = self.model.attribute_values(owner, parts[1])
        if not values or not all(v is not None and self._chained_eval(v) for v in values):
            return None
        if any(
            kind == "train" and receiver == callee
            for switches in self._switches_by_statement.values()
            for kind, receiver in switches
        ):
            return None
        if self.ctx.project is not None and self.ctx.project.method_called_without_grad(
            self.ctx.absolute_path, function.name.value
        ):
            return None  # a caller elsewhere may run it under no_grad
        return EvalScope(
            ("function", function),
            f"`{callee}` is put in eval mode when `{owner.name.value}` is built",
            function=function,
        )

    @cached_property
    def _module_level_evals(self) -> dict[str, str]:
        """Globals switched to eval mode by module-level code, or by a function that declares
        them `global` (a loader: `global _model; _model = Encoder(); _model.eval()`), and to
        training mode nowhere in the file."""
        evals: dict[str, str] = {}
        for statement, switches in self._switches_by_statement.items():
            for kind, receiver in switches:
                where = self._sets_global(statement, receiver) if kind == "eval" else None
                if where is not None and evals.get(receiver) != "from module level":
                    evals[receiver] = where
        trains = {
            receiver
            for switches in self._switches_by_statement.values()
            for kind, receiver in switches
            if kind == "train"
        }
        return {r: w for r, w in evals.items() if r and "." not in r and r not in trains}

    def _sets_global(self, statement: cst.CSTNode, receiver: str) -> str | None:
        """Where `statement` switches the global `receiver`: "from module level" for
        module-level code, "as a global" for a function that declares it `global`, else None."""
        scope = self.model.scope_of(statement)
        if scope is self.ctx.module:
            return "from module level"
        if (
            isinstance(scope, cst.FunctionDef)
            and self.model.declared[scope].get(receiver) == "global"
        ):
            return "as a global"
        return None

    def _inference_script_scope(
        self, call: cst.Call, function: cst.FunctionDef | None
    ) -> EvalScope | None:
        """A forward in a script that loads weights and never trains: it only runs inference.
        Its module-level code and `main` count, and functions they call; methods and other
        functions (steps of a forward, helpers other files call) are left to their callers."""
        if not self.inference_only:
            return None
        reason = "in a script that loads weights and never trains"
        if function is not None:
            if self.enclosing_class(function) is not None or not self._run_by_script(function):
                return None  # a method, or a library function (a step of some forward): its callers decide
            return EvalScope(("function", function), reason, function=function)
        statement, block, index = self._block_statement(call, None)
        if statement is None:
            return None
        return EvalScope(
            ("inference", block),
            reason,
            block=block,
            index=index,
            after=tuple(self._rest(block, index, None)),
        )

    def _run_by_script(self, function: cst.FunctionDef, busy: frozenset = frozenset()) -> bool:
        """`main`, or a function that the script's own top-level code (or `main`) calls, directly or
        through other plain functions of the file."""
        if function.name.value == "main":
            return True
        for site in self.call_sites(function) or ():
            caller = self.enclosing_function(site)
            if caller is None:
                return True
            if caller in busy or self.enclosing_class(caller) is not None:
                continue
            if self._run_by_script(caller, busy | {function}):
                return True
        return False

    @cached_property
    def inference_only(self) -> bool:
        """A script that loads weights and never trains (no backward, optimizer, train switch
        or grad need anywhere in the file): whatever its loops copy, they evaluate."""
        source = self.ctx.source
        if not any(word in source for word in _LOADS_WEIGHTS):
            return False
        if ".backward" in source or any(
            kind == "train"
            for switches in self._switches_by_statement.values()
            for kind, _ in switches
        ):
            return False
        if self.ctx.fact(Grad).needs_grad([self.ctx.module]):
            return False  # a backward, an optimizer step, `requires_grad` set somewhere
        return not any(self._builds_optimizer(call) for call in self.model.calls)

    def _builds_optimizer(self, call: cst.Call) -> bool:
        qualname = self.ctx.symbols.qualname(call.func) or ""
        return qualname.startswith("torch.optim.") or "optim" in name_tokens(
            qualname.rsplit(".", 1)[-1].lower()
        )

    def _evaluation_function(self, function: cst.FunctionDef | None) -> cst.FunctionDef | None:
        """`function` when named for evaluation, or the evaluation function its nested helper is only called in."""
        while function is not None:
            if is_eval_name(function.name.value):
                if (
                    self._is_module_api(function)
                    or self._is_forward_step(function)
                    or self._extends_base(function)
                    or self._feeds_loss(function)
                    or self._steps_enclosing_computation(function)
                ):
                    return None
                return None if self._helps_evaluation(function) else function
            outer = self.enclosing_function(function)
            sites = self.call_sites(function) if outer is not None else None
            if not sites or any(self.enclosing_function(site) is not outer for site in sites):
                return None
            function = outer
        return None

    def _steps_enclosing_computation(self, function: cst.FunctionDef) -> bool:
        """A helper nested in a function that is neither evaluation nor training (it runs no
        backward), called only there, where that function returns a value (`render_rays` and
        its `inference(model, xyz)`): a step of the enclosing computation, whose callers decide
        the grad mode (training backpropagates through it); the helper's name says what it
        computes, not what for."""
        outer = self.enclosing_function(function)
        if outer is None or is_eval_name(outer.name.value) or outer in self._backward_functions:
            return False  # a training function's nested `eval_loss` is its evaluation
        sites = self.call_sites(function)
        if not sites or any(self.enclosing_function(site) is not outer for site in sites):
            return False
        return any(ret.value is not None for ret in own_returns(outer))

    def _is_module_api(self, function: cst.FunctionDef) -> bool:
        """A method of a module class of this file (`AdaptiveLogSoftmaxWithLoss.predict`, a policy's
        `evaluate_actions`): the module's API, whose callers choose the grad mode, training included.

        Unless the method itself shows that its result never meets a backward pass: it loops over
        forwards (autoregressive generation) or takes the result out of autograd (`.item()`, `int()`).
        """
        owner = self.enclosing_class(function)
        if owner is None or owner.name.value not in self.module_classes:
            return False
        return not (self._loops_forwards(function) or self._leaves_autograd(function))

    def _loops_forwards(self, function: cst.FunctionDef) -> bool:
        for call in self.calls_in(function):
            if not self.is_forward(call):
                continue
            if any(
                isinstance(a, cst.For | cst.While) for a in self._ancestors_within(call, function)
            ):
                return True
        return False

    def _leaves_autograd(self, function: cst.FunctionDef) -> bool:
        for call in self.calls_in(function):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _AUTOGRAD_EXITS:
                return True
            if (
                isinstance(func, cst.Name)
                and func.value in ("int", "float", "bool")
                and call.args
                and not all(isinstance(a.value, _LITERALS) for a in call.args)
            ):
                return True  # `float(score)`; not `float("nan")`, a constant to fill with
        return False

    def _ancestors_within(self, node: cst.CSTNode, stop: cst.CSTNode) -> Iterator[cst.CSTNode]:
        for parent in self.ctx.ancestors(node):
            if parent is stop:
                return
            yield parent

    def _is_forward_step(self, function: cst.FunctionDef, busy: frozenset = frozenset()) -> bool:
        """Whether a forward method calls `function`, directly or through other methods: then it is part of
        the model (`self.predict(h)` in forward)."""
        busy = busy | {function}
        for site in self.call_sites(function) or ():
            caller = self.enclosing_function(site)
            if caller is None or caller in busy:
                continue
            if _is_forward_name(caller.name.value) or self._is_forward_step(caller, busy):
                return True
        return False

    def _feeds_loss(self, function: cst.FunctionDef, busy: frozenset = frozenset()) -> bool:
        """Whether a loss method not named for evaluation calls `function` with grad on, directly
        or through others (`calculate_loss` -> `calculate_ls_loss` -> `predict_ratings`): its
        forwards then build the graph the loss needs, whatever its name says. A function that
        merely also backpropagates is no evidence: it may predict after its training loop."""
        busy = busy | {function}
        grad = self.ctx.fact(Grad)
        for site in self.call_sites(function) or ():
            caller = self.enclosing_function(site)
            if caller is None or caller in busy or grad.mode(site) is not GradMode.RECORDING:
                continue
            name = caller.name.value
            if is_eval_name(name):
                continue
            if "loss" in name_tokens(name):
                return True
            if self._feeds_loss(caller, busy):
                return True
        return False

    def _helps_evaluation(self, function: cst.FunctionDef, busy: frozenset = frozenset()) -> bool:
        """Whether every call of `function` is in grad-managed code or in evaluation code whose grad mode
        is decided elsewhere: `_inference_features` of a predictor's `inference()` hook.

        Then the grad mode belongs to its callers. An evaluation function that training code in
        this file calls with grad on (`fit` -> `_predict_epoch` -> `_predict_batch`) does not
        cover its helpers: they run with grad on, and are reported.
        """
        sites = self.call_sites(function)
        if not sites or function in busy:
            return False
        busy = busy | {function}
        grad = self.ctx.fact(Grad)
        for site in sites:
            caller = self.enclosing_function(site)
            if caller is function or grad.mode(site) is not GradMode.RECORDING:
                continue  # recursion (or a method of the same name), or grad managed at the call
            if caller is None:
                return False
            if is_eval_name(caller.name.value) and not self._called_with_grad(caller, busy):
                continue
            if not self._helps_evaluation(caller, busy):
                return False
        return True

    def _called_with_grad(self, function: cst.FunctionDef, busy: frozenset) -> bool:
        """Whether code of this file that is not evaluation calls `function` (directly or through others) with grad on."""
        grad = self.ctx.fact(Grad)
        for site in self.call_sites(function) or ():
            caller = self.enclosing_function(site)
            if caller is function or caller in busy or grad.mode(site) is not GradMode.RECORDING:
                continue
            if (
                caller is None
                or not is_eval_name(caller.name.value)
                or self._called_with_grad(caller, busy | {function})
            ):
                return True
        return False

    def _extends_base(self, function: cst.FunctionDef) -> bool:
        """Whether `function` overrides a base method it calls (`super().generate(...)`), which owns the grad mode."""
        name = function.name.value
        return any(
            is_attribute(call.func, name)
            and isinstance(call.func.value, cst.Call)  # type: ignore[attr-defined]
            and is_name(call.func.value.func, "super")  # type: ignore[attr-defined]
            for call in self.calls_in(function)
        )

    def _is_framework_hook(self, function: cst.FunctionDef) -> bool:
        """An evaluation hook a framework calls under no_grad / inference_mode (Lightning's
        `validation_step`, fairseq's `valid_step`, Hugging Face's `prediction_step`): the table
        in `frameworks.py`."""
        return self.ctx.fact(EntryPoints).runs_without_grad(function)

    def _loop_scope(self, call: cst.Call, function: cst.FunctionDef | None) -> EvalScope | None:
        """The innermost loop (or comprehension) over a validation/test iterable around `call`."""
        child: cst.CSTNode = call
        for parent in self.ctx.ancestors(call):
            if parent is function:
                return None
            if (
                isinstance(parent, cst.For)
                and child is parent.body
                and self.is_eval_data(parent.iter)
            ):
                return self._statement_scope(
                    parent, f"in the loop over `{self.ctx.code(parent.iter)}`"
                )
            if (
                isinstance(parent, cst.ListComp | cst.SetComp | cst.DictComp)
                and child is not parent.for_in
            ):
                source = self._comprehension_eval_source(parent.for_in)
                if source is not None:
                    statement = next(
                        a for a in self.ctx.ancestors(parent) if isinstance(a, cst.BaseStatement)
                    )
                    return self._statement_scope(
                        statement, f"in the comprehension over `{self.ctx.code(source)}`"
                    )
            child = parent
        return None

    def _periodic_scope(self, call: cst.Call) -> EvalScope | None:
        """`if step % log_every == 0: sample = generator(x[:1], gen=True)` in a per-batch loop:
        a forward in a periodic branch that needs no autograd itself (no backward, optimizer
        step or training function of the file: `Grad.between_steps`), whose result reaches no
        backward after it, runs between training steps for what is looked at (samples to plot,
        a metric to log): evaluation, whatever the loop around it trains. The statement
        holding the forward is the scope; it cannot feed the step around it (`detached`)."""
        loops = self.ctx.fact(LoopFacts)
        guard = loops.periodic_guard(call)
        grad = self.ctx.fact(Grad)
        if type(guard) is not cst.If or not grad.between_steps(call):
            return None  # no guard, or one that is no branch (an except handler, a skip)
        owner = loops.per_batch_loop(guard, every_iteration=False)
        if owner is None or not self.model.is_ancestor(owner, guard):
            return None  # no per-batch loop, or one in a caller: a module's own frame loop
        if not grad.needs_grad([owner]):
            return None  # the loop (or step function) around it trains nothing itself
        statement = self.model.statement_of(call)
        if type(statement) is not cst.SimpleStatementLine or self._backpropagated(statement):
            return None  # `fake = netG(z)` kept for a later step's loss needs its graph
        found = self._statement_scope(
            statement, f"under `if {self.ctx.code(guard.test)}:` in a training loop"
        )
        return replace(found, detached=True) if found is not None else None

    def _comprehension_eval_source(self, clause: cst.CompFor | None) -> cst.BaseExpression | None:
        while clause is not None:
            if self.is_eval_data(clause.iter):
                return clause.iter
            clause = clause.inner_for_in
        return None

    def _statement_scope(self, statement: cst.CSTNode, reason: str) -> EvalScope | None:
        block = self.parent(statement)
        if not isinstance(block, cst.IndentedBlock | cst.Module):
            return None
        index = next(i for i, s in enumerate(block.body) if s is statement)
        return EvalScope(("statement", statement), reason, block=block, index=index)

    def is_eval_data(self, iterable: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether a loop's iterable is a validation/test loader: `val_loader`, `tqdm(testloader)`,
        `loaders["val"]`, or a name bound only to one (`bar = tqdm(val_loader)`, then
        `enumerate(bar)`)."""
        for name in find_all(iterable, cst.Name):
            if isinstance(name, cst.Name) and is_eval_data_name(name.value):
                return True
            if depth < 2 and isinstance(name, cst.Name) and self._bound_to_eval_data(name, depth):
                return True
        for string in find_all(iterable, cst.SimpleString):
            index = self.parent(string)
            if (
                isinstance(string, cst.SimpleString)
                and string.evaluated_value in EVAL_DATA_WORDS
                and index is not None
                and isinstance(self.parent(index), cst.Subscript | cst.SubscriptElement)
            ):
                return True
        return False

    def _bound_to_eval_data(self, name: cst.Name, depth: int) -> bool:
        """A name every binding reaching it assigns evaluation data (`bar = tqdm(val_loader)`)."""
        if isinstance(self.parent(name), cst.Attribute):
            return False  # `self.bar`, `bar.total`: not the name's own value
        bindings = self.model.reaching(name)
        return bool(bindings) and all(
            b.kind is BindingKind.ASSIGN
            and b.value is not None
            and self.is_eval_data(b.value, depth + 1)
            for b in bindings
        )

    def _input_scope(self, call: cst.Call, function: cst.FunctionDef | None) -> EvalScope | None:
        """The statement of a forward whose inputs say it evaluates: validation or test data
        (`net(test_x)`), or a `Variable(..., volatile=True)`, the pre-0.4 spelling of no_grad."""
        reason = None
        for arg in call.args:
            if self._is_eval_input(arg.value) and not self._is_synthetic(arg.value):
                reason = f"on `{self.ctx.code(arg.value)}`"
                break
            if self._is_volatile(arg.value):
                reason = "on a volatile `Variable`, ignored since torch 0.4"
                break
        if reason is None:
            return None
        statement, block, index = self._block_statement(call, function)
        if statement is None:
            return None
        return EvalScope(
            ("input", statement),
            reason,
            block=block,
            index=index,
            after=tuple(self._rest(block, index, function)),
        )

    @staticmethod
    def _is_eval_input(expr: cst.BaseExpression) -> bool:
        """An argument named as test data and nothing else (`test_x`, `X_val[i]`)."""
        return any(
            isinstance(name, cst.Name) and is_eval_input_name(name.value)
            for name in find_all(expr, cst.Name)
        )

    def _is_volatile(self, expr: cst.BaseExpression) -> bool:
        """`Variable(x, volatile=True)`, directly or through the one binding of a name."""
        expr = self._bound_value(expr)
        if not isinstance(expr, cst.Call) or not (dotted(expr.func) or "").endswith("Variable"):
            return False
        return any(
            a.keyword is not None and a.keyword.value == "volatile" and literal_bool(a.value)
            for a in expr.args
        )

    def _is_synthetic(self, expr: cst.BaseExpression) -> bool:
        """A tensor made up by a torch factory (`test_x = torch.zeros(1, 3, 96, 96)`), perhaps in a
        `Variable` or moved: a forward on it probes shapes or smoke-tests, it evaluates nothing."""
        expr = self._bound_value(expr)
        while isinstance(expr, cst.Call):
            name = self.ctx.symbols.qualname(expr.func) or ""
            if name in _SYNTHETIC_FACTORIES:
                return True
            if name.endswith("Variable") and expr.args:
                expr = expr.args[0].value
            elif (
                isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in _MODULE_CHAIN_METHODS
            ):
                expr = expr.func.value
            else:
                return False
        return False

    def _on_one_example(self, call: cst.Call) -> bool:
        """Whether an input of `call` is one example made into a batch of one (`x.unsqueeze(0)`,
        `x[None]`), directly or through the one binding of a name, a dict or list of inputs, or
        the result of an earlier call on such inputs (`samples = model.match(samples=samples)`):
        a forward that runs once on it shows one result (a demo, a tutorial's listening test),
        it evaluates no workload."""
        return any(self._one_example(arg.value, _ONE_EXAMPLE_DEPTH, set()) for arg in call.args)

    def one_example(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is exactly a batch of one: one example given a leading axis
        (`x.unsqueeze(0)`, `x[None]`), also through the one binding of a name, methods that
        keep the batch (`.to(device)`, `.cuda()`, `.float()`) and conversions of it
        (`torch.from_numpy`), never through what may grow or join it (`.repeat(n, 1)`,
        `torch.cat([...])`), as `_on_one_example`'s looser reading of a demo's inputs does
        (TL004: a DataParallel wrapper fed only batches of one splits nothing)."""
        return self._exactly_one(expr, _ONE_EXAMPLE_DEPTH)

    def _exactly_one(self, expr: cst.BaseExpression, depth: int) -> bool:
        if depth < 0:
            return False
        if isinstance(expr, cst.Name):
            bound = self._bound_value(expr)
            return bound is not expr and self._exactly_one(bound, depth - 1)
        if isinstance(expr, cst.Subscript):
            return _adds_leading_axis(expr)
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "unsqueeze" and _first_is_zero(expr):
                return True
            if func.attr.value in _BATCH_KEEPING:
                return self._exactly_one(func.value, depth)
        qualname = self.ctx.fact(SemanticModel).qualname(func) or ""
        if qualname in _BATCH_CONVERSIONS and expr.args and expr.args[0].keyword is None:
            return self._exactly_one(expr.args[0].value, depth)
        return False

    def _one_example(self, expr: cst.BaseExpression, depth: int, seen: set[int]) -> bool:
        if id(expr) in seen or depth < 0:
            return False
        seen.add(id(expr))
        if isinstance(expr, cst.Name):
            bound = self._bound_value(expr)
            return bound is not expr and self._one_example(bound, depth - 1, seen)
        if isinstance(expr, cst.Subscript):
            if _adds_leading_axis(expr):
                return True
            return self._one_example(expr.value, depth, seen)
        if isinstance(expr, cst.Dict):
            return any(
                isinstance(e, cst.DictElement) and self._one_example(e.value, depth, seen)
                for e in expr.elements
            )
        if isinstance(expr, cst.List | cst.Tuple):
            return any(self._one_example(e.value, depth, seen) for e in expr.elements)
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "unsqueeze" and _first_is_zero(expr):
                return True
            if self._one_example(func.value, depth, seen):
                return True  # `.to(device)`, `.cuda()` and other methods of the batch of one
        return any(self._one_example(a.value, depth, seen) for a in expr.args)

    def _bound_value(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """What a name holds where it is used, when one binding with a value reaches it."""
        if not isinstance(expr, cst.Name):
            return expr
        reaching = self.ctx.fact(SemanticModel).reaching(expr)
        return reaching[0].value if len(reaching) == 1 and reaching[0].value is not None else expr

    def _after_training_scope(
        self, call: cst.Call, function: cst.FunctionDef | None
    ) -> EvalScope | None:
        """A forward after a training loop, in the same block and outside any loop: the trained
        model's predictions (`pred = model(x).argmax(1)` at the end of a script).

        Its group spans from the training loop to the end of the function or module, so a
        backward anywhere after the loop keeps it silent."""
        statement, block, index = self._block_statement(call, function)
        if statement is None or any(
            isinstance(a, cst.For | cst.While)
            for a in self._ancestors_within(statement, function or self.ctx.module)
        ):
            return None
        trained = [
            i
            for i, earlier in enumerate(block.body[:index])
            if earlier in self._training_statements
        ]
        if not trained or self._rebuilt_after(call, block.body[trained[-1]]):
            return None
        key = ("after-training", block, trained[-1])
        if key not in self._regions:
            self._regions[key] = tuple(self._rest(block, trained[-1], function))
        return EvalScope(
            key, "after the training loop", block=block, index=index, after=self._regions[key]
        )

    def _rebuilt_after(self, call: cst.Call, loop: cst.CSTNode) -> bool:
        """`model = Net()` between the training loop and `model(x)`: a new, untrained module (a shape
        probe), unless trained weights are loaded into it before the call (`model.load_state_dict(...)`)."""
        root = call.func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        end = self.model.exit(loop)
        rebuilt = [b.order for b in self.model.reaching(root) if b.order > end]
        if not rebuilt:
            return False
        at = self.model.enter(call) or 0
        return not any(
            max(rebuilt) < order < at for order in self._weight_loads.get(root.value, ())
        )

    @cached_property
    def _weight_loads(self) -> dict[str, list[int]]:
        """Where weights are loaded into each name: the positions of its `name.load_state_dict(...)` calls."""
        found: dict[str, list[int]] = defaultdict(list)
        for call in self.model.calls:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "load_state_dict"
                and isinstance(func.value, cst.Name)
            ):
                found[func.value.value].append(self.model.enter(call) or 0)
        return found

    @cached_property
    def _training_statements(self) -> set[cst.CSTNode]:
        """Statements of a block that train a model: a loop calling `backward()` itself or through
        the file's functions (`for x, y in loader: train_step(model, x, y)`), a call of a function
        of the file that holds such a loop (`train_model(model, epochs=100)`), and a framework's
        `fit(...)` handed a data loader or a module (`keras_model.fit(train_data=dl_train)`)."""
        backward = self._backward_functions
        loops: set[cst.CSTNode] = set()
        for call in self.model.calls:
            if is_attribute(call.func, "backward") or backward.intersection(
                self.model.callees.get(call, ())
            ):
                around = self._block_statements_around(call)
                first_loop = next(
                    (i for i, s in enumerate(around) if isinstance(s, cst.For | cst.While)),
                    len(around),
                )
                loops.update(around[first_loop:])  # the loops around it, and what holds them
        training = self._closure(
            {f for loop in loops if (f := self.model.function_of(loop)) is not None}
        )
        found = set(loops)
        for call in self.model.calls:
            if training.intersection(self.model.callees.get(call, ())) or self._fits(call):
                found.update(self._block_statements_around(call))
        return found

    @cached_property
    def _backward_functions(self) -> set[cst.FunctionDef]:
        """Functions of the file that call `backward()`, themselves or through other functions of the file."""
        direct = {
            f for call in self.model.calls
            if is_attribute(call.func, "backward") and (f := self.model.function_of(call)) is not None
        }  # fmt: skip
        return self._closure(direct)

    def _closure(self, functions: set[cst.FunctionDef]) -> set[cst.FunctionDef]:
        """`functions` and every function of the file that calls one of them, directly or not."""
        found = set(functions)
        todo = list(functions)
        while todo:
            for caller in self._calling_functions.get(todo.pop(), ()):
                if caller not in found:
                    found.add(caller)
                    todo.append(caller)
        return found

    @cached_property
    def _calling_functions(self) -> dict[cst.FunctionDef, set[cst.FunctionDef]]:
        """The functions of the file that call each function (the call graph's reverse edges)."""
        found: dict[cst.FunctionDef, set[cst.FunctionDef]] = defaultdict(set)
        for call, targets in self.model.callees.items():
            caller = self.model.function_of(call)
            if caller is not None:
                for target in targets:
                    found[target].add(caller)
        return found

    def _block_statements_around(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The statements around `node` within its function that stand directly in a block, innermost first."""
        found: list[cst.CSTNode] = []
        for parent in self.ctx.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                break
            if isinstance(parent, cst.BaseStatement) and isinstance(
                self.parent(parent), cst.IndentedBlock | cst.Module
            ):
                found.append(parent)
        return found

    def _fits(self, call: cst.Call) -> bool:
        """`trainer.fit(model, ...)`, `keras_model.fit(train_data=dl_train)`: a framework's training
        loop, known by what it is handed (a module or a data loader), not by the method's name alone."""
        if not is_attribute(call.func, "fit"):
            return False
        loaders = self.ctx.fact(DataLoaders)
        for arg in call.args:
            name = dotted(arg.value)
            if (name and self.is_module(name, call)) or loaders.sources(arg.value):
                return True
        return False

    def _block_statement(
        self, node: cst.CSTNode, function: cst.FunctionDef | None
    ) -> tuple[cst.CSTNode | None, Block, int]:
        """The statement holding `node` directly in a block of `function` (or the module), that
        block and the statement's index in it; (None, module, 0) when there is none."""
        for parent in self.ctx.ancestors(node):
            if parent is function or isinstance(
                parent, cst.ClassDef | cst.Lambda | cst.FunctionDef
            ):
                break
            block = self.parent(parent)
            if isinstance(parent, cst.BaseStatement) and isinstance(
                block, cst.IndentedBlock | cst.Module
            ):
                return parent, block, next(i for i, s in enumerate(block.body) if s is parent)
        return None, self.ctx.module, 0

    def _rest(
        self, block: Block, at: int, function: cst.FunctionDef | None
    ) -> Iterator[cst.CSTNode]:
        """The statements after `block.body[at]` to the end of `function` (or the module), leaving enclosing blocks."""
        while True:
            yield from block.body[at + 1 :]
            owner = next(
                (
                    a
                    for a in self.ctx.ancestors(block)
                    if isinstance(self.parent(a), cst.IndentedBlock | cst.Module)
                ),
                None,
            )
            outer = self.parent(owner) if owner is not None and owner is not function else None
            if not isinstance(outer, cst.IndentedBlock | cst.Module):
                return
            block, at = outer, next(i for i, s in enumerate(outer.body) if s is owner)

    def in_eval_function(self, node: cst.CSTNode) -> bool:
        """Whether the function around `node` is named for evaluation (`evaluate`,
        `eval_epoch`): with no training in a loop of it, the copies the loop hands a host
        metric are the evaluation's product, whatever the grad mode (TL002)."""
        function = self.model.function_of(node)
        return function is not None and is_eval_name(function.name.value)

    def after_eval_switch(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs after a plain `model.eval()` of its own function, before any
        later mode switch: code the function runs in evaluation mode (`_region_scope`'s region,
        asked of any node, not only a forward)."""
        found = self._switch_before(node, self.enclosing_function(node))
        return found is not None and found[0][1] is not None

    def _region_scope(self, call: cst.Call, function: cst.FunctionDef | None) -> EvalScope | None:
        """Code after `model.eval()` in the same function, before any later mode switch."""
        found = self._switch_before(call, function)
        if found is None:
            return None
        switch, block, index = found
        if self._trains_beside(call, switch[1], function):
            return None
        return self._switch_scope(switch, block, index, function)

    def _switch_before(
        self, node: cst.CSTNode, function: cst.FunctionDef | None
    ) -> tuple[tuple[int, str | None], Block, int] | None:
        """The last mode switch (`_last_switch`) before `node` in the innermost block of its
        function that has one before it, with that block and the index of the statement
        holding `node` there: the one walk both `model.eval()` regions ask."""
        child: cst.CSTNode = node
        for parent in self.ctx.ancestors(node):
            if isinstance(parent, cst.IndentedBlock | cst.Module):
                index = next(i for i, s in enumerate(parent.body) if s is child)
                switch = self._last_switch(parent.body[:index], function)
                if switch is not None:
                    return switch, parent, index
            if parent is function or isinstance(parent, cst.ClassDef | cst.Lambda):
                return None
            child = parent
        return None

    def _trains_beside(
        self, call: cst.Call, receiver: str | None, function: cst.FunctionDef | None
    ) -> bool:
        """Distillation: `self.teacher.eval()`, then `self.student(x)` in a loss method
        (`calculate_loss` returning the loss to a trainer that backpropagates). Another
        module's eval mode says nothing of this forward, and the loss needs its graph."""
        name = self.callee(call)
        if function is None or not receiver or not name or receiver == "self":
            return False
        if name == receiver or name.startswith(receiver + "."):
            return False  # the module switched to eval mode itself
        own = function.name.value
        return not is_eval_name(own) and ("loss" in name_tokens(own) or self._feeds_loss(function))

    def _switch_scope(
        self,
        switch: tuple[int, str | None],
        block: Block,
        index: int,
        function: cst.FunctionDef | None,
    ) -> EvalScope | None:
        at, receiver = switch
        if receiver is None:
            return None  # a train() switch, or one whose effect is unclear, comes last
        key = ("region", block, at)
        if key not in self._regions:
            self._regions[key] = tuple(self._eval_mode_code(block, at, function))
        reason = (
            f"where `{receiver}` is asserted in eval mode"
            if block.body[at] in self._asserted_eval
            else f"after `{receiver}.eval()`"
        )
        return EvalScope(key, reason, block=block, index=index, after=self._regions[key])

    def _eval_mode_code(
        self, block: Block, at: int, function: cst.FunctionDef | None
    ) -> Iterator[cst.CSTNode]:
        """The statements after the switch at `block.body[at]` up to the next switch, leaving enclosing blocks too.

        Fine-tuning with frozen batch norm calls `model.eval()` and then trains: the backward
        may come after the last forward, even outside the block.
        """
        while True:
            for following in block.body[at + 1 :]:
                if self._switches(following):
                    return
                yield following
            owner = next(
                (
                    a
                    for a in self.ctx.ancestors(block)
                    if isinstance(self.parent(a), cst.IndentedBlock | cst.Module)
                ),
                None,
            )
            outer = self.parent(owner) if owner is not None and owner is not function else None
            if not isinstance(outer, cst.IndentedBlock | cst.Module):
                return
            block, at = outer, next(i for i, s in enumerate(outer.body) if s is owner)

    def _last_switch(
        self, before: Sequence[cst.BaseStatement], function: cst.FunctionDef | None
    ) -> tuple[int, str | None] | None:
        """(index, receiver) of the last statement switching a module's mode; receiver None unless a plain `.eval()`."""
        for at in range(len(before) - 1, -1, -1):
            switches = self._switches(before[at])
            if not switches:
                continue
            plain = (
                isinstance(before[at], cst.SimpleStatementLine)
                and len(switches) == 1
                and switches[0][0] == "eval"
            )
            receiver = switches[0][1] if plain else None
            if (
                receiver is not None
                and before[at] not in self._asserted_eval
                and not self._is_eval_receiver(receiver, function)
            ):
                receiver = None
            return at, receiver
        return None

    def _switches(self, statement: cst.BaseStatement) -> list[tuple[str, str]]:
        """Mode switches (`x.eval()`, `x.train(...)`) in `statement`, outside nested functions and classes."""
        return self._switches_by_statement.get(statement, [])

    @cached_property
    def _switches_by_statement(self) -> dict[cst.CSTNode, list[tuple[str, str]]]:
        """Every statement holding a mode switch, with its switches (kind, receiver) in order."""
        found: dict[cst.CSTNode, list[tuple[str, str]]] = defaultdict(list)
        for call in self.model.calls:
            switch = self._switch(call)
            if switch is None:
                continue
            if switch == ("eval", ""):
                switch = ("eval", self._chained_target(call))
            for parent in self.ctx.ancestors(call):
                if isinstance(parent, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                    break
                if isinstance(parent, cst.BaseStatement):
                    found[parent].append(switch)
        for target, value in self.model.assigns:
            name = dotted(target)
            if name and self._loads_eval_module(value):
                statement = self.model.statement_of(target)
                if statement is not None:
                    found[statement].append(("eval", name))
        for statement, name in self._asserted_eval.items():
            found[statement].append(("eval", name))
        return found

    @cached_property
    def _asserted_eval(self) -> dict[cst.CSTNode, str]:
        """`assert not self.nets.training`: a statement that states a module is in eval mode
        from there on, as `self.nets.eval()` would put it (a policy's `get_action` that rollouts
        call), with the name it states it of. Only a module has a `training` flag. Not in a
        method of a module class: a module's own generation path (`up(x, position)` asserting
        `not self.training`) is part of its computation, and its callers choose the grad mode."""
        found: dict[cst.CSTNode, str] = {}
        for attribute in self.model.attributes.get("training", ()):
            negation = self.parent(attribute)
            statement = self.parent(negation) if negation is not None else None
            if (
                type(negation) is cst.UnaryOperation
                and type(negation.operator) is cst.Not
                and type(statement) is cst.Assert
                and statement.test is negation
                and (name := dotted(attribute.value))
            ):
                line = self.parent(statement)
                function = self.enclosing_function(statement)
                owner = self.enclosing_class(function) if function is not None else None
                if line is not None and (
                    owner is None or owner.name.value not in self.module_classes
                ):
                    found[line] = name
        return found

    def _loads_eval_module(self, value: cst.BaseExpression) -> bool:
        """`detector = get_detector(url)`, where every function the call may run returns a
        module in eval mode: the binding switches `detector` to eval mode."""
        if type(value) is not cst.Call:
            return False
        targets = self.model.callees.get(value, ())
        if targets:
            return isinstance(value.func, cst.Name) and all(
                self._returns_eval_module(f) for f in targets
            )
        return self._project_eval_loader(value)

    def _project_eval_loader(self, call: cst.Call) -> bool:
        """`metric_utils.get_feature_detector(url)`: a function of another module of the project
        whose every return is a module in eval mode (the project index reads it)."""
        name = dotted(call.func)
        if name is None or self.ctx.project is None:
            return False
        if name not in self._project_loaders:
            self._project_loaders[name] = self.ctx.project.returns_eval_module(
                self.ctx.absolute_path, name
            )
        return self._project_loaders[name]

    def _chained_target(self, call: cst.Call) -> str:
        """The name `enc = Encoder(dim).eval().to(device)` puts in eval mode ("" when none)."""
        node: cst.CSTNode = call
        parent = self.parent(node)
        while (
            isinstance(parent, cst.Attribute)
            and parent.value is node
            and parent.attr.value in _MODULE_CHAIN_METHODS
        ):
            outer = self.parent(parent)
            if not isinstance(outer, cst.Call):
                return ""
            node, parent = outer, self.parent(outer)
        if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
            return dotted(parent.targets[0].target) or ""
        return ""

    def _switch(self, call: cst.Call) -> tuple[str, str] | None:
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value not in ("eval", "train"):
            return None  # asked of every call: a type test costs a hundredth of a matcher
        kind = func.attr.value
        if kind == "train" and call.args and literal_bool(call.args[0].value) is False:
            kind = "eval"
        elif kind == "eval" and call.args:
            return None  # not nn.Module.eval()
        return kind, dotted(func.value) or ""

    def _is_eval_receiver(self, receiver: str, function: cst.FunctionDef | None) -> bool:
        if receiver == "self":
            owner = self.enclosing_class(function) if function is not None else None
            return owner is not None and owner.name.value in self.module_classes
        return bool(receiver) and self.is_module(
            receiver, self.ctx.module if function is None else function.body
        )


# The containers whose items are modules.
_MODULE_CONTAINERS = frozenset({"torch.nn.ModuleDict", "torch.nn.ModuleList"})

# The keys that pick one item of a container by itself: `nets["policy"]`, `heads[0]`, `models[k]`.
_PLAIN_KEYS = (cst.SimpleString, cst.Integer, cst.Name)

# The context managers that turn grad off for their body (`twins`).
_GRAD_OFF_CONTEXTS = frozenset({"no_grad", "inference_mode"})


def _last_name(func: cst.BaseExpression) -> str | None:
    """`f` for `f(...)` and `x.y.f(...)`; None for any other callee."""
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else None


def _statement_call(statement: cst.CSTNode) -> cst.Call | None:
    """The call a statement line makes by itself (`f(x)`, `y = f(x)`), else None."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return None
    small = statement.body[0]
    value = small.value if type(small) is cst.Expr or type(small) is cst.Assign else None
    return value if type(value) is cst.Call else None


def _plain_targets(statement: cst.CSTNode) -> set[str]:
    """The plain names an assignment binds (`loss = ...`, `a, b = ...`, `loss += ...`); not
    `d["k"] = ...`."""
    if type(statement) is cst.AugAssign:
        augmented = statement.target
        return {augmented.value} if type(augmented) is cst.Name else set()
    if type(statement) is not cst.Assign:
        return set()
    found: set[str] = set()
    for target in statement.targets:
        value = target.target
        items: list[cst.BaseExpression] = (
            [e.value for e in value.elements]
            if isinstance(value, cst.Tuple | cst.List)
            else [value]
        )
        found |= {item.value for item in items if isinstance(item, cst.Name)}
    return found


def _call_statement(
    call: cst.Call, parent: Callable[[cst.CSTNode], cst.CSTNode | None]
) -> cst.CSTNode | None:
    """The statement line `call` makes by itself (`f(x)`, `y = f(x)`, `a, b = f(x)`), else None:
    the line whose `_statement_call` it is."""
    holder = parent(call)
    line = parent(holder) if holder is not None else None
    return line if line is not None and _statement_call(line) is call else None


# Literals that set a flag: a call passing another one at the same place does something else.
_FLAG_LITERALS = frozenset({"None", "True", "False"})


def _flags(call: cst.Call) -> dict[int | str, str] | None:
    """The flag literals `call` passes, by position or keyword, and its positional strings (a
    phase, `"val"`); None when it unpacks arguments (`*args`, `**kwargs`), which hide them."""
    found: dict[int | str, str] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        value = arg.value
        flag = type(value) is cst.Name and value.value in _FLAG_LITERALS
        if arg.keyword is not None:
            if flag:
                found[arg.keyword.value] = cast(cst.Name, value).value
        elif flag or type(value) is cst.SimpleString:
            found[index] = cst.Module([]).code_for_node(value)
    return found


def _same_flags(call: cst.Call, twin: cst.Call) -> bool:
    """Whether `call` and `twin` pass the same flags at the same places (`_flags`)."""
    mine = _flags(call)
    return mine is not None and mine == _flags(twin)


def _parameter_test(test: cst.BaseExpression, params: set[str]) -> tuple[str, str | None] | None:
    """`train` (a truth test of a parameter) or `phase == "train"` (a parameter compared with a
    string): the parameter and the string, None for a truth test."""
    if isinstance(test, cst.Name) and test.value in params:
        return test.value, None
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value in params
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
    ):
        return test.left.value, test.comparisons[0].comparator.evaluated_value  # type: ignore[return-value]
    return None


def _names_criterion(name: str) -> bool:
    """`PerceptualLoss`, `GANLoss`: a class named for a loss, whose graph hangs off the forward
    it follows. Not `ModelWithLoss` or `NetWithLoss`: a model run with its loss, whose forward
    is the model's."""
    if not name.endswith("Loss"):
        return False
    tokens = name_tokens(name)
    return not ("with" in tokens and any(is_module_name(t) for t in tokens))


def _first_is_zero(call: cst.Call) -> bool:
    """`x.unsqueeze(0)` or `x.unsqueeze(dim=0)`: a leading axis of size one."""
    value = call.args[0].value if len(call.args) == 1 else None
    return isinstance(value, cst.Integer) and value.value == "0"


def _adds_leading_axis(expr: cst.Subscript) -> bool:
    """`x[None]` or `x[None, ...]`: a leading axis of size one."""
    first = expr.slice[0].slice if expr.slice else None
    return isinstance(first, cst.Index) and is_name(first.value, "None")


def _turns_training_off(value: cst.BaseExpression, trained: str | None) -> bool:
    """`False` for a truth test; another string for a comparison with `trained`."""
    if trained is None:
        return literal_bool(value) is False
    return isinstance(value, cst.SimpleString) and value.evaluated_value != trained


def _takes_only_numbers(call: cst.Call) -> bool:
    """`data.head(1)`: every argument a number literal, which no module's forward takes."""
    return all((type(a.value) is cst.Integer or type(a.value) is cst.Float) for a in call.args)


def _leading_size_one(call: cst.Call) -> bool:
    """`torch.rand(1, 3, h, w)` or `torch.randn((1, 8))`: a batch of one made-up sample. Not
    `torch.randn(64, nz)`, the noise a generator is sampled with for viewing."""
    if not call.args or call.args[0].keyword is not None:
        return False
    first = call.args[0].value
    if isinstance(first, cst.Tuple | cst.List) and first.elements:
        first = first.elements[0].value
    return isinstance(first, cst.Integer) and first.value == "1"


def _is_sized_constructor(qualname: str, call: cst.Call) -> bool:
    """`torch.FloatTensor(1, 3, h, w)`: a legacy constructor given sizes (an integer first), which
    makes an uninitialised tensor; not `torch.FloatTensor(rows)`, which holds data."""
    return (
        qualname.startswith("torch.")
        and qualname.endswith("Tensor")
        and bool(call.args)
        and isinstance(call.args[0].value, cst.Integer)
    )


def _class_written(built: str) -> str:
    """The class a binding is built from as written (`_built_classes`): `Reader` for
    `Reader(...)` and for an alternate constructor, `Reader.from_pretrained(...)`; "" for a
    function's result."""
    parts = built.split(".")
    if parts[-1][:1].isupper():
        return built
    if len(parts) > 1 and parts[-2][:1].isupper():
        return ".".join(parts[:-1])
    return ""


def _built_callee(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The callee that builds `value`, past methods returning their receiver (`Net().cuda()`)."""
    value = _chain_base(value)
    return value.func if type(value) is cst.Call else None


def _chain_base(value: cst.BaseExpression) -> cst.BaseExpression:
    """`value` past the module methods that return their receiver (`Net().cuda().eval()`)."""
    while (
        type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value in _MODULE_CHAIN_METHODS
    ):
        value = value.func.value
    return value


def _assigned_names(assign: cst.Assign) -> list[str] | None:
    """The plain names `assign` binds (`a = ...`, `a, b = ...`); None when it writes anything
    else (an attribute, an item, a starred target)."""
    names: list[str] = []
    for target in assign.targets:
        node = target.target
        elements = node.elements if isinstance(node, cst.Tuple | cst.List) else [node]
        for element in elements:
            inner = element.value if isinstance(element, cst.Element) else element
            if not isinstance(inner, cst.Name):
                return None
            names.append(inner.value)
    return names
