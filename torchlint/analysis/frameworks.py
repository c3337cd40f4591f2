"""What training frameworks do with the code handed to them: one table, read as data.

A framework runs some of a project's code for it: Lightning calls a `LightningModule`'s
`training_step` every batch and its `validation_step` under no_grad; ignite's `Engine(step)`
calls `step` every iteration. No loop in the project shows this, so per-step and grad-mode
facts (`analysis/entry_points.py`) read it here. Adding a framework is one entry below plus a
test in `tests/test_production_cases.py`.

Kept free of libcst: the prefilter (`text.may_have_batch_loops`) asks the same table of a
file's raw text before anything is parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Framework:
    """One framework's entry points, by method name of a subclass of one of its classes.

    packages: import roots whose classes the hooks belong to (a base class whose qualified
    name starts with one of them).
    per_step: methods the framework calls on every training step (batch or iteration).
    per_epoch: methods it calls once per epoch.
    per_eval_batch: evaluation hooks it calls on every evaluation batch with autograd off
    (`validation_step`): the body of a per-batch loop over validation data nobody wrote.
    without_grad: the other methods it calls with autograd already off (an `evaluate` that runs
    the whole evaluation, epoch hooks of evaluation).
    batch_index: hooks whose parameter at the given position (after `self`; -1: the last one
    without a default) is the index of the batch within its epoch (`training_step(self, batch,
    batch_idx)`): `if batch_idx == 0:` in one runs once per epoch.
    no_grad_methods: methods of the framework's own objects that turn autograd off
    themselves (a Hugging Face model's `generate`).
    forward_methods: methods of the framework's own module classes that run the module's
    forward with their caller's grad mode (a diffusers autoencoder's `encode` and `decode`):
    calling one is a forward pass.
    unwrap_methods: methods of the framework's wrappers that hand back the model they wrap, whose
    `no_grad_methods` still turn autograd off (a PEFT wrapper's `merge_and_unload`).
    on_accelerator: whether the framework moves batches to the accelerator itself, so a
    subclass's hooks see device tensors without a `.to(device)` in the project.
    periodic_methods: methods of the framework's own classes that a hook calls to run only now
    and then (`if self.every_n_train_iters(runner, n):`): periodic guards written as a call.
    stage_hooks: methods it calls at the end of every stage with the stage as first argument,
    under autograd off for the stages in `eval_stages` (`Stage.VALID`, `Stage.TEST`) and on for
    the others: a branch taken only for an evaluation stage runs without grad.
    """

    name: str
    packages: tuple[str, ...]
    per_step: frozenset[str] = frozenset()
    per_epoch: frozenset[str] = frozenset()
    per_eval_batch: frozenset[str] = frozenset()
    without_grad: frozenset[str] = frozenset()
    batch_index: frozenset[tuple[str, int]] = frozenset()
    no_grad_methods: frozenset[str] = frozenset()
    forward_methods: frozenset[str] = frozenset()
    unwrap_methods: frozenset[str] = frozenset()
    on_accelerator: bool = False
    periodic_methods: frozenset[str] = frozenset()
    stage_hooks: frozenset[str] = frozenset()
    eval_stages: frozenset[str] = frozenset()
    train_stages: frozenset[str] = frozenset()

    @property
    def per_batch(self) -> frozenset[str]:
        """Every method the framework calls on every batch, of training or of evaluation."""
        return self.per_step | self.per_eval_batch

    @property
    def grad_off(self) -> frozenset[str]:
        """Every method the framework calls with autograd off."""
        return self.per_eval_batch | self.without_grad

    def batch_index_position(self, method: str) -> int | None:
        """Where `method`'s batch index sits among its parameters after `self`, if it has one."""
        return next((at for name, at in self.batch_index if name == method), None)


FRAMEWORKS: tuple[Framework, ...] = (
    Framework(
        "lightning",
        ("lightning", "pytorch_lightning"),
        per_step=frozenset(
            {
                "training_step",
                "on_train_batch_start",
                "on_train_batch_end",
                "on_before_backward",
                "on_after_backward",
                "on_before_optimizer_step",
                "on_before_zero_grad",
            }
        ),
        per_epoch=frozenset(
            {
                "on_train_epoch_start",
                "on_train_epoch_end",
                "on_validation_epoch_start",
                "on_validation_epoch_end",
                "validation_epoch_end",
                "training_epoch_end",
            }
        ),
        # The evaluation loops run every hook of theirs (module and callback alike) under
        # their no-grad context: start, epoch and batch hooks of validation, test and predict.
        per_eval_batch=frozenset(
            {"validation_step", "test_step", "predict_step"}
            | {
                f"on_{stage}_batch_{edge}"
                for stage in ("validation", "test", "predict")
                for edge in ("start", "end")
            }
        ),
        without_grad=frozenset(
            {"val_step"}
            | {
                f"on_{stage}_epoch_{edge}"
                for stage in ("validation", "test", "predict")
                for edge in ("start", "end")
            }
            | {
                f"on_{stage}_{edge}"
                for stage in ("validation", "test", "predict")
                for edge in ("start", "end")
            }
            | {"validation_epoch_end", "test_epoch_end"}
        ),
        # `training_step(batch, batch_idx)`; the batch hooks end with it, or with it before an
        # optional `dataloader_idx` (a `Callback`'s take `(trainer, pl_module, ...)` first, a
        # module's do not: -1 counts from the end of the parameters without a default).
        batch_index=frozenset(
            {(f"{stage}_step", 1) for stage in ("training", "validation", "test", "predict")}
            | {
                (f"on_{stage}_batch_{edge}", -1)
                for stage in ("train", "validation", "test", "predict")
                for edge in ("start", "end")
            }
        ),
        on_accelerator=True,
    ),
    Framework(
        "transformers",
        ("transformers",),
        per_step=frozenset({"compute_loss", "training_step"}),
        per_eval_batch=frozenset({"prediction_step"}),
        without_grad=frozenset({"evaluate"}),
        no_grad_methods=frozenset({"generate"}),
        on_accelerator=True,
    ),
    # A PEFT wrapper's `generate` hands over to the wrapped Hugging Face model's `generate`.
    Framework(
        "peft",
        ("peft",),
        no_grad_methods=frozenset({"generate"}),
        unwrap_methods=frozenset({"merge_and_unload", "unload", "get_base_model"}),
    ),
    # A diffusers model's `encode`/`decode` (`AutoencoderKL`, `VQModel`) run its layers with
    # grad as the caller has it; its pipelines' `__call__` turns grad off itself.
    Framework("diffusers", ("diffusers",), forward_methods=frozenset({"encode", "decode"})),
    Framework(
        "fairseq",
        ("fairseq",),
        per_step=frozenset({"train_step"}),
        per_eval_batch=frozenset({"valid_step", "inference_step"}),
        on_accelerator=True,
    ),
    Framework(
        "mmengine",
        ("mmengine", "mmcv"),
        per_step=frozenset({"train_step", "before_train_iter", "after_train_iter"}),
        per_epoch=frozenset({"before_train_epoch", "after_train_epoch", "after_val_epoch"}),
        per_eval_batch=frozenset({"val_step", "test_step", "after_val_iter", "after_test_iter"}),
        # `after_train_iter(runner, batch_idx, data_batch, outputs)`, and its evaluation peers.
        batch_index=frozenset(
            {
                (f"{edge}_{stage}_iter", 1)
                for edge in ("before", "after")
                for stage in ("train", "val", "test")
            }
        ),
        on_accelerator=True,
        periodic_methods=frozenset(
            {
                "every_n_epochs",
                "every_n_iters",
                "every_n_train_iters",
                "every_n_inner_iters",
                "end_of_epoch",
                "is_last_epoch",
                "is_last_iter",
                "is_last_train_epoch",
                "is_last_train_iter",
            }
        ),
    ),
    # speechbrain's `Brain` evaluates (`_fit_valid`, `evaluate`) under `torch.no_grad()`: each
    # batch through `evaluate_batch`, then `on_stage_end(Stage.VALID | Stage.TEST, ...)`; after a
    # training epoch it calls `on_stage_end(Stage.TRAIN, ...)` with grad on.
    Framework(
        "speechbrain",
        ("speechbrain",),
        per_eval_batch=frozenset({"evaluate_batch"}),
        stage_hooks=frozenset({"on_stage_end"}),
        eval_stages=frozenset({"VALID", "TEST"}),
        train_stages=frozenset({"TRAIN"}),
    ),
    # catalyst's `Runner.predict_loader` runs `predict_batch` on each batch under
    # `torch.no_grad()`; its own training and validation go through `handle_batch`.
    Framework("catalyst", ("catalyst",), per_eval_batch=frozenset({"predict_batch"})),
    Framework(
        "detectron2",
        ("detectron2",),
        per_step=frozenset({"run_step", "before_step", "after_step"}),
        on_accelerator=True,
    ),
)

# ignite drives functions handed to it rather than methods of subclasses: `Engine(step)` runs
# `step` every iteration, and a handler registered for an event
# (`@engine.on(Events.ITERATION_COMPLETED)`, `engine.add_event_handler(Events.EPOCH_COMPLETED,
# fn)`) runs as often as its event. An event called with a filter (`ITERATION_COMPLETED(every=100)`)
# runs only now and then.
CALLBACK_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})
# Calls that run the callable they are handed in a new worker process or thread (a Ray Tune
# trainable, a `Process` target, a spawned function), where grad mode starts on, whatever the
# caller's: grad mode is per thread.
NEW_WORKER_CALLS = frozenset(
    {
        "ray.tune.register_trainable",
        "ray.tune.registry.register_trainable",
        "ray.tune.run",
        "ray.tune.Tuner",
        "ray.remote",
        "threading.Thread",
        "multiprocessing.Process",
        "torch.multiprocessing.Process",
        "torch.multiprocessing.spawn",
    }
)
CALLBACK_REGISTRARS = frozenset({"on", "add_event_handler"})
EVENT_PERIODS = {"ITERATION_": "step", "EPOCH_": "epoch", "GET_BATCH_": "step"}


