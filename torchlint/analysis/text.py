"""Exact text tests for the prefilters: what the source text of a file must contain, as written,
for a syntax pattern to occur in it. A file that fails a rule's test is not parsed for that rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from torchlint.analysis.frameworks import may_drive_steps
from torchlint.analysis.names import EVAL_DATA_WORDS, is_eval_data_name, is_eval_name

# What may stand between two tokens of one expression: whitespace, a backslash joining lines,
# a comment ending its line (inside brackets). Each alternative starts with its own character,
# so a failed search never backtracks into exponential splits; and no token that follows a gap
# starts with one of them, so the gap is possessive: it never gives back what it took.
GAP = r"(?:[\s\\]|#[^\r\n]*+[\r\n])*+"

# Text that every `.backward`/`.manual_backward`/`.step` call has, also split over lines.
STEP_CALL_TEXT = re.compile(r"\." + GAP + r"(?:manual_)?(?:backward|step)\b")


@lru_cache(maxsize=1)
def may_train(text: str) -> bool:
    """Whether the text may call `backward()` or an optimizer's `step()`: what training code does.
    Cached for the file's several rules that ask (a str keeps its hash, so a hit costs nothing)."""
    # The words first: the pattern opens with a dot, which code is full of.
    return ("backward" in text or "step" in text) and STEP_CALL_TEXT.search(text) is not None


_DL_TEXT = re.compile(r"dl\b")
_ITER_TEXT = re.compile(
    r"(?:train|val|valid|validation|test|eval|infer|dev|data|batch)_?iter(?:ator)?\b"
)
# `range(len(val_dataset))`: a loop over a dataset's samples by index (`loops._over_dataset_samples`).
_DATASET_RANGE_TEXT = re.compile(r"range\(\s*len\(\s*[\w.]*(?:dataset|\bds\b)")
# `for i, batch in enumerate(gen):` and `range(0, n, batch_size)`: `loops._targets_a_batch` and
# `LoopFacts._over_batch_numbers`' batch-size step (names.BATCH_NAME, names.BATCH_SIZE_NAME).
_BATCH_TARGET_TEXT = re.compile(
    r"for(?<=\bfor)\s+(?:\w+\s*,\s*)?(?:mini_?)?batch(?:_data)?\s+in\b"
)  # opens with its word, then checks the boundary behind it (`names_after`)
# `minibatch(users, batch_size=bs)`: a generator told a batch size (`loops._over_batching_call`).
_BATCH_KEYWORD_TEXT = re.compile(r"[(,]\s*(?:train_|val_|test_|eval_)?batch_?size\s*=(?!=)")
# What `_BATCH_STEP_TEXT` must contain, found fast: it opens with the comma code is full of.
_BATCH_SIZE_CLOSE = re.compile(r"(?:batch_?size|bs|batchsize)\s*\)")
_BATCH_STEP_TEXT = re.compile(
    r",\s*(?:[\w.]+\.)?(?:train_|val_|test_|eval_)?(?:batch_?size|bs|batchsize)\s*\)"
)


@lru_cache(maxsize=1)
def may_have_batch_loops(text: str) -> bool:
    """Whether the text has what every per-batch loop needs somewhere in its file: a step call
    or a loader-like name (`loops._LOADER_NAME`, `...DataLoader(...)`). Substring tests go first:
    one case-insensitive regex over the whole text costs more than the scope analysis it spares."""
    if may_train(text) or may_drive_steps(text):
        return True  # a step call, or code a framework runs every step
    low = text.lower()
    if "loader" in low or "batches" in low or "batch(" in low:
        return True  # a loader, or a batch fetched in the loop (`get_batch(split)`)
    return bool(
        ("dl" in low and _DL_TEXT.search(low))
        or ("iter" in low and _ITER_TEXT.search(low))
        or ("range(len(" in low and _DATASET_RANGE_TEXT.search(low))
        or ("batch" in low and _BATCH_TARGET_TEXT.search(low))
        or ("range(" in low and _BATCH_SIZE_CLOSE.search(low) and _BATCH_STEP_TEXT.search(low))
        or (("batch_size" in low or "batchsize" in low) and _BATCH_KEYWORD_TEXT.search(low))
    )


_HOST_READ_CALL = re.compile(r"\.\s*(?:item|tolist|cpu|any|all)\s*\(")
# The builtin `float(`: a whole word that is no attribute (not `x.float()`), checked behind it
_FLOAT_CALL = re.compile(r"float(?<![.\w]float)\s*\(")


