"""Uncertainty for the report: 95 % intervals for headline numbers and paired comparisons of two runs.

Per-doc scores come from lmms-eval's sample log (``--log_samples``): the item a task's ``process_results`` returned
for a metric, one per doc. :func:`per_doc_scores` reads the per-doc value (a number, or a dict's ``correct`` /
``instance_score``) and keeps it only when the mean of those values reproduces the aggregated number lmms-eval
reported (as a fraction or a percentage), so an interval is never attached to an aggregate that is not a per-doc mean.

* **Intervals** (:func:`interval`): per-doc 0/1 scores get the exact Clopper–Pearson interval; other per-doc scores a
  percentile bootstrap over docs (:data:`BOOTSTRAP_ITERS` resamples, seed :data:`SEED`).
* **Paired comparison** (:func:`paired`): the docs both runs scored (matched by task and ``doc_id``), the difference
  B − A, a paired percentile bootstrap interval of it (docs resampled jointly), and for 0/1 scores McNemar's exact
  two-sided test, a binomial test of the discordant pairs at p = 1/2 (McNemar 1947; the exact form as in
  ``scipy.stats.binomtest``).
"""

from __future__ import annotations

import math

from hanyi.metrics.resample import ITERS as BOOTSTRAP_ITERS
from hanyi.metrics.resample import LEVEL, SEED, _binom_cdf, clopper_pearson  # noqa: F401  (one source, re-exported)


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default rule) of an already sorted list."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _boot_means(values: list[float], iters: int, seed: int) -> list[float]:
    """Sorted means of ``iters`` resamples (with replacement) of ``values``; numpy, seeded."""
    import numpy as np

    arr = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(iters)
    step = max(1, 4_000_000 // max(1, len(arr)))  # bounded memory for large n
    for start in range(0, iters, step):
        stop = min(iters, start + step)
        means[start:stop] = arr[rng.integers(0, len(arr), size=(stop - start, len(arr)))].mean(axis=1)
    return sorted(means.tolist())


def bootstrap_mean(values: list[float], iters: int = BOOTSTRAP_ITERS, seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, seeded (same input, same interval).

    >>> bootstrap_mean([0.5] * 10)
    (0.5, 0.5)
    """
    means = _boot_means(values, iters, seed)
    alpha = 1 - LEVEL
    return _percentile(means, alpha / 2), _percentile(means, 1 - alpha / 2)


def is_binary(values: list[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def interval(values: list[float]) -> tuple[float, float, str]:
    """``(low, high, method)`` for the mean of per-doc ``values`` (in their unit)."""
    if is_binary(values):
        low, high = clopper_pearson(int(sum(values)), len(values))
        return low, high, "exact (Clopper-Pearson)"
    low, high = bootstrap_mean(values)
    return low, high, f"bootstrap over docs ({BOOTSTRAP_ITERS}, seed {SEED})"


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of ``b`` vs ``c`` discordant pairs at p = 1/2.

    >>> mcnemar_exact(0, 0), round(mcnemar_exact(1, 9), 6), mcnemar_exact(3, 3)
    (1.0, 0.021484, 1.0)
    """
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * _binom_cdf(min(b, c), n, 0.5))


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


def paired(a: dict[int, float], b: dict[int, float], iters: int = BOOTSTRAP_ITERS, seed: int = SEED) -> dict | None:
    """Compare two runs' per-doc scores on the docs both have: difference B − A, paired bootstrap CI, McNemar."""
    shared = sorted(set(a) & set(b), key=str)
    if not shared:
        return None
    xs = [a[d] for d in shared]
    ys = [b[d] for d in shared]
    n = len(shared)
    diffs = [y - x for x, y in zip(xs, ys)]
    boots = _boot_means(diffs, iters, seed)
    alpha = 1 - LEVEL
    out = {
        "n_pairs": n,
        "mean_a": sum(xs) / n,
        "mean_b": sum(ys) / n,
        "difference": sum(diffs) / n,
        "ci_low": _percentile(boots, alpha / 2),
        "ci_high": _percentile(boots, 1 - alpha / 2),
        "ci_method": f"paired bootstrap over docs ({iters}, seed {seed})",
    }
    if is_binary(xs) and is_binary(ys):
        b_only = sum(1 for x, y in zip(xs, ys) if x == 1 and y == 0)
        c_only = sum(1 for x, y in zip(xs, ys) if x == 0 and y == 1)
        out.update(a_only=b_only, b_only=c_only, mcnemar_p=mcnemar_exact(b_only, c_only))
        out["significant"] = out["mcnemar_p"] < 0.05
        out["test"] = "McNemar exact (two-sided)"
    else:
        out["significant"] = not (out["ci_low"] <= 0 <= out["ci_high"])
        out["test"] = "paired bootstrap CI excludes 0"
    return out
