"""CVLUE breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

Each task logs, per doc, the item of its headline metric (VQA ``accuracy``, VG ``miou``, VD ``r1``; ITR ``r1``, one
item per (query, candidate) pair) with its value ``v`` (ITR: the pair's ``score``), ``category`` and
``culture_group``. From these the report computes, under the names the tasks emitted before issue 26:

* ``<metric>_<group>``: the mean over the units of culture group ``non_wordnet``, ``moderate`` or ``coco`` (micro);
* ``<metric>_<group>_macro`` (VQA and VG only): the mean of the group's per-category means;
* ``<metric>_field_<field>``: the mean over the units of one of Table 3's 15 semantic fields.

A group or field without units is ``None`` (N/A), not a zero. A unit is one doc, or for ITR one query after its
shortlist is re-ranked (:func:`hanyi.metrics.ranking.itr_queries`). The 92-category table is ``hanyi.report.cvlue_breakdown``.
"""

from __future__ import annotations

from hanyi.data.cvlue_categories import CULTURE_GROUPS, FIELDS, semantic_field
from hanyi.metrics.breakdown import group_scores, subset_mean
from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.ranking import itr_queries


def units(items: list) -> list:
    """Scored units: the items themselves, or for ITR pairs one unit per query with ``v`` = its R@1 hit."""
    if not items or "query" not in items[0]:
        return items
    return [
        {"v": q["rank"] == 1, "category": q["category"], "culture_group": q["culture_group"]}
        for q in itr_queries(items)
    ]


def groups_and_fields(metric: str, items: list, macro: bool) -> dict:
    """``{<metric>_<group>[_macro], <metric>_field_<field>: mean or None}`` over the units of ``items``."""
    scored = units(items)
    scores = group_scores(scored, "v", "culture_group")
    out = {f"{metric}_{g}": scores[g]["micro"] if g in scores else None for g in CULTURE_GROUPS}
    if macro:
        out |= {f"{metric}_{g}_macro": scores[g]["macro"] if g in scores else None for g in CULTURE_GROUPS}
    rows = [{**u, "field": semantic_field(u["category"])} for u in scored]
    for field in FIELDS:
        value = subset_mean(rows, "v", "field", field)
        out[f"{metric}_field_{field}"] = None if value != value else value  # NaN (no unit) -> None
    return out


@breakdown(r"cvlue_vqa(_val|_lite)?", "accuracy")
def vqa_groups(items: list) -> dict:
    return groups_and_fields("accuracy", items, macro=True)


@breakdown(r"cvlue_vg(_val|_lite|_qwen|_qwen_chat)?", "miou")
def vg_groups(items: list) -> dict:
    return groups_and_fields("miou", items, macro=True)


@breakdown(r"cvlue_vd(_val|_lite)?|cvlue_(tr|ir)_(rerank|mc10)", "r1")
def r1_groups(items: list) -> dict:
    return groups_and_fields("r1", items, macro=False)