# Every method name some framework runs with autograd off: a cheap gate before the class is resolved.
WITHOUT_GRAD_NAMES: frozenset[str] = frozenset(n for f in FRAMEWORKS for n in f.grad_off)
# Every stage name of some framework's stage hooks: the gate before a branch's hook is resolved.
STAGE_NAMES: frozenset[str] = frozenset(
    n for f in FRAMEWORKS for n in f.eval_stages | f.train_stages
)
# Every method of a framework's own objects that turns autograd off itself: the same gate.
NO_GRAD_METHOD_NAMES: frozenset[str] = frozenset(n for f in FRAMEWORKS for n in f.no_grad_methods)
# Every method of a framework's own modules that runs their forward: the same gate.
FORWARD_METHOD_NAMES: frozenset[str] = frozenset(n for f in FRAMEWORKS for n in f.forward_methods)
# Every method of a framework's wrappers that hands back the wrapped model: the same gate.
UNWRAP_METHOD_NAMES: frozenset[str] = frozenset(n for f in FRAMEWORKS for n in f.unwrap_methods)


def framework_of(qualname: str) -> Framework | None:
    """The framework a fully qualified class name belongs to, if any."""
    root = qualname.split(".", 1)[0]
    return next((f for f in FRAMEWORKS if root in f.packages), None)


# Names whose presence in a file's text every framework entry point needs (the prefilter's view).
ENTRY_WORDS: tuple[str, ...] = tuple(
    sorted(
        {name for f in FRAMEWORKS for name in f.per_batch}
        | {"Engine", "ITERATION_", "EPOCH_", "add_event_handler"}
    )
)


# Parts that several entry words share: one search for a part rules out all its words at once.
_SHARED_PARTS = ("_step", "_train_", "_backward")
_WORDS_BY_PART = tuple(
    (
        part,
        tuple(w for w in ENTRY_WORDS if part in w and not any(p in w for p in _SHARED_PARTS[:i])),
    )
    for i, part in enumerate(_SHARED_PARTS)
)
_UNSHARED_WORDS = tuple(w for w in ENTRY_WORDS if not any(p in w for p in _SHARED_PARTS))


@lru_cache(maxsize=1)
def may_drive_steps(text: str) -> bool:
    """Whether the text names any framework entry point: files without one need no entry facts.
    Cached for the prefilter tests of a file that ask it in turn."""
    return any(word in text for word in _UNSHARED_WORDS) or any(
        part in text and any(word in text for word in words) for part, words in _WORDS_BY_PART
    )
