"""Pun Rebus Art breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

``punrebus_matching`` and ``punrebus_matching_5shot`` log, per doc, the paper parser's item under ``accuracy``
(``parsed``, ``correct``, ``pred``, ``gold``, ``gold_rows``). From those items the report computes, under the names
the tasks emitted before (task version 1.3):

* ``accuracy_cat_<L>``: the official per-category accuracy (paper Appendix Figure 7; ``grade_answers``);
* ``accuracy_cat_dedup_<L>``: the same with each story's categories counted once (hanyi's variant);
* ``wrong_answer_confusion_<L>``: row ``L`` (true option) of the confusion matrix of wrong parsed answers
  (Figure 8; ``grade_answer_confusion``), a ``{responded option: count}`` dict the report shows as a table.
"""

from __future__ import annotations

from hanyi.metrics import from_samples
from hanyi.metrics.choice_punrebus import category_accuracy, category_accuracy_dedup, wrong_answer_confusion

#: The option letters (hanyi/tasks/punrebus/constants.py; the report imports nothing of the tasks).
LETTERS = "ABCDEFG"


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
