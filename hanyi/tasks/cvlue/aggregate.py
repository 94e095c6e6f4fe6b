"""CVLUE aggregation hooks named in the task YAMLs: means, culture groups, semantic fields, ITR re-ranking.

An item is one doc's record from ``utils`` (``v`` plus ``category``/``culture_group``), or for ITR one (query,
candidate) pair; ITR aggregations first re-rank each query's shortlist and score R@1 per query (:func:`units`).
"""

from hanyi.data.cvlue_categories import semantic_field
from hanyi.metrics import ranking
from hanyi.metrics.breakdown import group_scores, subset_mean
from hanyi.metrics.resample import decomposed, sum_mean


def itr_queries(items):
    """One re-ranked row per ITR query (sorted by query): ``rank``, ``in_shortlist``, ``category``, ``culture_group``.

    A query the stage-1 shortlist does not cover has only a placeholder row (``stage1_rank`` < 1, see
    ``hanyi.data.cvlue.itr_rerank_rows``): it has no candidate, so ``rank`` is None (a miss) and ``in_shortlist`` is
    False, and it stays in every denominator.
    """
    queries = {}
    for it in items:
        queries.setdefault(it["query"], []).append(it)
    return [
        {
            **ranking.rerank_query([r for r in rows if r["stage1_rank"] >= 1]),
            "category": rows[0]["category"],
            "culture_group": rows[0]["culture_group"],
        }
        for _, rows in sorted(queries.items())
    ]


def units(items):
    """Scored units: the items themselves, or for ITR pairs one unit per query with ``v`` = R@1 hit."""
    if not items or "query" not in items[0]:
        return items
    return [
        {"v": q["rank"] == 1, "category": q["category"], "culture_group": q["culture_group"]}
        for q in itr_queries(items)
    ]


@decomposed(sum_mean, light=True)
def cvlue_mean(items):
    """Mean of the items' ``v``; per doc: its ``v`` (hanyi.metrics.resample, for the 95 % interval)."""
    return [i["v"] for i in items]


def _group(items, group, kind):
    scores = group_scores(units(items), "v", "culture_group")
    return scores[group][kind] if group in scores else None  # no item in this group: N/A (JSON null), not 0


def cvlue_non_wordnet(items):
    return _group(items, "non_wordnet", "micro")


def cvlue_moderate(items):
    return _group(items, "moderate", "micro")


def cvlue_coco(items):
    return _group(items, "coco", "micro")


def cvlue_non_wordnet_macro(items):
    return _group(items, "non_wordnet", "macro")


def cvlue_moderate_macro(items):
    return _group(items, "moderate", "macro")


def cvlue_coco_macro(items):
    return _group(items, "coco", "macro")


def _field(name):
    def aggregate(items):
        rows = [{**u, "field": semantic_field(u["category"])} for u in units(items)]
        value = subset_mean(rows, "v", "field", name)
        return None if value != value else value  # NaN (no item in the field) -> N/A (JSON null), not 0

    aggregate.__name__ = f"cvlue_field_{name}"
    aggregate.__doc__ = f"Mean over the items of Table 3's semantic field {name!r} (None when it has none)."
    return aggregate


cvlue_field_animal = _field("animal")
cvlue_field_food = _field("food")
cvlue_field_beverages = _field("beverages")
cvlue_field_clothing = _field("clothing")
cvlue_field_plant = _field("plant")
cvlue_field_fruit = _field("fruit")
cvlue_field_vegetable = _field("vegetable")
cvlue_field_agriculture = _field("agriculture")
cvlue_field_tool = _field("tool")
cvlue_field_furniture = _field("furniture")
cvlue_field_sport = _field("sport")
cvlue_field_celebrations = _field("celebrations")
cvlue_field_education = _field("education")
cvlue_field_instruments = _field("instruments")
cvlue_field_arts = _field("arts")


def _recall_at(k):
    @decomposed(sum_mean, light=True)
    def per_query(items):
        return [ranking.hit_at(q["rank"], k) for q in itr_queries(items)]

    per_query.__name__ = per_query.__qualname__ = f"cvlue_itr_r{k}"
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
