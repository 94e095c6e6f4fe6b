"""Which aggregation function each hanyi task's YAML names for each metric, for the report's intervals.

The report re-runs a decomposed aggregation's ``combine`` (:mod:`hanyi.metrics.resample`) on the per-doc statistics
the run logged, so it needs the function itself, not the name lmms-eval printed in the results file. lmms-eval's own
``load_yaml_config`` resolves *every* ``!function`` tag, including ``dataset_path: !function hanyi.data.sources...``,
which fails where the data is not prepared (a report is often built on another machine). This reader
(:mod:`hanyi.task_yaml`) follows ``include:`` and resolves only the ``aggregation`` tags of ``metric_list``, the way
lmms-eval does (a dotted name relative to the YAML's directory, else an absolute module path). Cached per process.
"""

from __future__ import annotations

import functools
import glob
import os
import re

from hanyi import TASKS_DIR
from hanyi.task_yaml import FunctionRef, read, resolve


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
        if isinstance(agg, FunctionRef):
            try:
                agg = resolve(agg, os.path.dirname(path))
            except Exception:
                agg = None
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
    registered under the name the run's results file records (:data:`hanyi.metrics.resample.BY_NAME`), else the one
    the task's YAML names."""
    from hanyi.metrics import resample

    base = metric.split(",")[0]
    name = logged_name(run, task, base) if run is not None else None
    found = resample.by_name(name) if name else None
    return found if found is not None else aggregations(task).get(base)
