"""What identifiers say: the one vocabulary of the analyses. Which names name modules, losses,
optimizers, evaluation and evaluation data.

Kept free of libcst, because the prefilter (`text.may_evaluate`) asks the same questions of a file's
raw text before anything is parsed, and must agree with the analyses that ask them of its tree.
"""

from __future__ import annotations

import re
from functools import lru_cache


def name_tokens(name: str) -> list[str]:
    """Lower-case words of an identifier: `valLoader2` -> ["val", "loader"], `netG` -> ["net", "g"]."""
    return list(_tokens(name))


@lru_cache(maxsize=4096)
def _tokens(name: str) -> tuple[str, ...]:
    """`name_tokens`, remembered: a file asks about the same few names many times."""
    spaced = _CAMEL_HUMP.sub(r"\1_\2", name)
    return tuple(t for t in _NON_LETTERS.split(spaced.lower()) if t)


_CAMEL_HUMP = re.compile(r"([a-z0-9])([A-Z])")
_NON_LETTERS = re.compile(r"[^a-z]+")


_EVAL_FUNCTION_WORDS = frozenset(
    {
        "val", "valid", "validate", "validation", "eval", "evaluate", "evaluation", "test", "testing",
        "predict", "prediction", "predictions", "infer", "inference", "generate", "generation",
    }
)  # fmt: skip
# Words that name evaluation wherever they stand in a function's name.
_EVAL_UNAMBIGUOUS = frozenset(
    {"predict", "prediction", "predictions", "evaluate", "evaluation", "validation", "inference"}
)
# Otherwise a function is named for evaluation when an evaluation word leads, followed only by what is
# evaluated or how (`evaluate_model`, `val_epoch`, `generate_samples`), or ends it after a
# plain verb or qualifier (`run_validation`, `do_eval`, `batch_predict`). `_validate_args`,
# `infer_shape` or `generate_code` are other kinds of work.
_EVAL_OBJECTS = frozenset(
    {
        "epoch", "epochs", "step", "steps", "loop", "batch", "batches", "model", "models", "net", "network",
        "one", "single", "all", "loader", "dataloader", "dataset", "data", "set", "split", "image", "images",
        "img", "imgs", "text", "texts", "sample", "samples", "tokens", "sequence", "sequences", "caption",
        "captions", "audio", "speech", "video", "response", "responses", "completion", "completions",
        "output", "outputs", "greedy", "beam", "fn", "func", "accuracy", "acc", "loss", "losses", "metrics",
        "metric", "score", "scores", "perplexity", "ppl", "proba", "probs", "logits", "on", "per", "iter",
        "iteration", "run", "pass", "forward", "episode", "episodes", "policy", "agent", "classifier",
        "generator", "encoder", "decoder", "embeddings", "features", "and", "with", "time", "impl", "env", "envs",
        "environment",
    }
)  # fmt: skip
_EVAL_PREFIXES = frozenset(
    {
        "run", "do", "start", "perform", "full", "quick", "final", "simple", "batch", "batched", "single",
        "get", "make", "compute", "model", "net", "online", "offline", "periodic", "custom", "default",
        "standard", "greedy", "beam", "fast", "distributed", "multi", "zero", "shot", "few", "knn", "linear",
        "sample", "autoregressive", "on", "the", "my", "inner", "outer", "local", "global",
    }
)  # fmt: skip
EVAL_DATA_WORDS = frozenset(
    {"val", "valid", "validation", "eval", "evaluation", "test", "testing", "dev", "holdout"}
)
_DATA_WORDS = frozenset(
    {
        "loader",
        "loaders",
        "dataloader",
        "dataloaders",
        "dl",
        "dls",
        "data",
        "dataset",
        "datasets",
        "ds",
        "set",
        "iter",
        "iterator",
        "batches",
        "samples",
        "images",
        "x",
        "buffer",  # a replay buffer of transitions: `test_buffer`, `eval_buffer`
    }
)


