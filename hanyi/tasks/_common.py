"""Glue shared by every benchmark's ``utils.py``: template rendering, prompt-variant selection, visuals.

Prompt prose lives only in ``hanyi/tasks/<benchmark>/templates/*.jinja``; Python renders it and never builds it.
"""

from __future__ import annotations

import functools
import os

from hanyi import TASKS_DIR


@functools.cache
def _environment(benchmark: str):
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(TASKS_DIR, benchmark, "templates")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(benchmark: str, template: str, **variables) -> str:
    """Render ``tasks/<benchmark>/templates/<template>`` with ``variables``. Missing variables raise."""
    return _environment(benchmark).get_template(template).render(**variables)


def prompt_kwargs(lmms_eval_specific_kwargs: dict | None, **defaults) -> dict:
    """Task kwargs resolved by lmms-eval (``default`` block or the model's own block) over ``defaults``.

    >>> prompt_kwargs({"variant": "code_exact"}, variant="paper", shots=0)
    {'variant': 'code_exact', 'shots': 0}
    >>> prompt_kwargs(None, variant="paper")
    {'variant': 'paper'}
    """
    kwargs = dict(defaults)
    for key, value in (lmms_eval_specific_kwargs or {}).items():
        if not isinstance(value, dict):
            kwargs[key] = value
    return kwargs


def doc_label(doc: dict, *fields: str) -> str:
    """A short human label for error messages, from the first of ``fields`` present in ``doc``.

    >>> doc_label({"image_id": "a_1.jpg"}, "question_id", "image_id")
    'image_id=a_1.jpg'
    """
    for field in fields:
        if field in doc and doc[field] is not None:
            return f"{field}={doc[field]}"
    return "doc"


def visuals(doc: dict, *columns: str, id_fields: tuple[str, ...] = ()) -> list:
    """``[PIL.Image, ...]`` from the image ``columns`` of ``doc``; a missing image raises naming the doc."""
    from hanyi.data.images import to_pil

    hint = doc_label(doc, *id_fields)
    return [to_pil(doc.get(col), doc_hint=hint) for col in columns]
