"""CII-Bench aggregations named in the task YAMLs (the CII folder's ``utils.py``,
``circular.py`` and ``ctc.py`` import them by name).

Every one is decomposed (:mod:`hanyi.metrics.resample`) and light: its per-unit statistics read nothing but the item
``process_results`` logged for each doc, so ``hanyi report`` recomputes them, and their interval, from the sample log
alone. Accuracies and rates are fractions in [0, 1] (docs/reading-results.md, "Units"). Every aggregation counts or
sums integers, so the order of the items (lmms-eval hands them rank by rank) cannot change its value.

* ``cii_acc``, ``cii_acc_robust``, ``cii_miss_rate``: the official ``eval_cii.py`` accuracy = #correct / #questions and
  miss rate = #(predict is None) / N, blank answers no miss (spec §3.7-3.8), as the script's percentage / 100.
* ``cii_acc_domain_*``, ``cii_acc_emotion_*``: Table 1's columns, the accuracy over the questions carrying the label
  (``eval_cii_sub.py``, spec §3.9); the units are those questions.
* ``cii_circular_*``: CircularEval (MMBench §3.2, :mod:`hanyi.metrics.circular`); a unit is a question with all its
  rotations.
* ``cii_ctc_*``: Table 4's CTC score, the mean judge score 1-5 over the described paintings (0 for an unparsed
  judgement, official ``CTC_Evaluation.ipynb``; spec §4), overall and by difficulty and emotion; the judge scores
  each description in ``process_results`` and the score is logged with it.
"""

from __future__ import annotations

from hanyi.data.cii_categories import DIFFICULTIES, EMOTIONS, TABLE1_METRICS
from hanyi.logs import get_logger
from hanyi.metrics.circular import aggregations
from hanyi.metrics.resample import decomposed, nan_mean, percent_share

log = get_logger("hanyi.cii")

#: CTC judge metric name -> (field, label); ``ctc_score`` is the overall mean (Table 4).
CTC_METRICS = {
    "ctc_score": (None, None),
    **{f"ctc_score_difficulty_{k}": ("difficulty", v) for k, v in DIFFICULTIES},
    **{f"ctc_score_emotion_{k}": ("emotion", v) for k, v in EMOTIONS},
}


# ---- multiple choice ------------------------------------------------------------------------------------------------


@decomposed(percent_share, light=True)
def cii_acc(items):
    """Accuracy; per doc: 0/1 correct (the paper's extractor)."""
    return [bool(it["correct"]) for it in items]


@decomposed(percent_share, light=True)
def cii_acc_robust(items):
    """Accuracy with the tolerant extractor (not the paper's); per doc: 0/1 correct."""
    return [bool(it["correct_robust"]) for it in items]


@decomposed(percent_share, light=True)
def cii_miss_rate(items):
    """Share of non-blank answers the paper's extractor found no option in, over all docs; per doc: 0/1 missed."""
    return [bool(it["miss"]) and not it.get("blank") for it in items]


def _column(name: str):
    """Table 1 column ``name``: ``100.0 * k / n / 100`` over the docs whose ``field`` is the label (NaN for none)."""
    field, label = TABLE1_METRICS[name]

    @decomposed(percent_share, light=True, name=f"cii_{name}")
    def column(items):
        return [bool(it["correct"]) for it in items if it[field] == label]

    column.__doc__ = f"Table 1 column {name}: accuracy over the docs whose {field} is {label}; per unit: 0/1 correct."
    return column


cii_acc_domain_life = _column("acc_domain_life")
cii_acc_domain_art = _column("acc_domain_art")
cii_acc_domain_society = _column("acc_domain_society")
cii_acc_domain_politics = _column("acc_domain_politics")
cii_acc_domain_environment = _column("acc_domain_environment")
cii_acc_domain_ctc = _column("acc_domain_ctc")
cii_acc_emotion_positive = _column("acc_emotion_positive")
cii_acc_emotion_negative = _column("acc_emotion_negative")
cii_acc_emotion_neutral = _column("acc_emotion_neutral")


# ---- circular evaluation --------------------------------------------------------------------------------------------


_CIRCULAR = aggregations("cii")
cii_circular_acc = _CIRCULAR["cii_circular_acc"]
cii_circular_acc_robust = _CIRCULAR["cii_circular_acc_robust"]
cii_rotation_acc = _CIRCULAR["cii_rotation_acc"]
cii_rotation_acc_robust = _CIRCULAR["cii_rotation_acc_robust"]
cii_consistency_rate = _CIRCULAR["cii_consistency_rate"]
cii_consistency_rate_robust = _CIRCULAR["cii_consistency_rate_robust"]


# ---- CTC painting descriptions (LLM judge) --------------------------------------------------------------------------


def _ctc_scores(items, field: str | None = None, label: str | None = None, warn: bool = False) -> list:
    """The official per-item scores (``score``: the judge's first integer, 0 when unparsed) of the items whose
    ``field`` is ``label`` (all of them for ``field`` None); every one NaN when any judge request of the run failed,
    so every ``ctc_score*`` is NaN: a failed request is no judgement, never a silent 0 (docs/judge.md)."""
    failed = [it for it in items if it["judge_request_failed"]]
    if warn and failed:
        log.error(
            "hanyi cii_ctc: %d of %d judge requests failed (first: %s); ctc_score and its breakdowns are NaN, never a "
            "silent 0 (the official notebook would count each failure as 0). Judged answers are cached: re-run with "
            "the judge reachable to fill in the rest.",
            len(failed),
            len(items),
            failed[0]["judge_error"],
        )
    return [float("nan") if failed else float(it["score"]) for it in items if field is None or it[field] == label]


@decomposed(nan_mean, light=True)
def cii_ctc_score(items):
    """Table 4's CTC score: ``sum(scores) / len(scores)`` over the judged descriptions; per doc: its score."""
    return _ctc_scores(items, warn=True)


def _ctc_group(name: str, field: str, label: str):
    """CTC score over the descriptions whose ``field`` is ``label`` (Table 4's columns); NaN for none."""

    @decomposed(nan_mean, light=True, name=f"cii_{name}")
    def group(items):
        return _ctc_scores(items, field, label)

    group.__doc__ = f"CTC score over the descriptions whose {field} is {label}; per doc: its score."
    return group


cii_ctc_score_difficulty_easy = _ctc_group("ctc_score_difficulty_easy", *CTC_METRICS["ctc_score_difficulty_easy"])
cii_ctc_score_difficulty_medium = _ctc_group("ctc_score_difficulty_medium", *CTC_METRICS["ctc_score_difficulty_medium"])
cii_ctc_score_difficulty_hard = _ctc_group("ctc_score_difficulty_hard", *CTC_METRICS["ctc_score_difficulty_hard"])
cii_ctc_score_emotion_positive = _ctc_group("ctc_score_emotion_positive", *CTC_METRICS["ctc_score_emotion_positive"])
cii_ctc_score_emotion_negative = _ctc_group("ctc_score_emotion_negative", *CTC_METRICS["ctc_score_emotion_negative"])
cii_ctc_score_emotion_neutral = _ctc_group("ctc_score_emotion_neutral", *CTC_METRICS["ctc_score_emotion_neutral"])


def total(stats) -> float:
    """``combine``: the sum of the statistics (a count of 0/1 ones), 0.0 for none."""
    return float(sum(stats.tolist()))


@decomposed(total, light=True)
def cii_ctc_judge_failures(items):
    """Judgements that gave no score (unparsed answer or failed request); per doc: 0/1."""
    return [it["judge_error"] is not None for it in items]
