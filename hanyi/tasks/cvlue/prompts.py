"""CVLUE prompt rendering, cached per distinct text (the templates are in templates/). See docs/cvlue.md."""

import functools

from hanyi.tasks._common import render

#: the doc fields CVLUE's templates read, besides the dialog history
PROMPT_FIELDS = ("question", "text", "caption")


@functools.lru_cache(maxsize=32768)
def prompt(template, fields, history):
    """Cached: lmms-eval's chat path renders each doc's prompt twice (the request's context, then its messages); the
    paper's 21,507 VQA questions fit (a template reading another field stops with StrictUndefined)."""
    return render("cvlue", template, history=list(history), **dict(fields))
