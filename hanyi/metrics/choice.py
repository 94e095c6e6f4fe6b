"""Option-letter extraction and accuracy for multiple-choice answers.

Two kinds of parser live here, each parameterised by the label set:

* **paper-faithful** ports of official extractors, quirks included, pinned by tests against the official behaviour;
* :func:`extract_choice_robust`, hanyi's own tolerant parser, reported under separate ``*_robust`` metric names.

Every extractor returns the letter or ``None`` (unparsed); none guesses.
"""

from __future__ import annotations

import re
import unicodedata
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


_FULLWIDTH = str.maketrans({chr(0xFF21 + i): chr(0x41 + i) for i in range(26)})
_ROBUST_PATTERNS = (
    # "Answer: C", "answer is (C)", "答案：C", "选项C", "选择 C"
    r"(?:answer|option|choice|答案|选项|选择|正确答案)\s*(?:is|是|为)?\s*[:：]?\s*[\(\[（【]?\s*([{L}])(?![A-Za-z])",
    # a leading letter, possibly wrapped: "C", "(C)", "**C.**", "[C]", "C：..."
    r"^[\s\*\#\>\-_`\"'“”]*[\(\[（【]?([{L}])(?:[\)\]）】\.\:：、,，\s\*]|$)",
)


def extract_choice_robust(response: str, letters: str = "ABCDEFG") -> str | None:
    """hanyi's tolerant letter parser (not paper-faithful; reported as ``*_robust``).

    Normalises full-width letters and markdown, then looks for an explicit "answer is X" statement, then a leading
    standalone letter (``(C)``, ``**C.**``, ``C：``), then a sole standalone letter anywhere. A leading English word
    such as "Based" is never read as a letter. Returns ``None`` when nothing or more than one candidate is found.

    >>> extract_choice_robust("**(C)** Prestige")
    'C'
    >>> extract_choice_robust("Based on the image, the answer is E.")
    'E'
    >>> extract_choice_robust("答案：Ｄ")
    'D'
    >>> extract_choice_robust("Based on the bats") is None
    True
    """
    if not isinstance(response, str) or not response.strip():
        return None
    text = unicodedata.normalize("NFKC", response.translate(_FULLWIDTH)).strip()
    cls = re.escape(letters)
    for pat in _ROBUST_PATTERNS:
        m = re.search(pat.replace("{L}", cls), text, flags=re.IGNORECASE if "answer" in pat else 0)
        if m and m.group(1).upper() in letters:
            return m.group(1).upper()
    standalone = set(re.findall(rf"(?<![A-Za-z])([{cls}])(?![A-Za-z])", text))
    if len(standalone) == 1:
        return standalone.pop()
    return None


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
