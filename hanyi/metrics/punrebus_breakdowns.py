"""Pun Rebus Art breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

``punrebus_matching`` and ``punrebus_matching_5shot`` log, per doc, the paper parser's item under ``accuracy``
(``parsed``, ``correct``, ``pred``, ``gold``, ``gold_rows``). From those items the report computes, under the names
the tasks emitted before (task version 1.3):

* ``accuracy_cat_<L>``: the official per-category accuracy (paper Appendix Figure 7; ``grade_answers``);
* ``accuracy_cat_dedup_<L>``: the same with each story's categories counted once (hanyi's variant);
* ``wrong_answer_confusion_<L>``: row ``L`` (true option) of the confusion matrix of wrong parsed answers
  (Figure 8; ``grade_answer_confusion``), a ``{responded option: count}`` dict the report shows as a table.

Diagnostics and variants the tasks emitted before (matching 1.4, expression 1.3, elements 1.4), each computed with
its former aggregation from a logged item of a key the task still emits, so its value is the same bit for bit:

* ``parse_rate`` / ``parse_rate_robust`` (``punrebus_matching``, ``_5shot``, ``punrebus_expression``): the share of
  answers the paper's / the robust parser read a letter from (``parsed`` of the ``accuracy`` / ``accuracy_robust``
  items; lmms-eval's ``mean``);
* ``element_abs_capped`` (``element_abs_capped_rule_lemma`` without WordNet), ``element_zh_rate`` and
  ``element_parse_rate`` (``punrebus_elements``, ``_5shot``): from the ``element_abs`` (``element_abs_rule_lemma``)
  items' ``instance_score_capped`` (the paper's formula, each gold element counted once: our variant; Table 1's
  S_Abs is the official scorer's uncapped count), ``zh`` (the answer has Chinese characters) and ``parsed``.
"""

from __future__ import annotations

from hanyi.metrics import from_samples
from hanyi.metrics.choice_punrebus import category_accuracy, category_accuracy_dedup, wrong_answer_confusion
from hanyi.metrics.punrebus_aggregations import punrebus_mean_over_parsed

#: The option letters (hanyi/tasks/punrebus/constants.py; the report imports nothing of the tasks).
LETTERS = "ABCDEFG"
#: The tasks that emit ``accuracy`` and ``accuracy_robust`` from the image parsers (not the text-only task, which
#: still emits its parse rates).
CHOICE_TASKS = r"punrebus_(matching(_5shot)?|expression)"
ELEMENT_TASKS = r"punrebus_elements(_5shot)?"


def mean(values: list) -> float:
    """lmms-eval's ``mean`` (``sum(arr) / len(arr)``), the aggregation the moved diagnostics had."""
    return sum(values) / len(values)


@from_samples.breakdown(CHOICE_TASKS, "accuracy")
def parse_rate(items: list[dict]) -> dict:
    """``parse_rate``: the share of answers the paper's parser read a letter from (logged ``accuracy`` items)."""
    return {"parse_rate": mean([float(it["parsed"]) for it in items])}


@from_samples.breakdown(CHOICE_TASKS, "accuracy_robust")
def parse_rate_robust(items: list[dict]) -> dict:
    """``parse_rate_robust``: the same for the robust parser (logged ``accuracy_robust`` items)."""
    return {"parse_rate_robust": mean([float(it["parsed"]) for it in items])}


def element_diagnostics(items: list[dict], suffix: str) -> dict:
    """``element_abs_capped<suffix>`` (the former ``punrebus_mean_over_parsed`` of the capped instance scores),
    ``element_zh_rate`` and ``element_parse_rate`` from the logged element items."""
    capped = [{"parsed": it["parsed"], "instance_score": it["instance_score_capped"]} for it in items]
    return {
        "element_abs_capped" + suffix: punrebus_mean_over_parsed(capped),
        "element_zh_rate": mean([float(it["zh"]) for it in items]),
        "element_parse_rate": mean([float(it["parsed"]) for it in items]),
    }


@from_samples.breakdown(ELEMENT_TASKS, "element_abs", lower_is_better=["element_zh_rate"])
def elements(items: list[dict]) -> dict:
    return element_diagnostics(items, "")


@from_samples.breakdown(ELEMENT_TASKS, "element_abs_rule_lemma", lower_is_better=["element_zh_rate"])
def elements_rule_lemma(items: list[dict]) -> dict:
    """The same without WordNet: the capped score under its fallback name ``element_abs_capped_rule_lemma``."""
    return element_diagnostics(items, "_rule_lemma")


@from_samples.breakdown(
    r"punrebus_matching(_5shot)?", "accuracy", lower_is_better=[f"wrong_answer_confusion_{c}" for c in LETTERS]
)
def by_category(items: list[dict]) -> dict:
    """Per-category accuracies (official and deduplicated) and the confusion rows, from the logged ``accuracy`` items."""
    out: dict = {f"accuracy_cat_{c}": category_accuracy(items, c) for c in LETTERS}
    out |= {f"accuracy_cat_dedup_{c}": category_accuracy_dedup(items, c) for c in LETTERS}
    matrix = wrong_answer_confusion(items, LETTERS)
    out |= {f"wrong_answer_confusion_{c}": matrix[c] for c in LETTERS}
    return out
