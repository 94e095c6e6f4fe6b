"""One interval method per kind of number, clusters respected: the statistics behind ``hanyi report``'s intervals,
paired comparisons and minimum detectable differences. Plain values in, dicts out; no I/O.

Docs that share an image, a story, a painting or a pun are not independent: resampling them one by one gives
intervals that are too narrow (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640, §2.3). So every method
here takes optional ``clusters`` (one label per unit; units without a label are their own cluster) and ``strata``
(one label per unit: a resample draws each stratum's clusters from that stratum only, so it never loses one):

* **a share of 0/1 scores** (:func:`share_interval`): the exact Clopper–Pearson interval (Clopper & Pearson 1934) for
  ``k`` of ``n``; with clusters, the same interval at the effective sample size ``n / deff`` (``k / deff``
  successes), Korn & Graubard 1998, where ``deff`` is Kish's design effect (:func:`design_effect`);
* **any other number** (:func:`cluster_bootstrap`): a seeded percentile bootstrap of the aggregation itself over
  clusters (Davison & Hinkley 1997, §3.8; Field & Welsh 2007), stratified where the value is a mean over strata
  (UNPIE's All over its two splits; a group over its subtasks);
* **a paired comparison** (:func:`paired`): the mean difference B − A with a paired cluster bootstrap interval; for
  0/1 scores McNemar's exact test (McNemar 1947) or, with clusters, Durkalski et al. 2003's clustered McNemar;
* **power** (:func:`mdd`): the minimum detectable difference at 80 % power, ``(z(1 − α/2) + z(0.8)) · SE``
  (Cohen 1988, ch. 12; Miller 2024, §5).

:func:`interval` picks the method for a decomposed aggregation (:mod:`hanyi.metrics.resample`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

from hanyi.metrics import resample
from hanyi.metrics.resample import ITERS, LEVEL, SEED, clopper_pearson

POWER = 0.8


def _z(q: float) -> float:
    return NormalDist().inv_cdf(q)


def _labels(clusters, n: int) -> list:
    """One hashable cluster label per unit; a missing label (None) makes the unit a cluster of its own."""
    if clusters is None:
        return [("unit", i) for i in range(n)]
    if len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster labels for {n} units")
    return [("unit", i) if c is None else ("cluster", c) for i, c in enumerate(clusters)]


def design_effect(values: Sequence[float], clusters: Sequence | None) -> float:
    """Kish's design effect of the mean of ``values`` (Kish 1965, §5.4): the variance of the mean under cluster
    sampling over its variance under independent sampling, ``Σ_c (Σ_{i∈c} d_i)² / Σ_i d_i²`` with
    ``d_i = x_i − x̄`` (the sandwich estimator, Liang & Zeger 1986). With equal clusters of ``m`` it is
    ``1 + (m − 1) ρ`` (ρ the intra-cluster correlation). Never below 1 (a negative ρ is not taken as a gain,
    as Korn & Graubard 1998 truncate it); 1 without clusters or without variation.

    >>> design_effect([1, 1, 1, 0, 0, 0], ["a", "a", "a", "b", "b", "b"])
    3.0
    >>> design_effect([1, 0, 1, 0], None)
    1.0
    """
    n = len(values)
    if n == 0 or clusters is None:
        return 1.0
    mean = math.fsum(values) / n
    total = math.fsum((x - mean) ** 2 for x in values)
    if total <= 0:
        return 1.0
    sums: dict = {}
    for x, c in zip(values, _labels(clusters, n)):
        sums[c] = sums.get(c, 0.0) + (x - mean)
    return max(1.0, math.fsum(s * s for s in sums.values()) / total)


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (Lentz's method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def _beta_ppf(q: float, a: float, b: float) -> float:
    """The ``q`` quantile of Beta(a, b), by bisection on :func:`_betainc` (100 steps at most; it stops once a step
    changes nothing, as every later step would then change nothing either: the same bits, sooner)."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        before = (lo, hi)
        if _betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
        if (lo, hi) == before:
            break
    return (lo + hi) / 2


