"""Pun Rebus 5-shot glue: the fixed exemplars (constants.FIVE_SHOT_STORIES) before the query. See docs/punrebus.md.

Chat models get one user turn of interleaved images and answers (``punrebus_5shot_doc_to_messages``); other models
get the same content as text with one image placeholder per image (``punrebus_5shot_doc_to_text``).
"""

from hanyi import backbones
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.punrebus.constants import FIVE_SHOT_STORIES, OPTIONS
from hanyi.tasks.punrebus.utils import punrebus_doc_to_text, punrebus_doc_to_visual, punrebus_process_docs

#: Default image placeholder of the text form (the LLaVA convention lmms-eval's simple models understand).
IMAGE_TOKEN = "<image>"


def _kwargs(lmms_eval_specific_kwargs):
    return prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper", image_token=IMAGE_TOKEN)


def _exemplars():
    from hanyi.data.punrebus import load_exemplar_docs
    from hanyi.data.sources import resolve

    return load_exemplar_docs(resolve("punrebus"), FIVE_SHOT_STORIES)


def punrebus_5shot_answer(doc, prompt):
    """The exemplar's answer in the format the prompt asks for (templates/fewshot_answer.jinja)."""
    option = next(o for o in OPTIONS if o[0] == doc["categories"][0])
    return render("punrebus", "fewshot_answer.jinja", doc=doc, prompt=prompt, option=option)


def punrebus_drop_exemplar_stories(dataset):
    """5-shot: the exemplar stories' images are prompts, not test items (their own images are checked too)."""
    checked = punrebus_process_docs(dataset)
    return checked.filter(lambda p: p not in FIVE_SHOT_STORIES, input_columns="story_pinyin")


def punrebus_elements_5shot_process_docs(dataset):
    """5-shot elements: WordNet and Sentence-BERT resolved now, before any model call (hanyi.backbones)."""
    backbones.require("wordnet", "sbert")
    return punrebus_drop_exemplar_stories(dataset)


def punrebus_5shot_doc_to_visual(doc):
    return [img for ex in _exemplars() for img in punrebus_doc_to_visual(ex)] + punrebus_doc_to_visual(doc)


def punrebus_5shot_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = _kwargs(lmms_eval_specific_kwargs)
    answers = [punrebus_5shot_answer(ex, kw["prompt"]) for ex in _exemplars()]
    query = punrebus_doc_to_text(doc, kw)
    return render("punrebus", "fewshot_text.jinja", answers=answers, query=query, image_token=kw["image_token"])


def punrebus_5shot_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    kw = _kwargs(lmms_eval_specific_kwargs)
    content = []
    for ex in _exemplars():
        content += [
            {"type": "image", "url": punrebus_doc_to_visual(ex)[0]},
            {"type": "text", "text": punrebus_5shot_answer(ex, kw["prompt"])},
        ]
    content += [
        {"type": "image", "url": punrebus_doc_to_visual(doc)[0]},
        {"type": "text", "text": punrebus_doc_to_text(doc, kw)},
    ]
    return [{"role": "user", "content": content}]
