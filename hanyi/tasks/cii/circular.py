"""``cii_circular``: each CII-Bench question asked once per rotation of its six options (docs/cii.md, "Circular
evaluation"). Answers are read by the same two extractors as ``cii_none`` and mapped back to the original option.
"""

from hanyi.data.cii import hint_text
from hanyi.metrics import circular as circ
from hanyi.metrics.cii_aggregations import (  # noqa: F401  (the aggregations cii_circular.yaml names)
    cii_circular_acc,
    cii_circular_acc_robust,
    cii_consistency_rate,
    cii_consistency_rate_robust,
    cii_rotation_acc,
    cii_rotation_acc_robust,
)
from hanyi.metrics.cii_extract import score_response
from hanyi.tasks import _circular
from hanyi.tasks._circular import ROTATION
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.cii.constants import LETTERS, OPTION_FIELDS

OPTIONS = tuple(zip(LETTERS, OPTION_FIELDS))


def cii_circular_process_docs(dataset):
    from hanyi.tasks.cii import utils

    return _circular.expand_rotations(utils.cii_process_docs(dataset), len(LETTERS))


def _rotated(doc):
    values = circ.rotate([doc[f] for f in OPTION_FIELDS], doc[ROTATION])
    return {**doc, **dict(zip(OPTION_FIELDS, values))}


def cii_circular_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, template="none.jinja", hint_field=None)
    hint = hint_text(doc[kw["hint_field"]]) if kw["hint_field"] else None
    return render("cii", kw["template"], doc=_rotated(doc), options=OPTIONS, hint=hint)


def cii_circular_process_results(doc, results):
    if doc.get("answer") not in tuple(LETTERS):
        raise ValueError(f"cii_circular: doc id={doc.get('id')} has answer {doc.get('answer')!r}, not one of {LETTERS}")
    response = results[0] if results else ""
    k = doc[ROTATION]
    shown = _rotated(doc)
    scored = score_response(response, [shown[f] for f in OPTION_FIELDS], circ.to_shown(doc["answer"], k, LETTERS))
    items = [
        {**circ.rotation_item(doc["id"], k, len(LETTERS), [doc["answer"]], pred, LETTERS), "response": response}
        for pred in (scored["pred"], scored["pred_robust"])
    ]
    return _circular.results(*items)
