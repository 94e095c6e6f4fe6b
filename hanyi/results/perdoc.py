"""The per-doc results layer: run x task x doc x metric, with provenance, read once from lmms-eval's sample logs.

Every per-doc view reads it: the report's intervals, paired tests and breakdowns (:mod:`hanyi.report.build`,
:mod:`hanyi.results.decomposed`, :mod:`hanyi.results.stats`) and the leaderboard's intake
(:mod:`hanyi.leaderboard.intake`), which re-scores a submission's predictions through the replay model and reads
the re-scored run here. One implementation each of:

* :func:`per_doc_scores` / :func:`per_doc`: a metric's per-doc values, kept only when their mean reproduces the
  aggregate lmms-eval reported (as a fraction or a percentage: the ``scale``);
* :func:`cluster_key` / :func:`cluster_labels` / :func:`doc_clusters`: the docs that share an image, story or pun;
* :func:`doc_hashes`: each doc's content hash (:func:`hanyi.results.samples.content_hash`);
* :func:`task_layer`: all of that for one task of one run, with its provenance, as plain dicts keyed by ``doc_id``
  (a group: by the doc's place in the group, :func:`doc_keys`, since each of its tasks numbers its docs from 0).
"""

from __future__ import annotations

import math

from hanyi.results.runs import Run


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
        scale = mean_scale(vals, reported)
        if scale is not None:
            return vals, scale
    return {}, 1.0


def mean_scale(vals: dict, reported: float | None, scales=(1.0, 100.0)) -> float | None:
    """The first of ``scales`` by which the mean of ``vals`` is ``reported`` (a fraction, or a percentage of it);
    None when none is (the value is not the mean of these per-doc scores). The one rule the report and the board use.

    >>> mean_scale({0: 1.0, 1: 0.0}, 50.0), mean_scale({0: 1.0}, 0.3)
    (100.0, None)
    """
    if not vals or reported is None:
        return None
    mean = sum(vals.values()) / len(vals)
    return next((s for s in scales if math.isclose(mean * s, reported, rel_tol=1e-6, abs_tol=1e-9)), None)


def cluster_key(run, task: str) -> str | None:
    """The ``cluster_key`` of ``task``: from the run's results file (lmms-eval records the task config), else from
    the task's YAML as hanyi ships it; None when the task names none."""
    config = ((getattr(run, "raw", None) or {}).get("configs") or {}).get(task)
    if isinstance(config, dict) and "task" in config:
        return config.get("cluster_key") or None
    from hanyi.results.aggregations import task_files
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


def breakdown_source(t, task: str, name: str):
    """``(source metric, decomposed aggregation)`` of a metric the report computed from the sample log
    (:mod:`hanyi.metrics.from_samples`): the first source its breakdown names whose items every logged line holds;
    None for any other metric, or when no source was logged."""
    if t is None or not t.samples or not getattr((getattr(t, "metrics", None) or {}).get(name), "from_samples", False):
        return None
    from hanyi.metrics.from_samples import interval_sources

    lines = [s for s in t.samples if isinstance(s, dict)]
    return next(((s, f) for s, f in interval_sources(task, name.split(",")[0]) if all(s in ln for ln in lines)), None)


def from_samples_per_doc(run, task: str, name: str) -> dict:
    """``{doc_id: statistic}`` of a metric the report computed from the sample log, from the decomposed aggregation
    its breakdown names over the logged items of its source (finite statistics only: a NaN is an unscored doc);
    ``{}`` for any other metric. The report's per-doc path (paired comparison of two runs) reads it."""
    t = run.tasks.get(task)
    found = breakdown_source(t, task, name)
    if found is None:
        return {}
    source, fn = found
    lines = [s for s in t.samples if isinstance(s, dict)]
    per_doc = getattr(fn, "doc_values", None) or fn.per_doc  # one number per line (UNPIE's one split: NaN off it)
    try:
        values = [float(v) for v in per_doc([s[source] for s in lines])]
    except Exception:  # an older or foreign log
        return {}
    return {s.get("doc_id"): v for s, v in zip(lines, values) if math.isfinite(v)}


def leaves(run, task: str, depth: int = 0) -> list[str]:
    t = run.tasks.get(task)
    if t is None or not t.is_group or depth > 6:
        return [task]
    return [leaf for sub in t.subtasks for leaf in leaves(run, sub, depth + 1)]


def metric_of(run: Run, task: str, name: str):
    """The :class:`~hanyi.results.runs.Metric` ``name`` of ``task`` in ``run``; ``None`` when absent."""
    t = run.tasks.get(task)
    return t.metrics.get(name) if t else None


