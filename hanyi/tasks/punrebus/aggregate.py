"""Pun Rebus Art aggregation hooks named in the task YAMLs (``aggregate.<name>``): accuracies over parsed / all docs,
the element scores, the expression judge. Items come from ``utils``' ``process_results``. Each returns the same value
whatever the order of its items (sums of 0/1 values or :func:`math.fsum`). The per-category accuracies and the
confusion rows are computed by ``hanyi report`` from the sample log (hanyi/metrics/punrebus_breakdowns.py). See
docs/punrebus.md."""

import logging

from hanyi.metrics import elements as el
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, share_of_finite, sum_mean
from hanyi.tasks.punrebus.constants import JUDGE_SCALE

log = logging.getLogger(__name__)


def punrebus_judge_score(items):
    from hanyi.metrics.judge import JudgeConfig, get_judge_client, parse_integer_score, summarize_judgements

    client = get_judge_client(JudgeConfig.from_env(None))
    results = client.judge_many([it["prompt"] for it in items], lambda t: parse_integer_score(t, *JUDGE_SCALE))
    summary = summarize_judgements(results)
    log.info("hanyi punrebus judge: %s", summary)
    return summary["mean"]


# Decomposed aggregations (hanyi.metrics.resample): one statistic per doc, NaN for a doc left out of the mean
# (unparsed), combined exactly as before (mean_or_zero = fsum / n; accuracy_over_parsed / _all = sum / n).
_NAN = float("nan")


@decomposed(fsum_mean_of_finite, light=True)
def punrebus_mean_over_parsed(items):
    return [it["instance_score"] if it["parsed"] else _NAN for it in items]


@decomposed(fsum_mean_of_finite)
def punrebus_element_sim(items):
    parsed = [(it["gold"], it["pred"]) for it in items if it["parsed"]]
    scores = iter(el.element_sim_scores(parsed) if parsed else [])  # one SBERT batch, as before
    return [next(scores) if it["parsed"] else _NAN for it in items]


@decomposed(share_of_finite, light=True)
def punrebus_accuracy_over_parsed(items):
    return [float(bool(it["correct"])) if it["parsed"] else _NAN for it in items]


@decomposed(sum_mean, light=True)
def punrebus_accuracy_over_all(items):
    return [float(bool(it["correct"])) for it in items]