@lru_cache(maxsize=1 << 16)
def is_eval_name(name: str) -> bool:
    """Whether a function's name says it evaluates."""
    tokens = name_tokens(name)
    if not tokens:
        return False
    if set(tokens) & _EVAL_UNAMBIGUOUS:
        return True  # predict_sentiment, compute_validation_loss, run_inference_loop
    if tokens[0] in _EVAL_FUNCTION_WORDS and all(t in _EVAL_OBJECTS for t in tokens[1:]):
        return True
    return tokens[-1] in _EVAL_FUNCTION_WORDS and all(t in _EVAL_PREFIXES for t in tokens[:-1])


@lru_cache(maxsize=1 << 16)
def is_eval_data_name(name: str) -> bool:
    """Whether a name says it holds validation or test data: `val_loader`, `testset`, `dev_iter`."""
    tokens = name_tokens(name)
    if set(tokens) & EVAL_DATA_WORDS and set(tokens) & _DATA_WORDS:
        return True
    return any(
        t.startswith(w) and t[len(w) :] in _DATA_WORDS for t in tokens for w in EVAL_DATA_WORDS
    )


# A count of batches (lower-cased), the bound of a loop over batch numbers: `range(nBatch)`,
# `range(num_batches)`; not `batch_size`, whose loops run over the samples of one batch.
BATCH_COUNT_NAME = re.compile(
    r"^(n|num|number|total)_?(train_|val_|test_|eval_)?batch(es)?$|^batch(es)?_?(count|num|number|total)$"
)

# A batch's size (lower-cased), the step of a range over batch starts: `range(0, n, batch_size)`,
# `range(0, n, bs)`; each iteration of such a loop takes one batch.
BATCH_SIZE_NAME = re.compile(r"^(train_|val_|test_|eval_)?(batch_?size|bs|batchsize)$")

# What a loop target holding one batch is called (`for i, batch in enumerate(gen_val):`): the
# author says the iterable yields batches, whatever the iterable is called.
BATCH_NAME = re.compile(r"^(mini_?)?batch(_data)?$")


# Functions named as a program's entry: they run once per run (`main()` under `__main__`).
RUN_ONCE_NAMES = frozenset({"main", "cli", "run_main"})


# What a loader of batches is called (lower-cased): `train_loader`, `dl`, `batches`, `data_iter`.
LOADER_NAME = re.compile(
    r"(^|_|train|val|valid|test|eval|data|dev)loader(?!s)|(^|_)dl$|(train|val|valid|test|eval)_?ld$|batches$|^(train|val|valid|validation|test|eval|infer|dev|data|batch)_?iter(ator)?$"
)


# What makes or holds an iterator of batches, named so (lower-cased): `get_iterator`, `data_iter`,
# `build_loader`, `iterate_batches`; a loop over one whose target is a batch is per batch.
BATCH_ITERATOR_NAME = re.compile(r"(^|_)(data_?)?(iter|iterator|loader|batches)$")


# Names of epochs (`epoch`, `n_epochs`, `EPOCHS`), whose loops run whole passes over the data;
# not a count of steps within one (`steps_per_epoch`, `iter_in_epoch`, `total_it_each_epoch`),
# which counts batches.
EPOCH_NAME = re.compile(r"(?<!per_)(?<!per)(?<!in_)(?<!each_)epoch", re.IGNORECASE)


# What a collection of loaders keyed by split is called (lower-cased): `self.data_loader["train"]`,
# `dataloaders[phase]`. A loader itself is no container, so one of its items is a loader; not
# `batches[i]`, which is one batch.
LOADERS_NAME = re.compile(r"loaders?$")


_INPUT_WORDS = frozenset(
    {
        "y",
        "input",
        "inputs",
        "img",
        "imgs",
        "image",
        "batch",
        "seq",
        "seqs",
        "tokens",
        "text",
        "feats",
        "features",
        "sample",
    }
)


