"""N-process runs score hanyi's tasks in doc order, so they give the 1-process numbers bit for bit.

lmms-eval 0.7.3 shards docs by rank (rank ``r`` of ``W`` gets docs ``r, r+W, r+2W, ...``), then gathers every
metric's per-doc items on rank 0 rank by rank: ``[docs of rank 0] + [docs of rank 1] + ...``. An aggregation then
sums floats in another order than a 1-process run does, and means differ in the last bit (seen: 157 VULCA metrics,
Pun Rebus ``element_sim``). :func:`patch_task_output` puts the items back in doc order on rank 0, just before
aggregation, for hanyi's tasks only; with one process it does nothing.

The reordering assumes what hanyi's ``process_results`` guarantee: every doc of a task emits the same metric keys
(a key is left out for all docs or for none, e.g. when no judge is configured). It is installed with the task
discovery hook (:mod:`hanyi.host.discovery`) and by ``hanyi eval``; a run with ``HANYI_NO_AUTOHOOK=1`` and plain
``lmms-eval --include_path`` keeps lmms-eval's order, so its float means may differ from 1 process in the last bit.
"""

from __future__ import annotations

import functools
import logging
import os

from hanyi import TASKS_DIR

log = logging.getLogger(__name__)


def rank_major_to_doc_order(items: list, world_size: int) -> list:
    """Undo lmms-eval's gather order: ``items`` holds rank 0's docs, then rank 1's, ... (docs ``r::world_size``).

    >>> rank_major_to_doc_order(["d0", "d2", "d4", "d1", "d3"], 2)
    ['d0', 'd1', 'd2', 'd3', 'd4']
    >>> rank_major_to_doc_order(["d0", "d3", "d1", "d2"], 3)
    ['d0', 'd1', 'd2', 'd3']
    >>> rank_major_to_doc_order([1, 2], 1)
    [1, 2]
    """
    n = len(items)
    if world_size <= 1 or n < 2:
        return list(items)
    out: list = [None] * n
    pos = 0
    for rank in range(world_size):
        for doc in range(rank, n, world_size):
            out[doc] = items[pos]
            pos += 1
    return out


def _is_hanyi_task(task) -> bool:
    """True when the task's ``process_results`` is defined in a file under :data:`hanyi.TASKS_DIR`."""
    fn = getattr(getattr(task, "config", None), "process_results", None)
    code = getattr(fn, "__code__", None)
    filename = os.path.abspath(code.co_filename) if code is not None else ""
    return filename.startswith(os.path.abspath(TASKS_DIR) + os.sep)


def _world_size() -> int:
    try:
        return int(os.environ.get("WORLD_SIZE", "1") or 1)
    except ValueError:
        return 1


def wrap_aggregation(task_output_cls, marker: str, before=None, after=None, arguments=None) -> bool:
    """Wrap ``task_output_cls.calculate_aggregate_metric`` once per ``marker``: ``before(self)`` runs first,
    ``arguments(self, args, kwargs) -> (args, kwargs)`` gives what lmms-eval's method is called with, and
    ``after(self, args, kwargs)`` runs after lmms-eval has aggregated, with the arguments the wrapper was given; all
    three for hanyi's tasks only. True if it patched. Shared by the doc-order patch here and the interval hook
    (:mod:`hanyi.host.run_intervals`)."""
    if task_output_cls is None:
        from lmms_eval.evaluator_utils import TaskOutput as task_output_cls
    original = task_output_cls.calculate_aggregate_metric
    if getattr(original, marker, False):
        return False

    @functools.wraps(original)
    def calculate_aggregate_metric(self, *args, **kwargs):
        ours = _is_hanyi_task(getattr(self, "task", None))
        if ours and before is not None:
            before(self)
        call_args, call_kwargs = arguments(self, args, kwargs) if ours and arguments is not None else (args, kwargs)
        result = original(self, *call_args, **call_kwargs)
        if ours and after is not None:
            after(self, args, kwargs)
        return result

    setattr(calculate_aggregate_metric, marker, True)
    task_output_cls.calculate_aggregate_metric = calculate_aggregate_metric
    return True


def safe_install(patch, what: str) -> bool:
    """``patch()``, never raising: a failure is logged with ``what`` and the run goes on."""
    try:
        return patch()
    except Exception as exc:  # never break lmms-eval because of us
        log.warning("hanyi: could not install %s (%r)", what, exc)
        return False


def _restore_doc_order(task_output) -> None:
    world_size = _world_size()
    if world_size <= 1:
        return
    for key, items in list(task_output.sample_metrics.items()):
        task_output.sample_metrics[key] = rank_major_to_doc_order(items, world_size)
    samples = getattr(task_output, "logged_samples", None)
    if samples and all(isinstance(s, dict) and "doc_id" in s for s in samples):
        task_output.logged_samples = sorted(samples, key=lambda s: s["doc_id"])


def patch_task_output(task_output_cls=None) -> bool:
    """Wrap ``TaskOutput.calculate_aggregate_metric`` to restore doc order first. Idempotent; True if patched."""
    return wrap_aggregation(task_output_cls, "_hanyi_doc_order", before=_restore_doc_order)


def install() -> bool:
    """:func:`patch_task_output` on lmms-eval's class; never raises (a failure is logged, the run goes on)."""
    return safe_install(patch_task_output, "doc-order aggregation for multi-process runs")
