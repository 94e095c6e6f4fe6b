"""CVLUE breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

Each task logs, per doc, the item of its headline metric (VQA ``accuracy``, VG ``miou``, VD ``r1``; ITR ``r1``, one
item per (query, candidate) pair) with its value ``v`` (ITR: the pair's ``score``), ``category`` and
``culture_group``. From these the report computes, under the names the tasks once emitted themselves:

* ``<metric>_<group>``: the mean over the units of culture group ``non_wordnet``, ``moderate`` or ``coco`` (micro);
* ``<metric>_<group>_macro`` (VQA and VG only): the mean of the group's per-category means;
* ``<metric>_field_<field>``: the mean over the units of one of Table 3's 15 semantic fields.

A group or field without units is ``None`` (N/A), not a zero. A unit is one doc, or for ITR one query after its
shortlist is re-ranked (:func:`hanyi.metrics.ranking.itr_queries`). The 92-category table is ``hanyi.report.cvlue_breakdown``.

The same items also hold each doc's diagnostics, from which the report computes the numbers the VQA and VG tasks
emitted before version 0.5, with their former aggregation (``cvlue_mean``), bit for bit: VQA ``accuracy_strict``,
``english_rate`` and ``empty_rate`` (the ``accuracy`` item's ``strict``, ``english``, ``empty``); VG ``acc_iou_0_5``
(IoU ``v`` > 0.5), ``parse_failure_rate`` and ``off_scale_rate`` (the ``miou`` item's ``parse_failure``,
``off_scale``).
"""

from __future__ import annotations

from hanyi.data.cvlue_categories import CULTURE_GROUPS, FIELDS, semantic_field
from hanyi.metrics.breakdown import group_scores, subset_mean
from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.ranking import itr_queries
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite


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


VQA_TASKS = r"cvlue_vqa(_val|_lite)?"
VG_TASKS = r"cvlue_vg(_val|_lite|_qwen|_qwen_chat)?"
VG_ABS_TASKS = r"cvlue_vg_abs(_served)?"  # its own key, miou_abs: the same diagnostics and groups under that name


def _share(name: str, flag):
    """The decomposed share of docs whose logged item has ``flag(item)`` true: the former aggregation
    (``cvlue_mean``: the exactly rounded mean of the per-doc 0/1 values), registered as ``cvlue_<name>``."""

    @decomposed(fsum_mean_of_finite, light=True, name=f"cvlue_{name}")
    def share(items):
        return [float(flag(it)) for it in items]

    share.__doc__ = f"``{name}`` from the logged items; per doc: 0/1."
    return share


#: VQA diagnostic -> its aggregation over the logged ``accuracy`` items.
VQA_DIAGNOSTICS = {
    "accuracy_strict": _share("accuracy_strict", lambda it: it["strict"]),
    "english_rate": _share("english_rate", lambda it: it["english"]),
    "empty_rate": _share("empty_rate", lambda it: it["empty"]),
}
#: VG diagnostic -> its aggregation over the logged ``miou`` items.
VG_DIAGNOSTICS = {
    "acc_iou_0_5": _share("acc_iou_0_5", lambda it: it["v"] > 0.5),
    "parse_failure_rate": _share("parse_failure_rate", lambda it: it["parse_failure"]),
    "off_scale_rate": _share("off_scale_rate", lambda it: it["off_scale"]),
}


@breakdown(VQA_TASKS, "accuracy", lower_is_better=["english_rate", "empty_rate"], intervals=VQA_DIAGNOSTICS)
def vqa_diagnostics(items: list) -> dict:
    """``accuracy_strict`` (the official rule without its lenient containment), ``english_rate`` (English-only
    answers) and ``empty_rate`` (nothing left after cleaning) from the logged ``accuracy`` items."""
    return {name: aggregate(items) for name, aggregate in VQA_DIAGNOSTICS.items()}


@breakdown(VG_TASKS, "miou", lower_is_better=["parse_failure_rate", "off_scale_rate"], intervals=VG_DIAGNOSTICS)
def vg_diagnostics(items: list) -> dict:
    """``acc_iou_0_5`` (share of docs with IoU > 0.5, the official readme's IoU_Accuracy), ``parse_failure_rate``
    (no box found) and ``off_scale_rate`` (a coordinate beyond the task's scale) from the logged ``miou`` items."""
    return {name: aggregate(items) for name, aggregate in VG_DIAGNOSTICS.items()}


@breakdown(VG_ABS_TASKS, "miou_abs", lower_is_better=["parse_failure_rate", "off_scale_rate"], intervals=VG_DIAGNOSTICS)
def vg_abs_diagnostics(items: list) -> dict:
    """The VG diagnostics of the absolute-pixel task, from its ``miou_abs`` items (off scale: beyond the input)."""
    return {name: aggregate(items) for name, aggregate in VG_DIAGNOSTICS.items()}


@breakdown(VQA_TASKS, "accuracy")
def vqa_groups(items: list) -> dict:
    return groups_and_fields("accuracy", items, macro=True)


@breakdown(VG_TASKS, "miou")
def vg_groups(items: list) -> dict:
    return groups_and_fields("miou", items, macro=True)


@breakdown(VG_ABS_TASKS, "miou_abs")
def vg_abs_groups(items: list) -> dict:
    return groups_and_fields("miou_abs", items, macro=True)


@breakdown(r"cvlue_vd(_val|_lite)?|cvlue_(tr|ir)_(rerank|mc10)", "r1")
def r1_groups(items: list) -> dict:
    return groups_and_fields("r1", items, macro=False)