@lru_cache(maxsize=1 << 16)
def is_eval_input_name(name: str) -> bool:
    """Whether a forward's argument is named as test data and nothing else: `test_x`, `X_val`,
    `val_images` (not `valid_lens_x`, valid lengths)."""
    tokens = name_tokens(name)
    words = set(tokens)
    if not words & EVAL_DATA_WORDS or not words <= EVAL_DATA_WORDS | _DATA_WORDS | _INPUT_WORDS:
        return False
    return bool(words - EVAL_DATA_WORDS)


# -- modules, losses and optimizers ---------------------------------------------------------
_MODULE_WORDS = frozenset(
    {
        "model", "models", "net", "network", "module", "encoder", "decoder", "backbone", "classifier",
        "generator", "discriminator", "critic", "actor", "policy", "teacher", "student", "autoencoder",
        "vae", "unet", "transformer", "rnn", "lstm", "gru", "cnn", "mlp", "embedding", "embedder", "head",
        "layer", "tower", "trunk", "regressor", "detector",
    }
)  # fmt: skip
# Words that make a model-ish name something else: a class, a factory, a path, a config...
_NOT_MODULE_WORDS = frozenset(
    {
        "cls", "class", "type", "name", "names", "path", "dir", "file", "config", "cfg", "conf", "args", "kwargs",
        "builder", "factory", "fn", "func", "function", "registry", "loader", "params", "parameters", "state",
        "dict", "id", "ids", "size", "kind", "mode", "dtype", "device", "get", "create", "build", "load", "make",
        "init", "setup", "save", "hook", "hooks", "output", "outputs", "input", "inputs", "list", "map", "str",
        "url", "key", "keys", "info", "spec", "fx", "graph", "traced", "scripted", "jit", "exported", "compiled",
        # another framework's model, which torch autograd never records: `tf_model`, `keras_net`
        "tf", "keras", "flax", "jax", "tflite", "onnx",
    }
)  # fmt: skip
# A leading verb makes a model-ish name a function or method: `wrap_model`, `is_fsdp_managed_module`.
_VERBS = frozenset(
    {
        "add", "apply", "build", "check", "clone", "compile", "convert", "copy", "create", "dispatch",
        "export", "find", "freeze", "fuse", "get", "has", "init", "is", "load", "log", "make", "move",
        "patch", "postprocess", "prepare", "preprocess", "print", "prune", "quantize", "register",
        "remove", "replace", "reset", "save", "set", "setup", "summarize", "sync", "to", "trace",
        "unfreeze", "unwrap", "update", "wrap", "from", "process", "parse", "validate", "evaluate",
        "run", "call", "use", "maybe", "should", "can", "enable", "disable", "filter", "collect", "iter",
        "predict", "infer", "generate", "sample", "encode", "decode", "train", "fit", "test", "eval",
        "profile", "benchmark", "measure", "count", "inspect", "visualize", "plot", "show", "describe",
    }
)  # fmt: skip
# Qualifiers that may follow a model word in a module's name: `model_ema`, `netG`, `net_d`.
_MODULE_QUALIFIERS = frozenset(
    {"ema", "swa", "without", "ddp", "dp", "copy", "shadow", "eval", "old", "new", "ref", "base", "main", "target", "online", "half", "fp"}
)  # fmt: skip


def _is_module_word(token: str) -> bool:
    return token in _MODULE_WORDS or (token.endswith(("net", "model")) and len(token) > 4)


@lru_cache(maxsize=1 << 16)
def is_module_name(name: str) -> bool:
    """Whether a variable's name says it holds a module: `model`, `text_encoder`, `netG`,
    `model_ema` (not `model_path`, `build_model`, `wrap_model`). Evidence of last resort: a
    binding that builds a module, or a class, settles it first."""
    tokens = name_tokens(name)
    if not tokens or set(tokens) & _NOT_MODULE_WORDS or (len(tokens) > 1 and tokens[0] in _VERBS):
        return False
    if _is_module_word(tokens[-1]):
        return True  # model, self.text_encoder, teacher_model
    return _is_module_word(tokens[0]) and all(
        len(t) <= 2 or t in _MODULE_QUALIFIERS for t in tokens[1:]
    )


