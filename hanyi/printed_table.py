"""The table lmms-eval prints, kept to the headline numbers for hanyi's tasks (at most 80 rows, 120 columns for
``--tasks punrebus,cvlue,cii,unpie,vulca``).

lmms-eval 0.7.3 prints ``lmms_eval.utils.make_table(results)``: every metric of every task and group, breakdowns and
confusion dicts included. :func:`install` wraps ``make_table`` so that, **for hanyi's tasks only**, it prints a
filtered copy (:func:`headline_only`); the results dict, the results JSON, the sample logs and ``hanyi report`` keep
every number. Rules, per hanyi task or group in the table:

* a row is printed for a top-level task or group, and for the direct members of a top-level group; members of a
  nested group (UNPIE's ``*_homo`` / ``*_hetero``) are represented by their group's row;
* metrics printed: the task's ``metadata.headline`` list when its YAML declares one (and one of them was emitted);
  otherwise the metrics that a
  paper table column measures (the benchmark's anchor ``map``) plus their ``_robust`` sibling, per-category cells
  excluded; otherwise the task's first headline metric (by :mod:`hanyi.report.layout`). Dict-valued metrics
  (confusion rows) and ``N/A`` values are never printed;
* a group with nothing to print prints no row.

Set ``HANYI_FULL_TABLE=1`` to print lmms-eval's full table. :func:`install` is called by the start-up hook
(``hanyi/_autohook.py``) and by ``hanyi eval``.
"""

from __future__ import annotations

import os
import sys

FULL_TABLE_ENV = "HANYI_FULL_TABLE"
_STDERR = ("_stderr", "_stderr_clt", "_stderr_clustered")


def _parents(result_dict: dict) -> dict[str, str]:
    return {sub: group for group, subs in (result_dict.get("group_subtasks") or {}).items() for sub in subs or ()}


def _depth(task: str, parents: dict[str, str]) -> int:
    depth, seen = 0, {task}
    while task in parents and parents[task] not in seen:
        task = parents[task]
        seen.add(task)
        depth += 1
    return depth


def headline_metrics(bench: str, task: str, entry: dict, config: dict | None = None) -> list[str]:
    """The metric names (without filter) of one results entry to print, in the entry's order."""
    from hanyi.report.anchors import links_for, load_anchor_file
    from hanyi.report.layout import category_tables

    names = []
    for key, value in entry.items():
        metric, sep, _filt = key.partition(",")
        if not sep or metric.endswith(_STDERR) or isinstance(value, dict) or value in ("N/A", None, ""):
            continue
        if metric not in names:
            names.append(metric)
    declared = ((config or {}).get("metadata") or {}).get("headline")
    if isinstance(declared, list) and any(m in declared for m in names):
        return [m for m in names if m in declared]
    hints = (load_anchor_file(bench) or {}).get("categories") or []
    head, _ = category_tables(names, hints)
    mapped = {link.metric for link in links_for(bench, task, names)} & set(head)
    keep = mapped | {m + "_robust" for m in mapped}
    chosen = [m for m in head if m in keep]
    return chosen or head[:1]


def headline_only(result_dict: dict, column: str = "results") -> dict:
    """A copy of ``result_dict`` whose ``column`` keeps only the headline rows of hanyi's tasks (see module doc)."""
    from hanyi.report.results import benchmark_of

    if os.environ.get(FULL_TABLE_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return result_dict
    entries = result_dict.get(column)
    if not isinstance(entries, dict):
        return result_dict
    parents = _parents(result_dict)
    configs = result_dict.get("configs") or {}
    kept = {}
    for task, entry in entries.items():
        bench = benchmark_of(task, parents)
        if bench is None or not isinstance(entry, dict):
            kept[task] = entry  # not ours: untouched
            continue
        if _depth(task, parents) > 1:
            continue
        metrics = set(headline_metrics(bench, task, entry, configs.get(task)))
        if not metrics:
            continue
        kept[task] = {k: v for k, v in entry.items() if "," not in k or _base(k.partition(",")[0]) in metrics}
    return {**result_dict, column: kept}


def _base(metric: str) -> str:
    for suffix in _STDERR:
        if metric.endswith(suffix):
            return metric[: -len(suffix)]
    return metric


def install() -> bool:
    """Wrap ``lmms_eval.utils.make_table`` (and ``lmms_eval.evaluator``'s copy) once. Returns True if installed."""
    import lmms_eval.utils as utils

    if getattr(utils.make_table, "_hanyi_headline", False):
        return False
    original = utils.make_table

    def make_table(result_dict, column: str = "results", sort_results: bool = False):
        return original(headline_only(result_dict, column), column, sort_results)

    make_table._hanyi_headline = True
    make_table.__wrapped__ = original
    make_table.__doc__ = original.__doc__
    utils.make_table = make_table
    for name in ("lmms_eval.evaluator", "lmms_eval.__main__"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "make_table", None) is original:
            module.make_table = make_table
    return True
