"""CII-Bench breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

Every multiple-choice task logs, per doc, its ``acc`` item: ``correct`` plus the doc's ``domain``, ``emotion``,
``difficulty``, ``image_types`` and ``rhetorics``. From these the report computes the 26 per-category accuracies
under the names the tasks once emitted themselves (``acc_domain_life``, ``acc_type_meme``, ...), as fractions, with
the official rule of ``eval_cii_sub.py`` (:func:`hanyi.metrics.cii_extract.category_accuracy`): a multi-label question
counts under each of its labels; NaN for a label no doc carries. Table 1's domain and emotion columns are also emitted
by ``cii_none``, ``cii_test`` and ``cii_textonly``; the report keeps their emitted values.

The same ``acc`` items hold each doc's ``miss`` (the official extractor found no option) and ``blank`` (an empty or
whitespace-only answer): the report computes the official ``miss_rate`` of ``eval_cii.py`` (``cii_miss_rate``: a
non-blank answer with no option found; the official script never marks a blank answer as a miss) and, beside it,
``blank_rate`` (ours: blank answers, which hanyi scores wrong); ``miss_rate`` once counted blank answers too.
"""

from __future__ import annotations

from hanyi.data.cii_categories import CATEGORY_METRICS
from hanyi.metrics.cii_aggregations import cii_miss_rate
from hanyi.metrics.cii_extract import category_accuracy
from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.resample import decomposed, percent_share

#: The multiple-choice tasks whose logged ``acc`` items carry the labels (not ``cii_circular``, not ``cii_ctc``).
MC_TASKS = r"cii_(none|test|textonly|cot|domain|emotion|rhetoric|[123]shot)"


@breakdown(MC_TASKS, "acc")
def category_accuracies(items: list) -> dict:
    """``{acc_<dimension>_<label>: accuracy}`` over the logged ``acc`` items (fractions, NaN for an absent label)."""
    return {name: category_accuracy(items, field, label) / 100 for name, (field, label) in CATEGORY_METRICS.items()}


@decomposed(percent_share, light=True)
def cii_blank_rate(items):
    """Share of empty or whitespace-only answers (ours); per doc: 0/1 blank."""
    return [bool(it["blank"]) for it in items]


RATES = {"miss_rate": cii_miss_rate, "blank_rate": cii_blank_rate}


@breakdown(MC_TASKS, "acc", lower_is_better=list(RATES), intervals=RATES)
def miss_rate(items: list) -> dict:
    """``{"miss_rate", "blank_rate"}`` from the logged ``acc`` items: the official ``eval_cii.py`` miss rate,
    #(non-blank answer, no option found) / N, and ours, #(blank answers) / N."""
    return {name: fn(items) for name, fn in RATES.items()}
