"""UNPIE aggregations: every aggregation function the UNPIE task YAMLs name, imported by name into
``hanyi/tasks/unpie/utils.py`` (Chung et al., "Can visual language models resolve textual ambiguity with visual
cues? Let visual puns tell you!", EMNLP 2024, §3-4; docs/unpie.md).

``process_results`` scores each doc (its BERTScore/chrF decision, sentence METEOR, BLEU-4 sufficient statistics, the
judge's verdict) and logs the numbers in the per-doc item; each aggregation here combines those numbers. So they are
cheap, need no backbone or service, give the same value whatever the order of their items (2 processes == 1), and
``hanyi report`` recomputes their intervals from a plain run's sample log (``light=True``,
:mod:`hanyi.metrics.resample`). Nothing here imports ``hanyi.tasks``.

The tasks that score both splits (``unpie_grounding``, ...) use :func:`all_splits` of these: the paper's All, the
unweighted mean of the Homo and Hetero values (§4), bit for bit the value of lmms-eval's group of the two one-split
tasks (``(homo * 1 + hetero * 1) / 2``).
"""

from __future__ import annotations

import math

from hanyi.metrics import mt_overlap
from hanyi.metrics.resample import decomposed, rate


def _decisions(items: list[dict]) -> list[float]:
    """Per doc 1.0/0.0 for its logged closer-reference decision, NaN when its image did not resolve (left out)."""
    return [float(bool(it["correct"])) if it["image_ok"] else math.nan for it in items]


@decomposed(rate, light=True)
def unpie_disamb_acc_bertscore(items: list[dict]) -> list[float]:
    """Pun disambiguation accuracy (§3 Task 2, Table 5): the share of translations whose BERTScore-F1 to the gold
    translation of the depicted meaning is strictly higher than to the other meaning's,

        correct_{i,j} = 1[BERTScore(ȳ^{i,j}, y^{i,j}) > BERTScore(ȳ^{i,j}, y^{i,1-j})],

    over the docs whose image resolved. The decision is made per doc in ``process_results`` (mBERT layer 9)."""
    return _decisions(items)


@decomposed(rate, light=True)
def unpie_disamb_acc_custom_model(items: list[dict]) -> list[float]:
    """:func:`unpie_disamb_acc_bertscore` with another BERTScore model or layer (``HANYI_UNPIE_BERTSCORE_*``)."""
    return _decisions(items)


@decomposed(rate, light=True)
def unpie_disamb_acc_chrf(items: list[dict]) -> list[float]:
    """:func:`unpie_disamb_acc_bertscore`'s decision with sentence chrF (ours: when BERTScore weights are missing)."""
    return _decisions(items)


@decomposed(mt_overlap.bleu4_from_stats, light=True)
def unpie_bleu4(items: list[dict]) -> list[tuple[int, ...]]:
    """Corpus BLEU-4 ×100 (§3 Task 3, Table 6; Papineni et al. 2002) from each sentence's logged sufficient statistics
    (``bleu_stats``: lengths, n-gram matches and totals), re-summed by the combine, so a bootstrap over docs is
    Koehn's (2004) bootstrap over sentences."""
    return [tuple(it["bleu_stats"]) for it in items]


@decomposed(mt_overlap.meteor_from_scores, light=True)
def unpie_meteor(items: list[dict]) -> list[float]:
    """Mean sentence METEOR ×100 (§3 Task 3, Table 6; Banerjee and Lavie 2005) of the logged ``meteor_score`` values;
    ``meteor`` with WordNet synonyms, ``meteor_exact_stem`` without, never mixed (the items name their matcher)."""
    matchers = {it["meteor_matcher"] for it in items}
    if len(matchers) > 1:
        raise ValueError(f"unpie meteor: items scored with different matchers {sorted(matchers)}")
    return [it["meteor_score"] for it in items]


@decomposed(rate, light=True)
def unpie_mean_correct(items: list[dict]) -> list[float]:
    """Pun grounding exact-match accuracy (§3 Task 1, Table 4): the share of docs whose answer is the pun phrase."""
    return [float(bool(it["correct"])) for it in items]


def unpie_sum(items: list[float]) -> float:
    """A count (``image_unresolved``, ``caption_missing``): the sum of the per-doc 0/1 values."""
    return float(sum(items))


@decomposed(rate, light=True)
def unpie_correct(items: list[dict]) -> list[float]:
    """Reconstruction ``correct_custom_judge`` (ours; the paper's Table 6 "Correct" is GPT-4 with an unpublished
    prompt): the share of "Yes, the same pun" verdicts, from each doc's ``judge_score`` logged by ``process_results``
    (1.0 yes; 0.0 no, an unparseable verdict or an empty prediction, not sent; NaN, left out, a failed request)."""
    return [it["judge_score"] for it in items]


# --- the tasks that score both splits: All = the unweighted mean of Homo and Hetero --------------------------------

#: A doc's split, the first column of its statistic in :func:`all_splits` (in the order of the paper's tables).
SPLIT_CODES = {"homographic": 0.0, "heterographic": 1.0}


def mean_over_splits(combine):
    """``combine`` on each split's statistics (the columns after the split), then the unweighted mean over the
    splits that have a doc, Homo first, as lmms-eval's group mean (``weight_by_size: false``); NaN for no doc.

    >>> import numpy as np
    >>> mean_over_splits(rate)(np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]))
    0.75
    """

    def combine_all(stats) -> float:
        parts = [stats[stats[:, 0] == code, 1:] for code in SPLIT_CODES.values()] if len(stats) else []
        values = [float(combine(rows[:, 0] if rows.shape[1] == 1 else rows)) for rows in parts if len(rows)]
        return sum(values) / len(values) if values else math.nan

    combine_all.split_column = 0  # hanyi.metrics.intervals: a resample draws within each split, never loses one
    return combine_all


def all_splits(agg, name: str):
    """The aggregation ``name`` of a task that scores both splits, from the one-split ``agg``: each doc's statistic led
    by its split (``category``), combined by :func:`mean_over_splits`; a doc without a caption is left out."""

    def per_doc(items: list[dict]) -> list[tuple]:
        scored = [it for it in items if not it.get("caption_missing")]
        stats = agg.per_doc(scored)
        return [
            (SPLIT_CODES[it["category"]], *(s if isinstance(s, tuple) else (s,)))
            for it, s in zip(scored, stats, strict=True)
        ]

    return decomposed(mean_over_splits(agg.combine), light=agg.light, name=name)(per_doc)


@decomposed(rate, light=True)
def unpie_word_recovered(items: list[dict]) -> list[float]:
    """Reconstruction ``pun_word_recovered`` (ours, the offline stand-in for Table 6 Correct) from the logged items:
    the share of predictions that contain the pun word (a one-split task averages the logged floats, ``mean``)."""
    return [it["pun_word_recovered"] for it in items]


unpie_mean_correct_all = all_splits(unpie_mean_correct, "unpie_mean_correct_all")
unpie_disamb_acc_all = all_splits(unpie_disamb_acc_bertscore, "unpie_disamb_acc_all")  # any scorer's decisions
unpie_bleu4_all = all_splits(unpie_bleu4, "unpie_bleu4_all")
unpie_meteor_all = all_splits(unpie_meteor, "unpie_meteor_all")
unpie_word_recovered_all = all_splits(unpie_word_recovered, "unpie_word_recovered_all")
unpie_correct_all = all_splits(unpie_correct, "unpie_correct_all")
