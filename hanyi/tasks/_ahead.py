"""Scoring ahead: a task's response filter that sees every response of the task at once.

lmms-eval runs ``process_results`` one doc at a time, ``--process_docs_parallel`` (4) at once. A backbone asked per
doc encodes one string per call, and a judge asked per doc has at most that many requests in flight. A filter sees
the whole task first: :class:`ScoreAhead` calls the YAML's ``ahead`` function with every response, which encodes
each distinct string of the task once, in batches, into the per-process caches ``process_results`` reads, and
announces the judge requests (sent at ``HANYI_JUDGE_CONCURRENCY`` in flight once ``process_results`` asks for the
first of them). The numbers are the same either way (a backbone's within the float tolerance of docs/dev/contributing.md):
``process_results`` scores alone whatever the caches lack. Plain lmms-eval: a filter is a task's own code.
"""

from __future__ import annotations

import os

from hanyi.logs import get_logger
from hanyi.tasks._common import ValidUtf8Responses


def aligned_docs(n: int, docs) -> list[dict] | None:
    """The docs (without image columns) that a task's ``n`` responses answer, in order, or ``None`` when unsure.

    lmms-eval hands a filter the responses in request order and the whole eval split: one process holds every doc,
    process ``$RANK`` of ``$WORLD_SIZE`` the docs ``RANK, RANK + WORLD_SIZE, ...``; another count (``--limit``,
    ``--offset``) gives ``None``. A wrong guess costs no judge request: announced ones are sent only once
    ``process_results`` asks for one of them.

    >>> aligned_docs(2, [{"a": 1}, {"a": 2}]), aligned_docs(1, [{"a": 1}, {"a": 2}, {"a": 3}])
    ([{'a': 1}, {'a': 2}], None)
    """
    world, rank = int(os.environ.get("WORLD_SIZE") or 1), int(os.environ.get("RANK") or 0)
    total = len(docs) if docs is not None else 0
    ids = range(total) if n == total else range(rank, total, world)
    if docs is None or len(ids) != n:
        return None
    if hasattr(docs, "select_columns"):  # a datasets.Dataset: read without decoding its images
        keep = [c for c, f in docs.features.items() if "Image" not in repr(f)]
        return docs.select_columns(keep).select(ids).to_list()
    return [docs[i] for i in ids]


class ScoreAhead(ValidUtf8Responses):
    """:class:`ValidUtf8Responses` (valid UTF-8 in place), then ``ahead(responses, docs)``: each request's first
    response, as ``take_first`` gives it, and :func:`aligned_docs`. Named in a ``filter_list`` as
    ``{function: !function ahead.ScoreAhead, ahead: !function ahead.<bench>_ahead}`` (``utils.`` in Pun Rebus); a failure of ``ahead`` is
    logged and leaves every doc to ``process_results``."""

    def __init__(self, ahead=None, **kwargs) -> None:
        self.ahead = ahead

    def apply(self, resps, docs):
        resps = super().apply(resps, docs)
        responses = [group[0] if group else "" for group in resps]
        try:
            self.ahead(responses, aligned_docs(len(responses), docs))
        except Exception as exc:  # a cache only
            get_logger("hanyi").warning("hanyi: scoring ahead failed (%s: %s); scored per doc", type(exc).__name__, exc)
        return resps
