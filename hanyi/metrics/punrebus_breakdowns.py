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
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, sum_mean

#: The option letters (hanyi/tasks/punrebus/constants.py; the report imports nothing of the tasks).
LETTERS = "ABCDEFG"
#: The tasks that emit ``accuracy`` and ``accuracy_robust`` from the image parsers (not the text-only task, which
#: still emits its parse rates).
CHOICE_TASKS = r"punrebus_(matching(_5shot)?|expression)"
ELEMENT_TASKS = r"punrebus_elements(_5shot)?"
_NAN = float("nan")


# The former aggregations of the moved keys, decomposed (hanyi.metrics.resample) so the report also gives each its
# interval: lmms-eval's ``mean`` (``sum(arr) / len(arr)``, left to right: ``sum_mean``) for the rates, and
# ``punrebus_mean_over_parsed`` (exactly rounded mean over the parsed docs) for the capped score.


@decomposed(sum_mean, light=True)
def punrebus_parse_rate(items):
    """Share of answers the parser of the logged item (``accuracy``: the paper's; ``accuracy_robust``: the robust
    one) read a letter from; per doc: 0/1 ``parsed``."""
    return [float(it["parsed"]) for it in items]


@decomposed(fsum_mean_of_finite, light=True)
def punrebus_element_abs_capped(items):
    """The paper's eq. (1) score (each gold element counted once) over the parsed answers; per doc its logged
    ``instance_score_capped``, NaN when unparsed (left out)."""
    return [it["instance_score_capped"] if it["parsed"] else _NAN for it in items]


@decomposed(sum_mean, light=True)
def punrebus_element_zh_rate(items):
    """Share of element answers with Chinese characters; per doc: 0/1 ``zh``."""
    return [float(it["zh"]) for it in items]


@from_samples.breakdown(CHOICE_TASKS, "accuracy", intervals={"parse_rate": punrebus_parse_rate})
def parse_rate(items: list[dict]) -> dict:
    """``parse_rate``: the share of answers the paper's parser read a letter from (logged ``accuracy`` items)."""
    return {"parse_rate": punrebus_parse_rate(items)}


@from_samples.breakdown(CHOICE_TASKS, "accuracy_robust", intervals={"parse_rate_robust": punrebus_parse_rate})
def parse_rate_robust(items: list[dict]) -> dict:
    """``parse_rate_robust``: the same for the robust parser (logged ``accuracy_robust`` items)."""
    return {"parse_rate_robust": punrebus_parse_rate(items)}


def _element_aggregations(suffix: str) -> dict:
    return {
        "element_abs_capped" + suffix: punrebus_element_abs_capped,
        "element_zh_rate": punrebus_element_zh_rate,
        "element_parse_rate": punrebus_parse_rate,
    }


@from_samples.breakdown(
    ELEMENT_TASKS, "element_abs", lower_is_better=["element_zh_rate"], intervals=_element_aggregations("")
)
def elements(items: list[dict]) -> dict:
    """``element_abs_capped``, ``element_zh_rate`` and ``element_parse_rate`` from the logged ``element_abs`` items."""
    return {name: aggregate(items) for name, aggregate in _element_aggregations("").items()}


@from_samples.breakdown(
    ELEMENT_TASKS,
    "element_abs_rule_lemma",
    lower_is_better=["element_zh_rate"],
    intervals=_element_aggregations("_rule_lemma"),
)
def elements_rule_lemma(items: list[dict]) -> dict:
    """The same without WordNet: the capped score under its fallback name ``element_abs_capped_rule_lemma``."""
    return {name: aggregate(items) for name, aggregate in _element_aggregations("_rule_lemma").items()}


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
