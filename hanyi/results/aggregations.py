"""Which aggregation each hanyi task uses for each metric, for the report's intervals, without any task code.

The report re-runs a decomposed aggregation's ``combine`` (:mod:`hanyi.metrics.resample`) on per-doc statistics it
reads from the sample log, so it needs the function itself. Every aggregation a hanyi task YAML names is defined in
``hanyi/metrics/*_aggregations.py`` and registered there under its name (:data:`hanyi.metrics.resample.BY_NAME`).
The name comes from the run's results file (``"<function cii_acc at 0x...>"`` in its task config) or, for a results
file without configs, from the task's YAML read as text (:mod:`hanyi.task_yaml`: ``!function utils.cii_acc`` names
``cii_acc``); nothing under ``hanyi/tasks`` is imported. Cached per process.
"""

from __future__ import annotations

import functools
import glob
import os
import re

from hanyi import TASKS_DIR
from hanyi.task_yaml import FunctionRef, read


@functools.lru_cache(maxsize=1)
def task_files() -> dict[str, str]:
    """``{task name: YAML path}`` for every task YAML under :data:`hanyi.TASKS_DIR` (by its ``task:`` line)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(TASKS_DIR, "**", "*.yaml"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            found = re.search(r"^task:[ \t]*['\"]?([\w.-]+)", fh.read(), re.MULTILINE)
        if found:
            out.setdefault(found.group(1), path)
    return out


@functools.cache
def aggregations(task: str) -> dict:
    """``{metric: aggregation function}`` of a hanyi task; registered names (``mean`` ...) stay strings; ``{}`` for a
    task this package does not ship or whose YAML cannot be read."""
    path = task_files().get(task)
    if path is None:
        return {}
    try:
        config = read(path)
    except Exception:
        return {}
    out = {}
    for entry in config.get("metric_list") or []:
        if not isinstance(entry, dict) or "metric" not in entry:
            continue
        agg = entry.get("aggregation")
        if isinstance(agg, FunctionRef):  # found by its name among hanyi.metrics' aggregations: no task code imported
            from hanyi.metrics import resample

            agg = resample.by_name(agg.rsplit(".", 1)[-1])
        out[entry["metric"]] = agg
    return out


_FUNCTION_NAME = re.compile(r"^<function ([\w.]+) at 0x[0-9a-fA-F]+>$")


def logged_name(run, task: str, metric: str) -> str | None:
    """The aggregation's name as the run's results file records it (``"<function cii_acc at 0x...>"`` in
    ``configs[task].metric_list``), or None."""
    config = ((getattr(run, "raw", None) or {}).get("configs") or {}).get(task) or {}
    for entry in config.get("metric_list") or []:
        if isinstance(entry, dict) and entry.get("metric") == metric and isinstance(entry.get("aggregation"), str):
            found = _FUNCTION_NAME.match(entry["aggregation"])
            return found.group(1).rsplit(".", 1)[-1] if found else None
    return None


def aggregation(task: str, metric: str, run=None):
    """The aggregation function of ``metric`` in ``task`` (``None`` when unknown): the decomposed aggregation
    registered under the name the run's results file records (:data:`hanyi.metrics.resample.BY_NAME`), else under the
    name the task's YAML gives."""
    from hanyi.metrics import resample

    base = metric.split(",")[0]
    name = logged_name(run, task, base) if run is not None else None
    found = resample.by_name(name) if name else None
    return found if found is not None else aggregations(task).get(base)