def share_interval(k: float, n: float, deff: float = 1.0, level: float = LEVEL) -> tuple[float, float]:
    """Clopper–Pearson interval for ``k`` of ``n`` at the effective sample size ``n / deff`` (Korn & Graubard 1998):
    the Beta quantiles ``B(α/2; k*, n* − k* + 1)`` and ``B(1 − α/2; k* + 1, n* − k*)`` with ``k* = k / deff``,
    ``n* = n / deff``. Without a design effect it is :func:`hanyi.metrics.resample.clopper_pearson`.

    >>> [round(x, 4) for x in share_interval(7, 20)]
    [0.1539, 0.5922]
    >>> [round(x, 4) for x in share_interval(21, 60, deff=3.0)]
    [0.1539, 0.5922]
    """
    if n <= 0:
        raise ValueError("share_interval needs n > 0")
    if deff <= 1.0 and float(k).is_integer() and float(n).is_integer():
        return clopper_pearson(int(k), int(n), level)
    alpha = 1 - level
    ks, ns = k / deff, n / deff
    low = 0.0 if ks <= 0 else _beta_ppf(alpha / 2, ks, ns - ks + 1)
    high = 1.0 if ks >= ns else _beta_ppf(1 - alpha / 2, ks + 1, ns - ks)
    return low, high


def mdd(stderr: float | None, level: float = LEVEL, power: float = POWER) -> float | None:
    """Minimum detectable difference: the true difference a two-sided test at ``1 − level`` detects with probability
    ``power``, given the standard error of the difference: ``(z(1 − α/2) + z(power)) · SE`` (Cohen 1988, ch. 12).

    >>> round(mdd(0.01), 5)
    0.02802
    """
    if stderr is None or not math.isfinite(stderr):
        return None
    return (_z(1 - (1 - level) / 2) + _z(power)) * stderr


def _index(labels: list, strata) -> tuple:
    """``(row cluster index, [cluster indices of each stratum])``; a cluster lies in the stratum of its first unit."""
    ids: dict = {}
    rows = [ids.setdefault(c, len(ids)) for c in labels]
    groups: dict = {}
    seen = set()
    for i, c in enumerate(rows):
        if c not in seen:
            seen.add(c)
            groups.setdefault(None if strata is None else strata[i], []).append(c)
    return rows, list(groups.values())


def _draw_counts(rng, groups: list, n_clusters: int, k: int):
    """``k`` resamples' draw counts per cluster (``k`` × clusters): in each, every stratum's clusters drawn with
    replacement, as many as it has, one resample after the other."""
    import numpy as np

    counts = np.zeros((k, n_clusters))
    for i in range(k):
        for group in groups:
            counts[i] += np.bincount(group[rng.integers(0, len(group), size=len(group))], minlength=n_clusters)
    return counts


def _weighted_means(arrays: list, locals_: list, n_clusters: int) -> list | None:
    """For parts whose ``combine`` is a mean of the statistics it counts (:func:`hanyi.metrics.resample._counted`,
    the rule of its ``_fast_resample``): ``[(weight, per-cluster sum, per-cluster count, value of none)]``, so that
    a resample's part is ``counts @ sum / counts @ count`` (equal to re-running the mean up to float rounding);
    None when a part is not such a mean, or holds a NaN or inf a resample may or may not draw."""
    import numpy as np

    out = []
    for (w, combine, arr), local in zip(arrays, locals_):
        keep = resample._counted(combine, arr)
        if keep is None or combine is resample.percent_share:
            return None
        vals = np.where(keep, arr, 0.0)
        if not np.isfinite(vals).all():
            return None
        empty = math.nan if combine in (resample.nan_mean, resample.rate) else 0.0
        sums = np.bincount(local, weights=vals, minlength=n_clusters)
        out.append((w, sums, np.bincount(local, weights=keep.astype(float), minlength=n_clusters), empty))
    return out


