"""Hooks of the UNPIE tasks that score both splits (docs/unpie.md, "Tasks"): a doc is scored as in its one-split task,
and the keys of the table's columns returned, their items holding its split and diagnostics for the sample-log breakdowns."""

from hanyi import backbones
from hanyi.tasks.unpie import utils
from hanyi.tasks.unpie.constants import JUDGE_METRIC


def _both_splits(doc, out, keys):
    if out.get("caption_missing"):  # left out of every score: logged under every key, so the report counts it
        return {key: {**utils._evidence(doc, "", ""), "caption_missing": 1.0} for key in keys}
    return {key: out[key] for key in keys}


def unpie_grounding_all_process_results(doc, results):
    return _both_splits(doc, utils.unpie_grounding_process_results(doc, results), ("exact_match", "exact_match_robust"))


def unpie_disambiguation_all_process_results(doc, results):
    name = backbones.metric_key("bertscore", "disamb_acc_bertscore")
    return _both_splits(doc, utils.unpie_disambiguation_process_results(doc, results), (name, f"{name}_robust"))


def unpie_reconstruction_all_process_results(doc, results):
    """The judge's key with a judge configured; without one, its offline stand-in ``pun_word_recovered``."""
    out = utils.unpie_reconstruction_process_results(doc, results)
    meteor = backbones.metric_key("wordnet", "meteor")
    correct = [JUDGE_METRIC] if backbones.available("judge") else ["pun_word_recovered", "pun_word_recovered_robust"]
    return _both_splits(doc, out, ["bleu4", meteor, "bleu4_robust", f"{meteor}_robust", *correct])