def may_sync_per_step(text: str) -> bool:
    """What a per-step host sync needs in its file: a device and a per-batch loop
    (`may_name_a_device`, `may_have_batch_loops`), or a host read (`.item()`, `.tolist()`,
    `.cpu()`, a truth test of `.any()`/`.all()`, a `float()` conversion) in code that another module of the project may run every step on its own device
    (a grad-norm helper kept with other utilities, a subclass's `train_step`, a metric
    helper returning `float(torch.sum(...))`)."""
    if _HOST_READ_CALL.search(text) is not None or _FLOAT_CALL.search(text) is not None:
        return True
    return may_name_a_device(text) and may_have_batch_loops(text)


_EVAL_CALL = re.compile(r"eval" + GAP + r"\(")
_TRAIN_OFF = re.compile(r"train" + GAP + r"\(" + GAP + r"(?:\w+" + GAP + "=" + GAP + r")?False\b")
# A string standing as a subscript's element (after `[`, `,`, `(` or `*`, before `]`, `,` or
# `)`) that names evaluation data (`loaders["val"]`), or such a string with an escape that could
# spell one (`loaders["\\x76al"]`). Elsewhere (`padding="valid"`, a docstring's `\\u00e0`) none
# is what `Evaluation.is_eval_data` reads.
_ELEMENT_STRING = r"[\[,(*]" + GAP + r"[rRbBuUfF]{0,2}['\"]{1,3}"
_EVAL_DATA_STRING = re.compile(
    _ELEMENT_STRING
    + r"(?:"
    + "|".join(sorted(EVAL_DATA_WORDS))
    + r")['\"]{1,3}"
    + GAP
    + r"[\]),]|"
    + _ELEMENT_STRING
    + r"[^'\"\n]*\\[xuUN0-7]"
)
# What either alternative above must contain: a quoted word of evaluation data, or an escape
# (`_may_name_eval_data`). Opening with a quote, not with the brackets and commas code is full
# of, it rules out most files at a third of the cost; the full pattern then runs on the few left.
_EVAL_DATA_STRING_CORE = re.compile(r"['\"](?:" + "|".join(sorted(EVAL_DATA_WORDS)) + r")['\"]")
_ESCAPE = re.compile(r"\\[xuUN0-7]")
# Every word of evaluation data contains one of these, lower-cased ("eval" its "val").
_EVAL_DATA_ROOT = re.compile("val|test|dev|holdout")
_WORD = re.compile(r"\w*")


_BACKWARD_CALL = re.compile(r"\." + GAP + r"backward\b")
_FIT_CALL = re.compile(r"\." + GAP + r"fit" + GAP + r"\(")
# `assert not self.nets.training`: a statement that a module is in eval mode (a superset: the
# assertion and the flag are looked for apart).
_ASSERT_NOT = re.compile(r"assert" + GAP + r"not\b")
_TRAINING_FLAG = re.compile(r"\." + GAP + r"training\b")


def may_evaluate(text: str) -> bool:
    """Whether the text has what every evaluation scope needs: a `.eval()` or `.train(False)`
    switch, a function named for evaluation, a name or subscript string of evaluation data, a
    `volatile` Variable, a training loop that predictions may follow, or loaded weights.
    Identifiers are read wherever they stand (strings and comments too): a superset, cheaply."""
    if "eval" in text and _EVAL_CALL.search(text):
        return True
    if (
        "volatile" in text
        or "load_state_dict" in text
        or "torch.load(" in text
        or "jit.load(" in text
        or "from_pretrained(" in text
    ):
        return (
            True  # a volatile Variable's forward; an inference script (`evaluation._LOADS_WEIGHTS`)
        )
    if ("backward" in text and _BACKWARD_CALL.search(text)) or (
        "fit" in text and _FIT_CALL.search(text)
    ):
        return (
            True  # predictions after training: a loop running backward, or a framework's fit(...)
        )
    if "False" in text and _TRAIN_OFF.search(text):
        return True
    if "assert" in text and _ASSERT_NOT.search(text) and _TRAINING_FLAG.search(text):
        return True  # `assert not self.nets.training`: eval mode stated
    if any(is_eval_name(name) for name in names_after("def", text)):
        return True
    if _may_name_eval_data(text) and _EVAL_DATA_STRING.search(text):
        return True
    return any(is_eval_data_name(word) for word in _words_with_eval_data_roots(text))