def cluster_bootstrap(
    parts: Sequence[tuple],
    iters: int = ITERS,
    seed: int = SEED,
    level: float = LEVEL,
    keep_draws: bool = False,
) -> dict:
    """Percentile bootstrap of ``Σ weight · combine(stats)`` over ``parts = [(weight, combine, stats, clusters,
    strata), ...]`` (``clusters``, ``strata``: one label per row, or None). Each resample draws, in every stratum,
    as many clusters as it has, with replacement, and takes every row of each drawn cluster in every part (a cluster
    shared by two parts, e.g. one pun in two languages' subtasks, is drawn for both together); each part's
    ``combine`` is re-run on its rows. Clusters and strata are labels shared across parts; a part without clusters
    has its rows as clusters of their own, in the stratum ``("part", index)`` unless it names strata.

    Returns ``{"value", "ci_low", "ci_high", "stderr", "method", "n", "clusters"}`` (``stderr``: the standard deviation
    of the resampled values; no interval, with ``why``, when the value or more than 5 % of resamples is undefined;
    with ``keep_draws``, also ``"draws"``: the resampled values, which :func:`paired_test` reads).

    >>> import numpy as np
    >>> out = cluster_bootstrap([(1.0, resample.mean, np.array([1.0, 1.0, 0.0, 0.0]), ["a", "a", "b", "b"], None)])
    >>> out["value"], out["clusters"], (out["ci_low"], out["ci_high"])
    (0.5, 2, (0.0, 1.0))
    """
    import numpy as np

    arrays, labels_of, strata_of = [], [], []
    for p, (weight, combine, stats, clusters, strata) in enumerate(parts):
        arr = np.asarray(stats, dtype=float)
        arrays.append((float(weight), combine, arr))
        labels_of.append([(p, c) if c[0] == "unit" else c for c in _labels(clusters, len(arr))])
        strata_of.append([None] * len(arr) if strata is None else list(strata))
    all_labels, all_strata = [], []
    for p, labels in enumerate(labels_of):  # a part sharing no cluster with another part is a stratum of its own
        others = {c for q, other in enumerate(labels_of) if q != p for c in other}
        own = not others.intersection(labels)
        all_labels += labels
        all_strata += [(("part", p) if own else None, s) for s in strata_of[p]]
    n = len(all_labels)
    rows, groups = _index(all_labels, all_strata)
    rows = np.asarray(rows, dtype=int)
    groups = [np.asarray(g, dtype=int) for g in groups]
    n_clusters = int(rows.max()) + 1 if n else 0
    value = sum(w * float(c(a)) for w, c, a in arrays) if n and all(len(a) for _, _, a in arrays) else math.nan
    unit = "clusters" if n_clusters < n else "units"
    method = (
        f"stratified bootstrap over {unit} within {len(groups)} strata" if len(groups) > 1 else f"bootstrap over {unit}"
    )
    method += f" re-running the aggregation ({iters}, seed {seed})"
    out = {"value": value, "n": n, "clusters": n_clusters}
    if n == 0 or not math.isfinite(value):
        return {**out, "ci_low": None, "ci_high": None, "stderr": None, "why": "no scored unit", "method": method}
    bounds = np.cumsum([0] + [len(a) for _, _, a in arrays])
    rng = np.random.default_rng(seed)
    weighted = _weighted_means(arrays, [rows[bounds[p] : bounds[p + 1]] for p in range(len(arrays))], n_clusters)
    values = np.empty(iters)
    if weighted is not None:  # every part a mean: Σ count · sum / Σ count · size per cluster, many resamples at once
        step = max(1, min(iters, 2_000_000 // n_clusters))
        for start in range(0, iters, step):
            k = min(step, iters - start)
            if len(groups) == 1:  # the drawn clusters themselves (the stream of k one-by-one resamples)
                picks = groups[0][rng.integers(0, len(groups[0]), size=(k, len(groups[0])))]
                totals = [(w, sums[picks].sum(axis=1), sizes[picks].sum(axis=1), e) for w, sums, sizes, e in weighted]
            else:
                counts = _draw_counts(rng, groups, n_clusters, k)
                totals = [(w, counts @ sums, counts @ sizes, e) for w, sums, sizes, e in weighted]
            total = np.zeros(k)
            for w, num, den, empty in totals:
                total += w * np.where(den > 0, num / np.where(den > 0, den, 1.0), empty)
            values[start : start + k] = total
    fast = [resample._fast_resample(c, a) for _, c, a in arrays]
    for i in range(0 if weighted is not None else iters):
        counts = _draw_counts(rng, groups, n_clusters, 1)[0].astype(int)
        total = 0.0
        for p, (w, combine, arr) in enumerate(arrays):
            local = rows[bounds[p] : bounds[p + 1]]
            idx = np.repeat(np.arange(len(arr)), counts[local])
            total += w * (fast[p](idx) if fast[p] is not None else float(combine(arr[idx])))
        values[i] = total
    why = f"the aggregate is undefined on {int((~np.isfinite(values)).sum())} of {iters} resamples"
    out = resample._percentile_record(out, values, level, method, why)
    return {**out, "draws": values} if keep_draws else out


def interval(
    combine: Callable, stats, clusters: Sequence | None = None, strata: Sequence | None = None, **kwargs
) -> dict:
    """The interval of one aggregate ``combine(stats)`` (a decomposed aggregation's, :mod:`hanyi.metrics.resample`):
    a share of 0/1 statistics gets :func:`share_interval` (clustered by :func:`design_effect`), anything else
    :func:`cluster_bootstrap`. Adds ``n`` (the value's denominator: the units it counts), ``n_units`` (all units),
    ``clusters``, ``deff`` (shares), ``mdd`` (:func:`mdd` of a difference to another run of the same size and
    standard error: ``√2 · SE``, independent runs; pairing on the same docs usually lowers it; for a share the SE at
    Agresti & Caffo 2000's ``(k + 1) / (n + 2)``, so that 0 of n still has one; None without variation).

    >>> out = interval(resample.sum_mean, [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], clusters=["a", "a", "a", "b", "b", "b"])
    >>> out["method"], out["deff"], out["n"], out["clusters"]
    ('exact (Clopper-Pearson), design effect 3.00 over 2 clusters', 3.0, 6, 2)
    """
    import numpy as np

    arr = np.asarray(stats, dtype=float)
    column = getattr(combine, "split_column", None)  # a mean over splits (UNPIE's All): a resample keeps every split
    if strata is None and column is not None and arr.ndim == 2:
        strata = arr[:, column].tolist()
    if strata is None and resample.is_proportion(combine, arr):
        keep = resample._counted(combine, arr) & np.isfinite(arr)
        values = arr[keep].tolist()
        labels = None if clusters is None else [c for c, kept in zip(clusters, keep) if kept]
        k, m = int(sum(values)), len(values)
        deff = design_effect(values, labels)
        n_clusters = len(set(_labels(labels, m)))
        low, high = share_interval(k, m, deff, kwargs.get("level", LEVEL))
        p = k / m
        se = math.sqrt(p * (1 - p) / (m - 1) * deff) if m > 1 else 0.0
        method = "exact (Clopper-Pearson)"
        if labels is not None and n_clusters < m:
            method += f", design effect {deff:.2f} over {n_clusters} clusters"
        out = {"value": float(combine(arr)), "ci_low": low, "ci_high": high, "stderr": se, "method": method}
        out.update(n=m, n_units=len(arr), clusters=n_clusters, deff=deff)
        tilde = (k + 1) / (m + 2)  # Agresti & Caffo 2000: an MDD at 0 of n or n of n is not 0
        out["mdd"] = mdd(math.sqrt(2 * tilde * (1 - tilde) * deff / m))
        return out
    out = cluster_bootstrap([(1.0, combine, arr, clusters, strata)], **kwargs)
    out["n_units"] = len(arr)
    out["n"] = _counted_units(combine, arr)
    out["mdd"] = mdd(None if not out.get("stderr") else math.sqrt(2) * out["stderr"])  # no variation: none
    return out


def _counted_units(combine, arr) -> int:
    """The units the value counts: the finite statistics of a mean over the scored ones, else every unit whose
    statistic is finite (a NaN unit is one the aggregation leaves out)."""
    import numpy as np

    keep = resample._counted(combine, arr)
    finite = np.isfinite(arr) if arr.ndim == 1 else np.isfinite(arr).all(axis=1)
    return int((finite if keep is None else keep & finite).sum())


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of ``b`` vs ``c`` discordant pairs at p = 1/2 (McNemar 1947; as
    ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``).

    >>> mcnemar_exact(0, 0), round(mcnemar_exact(1, 9), 6), mcnemar_exact(3, 3)
    (1.0, 0.021484, 1.0)
    """
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * resample._binom_cdf(min(b, c), n, 0.5))


def mcnemar_clustered(a: Sequence[float], b: Sequence[float], clusters: Sequence) -> float:
    """Two-sided p-value of Durkalski et al. 2003's clustered McNemar test of paired 0/1 scores: with ``b_k``, ``c_k``
    the cluster's discordant counts, ``X² = (Σ (b_k − c_k))² / Σ (b_k − c_k)²`` against χ²(1). With one unit per
    cluster it is McNemar's (asymptotic) ``(b − c)² / (b + c)``.

    >>> round(mcnemar_clustered([1, 1, 0, 0], [0, 0, 1, 0], [1, 2, 3, 4]), 4)
    0.5637
    """
    diff: dict = {}
    for x, y, c in zip(a, b, _labels(clusters, len(a))):
        diff[c] = diff.get(c, 0.0) + (x - y)
    denom = math.fsum(d * d for d in diff.values())
    if denom == 0:
        return 1.0
    stat = math.fsum(diff.values()) ** 2 / denom
    return math.erfc(math.sqrt(stat / 2))


def paired_test(a: Sequence[float], b: Sequence[float], clusters: Sequence | None = None, **kwargs) -> dict:
    """The paired test of B against A on the same units (``clusters`` as in :func:`paired`): ``{"test", "p"}``. For 0/1
    scores McNemar's exact test (``a_only``, ``b_only``: the discordant counts), or :func:`mcnemar_clustered` when a
    cluster holds more than one unit; for any other scores the paired cluster bootstrap of the differences B − A
    (``draws``: its resampled means, else it is run with ``kwargs``), two-sided: ``p = min(1, 2 · min(share of draws
    ≤ 0, share ≥ 0))``, the level at which the percentile interval of the difference reaches 0.

    >>> paired_test([0, 0, 1, 1], [1, 1, 1, 1])["p"], paired_test([0, 0, 1], [1, 1, 1], [1, 1, 2])["test"]
    (0.5, 'clustered McNemar (Durkalski 2003)')
    >>> paired_test([0.1, 0.2, 0.3, 0.4], [0.6, 0.7, 0.8, 0.9], iters=200)
    {'test': 'paired bootstrap (two-sided percentile p)', 'p': 0.0}
    """
    import numpy as np

    if all(v in (0.0, 1.0) for v in (*a, *b)):
        a_only = sum(1 for x, y in zip(a, b) if x == 1 and y == 0)
        b_only = sum(1 for x, y in zip(a, b) if x == 0 and y == 1)
        counts = {"a_only": a_only, "b_only": b_only}
        if len(set(_labels(clusters, len(a)))) < len(a):
            return {"test": "clustered McNemar (Durkalski 2003)", "p": mcnemar_clustered(a, b, clusters), **counts}
        return {"test": "McNemar exact (two-sided)", "p": mcnemar_exact(a_only, b_only), **counts}
    draws = kwargs.pop("draws", None)
    if draws is None:
        diffs = [y - x for x, y in zip(a, b)]
        draws = cluster_bootstrap([(1.0, resample.mean, diffs, clusters, None)], keep_draws=True, **kwargs).get("draws")
    d = np.asarray([] if draws is None else draws, dtype=float)
    d = d[np.isfinite(d)]
    p = 1.0 if not len(d) else min(1.0, 2 * min(float((d <= 0).mean()), float((d >= 0).mean())))
    return {"test": "paired bootstrap (two-sided percentile p)", "p": p}


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the order given: the ``i``-th smallest of ``m`` is
    ``max_{j ≤ i} min(1, (m − j + 1) · p_(j))``; reject where the adjusted p is below the level (family-wise error).

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(pvalues)
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda k: pvalues[k])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = round(running, 15)
    return out


def rank_draws(scores, clusters: Sequence | None = None, iters: int = 1000, seed: int = SEED, chunk: int = 50):
    """The ranks of several systems on one paired cluster bootstrap: ``scores`` is systems × units (NaN: a unit the
    system was not scored on, left out of its mean); each resample draws as many clusters as there are, with
    replacement (``clusters``: one label per unit, as in :func:`cluster_bootstrap`; clusters numbered in order of
    first appearance), weights every unit by its cluster's draw count and takes each system's weighted mean over its
    scored units; rank 1 is the highest mean, tied means share the best rank, an undefined mean ranks last. Returns
    an ``iters`` × systems integer array. Draw ``b``'s clusters are the ``b``-th of ``numpy.random.default_rng(seed)``'s
    successive ``integers(0, C, size=C)`` (drawn ``chunk`` draws at a time: the same stream).

    >>> rank_draws([[1, 1, 0, 1], [0, 0, 1, 0]], iters=3).tolist()
    [[1, 2], [1, 2], [1, 2]]
    """
    import numpy as np

    s = np.asarray(scores, dtype=float)
    scored = np.isfinite(s)
    rows, _ = _index(_labels(clusters, s.shape[1]), None)
    rows = np.asarray(rows, dtype=int)
    n_clusters = int(rows.max()) + 1 if len(rows) else 0
    # per cluster and system: the sum of its scored units' scores and their count
    sums = np.stack([np.bincount(rows, weights=np.where(ok, x, 0.0), minlength=n_clusters) for x, ok in zip(s, scored)])
    sizes = np.stack([np.bincount(rows, weights=ok.astype(float), minlength=n_clusters) for ok in scored])
    rng = np.random.default_rng(seed)
    out = np.empty((iters, s.shape[0]), dtype=int)
    for start in range(0, iters, chunk):
        k = min(chunk, iters - start)
        picks = rng.integers(0, n_clusters, size=(k, n_clusters))
        flat = (np.arange(k)[:, None] * n_clusters + picks).ravel()
        counts = np.bincount(flat, minlength=k * n_clusters).reshape(k, n_clusters).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (counts @ sums.T) / (counts @ sizes.T)  # k × systems
        means = np.where(np.isfinite(means), means, -np.inf)
        out[start : start + k] = 1 + (means[:, None, :] > means[:, :, None]).sum(axis=2)
    return out


def paired(a: Sequence[float], b: Sequence[float], clusters: Sequence | None = None, **kwargs) -> dict:
    """Paired comparison of two runs' per-unit scores on the same units (``a[i]``, ``b[i]`` one unit, in the cluster
    ``clusters[i]``): both means, the difference B − A, its 95 % interval by the paired cluster bootstrap (units of
    a drawn cluster taken in both runs together), its standard error and :func:`mdd`, ``below_mdd``; the test of
    :func:`paired_test`: for 0/1 scores McNemar's exact test (no clusters of more than one unit) or
    :func:`mcnemar_clustered` (``mcnemar_p``), else "significant" when the interval excludes 0 (``p``: the bootstrap
    p-value).

    >>> out = paired([0, 0, 1, 1], [1, 1, 1, 1])
    >>> out["difference"], out["test"], out["a_only"], out["b_only"]
    (0.5, 'McNemar exact (two-sided)', 0, 2)
    """
    n = len(a)
    if n == 0 or len(b) != n:
        raise ValueError("paired needs the same, non-empty units in both runs")
    diffs = [y - x for x, y in zip(a, b)]
    boot = cluster_bootstrap([(1.0, resample.mean, diffs, clusters, None)], keep_draws=True, **kwargs)
    labels = _labels(clusters, n)
    n_clusters = len(set(labels))
    unit = "clusters" if n_clusters < n else "docs"
    out = {
        "n_pairs": n,
        "clusters": n_clusters,
        "mean_a": math.fsum(a) / n,
        "mean_b": math.fsum(b) / n,
        "difference": math.fsum(diffs) / n,
        "ci_low": boot["ci_low"],
        "ci_high": boot["ci_high"],
        "stderr": boot["stderr"],
        "ci_method": f"paired bootstrap over {unit} ({kwargs.get('iters', ITERS)}, seed {kwargs.get('seed', SEED)})",
        "mdd": mdd(boot["stderr"] or None),  # no resampled variation (no discordant doc): none
    }
    out["below_mdd"] = out["mdd"] is not None and abs(out["difference"]) < out["mdd"]
    test = paired_test(a, b, clusters, draws=boot.get("draws"))
    if "a_only" in test:
        out.update(a_only=test["a_only"], b_only=test["b_only"], mcnemar_p=test["p"], test=test["test"])
        out["significant"] = test["p"] < 0.05
    else:
        low, high = out["ci_low"], out["ci_high"]
        out.update(significant=low is not None and not (low <= 0 <= high), test="paired bootstrap CI excludes 0")
        out["p"] = test["p"]
    return out
