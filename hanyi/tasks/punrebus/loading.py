"""Pun Rebus load-time checks: images present and backbones resolved before any model call. See docs/punrebus.md."""

from hanyi import backbones
from hanyi.tasks._common import require_images

_IMAGE_FIX = "Rebuild the data with `hanyi prepare punrebus`, which checks every image and reports the bad ones."


def punrebus_process_docs(dataset):
    """Image tasks: every doc must have its picture, checked at load time before any model call."""
    return require_images(dataset, "image", "image_id", _IMAGE_FIX)


def punrebus_elements_process_docs(dataset):
    """Element tasks: WordNet and Sentence-BERT resolved now, before any model call (hanyi.backbones)."""
    backbones.require("wordnet", "sbert")
    return punrebus_process_docs(dataset)


def punrebus_expression_process_docs(dataset):
    """The judge is resolved now; without one, judge_score is not emitted (one warning before generation)."""
    backbones.require("judge")
    return punrebus_process_docs(dataset)
