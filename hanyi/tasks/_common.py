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
        auto_reload=False,  # package files: no stat() per render (halves the prompt cost per doc; issue 20)
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


def missing_image_ids(dataset, column: str, id_field: str) -> list:
    """Ids of docs whose ``column`` holds no image (null, or neither bytes nor path), read without decoding."""
    import pyarrow.compute as pc

    table = dataset.select_columns([column, id_field]).with_format("arrow")[:]
    images = table.column(column)
    missing = pc.is_null(images)
    if getattr(images.type, "num_fields", 0):
        flat = images.combine_chunks()
        missing = pc.or_(missing, pc.and_(pc.is_null(flat.field("bytes")), pc.is_null(flat.field("path"))))
    return [rid for rid, gone in zip(table.column(id_field).to_pylist(), missing.to_pylist()) if gone]


def require_images(dataset, column: str, id_field: str, fix: str, fallback=None):
    """Fail at load time, before any model call, if docs of ``dataset`` have no image in ``column``.

    A missing image found during generation would stop lmms-eval's run at that doc and lose everything computed so
    far; found here, the error costs nothing and lists the docs. Nulls are read in Arrow format, so no image is
    decoded. ``fallback(row_id) -> bool`` says whether a doc without an embedded image can still be served (e.g.
    from a local clone). Raises :class:`hanyi.data.images.ImageUnavailableError` naming up to 10 doc ids and ``fix``.
    """
    from hanyi.data.images import ImageUnavailableError

    ids = missing_image_ids(dataset, column, id_field)
    if fallback is not None:
        ids = [rid for rid in ids if not fallback(rid)]
    if ids:
        shown = ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise ImageUnavailableError(f"{len(ids)} doc(s) have no image ({id_field}: {shown}). {fix}")
    return dataset
