"""The one place where hanyi touches lmms-eval's and lm-eval's internals.

Nothing here is needed for a task's numbers: a plain ``lmms-eval --include_path <hanyi tasks dir>`` run, with the
start-up hook off (``HANYI_NO_AUTOHOOK=1``), gives the same headline numbers. What lives here, and who imports it:

* :mod:`hanyi.host.discovery`: lmms-eval 0.7.3 indexes tasks before it reads plugins, so ``TaskManager.__init__`` is
  wrapped to also index :data:`hanyi.TASKS_DIR` (until upstream patch 0001 lands); for lm-eval, its ``TaskManager``
  and model registry. The only lmms-eval callable replaced when the start-up hook is on.
* :mod:`hanyi.host.run_intervals`: run-time extras of ``hanyi eval`` only (standard errors of decomposed
  aggregations in the results, per-doc statistics in the sample log). ``hanyi report`` computes the same intervals
  from the sample log.
* :mod:`hanyi.host.cache_chunks`: ``hanyi eval --use_cache``: every answer cached as it is made, under the key a
  resumed run looks it up by.
* :mod:`hanyi.host.ownership`: the one test of whether a task is hanyi's, which every extra applies first.

Imported only by the start-up hook (:mod:`hanyi._autohook`) and ``hanyi eval`` (:mod:`hanyi.cli`). ``hanyi report``,
the metrics and the task folders never import it.
"""

from __future__ import annotations

import contextlib


def install_eval_extras() -> None:
    """The run-time extras of ``hanyi eval`` (never of a plain ``lmms-eval`` run): in-run standard errors and per-doc
    statistics of decomposed aggregations (:mod:`hanyi.host.run_intervals`); with ``--use_cache``, answers cached as
    they are made (:mod:`hanyi.host.cache_chunks`). The printed table is lmms-eval's own:
    hanyi's tasks emit few enough keys for it (tests/test_printed_table.py)."""
    from hanyi.host import cache_chunks, run_intervals

    run_intervals.install()
    cache_chunks.install()  # --use_cache: every answer written as it is made


def _host_callables() -> list[tuple[type, str]]:
    """The lmms-eval callables :func:`install_eval_extras` wraps."""
    import lmms_eval.utils
    from lmms_eval.caching.response_cache import ResponseCache
    from lmms_eval.evaluator_utils import TaskOutput

    return [
        (TaskOutput, "calculate_aggregate_metric"),
        (ResponseCache, "execute"),
        (ResponseCache, "create"),
        (lmms_eval.utils, "get_lmms_eval_cache_version"),
    ]


@contextlib.contextmanager
def eval_extras():
    """:func:`install_eval_extras` for the duration of one ``hanyi eval`` run; lmms-eval's own callables are put back
    after it, so an in-process run (a test, a notebook) leaves a later plain run untouched."""
    saved = [(cls, name, cls.__dict__[name]) for cls, name in _host_callables()]
    install_eval_extras()
    try:
        yield
    finally:
        for cls, name, original in saved:
            setattr(cls, name, original)
