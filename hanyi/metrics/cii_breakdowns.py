"""CII-Bench breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

Every multiple-choice task logs, per doc, its ``acc`` item: ``correct`` plus the doc's ``domain``, ``emotion``,
``difficulty``, ``image_types`` and ``rhetorics``. From these the report computes the 26 per-category accuracies
under the names the tasks emitted before issue 26 (``acc_domain_life``, ``acc_type_meme``, ...), as fractions, with
the official rule of ``eval_cii_sub.py`` (:func:`hanyi.metrics.cii_extract.category_accuracy`): a multi-label question
counts under each of its labels; NaN for a label no doc carries. Table 1's domain and emotion columns are also emitted
by ``cii_none``, ``cii_test`` and ``cii_textonly``; the report keeps their emitted values.

The same ``acc`` items hold each doc's ``miss`` (the official extractor found no option): the report computes
``miss_rate`` (task version 2.1 no longer emits it) with the former aggregation, ``cii_miss_rate``, bit for bit, and
its interval as before.
"""

from __future__ import annotations

from hanyi.data.cii_categories import CATEGORY_METRICS
from hanyi.metrics.cii_aggregations import cii_miss_rate
from hanyi.metrics.cii_extract import category_accuracy
from hanyi.metrics.from_samples import breakdown

#: The multiple-choice tasks whose logged ``acc`` items carry the labels (not ``cii_circular``, not ``cii_ctc``).
MC_TASKS = r"cii_(none|test|textonly|cot|domain|emotion|rhetoric|[123]shot)"


@breakdown(MC_TASKS, "acc")
def category_accuracies(items: list) -> dict:
    """``{acc_<dimension>_<label>: accuracy}`` over the logged ``acc`` items (fractions, NaN for an absent label)."""
    return {name: category_accuracy(items, field, label) / 100 for name, (field, label) in CATEGORY_METRICS.items()}


@breakdown(MC_TASKS, "acc", lower_is_better=["miss_rate"], intervals={"miss_rate": cii_miss_rate})
def miss_rate(items: list) -> dict:
    """``{"miss_rate": share}``: the official ``eval_cii.py`` miss rate, #(no option found) / N, from the logged
    ``acc`` items' ``miss`` (task version 2.0 emitted it; the same aggregation, the same value)."""
    return {"miss_rate": cii_miss_rate(items)}