def _may_name_eval_data(text: str) -> bool:
    """`_EVAL_DATA_STRING`'s gate: two searches, the escape's only where a backslash is (a
    single pattern of both alternatives scans twice as slowly)."""
    return _EVAL_DATA_STRING_CORE.search(text) is not None or (
        "\\" in text and _ESCAPE.search(text) is not None
    )


def _words_with_eval_data_roots(text: str) -> set[str]:
    """The identifiers around each root found in the lower-cased text: a few occurrences per file,
    where a scan of every identifier would cost a tenth of a parse."""
    low = text.lower()
    if len(low) != len(text):  # lower-casing changed the length of some non-ASCII letter
        return set(_WORD.findall(text))
    backwards = text[::-1]
    size = len(text)
    words = set()
    for root in _EVAL_DATA_ROOT.finditer(low):
        at = root.start()
        before = _word_end(backwards, size - at) - (size - at)
        words.add(text[at - before : _word_end(text, at)])
    return words


def _word_end(text: str, at: int) -> int:
    """Where the word characters from `at` on end (`at` itself when there are none)."""
    word = _WORD.match(text, at)
    return word.end() if word else at


# -- the text tests of single rules ------------------------------------------------------------
_CUDA_AMP_TEXT = re.compile(r"cuda" + GAP + r"(?:\." + GAP + r"amp\b|import\b)")
_AMP_ATTRIBUTE_TEXT = re.compile(r"\." + GAP + r"amp" + GAP + r"\.")
_MOVE_OF_CALL = re.compile(r"\)" + GAP + r"\." + GAP + r"(?:to|cuda)\b")


def may_use_cuda_amp(text: str) -> bool:
    """`torch.cuda.amp`, `from torch.cuda import amp`, or some `x.amp.y` (an alias of it)."""
    return ("cuda" in text and _CUDA_AMP_TEXT.search(text) is not None) or (
        "amp" in text and _AMP_ATTRIBUTE_TEXT.search(text) is not None
    )


def moves_a_call_result(text: str) -> bool:
    """A call's closing parenthesis followed by `.to` or `.cuda`."""
    return _MOVE_OF_CALL.search(text) is not None


def may_use_numpy(text: str) -> bool:
    """All evidence of numpy goes through an import of numpy (`.numpy()` included), pandas, or an
    image or matrix reader that returns arrays (OpenCV, imageio, scikit-image, tifffile, SciPy)."""
    return any(
        word in text
        for word in ("numpy", "pandas", "cv2", "imageio", "skimage", "tifffile", "scipy")
    )


_TENSOR_WORD = re.compile(r"tensor\b")
# `torch.tensor`, `T.tensor` (`import torch as T`), `import torch.tensor as t`, an alias's value.
_DOTTED_TENSOR = re.compile(r"\." + GAP + r"tensor\b")
_FROM_TORCH_IMPORT = re.compile(r"from" + GAP + r"torch" + GAP + r"import\b")


def may_name_torch_tensor(text: str) -> bool:
    """What a name resolving to `torch.tensor` needs (TL003 reads only calls of it): an
    attribute `.tensor`, or `tensor` imported by name from torch (`from torch import tensor as t`:
    then `tensor` is a whole word). `uint2tensor`, `to_tensor` and "numpy to tensor" in a comment
    are not. The word's start is tested by hand: a `\\b`-led pattern is tried at every character."""
    if _DOTTED_TENSOR.search(text):
        return True
    if _FROM_TORCH_IMPORT.search(text) is None:
        return False
    for match in _TENSOR_WORD.finditer(text):
        start = match.start()
        if start == 0 or not _is_word_char(text[start - 1]):
            return True
    return False


def _is_word_char(char: str) -> bool:
    """What `\\w` matches: a character that may continue a name before `tensor`."""
    return char.isalnum() or char == "_"


def may_build_dataloader(text: str) -> bool:
    return "DataLoader" in text


# `x.grad` or `x.grad.data`, then the zeroing method called on it or an assignment to it.
_GRAD_ZEROED = re.compile(
    r"\."
    + GAP
    + r"grad"
    + GAP
    + r"(?:\."
    + GAP
    + r"data"
    + GAP
    + r")?(\."
    + GAP
    + r"(?:zero_|fill_)|=)"
)


def may_zero_grads(text: str) -> bool:
    """A `zero_grad` call, or a statement zeroing some `x.grad`: `x.grad.zero_()`, `.fill_(0)`, or
    `x.grad = torch.zeros_like(x)` (also through `.data`). The zeroing method or the assignment
    must follow the `.grad` itself: `zero_()`, `fill_` and `zeros_like` alone are everywhere in
    initialisation and optimizer code, which zeroes no gradient."""
    if "zero_grad" in text:
        return True
    for match in _GRAD_ZEROED.finditer(text):
        if match.group(1) != "=" or "zeros_like" in text:
            return True
    return False


