"""``punrebus_matching_circular`` / ``punrebus_textonly_circular``: each item asked once per rotation of the seven
category options (docs/punrebus.md, "Circular evaluation"). The answer is read by the same parsers as
``punrebus_matching`` / ``punrebus_textonly`` (paper) and ``extract_choice_delimited`` (robust), then mapped back to
the original category. Multi-category gold: a rotation is right when it maps back to any gold category.
"""

from hanyi.metrics import choice_punrebus as cp
from hanyi.metrics import circular as circ
from hanyi.metrics.choice import extract_leading_letter
from hanyi.metrics.choice_delimited import extract_choice_delimited
from hanyi.metrics.punrebus_aggregations import (  # noqa: F401  (named by the YAMLs as circular.*)
    punrebus_circular_acc,
    punrebus_circular_acc_robust,
    punrebus_consistency_rate,
    punrebus_consistency_rate_robust,
    punrebus_rotation_acc,
    punrebus_rotation_acc_robust,
)
from hanyi.tasks import _circular
from hanyi.tasks._circular import ROTATION
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.punrebus import loading
from hanyi.tasks.punrebus.constants import LETTERS, OPTIONS
from hanyi.tasks.punrebus.scoring import response_text


def punrebus_circular_process_docs(dataset):
    from hanyi.tasks.punrebus import utils

    return _circular.expand_rotations(utils.punrebus_process_docs(dataset), len(OPTIONS))


def punrebus_textonly_circular_process_docs(dataset):
    return _circular.expand_rotations(loading.punrebus_textonly_process_docs(dataset), len(OPTIONS))


def _options(doc):
    return tuple(zip(LETTERS, circ.rotate([text for _, text in OPTIONS], doc[ROTATION])))


def punrebus_circular_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    if kw["prompt_variant"] != "paper":  # the code_exact templates hard-code the option order
        raise ValueError(
            f"circular tasks render the options: prompt_variant must be 'paper', not {kw['prompt_variant']!r}"
        )
    return render("punrebus", f"{kw['prompt']}.jinja", options=_options(doc), doc=doc)


def _results(doc, results, qid, paper_parser):
    gold = list(doc["categories"] or [])
    if not gold or any(g not in LETTERS for g in gold):
        raise ValueError(f"punrebus circular: doc {qid} has categories {gold!r}, expected letters from {LETTERS}")
    response = response_text(results)
    preds = (paper_parser(response), extract_choice_delimited(response, _options(doc)))
    items = [
        {**circ.rotation_item(qid, doc[ROTATION], len(LETTERS), gold, pred, LETTERS), "response": response}
        for pred in preds
    ]
    return _circular.results(*items)


def punrebus_matching_circular_process_results(doc, results):
    return _results(doc, results, doc["image_id"], lambda r: extract_leading_letter(r, LETTERS))


def punrebus_textonly_circular_process_results(doc, results):
    return _results(doc, results, doc["story_zh"], lambda r: cp.extract_first_char_letter(r, LETTERS))
