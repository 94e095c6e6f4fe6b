"""CII-Bench Chinese-traditional-culture (CTC) painting descriptions scored 1-5 by an LLM judge (Zhang et al.,
arXiv 2410.13854, §4.3 and Appendix C; official ``CTC_Evaluation/CTC_Evaluation.ipynb``; Table 4).

The judge sees the human answer (title + explanation + metaphorical meaning) and the model's description, never the
image. Its answer (e.g. ``"[3]"``) is read with the official rule: the first run of digits, 0 when there is none.
Scores are averaged over every judged description (0 counts), overall and by difficulty and emotion.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

_FIRST_INT = re.compile(r"\d+")


def parse_ctc_score(text) -> int | None:
    """Official score parser: the first ``\\d+`` in the judge's answer, as an int; ``None`` when there is none.

    The official notebook then stores 0 for ``None`` (and for a failed request); :func:`ctc_scores` does the same.
    No range check is applied (the official one applies none). A digit run too long for ``int`` (over 4,300 digits
    in Python >= 3.11) is unparsed rather than an exception.

    >>> parse_ctc_score("[3]\\n\\nThe description is comprehensive ...")
    3
    >>> parse_ctc_score("no score") is None
    True
    """
    if not isinstance(text, str):
        return None
    m = _FIRST_INT.search(text)
    if m is None:
        return None
    try:
        return int(m.group(0))
    except ValueError:
        return None


def ctc_scores(values: Iterable[int | None]) -> list[int]:
    """Official per-item scores: parsed values with ``None`` (unparsed answer or failed request) as 0.

    >>> ctc_scores([3, None, 4])
    [3, 0, 4]
    """
    return [0 if v is None else int(v) for v in values]


def ctc_mean(scores: Sequence[float]) -> float:
    """Mean judge score over all items (fixed denominator, official overall = sum / 130). NaN when empty.

    >>> ctc_mean([3, 2, 4, 1])
    2.5
    """
    return sum(scores) / len(scores) if scores else math.nan


def ctc_group_mean(scores: Sequence[float], labels: Sequence[str], label: str) -> float:
    """Mean score over the items whose label (difficulty or emotion) equals ``label``; NaN when none (Table 4).

    >>> ctc_group_mean([3, 2, 4], ["简单", "困难", "简单"], "简单")
    3.5
    """
    chosen = [s for s, lab in zip(scores, labels) if lab == label]
    return ctc_mean(chosen)


def ctc_human_answer(explanation: str, metaphorical_meaning: str, title: str = "") -> str:
    """The judge's reference text: title, explanation and metaphorical meaning concatenated with no separator.

    ``title`` exists only in the repo's ``exp_CTC.json``, not in the HF dataset; it is empty when unknown.

    >>> ctc_human_answer("画中有竹。", "象征气节。", "【竹图】")
    '【竹图】画中有竹。象征气节。'
    """
    return f"{title or ''}{explanation or ''}{metaphorical_meaning or ''}"
