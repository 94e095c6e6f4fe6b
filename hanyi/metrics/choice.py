"""Option-letter extraction and accuracy for multiple-choice answers.

The paper-faithful first-letter parser of the Pun Rebus scorer and the accuracy helpers shared by letter-answer
tasks. Tolerant (``*_robust``) parsers: :mod:`hanyi.metrics.choice_delimited` (a letter must be delimited, so
"A vase..." is not answer A) and, for CII-Bench's reasoning-style answers, :func:`hanyi.metrics.cii_extract.extract_answer_robust`.
Every extractor returns the letter or ``None`` (unparsed); none guesses.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

_LEADING_LETTER_CACHE: dict[str, re.Pattern] = {}


def _leading_pattern(letters: str) -> re.Pattern:
    if letters not in _LEADING_LETTER_CACHE:
        cls = re.escape(letters)
        _LEADING_LETTER_CACHE[letters] = re.compile(rf"([{cls}]|Option\s([{cls}]))")
    return _LEADING_LETTER_CACHE[letters]


def extract_leading_letter(response: str, letters: str = "ABCDEFG") -> str | None:
    """Paper-faithful first-character parser of the Pun Rebus scorer (``scorer/mc_image_scorer.py``, §3.3 of the spec).

    The response must *start* with an uppercase letter from ``letters`` or with ``Option <letter>``; nothing is
    stripped first. So "Based on ..." parses as ``B`` (a known quirk of the official scorer), while ``"**A**"``,
    ``"(A)"``, ``" A"`` and ``"The answer is A"`` are unparsed.

    >>> extract_leading_letter("C. Prestige, Promotion")
    'C'
    >>> extract_leading_letter("Option G")
    'G'
    >>> extract_leading_letter("Based on the bats, E")
    'B'
    >>> extract_leading_letter("**A**") is None
    True
    """
    if not isinstance(response, str):
        return None
    m = _leading_pattern(letters).match(response)
    if m is None:
        return None
    return m.group(2) or m.group(1)


def is_correct_choice(parsed: str | None, gold: Iterable[str]) -> bool:
    """True when ``parsed`` is one of the gold labels (multi-label gold: any one counts).

    >>> is_correct_choice("B", ["A", "B"])
    True
    >>> is_correct_choice(None, ["A"])
    False
    """
    return parsed is not None and parsed in set(gold)


def accuracy_over_parsed(items: Sequence[dict]) -> float:
    """Accuracy with unparsed answers left out of the denominator (the Pun Rebus official scorer's rule).

    ``items`` are dicts with boolean ``parsed`` and ``correct``. Returns 0.0 when nothing parsed.

    >>> accuracy_over_parsed([{"parsed": True, "correct": True}, {"parsed": False, "correct": False}])
    1.0
    """
    parsed = [it for it in items if it["parsed"]]
    return sum(bool(it["correct"]) for it in parsed) / len(parsed) if parsed else 0.0


def accuracy_over_all(items: Sequence[dict]) -> float:
    """Accuracy with unparsed answers counted wrong.

    >>> accuracy_over_all([{"parsed": True, "correct": True}, {"parsed": False, "correct": False}])
    0.5
    """
    return sum(bool(it["correct"]) for it in items) / len(items) if items else 0.0