# torch.nn classes that are no callable module: containers and parameters, never a forward.
NOT_CALLABLE_MODULES = frozenset(
    {"Parameter", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict", "Buffer"}
)

_LOSS_NAME = re.compile(
    r"^(criterion|crit|loss|loss_fn|lossfn|loss_func|loss_function|lossfunc|criterion_?[a-z0-9]*)$"
)


def is_loss_name(name: str) -> bool:
    """Whether a callable's name says it is a criterion: `criterion`, `loss_fn`."""
    return bool(_LOSS_NAME.match(name.lower()))


# Names of the run's settings (`args = parser.parse_args()`, a config): their attributes do not
# change from one batch to the next, and they hold options, not data.
SETTINGS_NAMES = frozenset(
    {
        "args",
        "opt",
        "opts",
        "options",
        "config",
        "cfg",
        "conf",
        "hparams",
        "hp",
        "flags",
        "settings",
        "params",
    }
)


def is_setting(name: str) -> bool:
    """Whether a dotted name reads an option of the run: `args.lr`, `cfg.train.batch_size`."""
    root, dot, _ = name.partition(".")
    return bool(dot) and root.lower() in SETTINGS_NAMES


OPTIMIZER_WORDS = frozenset({"optimizer", "optimizers", "optim", "opt", "optimiser", "scaler"})


def is_optimizer_name(name: str) -> bool:
    """Whether a name says it holds an optimizer (or a grad scaler, stepped like one):
    `optimizer`, `self.opt`, `g_optim` (not `lr_scheduler`)."""
    words = set(name_tokens(name.rsplit(".", 1)[-1]))
    if words & {"sched", "scheduler"}:
        return False
    return bool(words & OPTIMIZER_WORDS) or any(
        w.startswith("optim") or w.endswith("scaler") for w in words
    )


# Calls that write what they are given to a file (images, arrays, audio, a figure): the data has
# to be in host memory, so reading it there is the job.
WRITER_NAME = re.compile(
    r"^(save|savez|savez_compressed|savetxt|savefig|imsave|imwrite|save_image|tofile|write_png"
    r"|write_jpeg|write_image|write_video|write_audio|write_wav|dump)$|^save_|_save$"
)


# A loop counter (lower-cased): `step`, `batch_idx`, `self.global_step`, `i`; what a periodic
# guard (`if step % 100 == 0`) tests.
COUNTER_NAME = re.compile(
    r"(^|_)(step|steps|it|iter|iters|iteration|idx|i|j|batch_idx|batch_i|global_step|n_iter|num_iter|count|counter)$"
)

# A parameter that holds the training loop's count (lower-cased): `steps`, `global_step`,
# `cur_iter`; not `i` or `idx`, which index anything.
STEP_COUNT_PARAMETER = re.compile(r"(^|_)(step|steps|iteration|iter|iters)$")


# Settings only an autoregressive `generate(...)` takes (Hugging Face, vLLM): its decoding loop
# checks on the host after every token whether the sequences have ended.
GENERATION_SETTINGS = frozenset(
    {
        "max_new_tokens",
        "min_new_tokens",
        "max_length",
        "generation_config",
        "num_beams",
        "do_sample",
        "num_return_sequences",
        "sampling_params",
    }
)


_ACTION_VERBS = frozenset({"select", "get", "choose", "sample", "take", "pick", "compute"})


def is_action_name(name: str) -> bool:
    """Whether a function's name says it picks an agent's action for the environment: `act`,
    `batch_act`, `_batch_act_train`, `select_action`, `get_actions` (not `action_loss`, nor an
    activation's `act_norm`, `act_loss`, `get_act_layer`: `act` names the action only last or
    before the mode it acts in)."""
    tokens = name_tokens(name)
    if "act" in tokens:
        after = tokens[tokens.index("act") + 1 :]
        return after in ([], ["train"], ["eval"])
    return bool(tokens) and tokens[0] in _ACTION_VERBS and tokens[-1] in ("action", "actions")
