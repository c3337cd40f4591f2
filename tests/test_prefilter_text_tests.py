"""The prefilter's text tests that avoid slow regular expressions answer as the expressions they
stand for: `compile` found by substring and matched where it stands (`_COMPILE_TEXT.finditer`),
the precision words found by substring (`_MIXED_TEXT`, the TF32 alternation), and the framework
entry words searched by shared parts first. A wrong answer would skip a file a rule can match."""

from __future__ import annotations

import random
import re

import pytest

from torchlint.analysis import frameworks, text

_TF32 = re.compile(r"tf32|float32_matmul_precision|fp32_precision")
_PIECES = [
    "compile",
    "re.compile(",
    "@torch.compile\n",
    "model.compile()",
    "  # note\n",
    " ",
    "\\\n",
    "(",
    "x",
    "_",
    "\n",
    "é",
    "#",
    "compile # compile(\n",
    "recompile(",
    ".compile",
    "@compile",
    "as re\n",
    "amp",
    "clamp",
    "Amp",
    "half",
    "halfway",
    "accelerate",
    "accelerated",
    "tf32",
    "TF32",
    "float32_matmul_precision",
    "mixed precision",
    "precision = '16'",
    "fp16",
    "channels_last",
    *frameworks.ENTRY_WORDS,
    "_step",
    "_train_",
    "_backward",
    "on_",
    "Eng",
]


def _texts() -> list[str]:
    rnd = random.Random(26)
    found = ["", "compile", "x = compile\n", "compile # compile(\n(", "sample = clamp(amp)"]
    for _ in range(5000):
        found.append("".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 10))))
    return found


TEXTS = _texts()


def test_compile_mentions_are_finditer_matches() -> None:
    for source in TEXTS:
        expected = [m.span() for m in text._COMPILE_TEXT.finditer(source)]
        assert [m.span() for m in text._compile_mentions(source)] == expected, source


@pytest.mark.parametrize("source", ["x = compile # compile(\n", "compile  # compile(x)\ny = 1\n"])
def test_a_mention_inside_a_match_is_not_read_again(source: str) -> None:
    # finditer goes on after a match: "compile(" inside the first match's comment is not one
    assert text.may_compile(source) is False


def test_precision_words_are_the_regexes_answers() -> None:
    for source in TEXTS:
        low = source.lower()
        assert text._mixed(low) == (text._MIXED_TEXT.search(low) is not None), source
        text.precision_mentions.cache_clear()
        assert ("tf32" in text.precision_mentions(source)) == (_TF32.search(low) is not None), (
            source
        )


def test_entry_words_by_parts_are_any_entry_word() -> None:
    for source in TEXTS:
        frameworks.may_drive_steps.cache_clear()
        expected = any(word in source for word in frameworks.ENTRY_WORDS)
        assert frameworks.may_drive_steps(source) == expected, source


@pytest.mark.parametrize(
    "source",
    [
        "import re as re\n",
        "alias re",
        "has re",
        "x as\\\n re",
        "y as # note\n_re",
        "as regex",
        "bas re",
    ],
)
def test_regex_alias_search_is_the_regexes_answer(source: str) -> None:
    expected = text._REGEX_ALIASES.search(source) is not None
    assert text._binds_regex_name(source) == expected
    assert text._binds_regex_name("compile(x) " + source) == expected
