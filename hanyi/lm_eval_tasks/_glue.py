"""Adapters that let lm-eval call the lmms-eval glue of ``hanyi/tasks/<benchmark>/utils.py`` unchanged.

Two host differences are bridged here, and nothing else:

* lm-eval calls ``doc_to_text(doc)``; the lmms-eval glue takes ``lmms_eval_specific_kwargs``. :func:`doc_to_text`
  binds the ``default`` block *read from the lmms-eval task YAML itself*, so both harnesses render the same prompt
  from the same template with the same settings (nothing is copied into the lm-eval YAMLs).
* lmms-eval strips every generated answer before ``process_results`` (``api/task.py``: ``res.strip()``); lm-eval
  does not. :func:`stripped` applies the same strip, so the same recorded answers give the same scores.
"""

from __future__ import annotations

import functools
import os

from hanyi import TASKS_DIR
from hanyi.task_yaml import FunctionRef, read, resolve


@functools.cache
def lmms_task_kwargs(benchmark: str, task: str) -> dict:
    """The ``lmms_eval_specific_kwargs.default`` block of ``hanyi/tasks/<benchmark>/<task>.yaml`` (includes merged).

    >>> lmms_task_kwargs("punrebus", "punrebus_textonly")
    {'prompt': 'textonly', 'prompt_variant': 'paper'}
    """
    path = os.path.join(TASKS_DIR, benchmark, f"{task}.yaml")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"hanyi lm-eval glue: no lmms-eval task YAML {path} to take the prompt settings from")
    block = read(path).get("lmms_eval_specific_kwargs") or {}
    return dict(block.get("default") or {})


def metric_list(benchmark: str, task: str) -> list[dict]:
    """The lmms-eval task's ``metric_list``, its aggregation functions imported: the same objects in both harnesses.

    >>> [m["metric"] for m in metric_list("punrebus", "punrebus_textonly")][:2]
    ['accuracy', 'accuracy_robust']
    """
    out = []
    for entry in read(os.path.join(TASKS_DIR, benchmark, f"{task}.yaml")).get("metric_list") or []:
        entry = dict(entry)
        if isinstance(entry.get("aggregation"), FunctionRef):
            entry["aggregation"] = resolve(entry["aggregation"], os.path.join(TASKS_DIR, benchmark))
        out.append(entry)
    if not out:
        raise ValueError(f"hanyi lm-eval glue: {benchmark}/{task}.yaml declares no metric_list")
    return out


def doc_to_text(benchmark: str, task: str, fn):
    """``fn(doc, lmms_eval_specific_kwargs=<task's default block>)`` as a one-argument lm-eval ``doc_to_text``."""

    @functools.wraps(fn)
    def call(doc):
        return fn(doc, lmms_eval_specific_kwargs=lmms_task_kwargs(benchmark, task))

    return call


def strip_responses(results) -> list:
    """lmms-eval's treatment of generated answers: ``None`` -> ``""``, every string stripped.

    >>> strip_responses(["  B. Happiness \\n", None])
    ['B. Happiness', '']
    """
    return ["" if r is None else r.strip() if isinstance(r, str) else r for r in results]


def stripped(process_results):
    """``process_results`` that first strips the answers as lmms-eval does (see :func:`strip_responses`)."""

    @functools.wraps(process_results)
    def call(doc, results):
        return process_results(doc, strip_responses(results))

    return call


def without_image_decoding(process_docs):
    """``process_docs`` run on the dataset with its image columns left undecoded: a text-only task sends no image,
    and iterating a column of type ``datasets.Image`` decodes it with Pillow, which a text-only run need not have."""

    @functools.wraps(process_docs)
    def wrapped(dataset):
        import datasets

        for name, feature in dataset.features.items():
            if isinstance(feature, datasets.Image) and feature.decode:
                dataset = dataset.cast_column(name, datasets.Image(decode=False))
        return process_docs(dataset)

    return wrapped
