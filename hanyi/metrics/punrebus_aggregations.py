"""Pun Rebus Art aggregations: every aggregation function the Pun Rebus task YAMLs name, imported by name into
the Pun Rebus folder's ``aggregate.py`` and ``circular.py`` (Zhang et al., "Pun Rebus Art", §4.2; docs/punrebus.md).

Each one reads numbers that ``process_results`` logged per doc, so it is cheap, needs no backbone and gives the same
value whatever the order of its items, except S̄_Sim, summed in float32 in doc order as the official scorer does (the
order moves its last float32 bits, within the float tolerance of docs/dev/contributing.md). The decomposed ones (:mod:`hanyi.metrics.resample`) are registered under
their lmms-eval name, so ``hanyi report`` recomputes their intervals from a plain run's sample log. Nothing here
imports ``hanyi.tasks``.
"""

from __future__ import annotations

import math

from hanyi.logs import get_logger
from hanyi.metrics.circular import aggregations
from hanyi.metrics.elements import official_mean
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, nan_mean, share_of_finite, sum_mean

log = get_logger("hanyi.punrebus")

#: The expression judge's score range (not in the paper: its expression scores are human ratings, 1-10).
JUDGE_SCALE = (1, 10)

_NAN = float("nan")


@decomposed(fsum_mean_of_finite, light=True)
def punrebus_mean_over_parsed(items):
    """Mean instance score over the parsed answers: S̄_Abs (paper eq. 1, averaged over the parsed images as the
    official scorer does) for ``element_abs*``. Per doc its logged ``instance_score``, NaN when unparsed (left out);
    the sum is :func:`math.fsum`, so the order of the docs does not matter."""
    return [it["instance_score"] if it["parsed"] else _NAN for it in items]


def official_mean_of_finite(stats):
    """``combine`` of S̄_Sim: the official scorer's dataset mean (:func:`hanyi.metrics.elements.official_mean`: a
    float32 running sum in doc order, times the float32 reciprocal of the count) over the finite statistics. The
    order of the docs moves the last float32 bits: within the float tolerance across processes (docs/dev/contributing.md)."""
    return official_mean([v for v in stats.tolist() if math.isfinite(v)])


@decomposed(official_mean_of_finite, light=True)
def punrebus_element_sim(items):
    """S̄_Sim (paper eq. 2): mean over the parsed answers of the doc's S_Sim, which ``process_results`` computed with
    the Sentence-BERT model (logged as ``instance_score``), in float32 as the official scorer; NaN when unparsed
    (left out)."""
    return [it["instance_score"] if it["parsed"] else _NAN for it in items]


@decomposed(share_of_finite, light=True)
def punrebus_accuracy_over_parsed(items):
    """Symbolic-matching accuracy (§4.2) with the official scorer's denominator: the correct share of the parsed
    answers (an answer is correct when its letter is one of the artwork's categories)."""
    return [float(bool(it["correct"])) if it["parsed"] else _NAN for it in items]


@decomposed(sum_mean, light=True)
def punrebus_accuracy_over_all(items):
    """Accuracy over every doc, unparsed answers wrong (the ``_robust`` keys and the text-only task, §4.2/A.4)."""
    return [float(bool(it["correct"])) for it in items]


@decomposed(nan_mean, light=True)
def punrebus_judge_score(items):
    """Mean LLM-judge score (1-10) of the expression answers (ours, not the paper's: it rated them by hand) over the
    judged answers; per doc the ``verdict`` ``process_results`` logged (the judge is asked there, per doc), NaN when the
    answer was not scored (unparsed judgement or failed request: left out, never a 0). NaN when none was scored; a
    failed request is logged as an error, once, with the count."""
    failed = [it for it in items if (it["judge_error"] or "").startswith("request_failed")]
    if failed:
        log.error(
            "hanyi punrebus judge: %d of %d judge requests failed (first: %s); judge_score is the mean over the "
            "judged answers (NaN when none). Judged answers are cached: re-run with the judge reachable.",
            len(failed),
            len(items),
            failed[0]["judge_error"],
        )
    return [_NAN if it["verdict"] is None else float(it["verdict"]) for it in items]


# ---- circular evaluation (ours, not in the paper; docs/punrebus.md, "Circular evaluation") -------------------------
_CIRCULAR = aggregations("punrebus")  # decomposed and light, the same values as before (one unit: a question)
punrebus_circular_acc = _CIRCULAR["punrebus_circular_acc"]
punrebus_rotation_acc = _CIRCULAR["punrebus_rotation_acc"]
punrebus_consistency_rate = _CIRCULAR["punrebus_consistency_rate"]
punrebus_circular_acc_robust = _CIRCULAR["punrebus_circular_acc_robust"]
punrebus_rotation_acc_robust = _CIRCULAR["punrebus_rotation_acc_robust"]
punrebus_consistency_rate_robust = _CIRCULAR["punrebus_consistency_rate_robust"]