def per_doc(run: Run, task: str, name: str) -> tuple[dict, float]:
    """``({doc key: value}, scale)`` reproducing the reported value; a group pools its tasks' docs."""
    t = run.tasks.get(task)
    m = metric_of(run, task, name)
    if t is None or m is None or isinstance(m.value, dict) or m.value is None:
        return {}, 1.0
    if not t.is_group:
        vals, scale = per_doc_scores(t.samples, name, m.value)
        if not vals:  # a metric the report computed from the sample log (a diagnostic no longer emitted)
            found = from_samples_per_doc(run, task, name)
            mean = sum(found.values()) / len(found) if found else None
            vals = found if mean is not None and math.isclose(mean, m.value, rel_tol=1e-9, abs_tol=1e-12) else {}
        return {(task, d): v for d, v in vals.items()}, scale
    pooled: dict = {}
    scales = set()
    for sub in t.subtasks:
        vals, scale = per_doc(run, sub, name)
        if not vals:
            return {}, 1.0
        pooled.update(vals)
        scales.add(scale)
    if len(scales) != 1 or not pooled:
        return {}, 1.0
    scale = scales.pop()
    mean = sum(pooled.values()) / len(pooled)
    return (pooled, scale) if abs(mean * scale - m.value) <= 1e-6 * max(1.0, abs(m.value)) else ({}, 1.0)


def doc_clusters(run: Run, task: str, name: str) -> tuple[str | None, dict]:
    """``(cluster key, {(task, doc_id): cluster label})`` of a task's (a group: its tasks') logged docs, from the
    ``cluster_key`` its tasks set (:func:`hanyi.report.cluster_labels`); ``(None, {})`` when none is set."""
    found = leaves(run, task)
    keys = {cluster_key(run, leaf) for leaf in found if leaf in run.tasks} - {None}
    if len(keys) != 1:
        return None, {}
    key = keys.pop()
    out = {}
    for leaf in found:
        lines = [s for s in (run.tasks[leaf].samples if leaf in run.tasks else None) or () if isinstance(s, dict)]
        for line, label in zip(lines, cluster_labels(lines, key, name.split(",")[0]) or ()):
            out[leaf, line.get("doc_id")] = label
    return key, out


def doc_hashes(run: Run, task: str, images: bool = True) -> dict:
    """``{(task, doc_id): content hash}`` from a task's sample log (a group: its subtasks'), for the docs that log one
    (:func:`hanyi.results.samples.content_hash`; ``images=False``: without the logged image digests)."""
    t = run.tasks.get(task)
    if t is None:
        return {}
    if t.is_group:
        return {k: v for sub in t.subtasks for k, v in doc_hashes(run, sub, images).items()}
    from hanyi.results.samples import content_hash  # the doc's content, not lmms-eval's prompt-only doc_hash

    hashes = {(task, s.get("doc_id")): content_hash(s, images) for s in t.samples or [] if isinstance(s, dict)}
    return {k: v for k, v in hashes.items() if v is not None}


def task_layer(run: Run, task: str) -> dict:
    """One task of one run as the layer's plain record: ``metrics`` ({metric: {doc_id: value}} of every numeric
    metric whose per-doc values reproduce its aggregate), ``scales`` ({metric: 1 or 100}), ``values`` ({metric:
    aggregate}), ``clusters`` ({doc_id: label}; empty when the task names no ``cluster_key``), ``hashes`` ({doc_id:
    content hash}) and ``provenance`` (:func:`hanyi.results.provenance.task_provenance`)."""
    t = run.tasks[task]
    key = doc_keys(run, task)
    values, metrics, scales = {}, {}, {}
    for name, m in t.metrics.items():
        if isinstance(m.value, (int, float)) and not isinstance(m.value, bool):
            values[name] = m.value
            vals, scale = per_doc(run, task, name)
            if vals:
                metrics[name] = {key(k): v for k, v in vals.items()}
                scales[name] = scale
    _key, clusters = doc_clusters(run, task, next(iter(metrics), ""))
    return {
        "values": values,
        "metrics": metrics,
        "scales": scales,
        "clusters": {key(k): label for k, label in clusters.items() if label is not None},
        "hashes": {key(k): h for k, h in doc_hashes(run, task).items()},
        "provenance": t.provenance,
    }


def doc_keys(run: Run, task: str):
    """``key((leaf task, doc_id)) -> int``: the layer's doc key. A task's is its ``doc_id``; a group's tasks each
    number their docs from 0, so a group's key is the doc's place in the group: its ``doc_id`` plus the docs of the
    tasks before its own, in the group's order (each task's split size, else its largest logged ``doc_id`` + 1). Runs
    of one group on one data therefore give each doc the same key, and no two docs share one.

    A non-group task's keys are its doc ids, unchanged."""
    t = run.tasks.get(task)
    if t is None or not t.is_group:
        return lambda k: k[1]
    offsets, start = {}, 0
    for leaf in leaves(run, task):
        offsets[leaf] = start
        lt = run.tasks.get(leaf)
        ids = [s.get("doc_id") for s in (lt.samples if lt else None) or () if isinstance(s, dict)]
        ids = [d for d in ids if isinstance(d, int)]
        size = lt.n_original if lt is not None and isinstance(lt.n_original, int) else 0
        start += max(size, max(ids, default=-1) + 1)
    return lambda k: offsets[k[0]] + k[1]


def data_fingerprint(hashes: dict[int, str | None]) -> str:
    """``sha256:<hex>`` over a task's ``{doc_id: content hash}`` in doc order: the docs a run scored, as data.

    >>> data_fingerprint({1: "b", 0: "a"}) == data_fingerprint({0: "a", 1: "b"}) != data_fingerprint({0: "a"})
    True
    """
    import hashlib

    text = "".join(f"{d}:{hashes[d]}\n" for d in sorted(hashes))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
