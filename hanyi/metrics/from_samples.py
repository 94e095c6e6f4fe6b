"""Breakdowns computed after the run from the sample log, not emitted by the task.

A task emits its paper's main-table columns, their ``_robust`` siblings and a few diagnostics. Per-category,
per-label and per-feature numbers are computed by ``hanyi report`` from the per-doc results that lmms-eval writes
to the sample log (``--log_samples``: every line holds the dict ``process_results`` returned for that doc). The
task's ``process_results`` therefore logs, per doc, every field a breakdown needs (category, gold, parsed answer,
per-doc scores).

A breakdown is registered here with :func:`breakdown`: a function of the logged values of one ``source`` metric, in
doc order, that returns ``{metric name: value}`` under the names the task emitted before (``acc_domain_life``), so
the report's tables, anchors and plots read them as before. A breakdown may also name, per metric, the decomposed
aggregation (:mod:`hanyi.metrics.resample`, ``light``) of the source's items that gives the metric's value: the
report then gives that number a 95 % interval as it does an emitted one (a diagnostic moved out of the emitted keys
keeps its interval). Each benchmark keeps its breakdowns in
``hanyi/metrics/<benchmark>_breakdowns.py``, listed in :data:`MODULES`. This module and those import nothing from
``hanyi.tasks``, the start-up hook or lmms-eval.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: The modules that register breakdowns (imported on first use).
MODULES: tuple[str, ...] = (
    "hanyi.metrics.punrebus_breakdowns",
    "hanyi.metrics.cii_breakdowns",
    "hanyi.metrics.cvlue_breakdowns",
    "hanyi.metrics.vulca_breakdowns",
    "hanyi.metrics.unpie_breakdowns",
    "hanyi.metrics.vulca_bench_breakdowns",
)


@dataclass(frozen=True)
class Breakdown:
    """``compute(values) -> {metric: value}`` for the tasks whose name matches ``tasks`` (a regular expression,
    matched in full), reading the logged values of metric ``source``."""

    tasks: str
    source: str
    compute: Callable[[list], dict]
    lower_is_better: frozenset = frozenset()
    #: ``((metric, aggregation), ...)``: the decomposed, light aggregation of the source's items giving each metric
    intervals: tuple = ()

    def applies_to(self, task: str) -> bool:
        return re.fullmatch(self.tasks, task) is not None


_REGISTRY: list[Breakdown] = []


def breakdown(tasks: str, source: str, lower_is_better=(), intervals=None):
    """Decorator: register ``fn(values) -> {metric: value}`` as a breakdown of ``source`` for ``tasks``;
    ``intervals``: ``{metric: decomposed aggregation of the source's items}`` for the metrics that get an interval."""

    def register(fn):
        _REGISTRY.append(Breakdown(tasks, source, fn, frozenset(lower_is_better), tuple((intervals or {}).items())))
        return fn

    return register


def interval_sources(task: str, metric: str) -> list[tuple[str, Callable]]:
    """Every ``(source metric, decomposed aggregation)`` whose logged items give breakdown ``metric`` of ``task``
    (one per family: Pun Rebus's ``element_zh_rate`` comes from ``element_abs`` or ``element_abs_rule_lemma``)."""
    return [
        (item.source, fn)
        for item in registry()
        if item.applies_to(task)
        for name, fn in item.intervals
        if name == metric
    ]


def registry() -> list[Breakdown]:
    """Every registered breakdown, after importing :data:`MODULES`."""
    for name in MODULES:
        importlib.import_module(name)
    return list(_REGISTRY)


def derive(task: str, lines: list | None, emitted=()) -> dict[str, tuple[object, bool]]:
    """``{metric: (value, higher_is_better)}`` of every breakdown of ``task`` computed from its sample-log ``lines``.

    Metrics in ``emitted`` (the results file already has them: a run made before this release) are not recomputed.
    A breakdown whose source metric is missing from some line, or that raises on the logged values (a foreign or
    older log), is left out with one warning: the report shows what the run emitted, never a number computed some
    other way.
    """
    if not lines:
        return {}
    out: dict[str, tuple[object, bool]] = {}
    for item in registry():
        if not item.applies_to(task):
            continue
        if not all(isinstance(line, dict) and item.source in line for line in lines):
            continue
        values = [line[item.source] for line in sorted(lines, key=_doc_order)]
        try:
            computed = item.compute(values)
        except Exception as exc:  # an older or foreign log: no breakdown rather than a wrong one
            log.warning(
                "hanyi report: task %s: no breakdown from %s (%s: %s)", task, item.source, type(exc).__name__, exc
            )
            continue
        for name, value in computed.items():
            if name not in emitted and name not in out:
                out[name] = (value, name not in item.lower_is_better)
    return out


def _doc_order(line: dict):
    doc_id = line.get("doc_id")
    return (0, doc_id) if isinstance(doc_id, int) else (1, str(doc_id))
