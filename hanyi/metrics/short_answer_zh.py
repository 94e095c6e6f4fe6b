"""Chinese short-answer VQA scoring: the official CVLUE rule, ported faithfully, plus our answer cleaning.

Paper: Wang et al., "CVLUE: A New Benchmark Dataset for Chinese Vision-Language Understanding Evaluation" (AAAI
2025), Table 2 ("Acc"). The rule is the one of the official scorer ``evaluation/eval_vqa.py``
(``eval_vqa_json(input_path, strict_match=False)``, repo WangYuxuan93/CVLUE @ 47e34aa), spec §2.2:

1. every item counts in the denominator; a missing (``None``) prediction is wrong;
2. the digit runs of the *raw* prediction are collected;
3. the prediction is normalised (lowercase, strip whitespace once, strip ASCII punctuation, strip ``。``);
4. a normalised prediction ending in ``？`` or ``吗`` is wrong (an echoed question);
5. match if the normalised prediction equals the normalised gold, or if the raw gold is one of the digit runs;
6. unless ``strict``: yes/no synonym sets and (for yes/no golds) substring containment can turn a miss into a match.

:func:`clean_answer` is hanyi's pre-processing for the ``*_robust`` metric only (first line, answer prefix removed).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

#: Word lists of the official scorer (exact strings, spec §2.2).
NEGATIVES = ("否", "不是", "没有", "不一样", "不一致", "不相同", "不")
YES = ("是", "是的", "有", "有的", "一样", "一致", "相同")
NO = ("否", "不是", "没有", "不一样", "不一致", "不相同")

_DIGITS = re.compile(r"\d+")
_ENGLISH_ONLY = re.compile(r"^[a-zA-Z\s]+$")
_ANSWER_PREFIX = re.compile(r"^\s*(?:答案|答|回答|answer)\s*[:：]\s*", re.IGNORECASE)


def normalise_official(text: str) -> str:
    """The official normalisation: lowercase, strip whitespace, strip ASCII punctuation, strip ``。`` (in that order).

    >>> normalise_official(" Yes. ")
    'yes'
    >>> normalise_official("是的。")
    '是的'
    >>> normalise_official("右边！")
    '右边！'
    """
    return text.lower().strip().strip(string.punctuation).strip("。")


def vqa_correct_official(pred: str | None, gold: str, strict: bool = False) -> bool:
    """One item of the official CVLUE VQA rule (spec §2.2); ``strict`` is the script's ``strict_match``.

    Args:
        pred: the submitted answer (``None`` = missing, always wrong).
        gold: the item's gold ``answer``, raw.
        strict: disable the yes/no synonym and substring rules.

    Returns:
        ``True`` when the official scorer counts the item as matched.

    >>> vqa_correct_official("2个", "2"), vqa_correct_official("12个", "2"), vqa_correct_official("2和3", "3")
    (True, False, True)
    >>> vqa_correct_official("是的", "是"), vqa_correct_official("是的", "是", strict=True)
    (True, False)
    >>> vqa_correct_official("是不是", "是"), vqa_correct_official("灯是关着的吗", "是")
    (False, False)
    >>> vqa_correct_official("右边", "右手边")
    False
    """
    if pred is None:
        return False
    numbers = _DIGITS.findall(pred)
    norm = normalise_official(pred)
    if norm.endswith("？") or norm.endswith("吗"):
        return False
    match = norm == normalise_official(gold) or gold in numbers
    if not strict and not match:
        if gold in YES and norm in YES:
            match = True
        elif gold in NO and norm in NO:
            match = True
        elif gold in YES and gold in norm and not any(neg in norm for neg in NEGATIVES):
            match = True
        elif gold in NO and gold in norm:
            match = True
    return match


def vqa_accuracy_official(preds: Iterable[str | None], golds: Iterable[str], strict: bool = False) -> dict:
    """Official accuracy over paired lists: ``{"matched", "total", "accuracy"}`` (accuracy is a fraction).

    >>> vqa_accuracy_official(["是的", "2个", None], ["是", "2", "3"])
    {'matched': 2, 'total': 3, 'accuracy': 0.6666666666666666}
    """
    matched = total = 0
    for pred, gold in zip(preds, golds, strict=True):
        total += 1
        matched += vqa_correct_official(pred, gold, strict=strict)
    return {"matched": matched, "total": total, "accuracy": matched / total if total else 0.0}


def is_english_only(pred: str | None) -> bool:
    """The official ``is_english_string`` diagnostic: letters and whitespace only (an English answer).

    >>> is_english_only("two"), is_english_only("两个"), is_english_only("")
    (True, False, False)
    """
    return bool(pred) and _ENGLISH_ONLY.match(pred) is not None


def clean_answer(response: str | None) -> str:
    """Our pre-processing for the robust metric: first non-empty line, leading ``答案：``/``Answer:`` removed.

    Not part of the official rule (which scores the submitted string as it is).

    >>> clean_answer("答案：是的\\n因为灯没亮")
    '是的'
    >>> clean_answer("\\n Answer: 2")
    '2'
    >>> clean_answer(None)
    ''
    """
    if not response:
        return ""
    for line in str(response).splitlines():
        if line.strip():
            return _ANSWER_PREFIX.sub("", line, count=1).strip()
    return ""
