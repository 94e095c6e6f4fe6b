"""Pun Rebus Art official scorer rules that other formats do not share: text-only parsing, per-category breakdown.

Ports of ``scorer/text_understanding_scorer.py`` and ``grade_answers`` / ``grade_answer_confusion`` in
``scorer/mc_image_scorer.py`` (repo ``zhang-tuo-pdf/Pun-Rebus-Art-Benchmark`` at 61c497f); paper §4.2 and
Appendix Figures 7-8. The image-task leading-letter parser is :func:`hanyi.metrics.choice.extract_leading_letter`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def extract_first_char_letter(response: str | None, letters: str = "ABCDEFG") -> str | None:
    r"""Text-only scorer rule (regex ``Word: (.+?)\n\n([A-G])``): the first character must be a letter.

    Unlike the image scorer, ``Option B`` is not accepted; nothing is stripped, so ``" B"`` is unparsed.

    >>> [extract_first_char_letter(r) for r in ["B. Happiness", "Based on", "Option B", " B", ""]]
    ['B', 'B', None, None, None]
    """
    if isinstance(response, str) and response[:1] and response[0] in letters:
        return response[0]
    return None


def category_accuracy(items: Sequence[dict], letter: str) -> float:
    """Official per-category accuracy over *parsed* answers (``grade_answers``), the paper's Figure 7 metric.

    Denominator: for each parsed item, the number of times ``letter`` occurs in ``gold_rows``, the story's category
    column over *all* its answer-sheet rows, duplicates kept (the official scorer appends one label per CSV row and
    counts each; 10 story-category pairs are repeated in the released sheet). Numerator: correct items whose chosen
    letter is ``letter`` (counted once). Items are dicts with ``parsed``, ``correct``, ``pred``, ``gold`` and
    ``gold_rows``. NaN when the denominator is 0 (no parsed doc of the category: the official scorer has no value) or
    an item lacks ``gold_rows`` (data built before the column existed: the official denominator is unknown).

    >>> items = [{"parsed": True, "correct": True, "pred": "B", "gold": ["B"], "gold_rows": ["B", "B"]},
    ...          {"parsed": True, "correct": False, "pred": "C", "gold": ["B"], "gold_rows": ["B"]},
    ...          {"parsed": False, "correct": False, "pred": None, "gold": ["B"], "gold_rows": ["B"]}]
    >>> round(category_accuracy(items, "B"), 4), category_accuracy_dedup(items, "B")
    (0.3333, 0.5)
    """
    parsed = [it for it in items if it["parsed"]]
    if any(it.get("gold_rows") is None for it in parsed):
        return math.nan
    denominator = sum(list(it["gold_rows"]).count(letter) for it in parsed)
    numerator = sum(1 for it in parsed if it["correct"] and it["pred"] == letter)
    return numerator / denominator if denominator else math.nan


def category_accuracy_dedup(items: Sequence[dict], letter: str) -> float:
    """Per-category accuracy with each story's categories counted once (hanyi's variant, not the paper's).

    As :func:`category_accuracy`, but the denominator is the number of parsed items whose deduplicated ``gold``
    contains ``letter`` (a multi-label item counts once for each distinct label); NaN when none.

    >>> category_accuracy_dedup([{"parsed": True, "correct": True, "pred": "A", "gold": ["A", "B"]}], "A")
    1.0
    """
    parsed = [it for it in items if it["parsed"]]
    denominator = sum(1 for it in parsed if letter in it["gold"])
    numerator = sum(1 for it in parsed if it["correct"] and it["pred"] == letter)
    return numerator / denominator if denominator else math.nan


def wrong_answer_confusion(items: Sequence[dict], letters: str = "ABCDEFG") -> dict[str, dict[str, int]]:
    """Confusion matrix of wrong parsed answers (``grade_answer_confusion``): ``M[true][responded]``.

    For each wrong parsed item, every gold label ``t`` adds 1 to ``M[t][pred]``. Rows and columns cover ``letters``.

    >>> m = wrong_answer_confusion([{"parsed": True, "correct": False, "pred": "D", "gold": ["F", "G"]}], "DFG")
    >>> m["F"]["D"], m["G"]["D"], m["D"]["F"]
    (1, 1, 0)
    """
    matrix = {t: {r: 0 for r in letters} for t in letters}
    for it in items:
        if it["parsed"] and not it["correct"] and it["pred"] in letters:
            for t in dict.fromkeys(it["gold"]):
                if t in matrix:
                    matrix[t][it["pred"]] += 1
    return matrix