_DEVICE_WORDS = ("cuda", "dev", "gpu", "rank", "accelerat", "mps", "xpu", "npu", "hpu", "xla")


def may_name_a_device(text: str) -> bool:
    """A word that can name an accelerator, in any case (`x.to(DEVICE)`, `cfg.Gpu`): device
    names are matched case-insensitively (`loops.is_device_like`), so the text test is too. A
    framework entry point counts: the framework moves its batches (`frameworks.on_accelerator`)."""
    low = text.lower()
    return any(word in low for word in _DEVICE_WORDS) or may_drive_steps(text)


def may_load_samples(text: str) -> bool:
    """A dataset's per-sample method (`__getitem__`, `__getitems__`) or a `collate_fn`: where a
    loader runs the file's code for each sample or batch."""
    return "__getitem" in text or "collate" in text


# `compile` called (`torch.compile(model)`, `model.compile()`) or ending a line (`@torch.compile`).
_COMPILE_TEXT = re.compile(r"(?<![\w])compile\b(?:" + GAP + r"\(|[^\S\r\n]*(?:#[^\r\n]*)?[\r\n])")
_COMPILE_AT = re.compile(_COMPILE_TEXT.pattern.removeprefix(r"(?<![\w])"))
_WORD_CHAR = re.compile(r"\w")
# The regular-expression modules' `compile`, which most mentions of the word are.
_REGEX_RECEIVER = re.compile(r"(?<![\w.])(?:re|regex|_re)" + GAP + r"\." + GAP + r"$")
_REGEX_ALIASES = re.compile(r"\bas" + GAP + r"(?:re|regex|_re)\b")
_AS_REGEX = re.compile(_REGEX_ALIASES.pattern.removeprefix(r"\b"))


def may_compile(text: str) -> bool:
    """A call of `compile` or a decorator ending in it, other than `re.compile(...)` (unless the
    file binds `re` or `regex` itself with `as`, which could name torch). The word ending a line
    is a decorator's only after `@` or a dot (`@compile`, `@torch.compile`, a backslash between):
    elsewhere it is prose, such as a docstring's "the kernel function to compile"."""
    if "compile" not in text:
        return False
    aliased: bool | None = None  # whether the file binds `re` itself, read once and only if asked
    for match in _compile_mentions(text):
        if match.group()[-1] != "(" and not _ends_decorator_name(text, match.start()):
            continue
        before = text[max(0, match.start() - 40) : match.start()]
        if not _REGEX_RECEIVER.search(before):
            return True
        if aliased is None:
            aliased = _binds_regex_name(text)
        if aliased:
            return True
    return False


def _binds_regex_name(text: str) -> bool:
    """`_REGEX_ALIASES.search(text) is not None`, faster: a pattern opening with `\b` is tried at
    every character, one opening with `as` only where those letters stand; the word boundary
    before them is checked for each place the rest matches, in order."""
    at = 0
    while (match := _AS_REGEX.search(text, at)) is not None:
        start = match.start()
        if start == 0 or not _WORD_CHAR.match(text, start - 1):
            return True
        at = start + 1
    return False


def _compile_mentions(text: str) -> Iterator[re.Match[str]]:
    """`_COMPILE_TEXT.finditer(text)`, faster: the regex opens with a lookbehind, so the engine
    tries it at every character; here it is matched only where the word stands, and the search
    goes on after each match, as `finditer`'s does."""
    at = text.find("compile")
    while at >= 0:
        match = (
            _COMPILE_AT.match(text, at) if at == 0 or not _WORD_CHAR.match(text, at - 1) else None
        )
        at = text.find("compile", match.end() if match else at + 1)
        if match:
            yield match


_NAMED_AFTER = {keyword: re.compile(keyword + r"[\s\\]+(\w+)") for keyword in ("def", "class")}


def names_after(keyword: str, text: str) -> list[str]:
    """The names written after the word `keyword` ("def" or "class") wherever it stands, strings
    and comments included: a superset of what the file defines. The pattern opens with the
    word, not with `\\b`, which the engine would try at every character (forty times slower);
    the word boundary is checked for each match instead."""
    return [
        match.group(1)
        for match in _NAMED_AFTER[keyword].finditer(text)
        if match.start() == 0 or not _WORD_CHAR.match(text, match.start() - 1)
    ]


