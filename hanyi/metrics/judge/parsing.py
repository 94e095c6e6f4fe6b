"""Defensive parsers for judge answers: an integer score on a closed scale, and a yes/no verdict.

Both normalise the text first (NFKC, so full-width digits and colons become ASCII; lower case; markdown emphasis
removed), look for the most explicit form first, and return ``None`` rather than guess when the answer is missing,
out of range, fractional, or ambiguous (two different explicit verdicts). They never raise.
"""

from __future__ import annotations

import re
import unicodedata

# a number of at most 9 digits (longer digit runs are not numbers we parse); a sign only when it is not a hyphen
_NUM = r"(?<![0-9.])((?:(?<![a-z0-9])-)?[0-9]{1,9}(?:\.[0-9]+)?)(?![0-9])"
_CN_DIGITS = dict(zip("零〇一二两三四五六七八九十", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10)))
_NUM_OR_CN = rf"(?:{_NUM}|([{''.join(_CN_DIGITS)}])(?![{''.join(_CN_DIGITS)}]))"
_SCORE_LABEL = r"(?:score|rating|grade|评分|得分|分数|打分|分值)"
_FILLER = r"(?:(?:is|of|would|be|should|will|i|give|a|为|是|给|应为|应该是)\s*[:：=]?\s*)"
_LABELED_SCORE = re.compile(rf"{_SCORE_LABEL}\s*[:：=]?\s*{_FILLER}{{0,4}}{_NUM_OR_CN}")
_POINTS_SUFFIX = re.compile(rf"{_NUM}\s*分(?!制)")  # "4分" (4 points), not "5分制" (5-point scale)
_DOUBLE_BRACKET = re.compile(rf"\[\[\s*{_NUM}\s*\]\]")
_ANY_NUMBER = re.compile(_NUM)
_MARKDOWN = re.compile(r"[*_`#]")
_RANGE_SEP = r"\s*(?:-|–|—|to|~|至|到)\s*"


def _normalize(text: str) -> str:
    return _MARKDOWN.sub(" ", unicodedata.normalize("NFKC", text).lower())


def _single_value(values: list[float]) -> float | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _numbers(matches: list[tuple[str, ...]]) -> list[float]:
    out = []
    for groups in matches:
        digits, cjk = (groups + ("",))[:2]
        out.append(float(digits) if digits else float(_CN_DIGITS[cjk]))
    return out


def parse_integer_score(text: str, low: int, high: int) -> int | None:
    """Extract an integer score in ``[low, high]`` from a judge's answer, or ``None``.

    Forms are tried from most to least explicit; the first form present decides, and it must give one value:

    1. MT-Bench style ``[[4]]``;
    2. a labelled score: ``Score: 4``, ``rating of 4``, ``评分：4``, ``得分为四``, or ``4分``;
    3. a fraction of the scale: ``4/5``, ``4 out of 5``;
    4. otherwise the only number in the text, after removing mentions of the scale itself (``1-5``, ``1 to 5``).

    The result is ``None`` when the chosen form holds two different values, a fraction (``4.5``), or a value
    outside ``[low, high]``; it is never clamped or defaulted.

    Args:
        text: the judge's raw answer.
        low: smallest valid score.
        high: largest valid score.

    Returns:
        The score as ``int``, or ``None``.

    >>> parse_integer_score("Score: 4/5", 1, 5)
    4
    >>> parse_integer_score("**Rating:** [[3]]", 1, 5)
    3
    >>> parse_integer_score("评分：５分", 1, 5)
    5
    >>> parse_integer_score("On a scale of 1-5, I would give it a 2.", 1, 5)
    2
    >>> parse_integer_score("Score: 7", 1, 5) is None
    True
    >>> parse_integer_score("Score: 4.5", 1, 5) is None
    True
    >>> parse_integer_score("Score: 3. On reflection, score: 4.", 1, 5) is None
    True
    """
    if not isinstance(text, str) or not isinstance(low, int) or not isinstance(high, int) or low > high:
        return None
    t = _normalize(text)
    t = re.sub(rf"\(?(?<![0-9]){low}{_RANGE_SEP}{high}(?![0-9])\)?", " ", t)
    fraction = re.compile(rf"{_NUM}\s*(?:/|out of|of)\s*{high}(?![0-9])")
    tiers = ((_DOUBLE_BRACKET,), (_LABELED_SCORE, _POINTS_SUFFIX), (fraction,), (_ANY_NUMBER,))
    for patterns in tiers:
        matches = [m.groups() for pattern in patterns for m in pattern.finditer(t)]
        if not matches:
            continue
        value = _single_value(_numbers(matches))
        if value is None or not value.is_integer() or not low <= value <= high:
            return None
        return int(value)
    return None


_VERDICT_LABEL = r"(?:final answer|answer|verdict|judgement|judgment|decision|答案|判断|结论|回答)"
_YES_NO_WORDS = {"yes": True, "true": True, "no": False, "false": False, "是": True, "对": True, "否": False,
                 "不是": False, "不对": False}  # fmt: skip
_LEADING_EN = re.compile(r"^(yes|no|true|false)\b")
_LEADING_ZH = re.compile(r"^(?:(不是|不对|否)|(是|对)(?=$|[的。，,.!！;；:：\s]))")
_LABELED_VERDICT = re.compile(
    rf"{_VERDICT_LABEL}\s*(?:is)?\s*[:：=]?\s*(yes|no|true|false|不是|不对|否|是|对)(?![a-z])"
)
_BARE_YES_NO = re.compile(r"\b(yes|no)\b")
_LEADING_NOISE = re.compile(r"^[\s\"'“”‘’「」『』\(\)\[\]（）【】>.\-:：]+")


def parse_yes_no(text: str) -> bool | None:
    """Extract a yes/no verdict from a judge's answer, or ``None``.

    Tried in order, the first form present decides: a leading ``Yes``/``No``/``True``/``False``/``是``/``否``/
    ``不是`` (optionally after ``Answer:``); a labelled verdict anywhere (``Verdict: no``, ``答案：是``), all of which
    must agree; otherwise the words *yes* and *no*, of which exactly one may occur.

    Args:
        text: the judge's raw answer.

    Returns:
        ``True`` for yes, ``False`` for no, ``None`` when absent or ambiguous.

    >>> parse_yes_no("**Yes**, both readings rely on the same homophone.")
    True
    >>> parse_yes_no("不是同一个双关。")
    False
    >>> parse_yes_no("The two puns differ. Verdict: No")
    False
    >>> parse_yes_no("Yesterday I said no, today yes.") is None
    True
    """
    if not isinstance(text, str):
        return None
    t = _LEADING_NOISE.sub("", _normalize(text))
    t = re.sub(rf"^{_VERDICT_LABEL}\s*[:：=]?\s*", "", t)
    m = _LEADING_EN.match(t) or _LEADING_ZH.match(t)
    if m:
        return _YES_NO_WORDS[next(g for g in m.groups() if g)]
    for found in (
        [m.group(1) for m in _LABELED_VERDICT.finditer(t)],
        [m.group(1) for m in _BARE_YES_NO.finditer(t)],
    ):
        verdicts = {_YES_NO_WORDS[word] for word in found}
        if verdicts:
            return verdicts.pop() if len(verdicts) == 1 else None
    return None
