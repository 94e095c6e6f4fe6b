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
from hanyi.metrics.resample import BY_NAME, decomposed, mean_scale, rate


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

    combine_all.split_column = 0  # a resampled interval draws within each split, never loses one
    combine_all.inner = combine  # the closed-form standard error: each split's own
    return combine_all


#: The field :func:`all_splits` writes into each counted item of a both-split task: the score the task's
#: ``score_key`` names, so that lmms-eval's ``Stderr_CLT`` and ``Stderr_Clustered`` describe the value shown.
ALL_SPLITS_SCORE = "all_splits_score"


def all_splits_scores(splits, stats, scale: float) -> list[float | None]:
    """Per doc, a score whose mean is the mean over k splits ``V = (V_1 + ... + V_k) / k`` and whose ``sd / sqrt(N)``
    (lmms-eval's CLT standard error) is that of V, ``sqrt(SE_1^2 + ... + SE_k^2) / k`` with ``SE_s = sd_s / sqrt(n_s)``
    (ddof 1): ``V + c_s * N / (k * n_s) * (x_i - V_s)``, where ``x_i`` is the doc's statistic x ``scale`` (the
    value's scale), ``n_s`` its split's counted docs, ``N`` all counted docs and ``c_s = sqrt((N-1) n_s / (N (n_s-1)))``
    (1 for a split of one doc). Within-cluster terms (lmms-eval's ``Stderr_Clustered``) are each split's, weighted
    as the split's value in V. None for a doc the value does not count (a NaN statistic: left out).

    >>> import numpy as np
    >>> scores = all_splits_scores([0, 0, 0, 1, 1], np.array([1.0, 1.0, 0.0, 0.0, 1.0]), 1.0)
    >>> round(float(np.mean(scores)), 6), round(float(np.std(scores, ddof=1) / np.sqrt(5)), 6)
    (0.583333, 0.300463)
    >>> round(float(np.sqrt((1 / 3) / 3 + (1 / 2) / 2) / 2), 6)  # (2/3 + 1/2) / 2; sd_s^2 / n_s, ddof 1
    0.300463
    """
    import numpy as np

    x = np.asarray(stats, dtype=float) * scale
    codes = list(splits)
    counted = [code for code, v in zip(codes, x.tolist(), strict=True) if not math.isnan(v)]
    n_all, present = len(counted), list(dict.fromkeys(counted))
    means = {
        c: float(np.mean([v for d, v in zip(codes, x.tolist(), strict=True) if d == c and not math.isnan(v)]))
        for c in present
    }
    value = sum(means.values()) / len(present) if present else math.nan
    sizes = {c: counted.count(c) for c in present}
    out: list[float | None] = []
    for code, v in zip(codes, x.tolist(), strict=True):
        if math.isnan(v):
            out.append(None)
            continue
        n = sizes[code]
        c = math.sqrt((n_all - 1) * n / (n_all * (n - 1))) if n > 1 else 1.0
        out.append(value + c * n_all / (len(present) * n) * (v - means[code]))
    return out


def all_splits(agg, name: str):
    """The aggregation ``name`` of a task that scores both splits, from the one-split ``agg``: each doc's statistic led
    by its split (``category``), combined by :func:`mean_over_splits`; a doc without a caption is left out.

    Where ``agg`` is a mean of per-doc scores (:func:`hanyi.metrics.resample.mean_scale`), the aggregation also writes
    each counted item's :data:`ALL_SPLITS_SCORE` (:func:`all_splits_scores`), which the both-split YAMLs name as
    their ``score_key``: lmms-eval computes ``Stderr_CLT`` / ``Stderr_Clustered`` after aggregating, from the same
    items, so both then describe the value shown (the mean of the splits' values), not a mean of the pooled docs."""

    def per_doc(items: list[dict]) -> list[tuple]:
        scored = [it for it in items if not it.get("caption_missing")]
        stats = agg.per_doc(scored)
        return [
            (SPLIT_CODES[it["category"]], *(s if isinstance(s, tuple) else (s,)))
            for it, s in zip(scored, stats, strict=True)
        ]

    combine = mean_over_splits(agg.combine)
    value_of = decomposed(combine, light=agg.light, name=name)(per_doc)
    scale = mean_scale(agg.combine)
    if scale is None:  # corpus BLEU-4: no per-doc score has it as its mean (lmms-eval prints N/A)
        return value_of

    def aggregate(items, *args, **kwargs):
        value = value_of(items)
        if math.isfinite(value):
            scored = [it for it in items if not it.get("caption_missing")]
            stats = [s[1] for s in per_doc(scored)]
            splits = [it["category"] for it in scored]
            for it, score in zip(scored, all_splits_scores(splits, stats, scale), strict=True):
                if score is not None:
                    it[ALL_SPLITS_SCORE] = score
        return value

    aggregate.__name__ = aggregate.__qualname__ = name
    aggregate.__doc__ = value_of.__doc__
    aggregate.per_doc, aggregate.combine, aggregate.light = per_doc, combine, agg.light
    BY_NAME[name] = aggregate
    return aggregate


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
