"""What identifiers say: the words that name evaluation and evaluation data.

Kept free of libcst, because the prefilter (`text.may_evaluate`) asks the same questions of a file's
raw text before anything is parsed, and must agree with the analyses that ask them of its tree.
"""

from __future__ import annotations

import re
from functools import lru_cache


def name_tokens(name: str) -> list[str]:
    """Lower-case words of an identifier: `valLoader2` -> ["val", "loader"], `netG` -> ["net", "g"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [t for t in re.split(r"[^a-z]+", spaced.lower()) if t]


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
