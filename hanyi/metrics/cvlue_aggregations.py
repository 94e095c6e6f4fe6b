"""CVLUE aggregations named in the task YAMLs (``hanyi/tasks/cvlue/aggregate.py`` imports them): means and ITR
re-ranking. The formulas (docs/cvlue.md, "Metrics"; the official scorers): VQA Acc = (1/|Q|) Σ correct,
VG mIoU = (1/|Q|) Σ IoU and Acc@0.5 = (1/|Q|) Σ 1[IoU > 0.5], VD R@k / MRR / MeanRank over questions, ITR
R@k = (1/|T|) Σ_t 1[rank_t(gold) <= k] over queries.

An item is one doc's record logged by ``process_results`` (``v`` plus ``category``/``culture_group``), or for ITR
one (query, candidate) pair with its logged VLM ``score``; ITR aggregations first re-rank each query's shortlist and
score it per query (:func:`hanyi.metrics.ranking.itr_queries`). Every aggregation is decomposed
(:mod:`hanyi.metrics.resample`) and light: it reads nothing but the logged items, so ``hanyi report`` recomputes
its per-unit statistics (a doc, or an ITR query built from its logged pairs) from the sample log alone.

Every aggregation returns the same value whatever the order of its items (lmms-eval hands them rank by rank): sums
of floats are exactly rounded (:func:`math.fsum`), ITR queries are taken in sorted order, counts are integers. The
culture-group and semantic-field breakdowns are computed by ``hanyi report`` from the sample log
(``hanyi.metrics.cvlue_breakdowns``).
"""

from hanyi.metrics import ranking
from hanyi.metrics.ranking import itr_queries
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, sum_mean


@decomposed(fsum_mean_of_finite, light=True)
def cvlue_mean(items):
    """Mean of the items' ``v`` (an exactly rounded sum); per doc: its ``v`` (hanyi.metrics.resample, for the 95 %
    interval). Every ``v`` is finite (a 0/1 hit, an IoU, a reciprocal rank or a rank)."""
    return [i["v"] for i in items]


def _recall_at(k):
    @decomposed(sum_mean, light=True, name=f"cvlue_itr_r{k}")
    def per_query(items):
        return [ranking.hit_at(q["rank"], k) for q in itr_queries(items)]

    per_query.__doc__ = f"R@{k} over ITR queries; per unit: the query's hit (hanyi.metrics.ranking.hit_at)."
    return per_query


cvlue_itr_r1 = _recall_at(1)
cvlue_itr_r5 = _recall_at(5)
cvlue_itr_r10 = _recall_at(10)


@decomposed(sum_mean, light=True)
def cvlue_itr_stage1_ceiling(items):
    """Share of ITR queries whose gold is in the stage-1 shortlist; per unit: the query's 0/1."""
    return [q["in_shortlist"] for q in itr_queries(items)]


def _ratio_of_sums(stats):
    """``combine`` for (numerator, denominator) rows: their sums' ratio, 0.0 for none (exact for integer counts)."""
    return float(stats[:, 0].sum()) / float(stats[:, 1].sum()) if len(stats) else 0.0


@decomposed(_ratio_of_sums, light=True)
def cvlue_itr_parse_failure_rate(items):
    """Share of (query, candidate) pairs whose score did not parse; per unit (a query): (failures, pairs)."""
    queries = {}
    for it in items:
        queries.setdefault(it["query"], []).append(it["score"] is None)
    return [(sum(v), len(v)) for _, v in sorted(queries.items())]
