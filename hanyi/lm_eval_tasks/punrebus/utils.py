"""lm-eval glue for Pun Rebus Art's text-only task: the lmms-eval glue (hanyi/tasks/punrebus/utils.py), adapted."""

from hanyi.lm_eval_tasks import _glue
from hanyi.metrics.loglik_choice import loglik_choice_item
from hanyi.tasks.punrebus import utils as lmms
from hanyi.tasks.punrebus.constants import LETTERS

punrebus_textonly_doc_to_text = _glue.doc_to_text("punrebus", "punrebus_textonly", lmms.punrebus_doc_to_text)
punrebus_textonly_process_results = _glue.stripped(lmms.punrebus_textonly_process_results)
#: The lmms-eval task's metric_list, its aggregation functions imported: the same objects in both harnesses.
punrebus_textonly_metric_list = _glue.metric_list("punrebus", "punrebus_textonly")


def punrebus_mc_gold_index(doc):
    """Index of the first gold category (lm-eval wants one; scoring accepts any gold category)."""
    return LETTERS.index(doc["categories"][0])


def punrebus_textonly_mc_process_results(doc, results):
    item = loglik_choice_item(results, LETTERS, doc["categories"])
    return {"acc_loglik": {**item, "parsed": True, "story_pinyin": doc.get("story_pinyin")}}
