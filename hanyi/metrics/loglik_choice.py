"""Multiple-choice answers chosen by option likelihood (lm-eval ``multiple_choice`` tasks).

Not a paper metric. Pun Rebus Art (Table 2) and CII-Bench (text-only rows) score *generated* answers; this module
scores the ``*_mc`` variants, where a text LLM is asked the same question and each option letter is ranked by the
log-likelihood of ``<prompt><delimiter><letter>`` (the usual lm-eval ``multiple_choice`` reading, as in MMLU).
The result keys are ``acc_loglik`` so that they never pass for the papers' ``accuracy`` / ``acc``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


def choice_by_loglikelihood(loglikelihoods: Sequence, letters: Sequence[str]) -> str:
    """The letter whose continuation is most likely; the first one on ties (``numpy.argmax`` order).

    Each entry is a log-likelihood or an lm-eval ``(loglikelihood, is_greedy)`` pair, in ``letters`` order.

    >>> choice_by_loglikelihood([-3.0, -1.5, -1.5], "ABC")
    'B'
    >>> choice_by_loglikelihood([(-2.0, False), (-9.0, False)], "AB")
    'A'
    """
    values = [float(v[0] if isinstance(v, (tuple, list)) else v) for v in loglikelihoods]
    if len(values) != len(letters):
        raise ValueError(f"{len(values)} log-likelihoods for {len(letters)} options ({''.join(letters)})")
    best = max(range(len(values)), key=lambda i: (values[i], -i))
    return letters[best]


def loglik_choice_item(loglikelihoods: Sequence, letters: Sequence[str], gold: Iterable[str]) -> dict:
    """One doc's evidence: chosen letter, gold letters (any one counts), correctness and the scores.

    >>> loglik_choice_item([-4.0, -0.5], "AB", ["B"])["correct"]
    True
    """
    pred, gold = choice_by_loglikelihood(loglikelihoods, letters), list(gold)
    scores = [float(v[0] if isinstance(v, (tuple, list)) else v) for v in loglikelihoods]
    return {"pred": pred, "gold": gold, "correct": pred in gold, "loglikelihoods": scores}
