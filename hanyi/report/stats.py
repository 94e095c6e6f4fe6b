"""Uncertainty for the report: 95 % intervals for headline numbers and paired comparisons of two runs.

Per-doc scores come from lmms-eval's sample log (``--log_samples``): the item a task's ``process_results`` returned
for a metric, one per doc. :func:`per_doc_scores` reads the per-doc value (a number, or a dict's ``correct`` /
``instance_score``) and keeps it only when the mean of those values reproduces the aggregated number lmms-eval
reported (as a fraction or a percentage), so an interval is never attached to an aggregate that is not a per-doc mean.

* **Intervals** (:func:`interval`) and the **paired comparison** (:func:`paired`, on the docs both runs scored, matched
  by task and ``doc_id``) are :mod:`hanyi.metrics.intervals`' methods, one per kind of number, over docs or over
  the clusters the task's ``cluster_key`` names (:func:`cluster_labels`).
"""

from __future__ import annotations

import math

from hanyi.metrics.intervals import mcnemar_exact  # noqa: F401  (one source, re-exported)
from hanyi.metrics.resample import ITERS as BOOTSTRAP_ITERS
from hanyi.metrics.resample import LEVEL, SEED, _binom_cdf, clopper_pearson  # noqa: F401  (one source, re-exported)


def interval(values: list[float], clusters: list | None = None) -> dict:
    """The interval record of the plain mean of per-doc ``values`` (in their unit; :func:`hanyi.metrics.intervals.interval`:
    exact Clopper–Pearson for 0/1 values, clustered by the design effect; else a bootstrap over docs or clusters)."""
    from hanyi.metrics import intervals, resample

    return intervals.interval(resample.sum_mean, values, clusters)


def _item_value(item, key: str):
    if isinstance(item, bool):
        return float(item)
    if isinstance(item, (int, float)):
        return float(item) if math.isfinite(item) else None
    if isinstance(item, dict) and key in item:
        v = item[key]
        if v is None:
            return None
        if isinstance(v, bool) or isinstance(v, (int, float)):
            return float(v)
    return None


def per_doc_candidates(samples: list[dict], metric: str) -> list[tuple[str, dict[int, float]]]:
    """Readings of ``metric``'s per-doc values in a sample log: ``[(rule, {doc_id: value})]``."""
    items = [(s.get("doc_id"), s.get(metric)) for s in samples if metric in s]
    if not items:
        return []
    out = []
    if all(isinstance(it, (int, float)) for _, it in items):
        out.append(("value", {d: _item_value(it, "") for d, it in items if _item_value(it, "") is not None}))
    if all(isinstance(it, dict) for _, it in items):
        if all("correct" in it for _, it in items):
            out.append(("correct, all docs", {d: float(bool(it["correct"])) for d, it in items}))
            if all("parsed" in it for _, it in items):
                out.append(("correct, parsed docs", {d: float(bool(it["correct"])) for d, it in items if it["parsed"]}))
        for key in ("instance_score", "score", "v"):  # v: CVLUE's per-doc value
            if any(key in it for _, it in items):
                vals = {d: _item_value(it, key) for d, it in items}
                out.append((f"{key}, scored docs", {d: v for d, v in vals.items() if v is not None}))
                out.append((f"{key}, unscored as 0", {d: (v if v is not None else 0.0) for d, v in vals.items()}))
    return [(rule, vals) for rule, vals in out if vals]


def per_doc_scores(samples: list[dict] | None, metric: str, reported: float | None) -> tuple[dict[int, float], float]:
    """``({doc_id: value}, scale)`` whose mean × ``scale`` equals ``reported``; ``({}, 1)`` when none does."""
    if not samples or reported is None:
        return {}, 1.0
    for _rule, vals in per_doc_candidates(samples, metric):
        mean = sum(vals.values()) / len(vals)
        for scale in (1.0, 100.0):
            if math.isclose(mean * scale, reported, rel_tol=1e-6, abs_tol=1e-9):
                return vals, scale
    return {}, 1.0


def paired(
    a: dict[int, float],
    b: dict[int, float],
    iters: int = BOOTSTRAP_ITERS,
    seed: int = SEED,
    clusters: dict | None = None,
) -> dict | None:
    """Compare two runs' per-doc scores on the docs both have (:func:`hanyi.metrics.intervals.paired`: difference
    B − A, paired bootstrap CI over docs, or over the clusters ``clusters`` maps doc keys to; McNemar; MDD)."""
    from hanyi.metrics import intervals

    shared = sorted(set(a) & set(b), key=str)
    if not shared:
        return None
    labels = None if not clusters else [clusters.get(d) for d in shared]
    return intervals.paired([a[d] for d in shared], [b[d] for d in shared], labels, iters=iters, seed=seed)


def cluster_key(run, task: str) -> str | None:
    """The ``cluster_key`` of ``task``: from the run's results file (lmms-eval records the task config), else from
    the task's YAML as hanyi ships it; None when the task names none."""
    config = ((getattr(run, "raw", None) or {}).get("configs") or {}).get(task)
    if isinstance(config, dict) and "task" in config:
        return config.get("cluster_key") or None
    from hanyi.report.aggregations import task_files
    from hanyi.task_yaml import read

    path = task_files().get(task)
    try:
        return (read(path).get("cluster_key") or None) if path else None
    except Exception:
        return None


def cluster_labels(lines: list[dict], key: str | None, metric: str | None = None) -> list | None:
    """One cluster label per sample-log line: the value of ``key`` in the line's ``metric`` item, else in any of its
    dict items (``None`` where no item has it: the doc is a cluster of its own); None without ``key`` or labels."""
    if not key:
        return None
    out = []
    for line in lines:
        items = [line.get(metric)] if metric else []
        items += [v for v in line.values() if isinstance(v, dict)]
        label = next((it[key] for it in items if isinstance(it, dict) and it.get(key) is not None), None)
        out.append(label if label is None or isinstance(label, (str, int, float)) else str(label))
    return out if any(label is not None for label in out) else None
