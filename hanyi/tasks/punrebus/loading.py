"""Pun Rebus load-time checks: images present and backbones resolved before any model call. See docs/punrebus.md."""

from collections import Counter

from hanyi import backbones
from hanyi.tasks._common import require_images, require_string_lists

_IMAGE_FIX = "Rebuild the data with `hanyi prepare punrebus`, which checks every image and reports the bad ones."


def _once_each(dataset, key="image_id"):
    """A row given twice (the same ``key``) would be scored twice: refused, naming the ids."""
    twice = sorted(k for k, n in Counter(dataset[key]).items() if n > 1)
    if twice:
        raise ValueError(f"{len(twice)} {key}(s) appear in more than one row: {', '.join(twice[:10])}. {_IMAGE_FIX}")
    return dataset


def punrebus_process_docs(dataset):
    """Image tasks: gold labels typed right, each image once, and every doc with a picture that decodes, checked at
    load time."""
    require_string_lists(_once_each(dataset), ("categories", "category_rows", "elements_en"), _IMAGE_FIX)
    return require_images(dataset, "image", "image_id", _IMAGE_FIX)


def punrebus_textonly_process_docs(dataset):
    """The text-only task: gold labels typed right (a "A,B" string would be read letter by letter), each row once."""
    return require_string_lists(_once_each(dataset, "story_zh"), ("categories",), _IMAGE_FIX)


def punrebus_elements_process_docs(dataset):
    """Element tasks: WordNet and Sentence-BERT resolved now, before any model call (hanyi.backbones)."""
    backbones.require("wordnet", "sbert")
    return punrebus_process_docs(dataset)


def punrebus_expression_process_docs(dataset):
    """The judge is resolved now; without one, judge_score is not emitted (one warning before generation)."""
    backbones.require("judge")
    return punrebus_process_docs(dataset)
