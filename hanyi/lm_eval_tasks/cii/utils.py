"""lm-eval glue for CII-Bench's text-only task: the lmms-eval glue (hanyi/tasks/cii/utils.py), adapted."""

from hanyi.lm_eval_tasks import _glue
from hanyi.metrics.loglik_choice import loglik_choice_item
from hanyi.tasks.cii import utils as lmms
from hanyi.tasks.cii.constants import LETTERS

cii_textonly_doc_to_text = _glue.doc_to_text("cii", "cii_textonly", lmms.cii_doc_to_text)
cii_textonly_process_docs = _glue.without_image_decoding(lmms.cii_textonly_process_docs)
cii_textonly_process_results = _glue.stripped(lmms.cii_table1_process_results)
#: The lmms-eval task's metric_list, its aggregations imported: the same functions in both harnesses.
cii_textonly_metric_list = _glue.metric_list("cii", "cii_textonly")


def cii_mc_gold_index(doc):
    return LETTERS.index(doc["answer"])


def cii_textonly_mc_process_results(doc, results):
    """``acc_loglik`` item in the shape ``cii_acc`` aggregates (``correct``), a fraction 0-1 like ``acc``."""
    return {"acc_loglik": {"id": doc["id"], **loglik_choice_item(results, LETTERS, [doc["answer"]])}}
