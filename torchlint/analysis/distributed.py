"""Whether a file trains with `DistributedDataParallel`, which values hold the wrapped model, and
whether a framework or the file's own code already handles what DDP needs from a training loop.

"Is this DDP" is asked of the file: it builds `DistributedDataParallel(...)` under some import
alias. Frameworks that build their own distributed samplers and skip gradient syncs during
accumulation (Lightning, accelerate, the Hugging Face `Trainer`, DeepSpeed) are data, listed
once here, so no rule re-derives them.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel
from torchlint.analysis.nodes import past_methods, walk

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_DDP = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    }
)
# Imported modules (or names) whose training loops shard the data and skip gradient syncs
# while accumulating: a file that uses one leaves both to it.
_FRAMEWORKS = (
    "lightning",
    "pytorch_lightning",
    "accelerate",
    "deepspeed",
    "composer",
    "transformers.Trainer",
    "transformers.Seq2SeqTrainer",
    "transformers.trainer",
    "ignite.distributed",
)
# Calls that split a dataset between ranks by themselves.
_SHARDING_CALLS = frozenset({"split_dataset_by_node", "shard", "shard_dataset"})
_RANK_WORDS = re.compile(
    r"(^|_)(rank|local_rank|global_rank|world_size|world|num_replicas|replicas|shard|shards|num_shards|shard_id)($|_)",
    re.IGNORECASE,
)
# Methods that return the module they are called on.
_MODULE_CHAIN = frozenset({"to", "cuda", "train", "float", "half", "bfloat16"})
_MAX_DEPTH = 4


class Distributed:
    """DDP use of one file, via `ctx.fact(Distributed)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.scopes = ctx.fact(SemanticModel)

    @cached_property
    def wraps(self) -> list[cst.Call]:
        """The file's `DistributedDataParallel(...)` constructions."""
        return [call for call in self.scopes.calls if self.ctx.symbols.qualname(call.func) in _DDP]

    @cached_property
    def framework(self) -> str | None:
        """The imported framework that shards data and skips syncs itself, if any."""
        for full in self.ctx.symbols.aliases.values():
            for framework in _FRAMEWORKS:
                if full == framework or full.startswith(framework + "."):
                    return framework
        return None

    @cached_property
    def shards_by_hand(self) -> bool:
        """The file splits a dataset between ranks itself: `split_dataset_by_node(ds, rank, ...)`,
        `ds.shard(num_shards, index)`."""
        for call in self.scopes.calls:
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else None
            if isinstance(func, cst.Name):
                name = func.value
            if name in _SHARDING_CALLS:
                return True
        return False

    def names_ranks(self, node: cst.BaseExpression | None, depth: int = 0) -> bool:
        """Whether an expression (a dataset's construction) is given a rank or a world size, also
        through the names it reads (`Subset(ds, shards[rank])` after `part = shards[rank]`): the
        data is split between processes by the code that builds it."""
        if node is None or depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.Name):
            if _RANK_WORDS.search(node.value):
                return True
            bindings = self.scopes.reaching(node)
            exact = bindings[0].exact if len(bindings) == 1 else None
            return exact is not None and self.names_ranks(exact, depth + 1)
        return any(
            isinstance(inner, cst.Name) and inner is not node and self.names_ranks(inner, depth + 1)
            for inner in walk(node)
        )

    @cached_property
    def skips_syncs(self) -> bool:
        """The file skips gradient syncs somewhere: `model.no_sync()`, accelerate's
        `accelerator.accumulate(model)` / `no_sync`, or DDP's `require_backward_grad_sync` flag."""
        if self.scopes.attributes.get("require_backward_grad_sync"):
            return True
        return any(
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value in ("no_sync", "accumulate")
            for call in self.scopes.calls
        )

    def is_ddp(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A value that holds a DDP-wrapped module: a construction, or a name or `self.` attribute
        every binding of which holds one (parameters through every same-file caller)."""
        if depth > _MAX_DEPTH:
            return False
        node = past_methods(node, _MODULE_CHAIN)
        if isinstance(node, cst.Call):
            return node in self.wraps
        if not isinstance(node, cst.Name | cst.Attribute):
            return False
        bindings = (
            self.scopes.reaching(node)
            if isinstance(node, cst.Name)
            else self.scopes.all_bindings(node)
        )
        if not bindings:
            return False
        return all(self._holds_ddp(binding, depth) for binding in bindings)

    def _holds_ddp(self, binding, depth: int) -> bool:
        if binding.kind == "assign" and binding.value is not None:
            return self.is_ddp(binding.value, depth + 1)
        if binding.kind == "param" and isinstance(binding.node, cst.Param):
            passed = self.scopes.arguments(binding.node)
            return bool(passed) and all(
                value is not None and self.is_ddp(value, depth + 1) for _, value in passed
            )
        return False