def _ends_decorator_name(text: str, at: int) -> bool:
    """Whether the word at `at` follows `@` or a dot, across spaces and backslash-joined lines
    (the only gap a decorator line without brackets can have)."""
    return text[max(0, at - 200) : at].rstrip(" \t\f\\\r\n").endswith(("@", "."))


# -- numeric precision: TF32, mixed precision, memory format ---------------------------------
# Any word that may set or choose TF32 for matmuls (`allow_tf32`, `--tf32`, the precision calls).
_TF32_WORDS = ("tf32", "float32_matmul_precision", "fp32_precision")
# Any word that may put training in half precision: autocast, a scaler, a half or bf16 model or
# dtype, an `amp` name (`use_amp`, `torch.amp`, not `clamp`), apex, a trainer's `precision=16` or
# `fp16=True`, or a framework (accelerate, DeepSpeed, Lightning) that picks the precision from its own config or command line.
_MIXED_TEXT = re.compile(
    r"autocast|gradscaler|(?<![a-z])half(?![a-z])|bfloat16|float16|fp16|bf16|mixed.?precision"
    r"|(?<![a-z])amp(?![a-z])|apex|precision\s*=\s*['\"]?16|(?<![a-z])accelerate(?![a-z])"
    r"|deepspeed|lightning|fabric|colossal"
)


# `_MIXED_TEXT`, one alternative at a time: its plain words found by substring search, and each
# alternative with a lookaround or a pattern searched only where its word occurs. One regex of
# all of them tries every alternative at every character, three times slower.
_MIXED_WORDS = (
    "autocast", "gradscaler", "bfloat16", "float16", "fp16", "bf16", "apex", "deepspeed",
    "lightning", "fabric", "colossal",
)  # fmt: skip
_MIXED_STANDALONE = ("half", "amp", "accelerate")  # `(?<![a-z])word(?![a-z])`
_MIXED_PRECISION = re.compile(r"mixed.?precision|precision\s*=\s*['\"]?16")


def _mixed(low: str) -> bool:
    """`_MIXED_TEXT.search(low) is not None`, faster."""
    return (
        any(word in low for word in _MIXED_WORDS)
        or any(_standalone(low, word) for word in _MIXED_STANDALONE)
        or ("precision" in low and _MIXED_PRECISION.search(low) is not None)
    )


def _standalone(low: str, word: str) -> bool:
    """Whether `word` stands in `low` with no letter a-z just before or after it: a regex with a
    lookbehind is tried at every character, and "amp" (in "example", "clamp") is common."""
    at = low.find(word)
    while at >= 0:
        end = at + len(word)
        if not (at and "a" <= low[at - 1] <= "z") and not (
            end < len(low) and "a" <= low[end] <= "z"
        ):
            return True
        at = low.find(word, at + 1)
    return False


# `memory_format=torch.channels_last`, a `--channels-last` option, fastai's `to_channelslast()`.
_CHANNELS_LAST_TEXT = re.compile(r"channels.?last")


@lru_cache(maxsize=4)
def precision_mentions(text: str) -> frozenset[str]:
    """What the text may say about numeric precision: "tf32" (a TF32 or matmul-precision
    setting), "mixed" (mixed or half precision, or a framework that chooses it),
    "channels_last". Read anywhere (strings and comments too): a superset, so that what a file
    may settle is taken as settled."""
    low = text.lower()
    found = set()
    if any(word in low for word in _TF32_WORDS):
        found.add("tf32")
    if _mixed(low):
        found.add("mixed")
    if _CHANNELS_LAST_TEXT.search(low):
        found.add("channels_last")
    return frozenset(found)


def may_use_cuda(text: str) -> bool:
    """A CUDA word in any case (`"cuda"`, `.cuda()`, `CUDA_VISIBLE_DEVICES`): TF32, autocast to
    half precision and channels_last tensor-core kernels are CUDA's."""
    return "cuda" in text.lower()


def may_leave_tf32_off(text: str) -> bool:
    """No word that may set TF32 or train in half precision (TL112 is silent on either)."""
    return not precision_mentions(text) & {"tf32", "mixed"}


def may_train_in_float32(text: str) -> bool:
    """No word that may train in half precision (TL113 is silent on one)."""
    return "mixed" not in precision_mentions(text)


def may_autocast_without_channels_last(text: str) -> bool:
    """An `autocast` and no `channels_last` (TL114 needs the one and is silent on the other)."""
    return "autocast" in text and "channels_last" not in precision_mentions(text)
