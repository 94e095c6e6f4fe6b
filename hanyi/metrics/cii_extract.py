"""CII-Bench answer extraction and accuracy (Zhang et al., "Can MLLMs Understand the Deep Implication Behind Chinese
Images?", arXiv 2410.13854, §4 and Appendix G).

Two extractors for six-option (A-F) answers, both returning a letter or ``None`` (a *miss*); neither guesses:

* :func:`extract_option_labels`: a faithful port of ``extract_option_labels`` in the official ``src/eval_cii.py``
  (MING-ZCH/CII-Bench @ ba8e995), quirks included. It backs the paper-faithful ``acc``.
* :func:`extract_answer_robust`: hanyi's tolerant parser (``acc_robust``): last explicit "答案：X" / "answer is X",
  then a leading letter, then a sole standalone letter, then a unique option text.

:func:`score_response` applies both to one answer; :func:`accuracy_percent` and :func:`category_accuracy` aggregate.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

OFFICIAL_SCAN_LETTERS = "ABCDEFGH"  # the official alphabetical scan also looks for G and H
LETTERS = "ABCDEF"
_PAREN_LETTER = re.compile(r"\(([A-F])\)")
_WORD_LETTER = re.compile(r"\b([A-F])\b")


def _alphabetical_scan(text: str) -> str | None:
    for letter in OFFICIAL_SCAN_LETTERS:
        if letter in text:
            return letter
    return None


def _last_of_most_frequent(matches: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for m in matches:
        counts[m] = counts.get(m, 0) + 1
    top = max(counts.values())
    return [letter for letter, n in counts.items() if n == top][-1]


def extract_option_labels(text, options: Sequence[str] | None = None) -> str | None:
    """Paper-faithful port of the official CII-Bench extractor (``src/eval_cii.py::extract_option_labels``).

    Steps, in order (spec §3.7): a dict (API error) gives ``"error"``; the text is stripped; a bare letter A-H is
    returned; after the last ``"\\n答案"`` (then after the last ``"\\n**答案："``) the *alphabetically first* letter
    A-H present anywhere wins; then the most frequent ``(X)`` match, else the most frequent ``\\bX\\b`` match (ties:
    the letter whose first occurrence is latest; ``\\b`` never separates CJK from Latin, so ``是E选项`` finds
    nothing); then option-text containment (last hit wins); otherwise ``None``.

    Quirks kept: a whitespace-only text matches every option and yields ``"F"``; zero-width and bidirectional
    characters are neither stripped (Python's ``str.strip`` keeps them) nor word characters, so ``"\u200bB\u200b"``,
    ``"\ufeffC"`` and ``"\u202eB"`` give B, C and B.

    Args:
        text: the model's answer (a dict means an API error object).
        options: the six option texts, A first.

    Returns:
        A letter (possibly G or H), ``"error"``, or ``None`` when nothing is extracted (or ``text`` is not a string).

    >>> extract_option_labels("分析：这张图\\n答案：D，而不是B")
    'B'
    >>> extract_option_labels("(B)和(E)都有道理，但(E)更好")
    'E'
    >>> extract_option_labels("我认为答案是C选项") is None
    True
    >>> extract_option_labels("   ", ["甲", "乙", "丙", "丁", "戊", "己"])
    'F'
    >>> extract_option_labels("\u200bB\u200b"), extract_option_labels("\ufeffC"), extract_option_labels("\u202eB")
    ('B', 'C', 'B')
    """
    if isinstance(text, dict):
        return "error"
    if not isinstance(text, str):  # not reachable from lmms-eval (always text); defined rather than a crash
        return None
    text = text.strip()
    if len(text) == 1 and text in OFFICIAL_SCAN_LETTERS:
        return text
    for marker in ("\n答案", "\n**答案："):
        if marker in text:
            text = text.split(marker)[-1]
            found = _alphabetical_scan(text)
            if found is not None:
                return found
    matches = _PAREN_LETTER.findall(text) or _WORD_LETTER.findall(text)
    if matches:
        return _last_of_most_frequent(matches)
    if options:
        hits = [LETTERS[i] for i, opt in enumerate(options) if opt.strip() in text or text in opt]
        if hits:
            return hits[-1]
    return None


_ANSWER_ZH = re.compile(r"答案\s*(?:应该是|应为|是|为)?\s*[:：]?\s*[\(\[【]?\s*([A-F])(?![A-Za-z])")
_ANSWER_EN = re.compile(r"(?i:answer|option|choice)\s*(?:(?i:is)\s*)?[:]?\s*[\(\[]?\s*([A-F])(?![A-Za-z])")
_BOXED = re.compile(r"\\boxed\{\s*\(?([A-F])\)?\s*\}")
# A leading letter needs a delimiter, the end of its line, or a non-Latin character after the space: "A man
# holds..." is the English article, not answer A.
_LEADING = re.compile(r"^[\s*#>\-_`\"'“”]*[\(\[【]?([A-F])(?:[\)\]】.:：、,，]|[ \t]*(?:\n|$)|\s+(?![A-Za-z]))")
# "A" opening a sentence before a lowercase word that is not a verb of choosing is the article.
_ARTICLE = re.compile(r"(?:^|(?<=[.!?。！？\n]))\s*A\s+(?!(?:is|was|seems|fits|matches|because)\b)(?=[a-z])")
_STANDALONE = re.compile(r"(?<![A-Za-z])([A-F])(?![A-Za-z])")
_MARKDOWN = re.compile(r"[*_`#]")


# Invisible characters that change nothing a reader sees: removed before the robust parser reads an answer.
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
# Bidirectional controls reorder what a reader sees ("\u202eAB" shows as "BA"): the robust parser refuses the answer.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _normalise(text: str) -> str:
    return _MARKDOWN.sub("", unicodedata.normalize("NFKC", _ZERO_WIDTH.sub("", text))).strip()


def extract_answer_robust(text, options: Sequence[str] | None = None) -> str | None:
    """The tolerant CII-Bench parser (ours, not paper-faithful; reported as ``acc_robust``).

    After NFKC normalisation (full-width letters and colons become ASCII) and markdown removal it tries, in order:
    the **last** ``答案(是|为)?[:：] X`` (so a CoT answer's final line wins over options discussed earlier), the last
    ``answer/option is X``, ``\\boxed{X}``, a leading letter (``(C)``, ``C.``, ``C`` alone on its line; never the
    English article of "A man holds..."), the only distinct standalone letter (a sentence-initial article "A" does not count), and the only option whose full text appears.
    Blank or ambiguous answers give ``None``. Zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM) are removed
    first; an answer with a bidirectional control (LRM, RLM, ALM, U+202A-U+202E, U+2066-U+2069) gives ``None``: what it
    shows a reader is not the order of its characters, so no letter read from it can be checked by eye.

    >>> extract_answer_robust("分析(A)...(B)...\\n答案：(C)\\n因为A不符合")
    'C'
    >>> extract_answer_robust("我认为答案是C选项")
    'C'
    >>> extract_answer_robust("选Ｅ")
    'E'
    >>> extract_answer_robust("A和B都可能") is None
    True
    >>> extract_answer_robust("A man holds a fish over the pond. (E)")
    'E'
    >>> extract_answer_robust("\u200bB\u200b"), extract_answer_robust("\ufeffC"), extract_answer_robust("\u202eB")
    ('B', 'C', None)
    """
    if not isinstance(text, str) or not text.strip() or _BIDI.search(text):
        return None
    t = _normalise(text)
    for pattern in (_ANSWER_ZH, _ANSWER_EN, _BOXED):
        found = pattern.findall(t)
        if found:
            return found[-1]
    m = _LEADING.match(t)
    if m:
        return m.group(1)
    standalone = set(_STANDALONE.findall(_ARTICLE.sub(" ", t)))
    if len(standalone) == 1:
        return standalone.pop()
    if not standalone and options:
        normalised = [_normalise(opt) if isinstance(opt, str) else "" for opt in options]
        hits = [LETTERS[i] for i, opt in enumerate(normalised) if opt and opt in t]
        if len(hits) == 1:
            return hits[0]
    return None


def score_response(response, options: Sequence[str], gold: str) -> dict:
    """Score one answer with both extractors, the paper's as the official caller runs it.

    The official ``eval_cii.py`` skips an empty answer (wrong, no prediction) and runs the extractor on any other, so a
    whitespace-only answer extracts ``"F"`` (right where the gold is F): the paper-faithful ``pred`` / ``correct`` do
    the same. The robust parser scores any blank answer (empty or whitespace-only) wrong; ``blank`` marks both kinds
    (``hanyi report``'s ``blank_rate``). Note that lmms-eval strips every generated answer before ``process_results``,
    so under it a whitespace-only answer arrives empty.

    Returns ``{"pred", "correct", "miss", "blank", "pred_robust", "correct_robust"}``. A paper-faithful ``pred`` of
    ``G``/``H`` is wrong but not a miss, as in the official script.

    >>> score_response("答案：B", ["a", "b", "c", "d", "e", "f"], "B")["correct"]
    True
    >>> [score_response("  ", ["a", "b", "c", "d", "e", "f"], "F")[k] for k in ("pred", "correct", "correct_robust")]
    ['F', True, False]
    >>> score_response("", ["a", "b", "c", "d", "e", "f"], "F")["correct"]
    False
    """
    blank = not isinstance(response, str) or not response.strip()
    skipped = not isinstance(response, str) or response == ""  # the official caller runs no extractor on ""
    pred = None if skipped else extract_option_labels(response, list(options))
    robust = None if blank else extract_answer_robust(response, list(options))
    return {
        "pred": pred,
        "correct": pred is not None and pred == gold,
        "miss": pred is None,
        "blank": blank,
        "pred_robust": robust,
        "correct_robust": robust is not None and robust == gold,
    }


def accuracy_percent(items: Sequence[dict], key: str = "correct") -> float:
    """100 x the share of ``items`` whose ``key`` is true; every item counts (misses are wrong). NaN when empty.

    >>> accuracy_percent([{"correct": True}, {"correct": False}, {"correct": False}, {"correct": True}])
    50.0
    """
    if not items:
        return math.nan
    return 100.0 * sum(bool(it[key]) for it in items) / len(items)


def category_accuracy(items: Sequence[dict], field: str, label: str, key: str = "correct") -> float:
    """Accuracy (%) over the items carrying ``label`` in ``field`` (official ``eval_cii_sub.py``, spec §3.9).

    ``field`` holds a string (domain, emotion, difficulty) or a list (image types, rhetorics: a question counts under
    every label it lists). NaN when no item carries the label.

    >>> items = [{"correct": True, "rhetorics": ["隐喻", "象征"]}, {"correct": False, "rhetorics": ["隐喻"]}]
    >>> category_accuracy(items, "rhetorics", "隐喻"), category_accuracy(items, "rhetorics", "象征")
    (50.0, 100.0)
    """
    chosen = [it for it in items if (label in it[field] if isinstance(it[field], list) else it[field] == label)]
    return accuracy_percent(chosen, key)


def paper_round(percent: float) -> float:
    """The paper's 1-decimal figure: round half up to 2 decimals (the script's ``:.2%``), then half up to 1.

    >>> paper_round(100 * 7 / 13), paper_round(100 * 45 / 137)
    (53.9, 32.9)
    """
    from decimal import ROUND_HALF_UP, Decimal

    return float(Decimal(f"{percent:.2f}").quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
