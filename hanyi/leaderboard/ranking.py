"""The board's ranking: accepted :class:`~hanyi.leaderboard.entries.Entry` records in, a
:class:`~hanyi.leaderboard.entries.Board` of sections out. Nothing here reads a file but the anchors; every
statistic is :mod:`hanyi.metrics.intervals`' (the report's), computed on the board's own re-scores.

**Sections.** Rows are ranked together when they share their ranking column (:func:`entry_column`: the first
candidate below the row has a value for that the board scored itself) and the protocol of that column's task
(:attr:`Entry.protocol`: task version, prompt variant, backbone keys, full split, data fingerprint; the judge only
where the ranking column is itself judged) — nothing else (:func:`section_key`). A difference in another column's
protocol (another judge on ``cii_ctc`` in a section ranked by ``cii_none/acc``) splits nothing: those cells carry a
note. Each other key is a section of its own, whose ``apart`` says how it differs from the benchmark's main
section: the one with the most rows; on a tie, the one with more paper rows it is comparable with.

**Judged columns the board did not judge** (:func:`unverified`: re-aggregated from the submitter's own verdicts) are
shown with :data:`UNVERIFIED_NOTE`, never a ranking column and never a reason to split.

**Ranking column**, per benchmark: the paper's headline, the first of these that every row of the section has
(:data:`RANKING_COLUMNS`):

* Pun Rebus Art: ``punrebus_matching/accuracy``, Table 1's first column (symbolic matching accuracy; the paper ranks
  no mean of its columns); a text-only section ranks by ``punrebus_textonly/accuracy`` (Table 2's only column).
* CVLUE: ``cvlue_vqa/accuracy``, "VQA Acc". Table 4 has one column per task and no overall one; the default group
  ``cvlue`` (the one every model can run) has VQA and VG, and VQA comes first of those in Table 4; then VG mIoU,
  then the ``cvlue_ranking`` tasks' R@1 (TR, IR, VD) for a section without VQA.
* CII-Bench: ``cii_none/acc``, Table 1's "Overall" (the paper's ranking); then the other prompt settings' ``acc``.
* UNPIE: ``unpie_grounding/exact_match``, Table 4 (the paper's first task), both splits pooled: the paper prints
  Homo and Hetero only, and with 500 puns each the pooled share is their mean; then the SM and LM settings'.
* VULCA: ``vulca_baseline/expert_alignment``, the §4.4 / Table 1 alignment of the model's own (not persona-guided)
  critiques; its tables 4, 5 and 7 are per-feature scores with no overall column.
* VULCA-Bench: ``vulca_bench/dcr``, the all-sample Dimension Coverage Rate (the paper's headline, the release's mean
  over every critique): the group, which the intake re-scores when a submission holds all eight cultures
  (:data:`hanyi.leaderboard.intake.SCORED_GROUPS`), its docs keyed by their place in the group so the cultures' doc
  ids never collide and clustered on the artwork; a submission of fewer cultures is ranked apart by the first
  culture's ``dcr`` it has, in the release's order (western, chinese, ... korean).

**Cells** are value [95 % interval] by the report's method for a mean of per-doc scores
(:func:`hanyi.results.stats.interval`: exact Clopper-Pearson for 0/1 scores, clustered by the design effect where
:attr:`Entry.clusters` labels docs that share an image, story or pun; else a cluster bootstrap), in the value's unit;
a judge's score on a scale (:func:`is_judge_scale`) always by the cluster bootstrap (:func:`scale_interval`), never
Clopper-Pearson, so never outside the scale even when every doc scored the scale's minimum; a value that is not the
mean of its per-doc scores (corpus BLEU) has no interval, and says so. A cell is a function
of its submission alone: ``rank(..., cache_dir=...)`` keeps each submission's cells (:func:`cells`), so a rebuild
computes only the new submissions' cells (docs/dev/performance.md, "The leaderboard at 100 submissions").

**Rank interval**: :func:`hanyi.metrics.intervals.rank_draws`, ``RANK_ITERS`` = 1,000 paired resamples (seed
:func:`bench_seed`: one stream per benchmark, from :data:`hanyi.metrics.resample.SEED` and the benchmark's name) of
the section's docs (whole clusters where there are clusters), each row's mean over the docs it scored; the interval
is the 2.5th and 97.5th percentiles of each row's rank (the smallest rank ``r`` with at least 2.5 %, resp. 97.5 %,
of the draws at or above ``r``).

**Tiers** (:func:`tiers`): "not distinguishable from the tier's best". Rows sorted by value; each row is tested
against its tier's top on the docs both scored (:func:`pair_test`: McNemar's exact test for 0/1 scores, the exact
cluster sign-flip test :func:`sign_flip_exact` where docs share clusters, else the paired bootstrap); the ``n − 1``
p-values are Holm-corrected together; the first row significantly below its top opens a new tier, and the family is
tested and corrected again, until no row is. No chaining: a row is never kept in a tier by the row above it.

**Flip**: the fewest docs whose scores would have to change, in either row or both (each score to any value in
[0, 1]), for the row to stand strictly above the one above it. A doc ``d`` can move the gap by at most
``hi_d / n_hi + (1 − lo_d) / n_lo`` (each part only where that row scored ``d``; ``n``: the docs each row's mean
counts), so taking the docs of largest gain first gives the exact minimum, for 0/1 scores and for continuous ones.
None where a per-doc score lies outside [0, 1].

**Reference rows**: the papers' numbers linked to a section's columns (:func:`hanyi.results.anchors.links_for`), in
our unit, never ranked; marked comparable only when :func:`hanyi.results.provenance.comparability` finds no reason
against any ranked row of the section (the report's rule), with the reasons.

**Overall**: a mean rank only when every model on the board has a row in the main section of every benchmark on it
(two or more); its interval comes from the per-benchmark rank draws (draw ``b`` of each benchmark, averaged).
Otherwise :attr:`Board.overall` is None and :attr:`Board.overall_absent` says why.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import pickle
import re
import tempfile

from hanyi import BENCHMARKS
from hanyi.leaderboard.entries import Board, Cell, Entry, Rejected, Row, Section
from hanyi.metrics import intervals
from hanyi.metrics.resample import ITERS, SEED
from hanyi.results import anchors as anchor_mod

#: Paired bootstrap resamples behind each rank interval (and the overall mean rank's).
RANK_ITERS = 1000
#: The level of the tier tests (after Holm).
ALPHA = 0.05
#: VULCA-Bench's cultures in the release's (and the group's) order: a section without the whole group ranks by the
#: first of these every row has.
VULCA_BENCH_CULTURES = ("western", "chinese", "japanese", "islamic", "mural", "hermitage", "indian", "korean")
#: Per benchmark, the ranking column candidates in order (``(task, metric)``); see the module docstring.
RANKING_COLUMNS = {
    "punrebus": (
        ("punrebus_matching", "accuracy"),
        ("punrebus_matching_5shot", "accuracy"),
        ("punrebus_textonly", "accuracy"),
        ("punrebus_elements", "element_sim"),
    ),
    "cvlue": (
        ("cvlue_vqa", "accuracy"),
        ("cvlue_vg", "miou"),
        ("cvlue_tr_rerank", "r1"),
        ("cvlue_ir_rerank", "r1"),
        ("cvlue_vd", "r1"),
    ),
    "cii": (("cii_none", "acc"), ("cii_cot", "acc"), ("cii_3shot", "acc"), ("cii_textonly", "acc")),
    "unpie": (
        ("unpie_grounding", "exact_match"),
        ("unpie_grounding_sm", "exact_match"),
        ("unpie_grounding_text", "exact_match"),
    ),
    "vulca": (("vulca_baseline", "expert_alignment"), ("vulca", "expert_alignment")),
    "vulca_bench": (
        ("vulca_bench", "dcr"),
        *((f"vulca_bench_{c}", "dcr") for c in VULCA_BENCH_CULTURES),
    ),
}


def column(task: str, metric: str) -> str:
    return f"{task}/{metric}"


def _split(col: str) -> tuple[str, str]:
    task, _, metric = col.partition("/")
    return task, metric


def scores(entry: Entry, col: str) -> dict:
    """The finite per-doc scores of one column of an entry, ``{doc_id: score}``."""
    task, metric = _split(col)
    found = (entry.per_doc.get(task) or {}).get(metric) or {}
    return {d: float(v) for d, v in found.items() if v is not None and math.isfinite(float(v))}


def _scale(per: dict, value: float | None, given: float | None = None) -> float | None:
    """The factor that turns the mean of ``per`` into ``value``: the intake's (:attr:`Entry.scales`), else 1 or 100;
    None when it does not (the value is not the mean of its per-doc scores)."""
    from hanyi.results.perdoc import mean_scale

    return mean_scale(per, value, (given,) if given else (1.0, 100.0))


def _given_scale(entry: Entry, col: str) -> float | None:
    task, metric = _split(col)
    return ((getattr(entry, "scales", None) or {}).get(task) or {}).get(metric)


def cell(entry: Entry, col: str) -> Cell:
    """Value [95 % interval] of one column of an entry, by the report's method for a mean of per-doc scores."""
    from hanyi.results import stats

    task, metric = _split(col)
    value = (entry.values.get(task) or {}).get(metric)
    judged = entry.judged.get(col)
    note = f"judge verdicts {judged}" if judged else ""
    if col in unverified(entry):
        note = UNVERIFIED_NOTE
    if value is None or not math.isfinite(value):
        return Cell(None, note=note)
    per = scores(entry, col)
    scale = _scale(per, value, _given_scale(entry, col))
    if scale is None:
        why = "no interval: not the mean of its per-doc scores" if per else "no interval: no per-doc scores"
        return Cell(value, note="; ".join(x for x in (note, why) if x))
    labels = (entry.clusters or {}).get(task) or {}
    groups = [labels.get(d) for d in per] if labels else None
    if is_judge_scale(entry, col):
        out = scale_interval(list(per.values()), groups)
    else:
        out = stats.interval(list(per.values()), groups)
    low, high, stderr = (None if out.get(k) is None else out[k] * scale for k in ("ci_low", "ci_high", "stderr"))
    if low is None:
        note = "; ".join(x for x in (note, f"no interval: {out.get('why', 'none')}") if x)
    return Cell(value, low, high, out.get("n", len(per)), note, stderr=stderr, method=out.get("method", ""))


#: The note of a judged cell the board did not judge itself: the submitter's verdicts, shown, never ranked.
UNVERIFIED_NOTE = "the submitter's judge verdicts, not judged by the board: shown, never ranked"
#: Metrics that are a judge's score on a scale (1-5, 1-10 ...), whatever the task: never a share of 0/1 scores.
JUDGE_SCALE_METRICS = re.compile(r"^(?:judge_score|ctc_score.*|rubric_.*|.*_judge_score)$")


def unverified(entry: Entry) -> set[str]:
    """The judged columns of an entry that the board did not judge itself (the submitter's logged verdicts): the
    intake's own list where it gives one, else every judged column not marked ``re-judged``."""
    own = getattr(entry, "unverified", None)
    found = {c for c, how in (entry.judged or {}).items() if how != "re-judged"}
    if own:
        found |= {str(c) for c in own}
    return found


def is_judge_scale(entry: Entry, col: str) -> bool:
    """A judged column, or a metric known to be a judge's score: its scores are points of a scale, not 0/1 shares,
    even when every doc scored 1 (the scale's minimum)."""
    return col in (entry.judged or {}) or bool(JUDGE_SCALE_METRICS.match(_split(col)[1]))


def scale_interval(values: list[float], clusters: list | None = None) -> dict:
    """The interval of the mean of judge scores: the cluster bootstrap of the mean (whole clusters where docs share
    one), never Clopper-Pearson; a percentile of resampled means lies between the lowest and highest score given,
    so never outside the scale.

    >>> out = scale_interval([1.0, 1.0, 1.0])
    >>> (out["ci_low"], out["ci_high"]), out["method"].startswith("bootstrap")
    ((1.0, 1.0), True)
    """
    from hanyi.metrics import resample

    out = intervals.cluster_bootstrap([(1.0, resample.sum_mean, values, clusters, None)])
    return {**out, "n": len(values)}


#: Protocol fields that name a judge: they matter to a column only where the judge scored that column.
JUDGE_FIELDS = ("judge", "judge_model", "judge_version")
#: Protocol fields that describe the system under test, not how it is scored: named in a section's protocol line,
#: never a reason to rank rows apart or to mark a cell (a vLLM-served model is ranked beside a transformers one, as
#: two models are).
SYSTEM_FIELDS = ("model_backend",)


def entry_column(bench: str, entry: Entry) -> str:
    """The column an entry is ranked by: the first of :data:`RANKING_COLUMNS` it has a value for that the board
    scored itself (never a judged column on the submitter's verdicts, :func:`unverified`); else the first such
    column of its own, in name order; else ``""`` (nothing the board can rank)."""
    skip = unverified(entry)

    def ok(col: str) -> bool:
        task, metric = _split(col)
        value = (entry.values.get(task) or {}).get(metric)
        return value is not None and math.isfinite(value) and col not in skip

    for task, metric in RANKING_COLUMNS.get(bench, ()):
        if ok(column(task, metric)):
            return column(task, metric)
    own = sorted(column(t, m) for t, ms in entry.values.items() for m in ms)
    return next((c for c in own if ok(c)), "")


def section_key(bench: str, entry: Entry) -> tuple:
    """What rows must share to be ranked together: the ranking column and the protocol of its task, and nothing
    else. A judge field counts only where the column is judged: a judge that scored another metric of the task (or
    another task) does not touch the column, so it splits nothing; the other columns' differences are marked on
    their cells (:func:`build_section`)."""
    col = entry_column(bench, entry)
    if not col:
        return ("", ())
    task = _split(col)[0]
    fields = {k: v for k, v in (entry.protocol.get(task) or {}).items() if k not in SYSTEM_FIELDS}
    judged_here = any(_split(c)[0] == task for c in entry.judged or {})
    if judged_here and col not in entry.judged:
        for k in JUDGE_FIELDS:
            fields.pop(k, None)
    return (col, tuple(sorted((str(k), v) for k, v in fields.items())))


def _majorities(entries: list[Entry]) -> dict[tuple[str, str], tuple]:
    """``{(task, field): (value most rows have, {value: rows})}`` over the entries that ran the task."""
    counts: dict[tuple[str, str], dict] = {}
    for e in entries:
        for task, fields in (e.protocol or {}).items():
            for k, v in (fields or {}).items():
                per = counts.setdefault((task, str(k)), {})
                per[v] = per.get(v, 0) + 1
    return {key: (min(per, key=lambda v: (-per[v], repr(v))), per) for key, per in counts.items()}


def section_protocol(entries: list[Entry]) -> dict:
    """The protocol of a section, flat: ``field`` where every row and task has the same value, else ``task: field``
    with the value every row of the task shares, or "differs by row" (those cells are marked)."""
    majorities = _majorities(entries)
    tasks = sorted({t for e in entries for t in set(e.values) | set(e.protocol)})
    out: dict[str, str | None] = {"tasks": ", ".join(tasks)}
    fields = sorted({k for _, k in majorities})
    for k in fields:
        per_task = {t: per for (t, f), (_, per) in majorities.items() if f == k}
        values = {v for per in per_task.values() for v in per}
        if len(values) == 1 and len(per_task) == len(tasks):
            out[k] = values.pop()
            continue
        for t, per in sorted(per_task.items()):
            if len(per) == 1:
                out[f"{t}: {k}"] = next(iter(per))
            elif k in SYSTEM_FIELDS:  # named, never marked: rows may run on different engines
                out[f"{t}: {k}"] = ", ".join(f"{v} ({n} row{'s' * (n != 1)})" for v, n in sorted(per.items(), key=str))
            else:
                out[f"{t}: {k}"] = "differs by row (marked on the cells)"
    return out


def section_apart(key: tuple, main: tuple) -> list[str]:
    """How a section's key (:func:`section_key`) differs from the main section's, one line per difference."""
    (col, items), (main_col, main_items) = key, main
    if not col:
        return ["no column the board scored itself: not ranked"]
    reasons = [] if col == main_col else [f"ranked by {col} here, {main_col or 'nothing'} in the main section"]
    a, b = dict(items), dict(main_items)
    where = "" if col == main_col else f" ({_split(col)[0]} here)"
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            reasons.append(f"{k}: {a.get(k)} here, {b.get(k)} in the main section{where}")
    return reasons


def _columns(bench: str, entries: list[Entry], anchors_dir: str) -> list[str]:
    """Every column the section's rows have; the paper's main-table columns first, in the paper's order."""
    data = anchor_mod.load_anchor_file(bench, anchors_dir) or {}
    tables = [t["id"] for t in data.get("tables") or []]
    cols = sorted({column(t, m) for e in entries for t, ms in e.values.items() for m in ms})

    def order(col: str):
        task, metric = _split(col)
        links = anchor_mod.links_for(bench, task, [metric], anchors_dir)
        if not links:
            return (1, len(tables), 0, col)
        link = links[0]
        return (0, tables.index(link.table["id"]), link.table["columns"].index(link.column), col)

    return sorted(cols, key=order)


def ranking_column(bench: str, entries: list[Entry], columns: list[str]) -> str:
    """The first candidate of :data:`RANKING_COLUMNS` every row has a value for; else one some row has; else the
    first column."""
    candidates = [column(t, m) for t, m in RANKING_COLUMNS.get(bench, ())]
    for need in (all, any):
        for col in candidates:
            task, metric = _split(col)
            if need((e.values.get(task) or {}).get(metric) is not None for e in entries):
                return col
    return columns[0] if columns else ""


def flip(upper: dict, lower: dict) -> int | None:
    """The fewest docs whose change puts ``lower`` (per-doc scores in [0, 1], ``{doc: score}``) strictly above
    ``upper``: each doc may change in either row or both (see the module docstring); exact, largest gain first.

    >>> flip({1: 1, 2: 1, 3: 0}, {1: 0, 2: 1, 3: 0})  # 2/3 vs 1/3: doc 1 (1, 0) -> (0, 1) gains 2/3
    1
    """
    if not upper or not lower or any(not 0 <= v <= 1 for v in (*upper.values(), *lower.values())):
        return None
    n_hi, n_lo = len(upper), len(lower)
    gap = math.fsum(upper.values()) / n_hi - math.fsum(lower.values()) / n_lo
    gains = sorted(
        ((upper[d] / n_hi if d in upper else 0.0) + ((1 - lower[d]) / n_lo if d in lower else 0.0))
        for d in set(upper) | set(lower)
    )[::-1]
    total = 0.0
    for count, gain in enumerate(gains, 1):
        total += gain
        if total > gap + 1e-9:
            return count
    return None


def _quantile(values, q: float):
    """The smallest ``v`` with at least a share ``q`` of ``values`` at or below it (inverted CDF)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def competition_ranks(values: list[float], higher_better: bool = True) -> list[int]:
    """1 + the number of values strictly better: tied values share the best rank (1, 2, 2, 4)."""
    sign = 1 if higher_better else -1
    return [1 + sum(1 for w in values if sign * w > sign * v) for v in values]


def bench_seed(bench: str) -> int:
    """The seed of one benchmark's resamples: derived from :data:`SEED` and the benchmark's name, so each benchmark
    has a stream of its own and adding a benchmark to the board moves no other benchmark's rank intervals.

    >>> bench_seed("cii") == bench_seed("cii") != bench_seed("punrebus")
    True
    """
    return int.from_bytes(hashlib.sha256(f"{SEED}:{bench}".encode()).digest()[:4], "big")


def sign_flip_exact(a: list[float], b: list[float], clusters: list | None = None) -> float:
    """Two-sided exact p-value of paired 0/1 scores by the cluster sign-flip permutation: under "no difference" the
    two systems' scores may swap within each cluster (whole clusters at once), which flips the sign of the
    cluster's difference ``d_k = Σ (a − b)``; ``p`` is the share of the ``2^K`` sign choices with ``|Σ ± d_k| ≥
    |Σ d_k|``, counted exactly over integer sums. With one doc per cluster it is McNemar's exact (binomial) test;
    with clusters it needs no large-sample approximation (one discordant doc: p = 1).

    >>> sign_flip_exact([1, 0, 0], [0, 0, 0], ["s", "s", "t"]), round(sign_flip_exact([1] * 9 + [0], [0] * 10), 6)
    (1.0, 0.003906)
    """
    import numpy as np

    labels = [("doc", i) if clusters is None or clusters[i] is None else clusters[i] for i in range(len(a))]
    sums: dict = {}
    for x, y, c in zip(a, b, labels):
        sums[c] = sums.get(c, 0) + int(round(x)) - int(round(y))
    return sign_flip_p(np.fromiter(sums.values(), dtype=np.int64, count=len(sums)))


def sign_flip_p(sums) -> float:
    """:func:`sign_flip_exact`'s p from the clusters' integer differences ``d_k`` (a numpy array)."""
    import numpy as np

    diffs = sums[sums != 0]
    if not len(diffs):
        return 1.0
    size, counts = np.unique(np.abs(diffs), return_counts=True)
    if len(size) == 1 and size[0] == 1:  # one discordant doc per cluster: the binomial test itself
        return intervals.mcnemar_exact(int((diffs > 0).sum()), int((diffs < 0).sum()))
    # Σ ± d_k has the characteristic function Π_v cos(v θ)^(c_v) (c_v clusters of |d_k| = v); at N > 2 T points
    # θ = 2π m / N (T = Σ |d_k|, so the values -T..T do not alias) its inverse DFT is the exact law, up to float
    # rounding (~1e-15 per value)
    total = int((size * counts).sum())
    n = 1 << (2 * total).bit_length()  # any N > 2 T avoids aliasing; a power of two is the fastest FFT
    theta = 2 * np.pi * np.arange(n) / n
    phi = np.ones(n)
    for v, c in zip(size.tolist(), counts.tolist()):
        phi *= np.cos(v * theta) ** c
    law = np.fft.fft(phi).real / n  # law[s mod N]: the probability that the signed sum is s
    t = np.arange(n)
    t = np.where(t > total, t - n, t)
    return float(min(1.0, max(0.0, law[np.abs(t) >= abs(int(diffs.sum()))].sum())))


def _binary_tests(matrix, clusters: list | None):
    """For a section whose scores are all 0 or 1 (``matrix``: rows x docs, NaN where a row scored no doc), the test of
    row ``j`` against row ``i`` as :func:`pair_test` gives it, on arrays: per pair one bincount of the differences
    over the docs both scored. None when a score is neither 0 nor 1."""
    import numpy as np

    m = np.asarray(matrix, dtype=float)
    if not np.isin(m[~np.isnan(m)], (0.0, 1.0)).all():
        return None
    ids: dict = {}
    index = np.array([ids.setdefault(("doc", k) if c is None else c, len(ids)) for k, c in enumerate(clusters or [])])
    clustered = clusters is not None and len(ids) < m.shape[1]
    name = "exact cluster sign-flip permutation test" if clustered else "McNemar exact (two-sided)"

    def test(i: int, j: int) -> tuple[str, float]:
        both = ~np.isnan(m[i]) & ~np.isnan(m[j])
        if not both.any():
            return "no doc in common", 1.0
        diff = (m[i] - m[j])[both].astype(np.int64)
        if not clustered:
            return name, intervals.mcnemar_exact(int((diff > 0).sum()), int((diff < 0).sum()))
        return name, sign_flip_p(np.bincount(index[both], weights=diff, minlength=len(ids)).round().astype(np.int64))

    return test


def pair_test(hi: dict, lo: dict, labels: dict, seed: int) -> tuple[str, float]:
    """``(test, p)`` of the lower row against the upper on the docs both scored: the exact sign-flip test
    (:func:`sign_flip_exact`) for 0/1 scores, over whole clusters where docs share one; else the paired bootstrap
    (:func:`hanyi.metrics.intervals.paired_test`) on the benchmark's seed."""
    common = [d for d in hi if d in lo]
    if not common:
        return "no doc in common", 1.0
    a, b = [hi[d] for d in common], [lo[d] for d in common]
    groups = [labels.get(d) for d in common] if labels else None
    if all(v in (0.0, 1.0) for v in (*a, *b)):
        clustered = groups is not None and len({("doc", i) if g is None else g for i, g in enumerate(groups)}) < len(a)
        name = "exact cluster sign-flip permutation test" if clustered else "McNemar exact (two-sided)"
        return name, sign_flip_exact(a, b, groups)
    return "paired bootstrap (two-sided percentile p)", intervals.paired_test(a, b, groups, seed=seed)["p"]


def tiers(per: list[dict], test) -> tuple[list[int], list[float | None], list[str]]:
    """Tiers of rows sorted best first, each meaning "not distinguishable from the tier's best": ``(tier of each
    row, Holm-adjusted p of each row against its tier's top, tests used)``; ``test(i, j)`` gives ``(name, p)`` of
    row ``j`` against row ``i``.

    Row 0 tops tier 1. Every other row is tested against the top of its tier (a row that opened a tier, against the
    previous tier's top); the ``n − 1`` p-values are Holm-corrected together; the first row whose adjusted p is
    below :data:`ALPHA` and that is not a top already opens a new tier, the rows below it are now tested against it,
    and the family is corrected again, until no row is significantly below its tier's top. A row is never kept in a
    tier by the row above it (no chaining): each is compared with the top itself. A row that opened a tier keeps it.
    """
    n = len(per)
    tops = {0}
    memo: dict[tuple[int, int], tuple[str, float]] = {}
    while True:
        pairs, top = [], 0
        for j in range(1, n):
            pairs.append((top, j))
            if j in tops:
                top = j
        for pair in pairs:
            if pair not in memo:
                memo[pair] = test(*pair)
        adjusted = intervals.holm([memo[pair][1] for pair in pairs])
        new = [j for (_, j), p in zip(pairs, adjusted) if j not in tops and p < ALPHA]
        if not new:
            break
        tops.add(new[0])
    tier, out = 1, [1]
    for j in range(1, n):
        tier += j in tops
        out.append(tier)
    return out, [None, *adjusted], sorted({memo[pair][0] for pair in pairs})


def _rank_section(ranked: list[Row], col: str, seed: int = SEED) -> tuple:
    """Rank, rank interval, tier, flip of the ranked rows (sorted by value); returns ``(draws or None, methods)``."""
    values = [r.cells[col].value for r in ranked]
    for row, rank in zip(ranked, competition_ranks(values)):
        row.rank = rank
    per = [scores(r.entry, col) for r in ranked]
    if len(ranked) < 2:
        return None, ["one ranked row: no rank interval, tier or flip"]
    if any(_scale(p, v, _given_scale(r.entry, col)) is None for p, v, r in zip(per, values, ranked)):
        return None, [f"no rank interval, tier or flip: not every row's {col} is the mean of its per-doc scores"]
    docs = sorted({d for p in per for d in p}, key=lambda d: (str(type(d)), d))
    task = _split(col)[0]
    labels: dict = {}
    for r in ranked:
        for d, label in ((r.entry.clusters or {}).get(task) or {}).items():
            labels.setdefault(d, label)
    clusters = [labels.get(d) for d in docs] if labels else None
    matrix = [[p.get(d, math.nan) for d in docs] for p in per]
    draws = intervals.rank_draws(matrix, clusters, iters=RANK_ITERS, seed=seed)
    for j, row in enumerate(ranked):
        row.rank_low, row.rank_high = (int(_quantile(draws[:, j], q)) for q in (0.025, 0.975))
    fast = _binary_tests(matrix, clusters)
    tier_of, p_top, tests = tiers(per, fast or (lambda i, j: pair_test(per[i], per[j], labels, seed)))
    for j, row in enumerate(ranked):
        row.tier, row.p_above = tier_of[j], p_top[j]
        if j:
            row.flip = flip(per[j - 1], per[j])
    n_clusters = len({labels.get(d, ("doc", d)) for d in docs}) if labels else len(docs)
    unit = f"{n_clusters} clusters of {len(docs)} docs" if n_clusters < len(docs) else f"{len(docs)} docs"
    methods = [
        f"Ranked by {col} (higher is better; tied values share the best rank). Rank interval: the 2.5th and 97.5th "
        f"percentiles of each row's rank over {RANK_ITERS} paired bootstrap resamples of the {unit} (seed {seed}, "
        "this benchmark's own), each row's mean over the docs it scored.",
        "Tiers: a tier holds the rows not significantly below its top row. Each row is tested against its tier's top "
        f"(a row that opens a tier, against the previous top) on the docs both scored, by {' / '.join(tests)}; the "
        f"{len(ranked) - 1} p-values are Holm-corrected together; the first row with an adjusted p below {ALPHA} "
        "opens a new tier and the rows below it are tested against it, until none is; the p shown is the row's, "
        "adjusted, against its tier's top.",
        "Flip: the fewest docs whose scores, changed in either row or both (each to any value in [0, 1]), would put "
        "the row strictly above the one above it (exact: the docs of largest possible gain first).",
    ]
    return draws, methods


def _paper_factor(link, ours: list[float]) -> float:
    """Paper unit over ours: the map entry's scale, or for ``auto`` 100 when our values are fractions."""
    if link.scale == "auto":
        fraction = all(abs(v) <= 1 for v in ours) if ours else "percent" in str(link.table.get("unit", ""))
        return 100.0 if fraction else 1.0
    return float(link.scale)


def reference_rows(bench: str, section: Section, entries: list[Entry], anchors_dir: str) -> list[Row]:
    """The papers' rows for the section's columns, in our unit, marked comparable by the report's rule."""
    from hanyi.results import provenance as prov_mod
    from hanyi.results.comparability import anchor_fields

    rows: dict[tuple, Row] = {}
    for col in section.columns:
        task, metric = _split(col)
        variants = {(e.protocol.get(task) or {}).get("prompt_variant") for e in entries}
        variant = variants.pop() if len(variants) == 1 else None
        ours = [v for e in entries if (v := (e.values.get(task) or {}).get(metric)) is not None]
        for link in anchor_mod.links_for(bench, task, [metric], anchors_dir, variant):
            factor = _paper_factor(link, ours)
            for paper in link.rows():
                if paper.value is None:
                    continue
                key = (link.table["id"], paper.model, paper.setting)
                label = paper.model + (f" ({paper.setting})" if paper.setting else "")
                row = rows.setdefault(key, Row(label=label, cells={}, reference=True))
                row.cells[col] = Cell(round(paper.value / factor, 12), note=f"{link.cite}, {link.column}")
                for e in entries:
                    prov = {"task": task, **(e.provenance.get(task) or {})}
                    _, why = prov_mod.comparability(prov, link.metric, anchor_fields(link, paper.model))
                    row.reasons += [r for r in why if r not in row.reasons]
    out = list(rows.values())
    for row in out:
        row.comparable = not row.reasons
    key_col = section.ranking_column
    out.sort(key=lambda r: (r.cells.get(key_col) is None, -(getattr(r.cells.get(key_col), "value", 0) or 0)))
    return out


CELL_METHOD = (
    "Cells: value [95 % interval] by the report's method for a mean of per-doc scores: exact Clopper-Pearson for "
    "0/1 scores (at Kish's design effect where docs share an image, story or pun), else a cluster bootstrap of the "
    f"mean ({ITERS} resamples, seed {SEED})."
)


@functools.lru_cache(maxsize=1)
def _stats_code() -> str:
    """A hash of the code a cell depends on: this module and the report's interval methods."""
    from hanyi.metrics import resample
    from hanyi.results import stats

    digest = hashlib.sha256()
    for module in (intervals, resample, stats):
        with open(module.__file__, "rb") as f:
            digest.update(f.read())
    with open(__file__, "rb") as f:
        digest.update(f.read())
    return digest.hexdigest()


def _cell_key(entry: Entry, col: str) -> str:
    """What a cell is a function of: the column's value, per-doc scores, clusters, scale and judge note, and the code."""
    task, metric = _split(col)
    parts = (
        _stats_code(),
        col,
        (entry.values.get(task) or {}).get(metric),
        (entry.per_doc.get(task) or {}).get(metric),
        (entry.clusters or {}).get(task),
        _given_scale(entry, col),
        entry.judged.get(col),
    )
    return hashlib.sha256(pickle.dumps(parts, protocol=4)).hexdigest()


def cells(entry: Entry, columns: list[str], cache_dir: str | None = None) -> dict[str, Cell]:
    """The entry's cells; with ``cache_dir``, read from and written to ``<cache_dir>/<submission hash>.cells.json``,
    each cell under the hash of what it is computed from (:func:`_cell_key`), so a changed re-score or a changed
    statistic is recomputed. The cells are a function of the submission alone: rebuilding a board recomputes only
    the new submissions' cells."""
    path = os.path.join(cache_dir, f"{entry.submission_hash}.cells.json") if cache_dir else None
    stored: dict = {}
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                stored = json.load(f)
        except (OSError, ValueError):
            stored = {}
    out, fresh = {}, {}
    for col in columns:
        key = _cell_key(entry, col) if path else ""
        hit = stored.get(col) if isinstance(stored.get(col), dict) else None
        try:
            out[col] = Cell(**hit["cell"]) if hit and hit.get("key") == key else None
        except TypeError:
            out[col] = None
        if out[col] is None:
            out[col] = cell(entry, col)
        fresh[col] = {"key": key, "cell": dataclasses.asdict(out[col])}
    if path and fresh != stored:
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=cache_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(fresh, f)
        os.replace(tmp, path)
    return out


def _mark_differences(rows: list[Row], entries: list[Entry]) -> None:
    """A note on each cell whose task a row ran under another protocol than most rows of its section (a column the
    section is not ranked by, so it did not split the section)."""
    majorities = _majorities(entries)
    for row in rows:
        for col, c in list(row.cells.items()):
            task = _split(col)[0]
            fields = (row.entry.protocol or {}).get(task) or {}
            judged = col in (row.entry.judged or {})  # a judge touches only the columns it judged
            diffs = [
                f"{k}={v} (most rows: {majorities[(task, str(k))][0]})"
                for k, v in sorted(fields.items())
                if (task, str(k)) in majorities
                and v != majorities[(task, str(k))][0]
                and (judged or k not in JUDGE_FIELDS)
                and k not in SYSTEM_FIELDS
            ]
            if diffs:
                note = "another protocol than the section's: " + ", ".join(diffs)
                row.cells[col] = dataclasses.replace(c, note="; ".join(x for x in (c.note, note) if x))


def build_section(
    bench: str, entries: list[Entry], anchors_dir: str, cache_dir: str | None = None, col: str | None = None
) -> tuple[Section, object]:
    """One section (one benchmark, one ranking column under one protocol of its task) and its rank draws (``None``
    when there are none). ``col``: the ranking column (:func:`section_key`'s); ``""``: rows with nothing to rank."""
    columns = _columns(bench, entries, anchors_dir)
    if col is None:
        col = ranking_column(bench, entries, columns)
    rows = [Row(label=e.display_name, cells=cells(e, columns, cache_dir), entry=e) for e in entries]  # card name
    _mark_differences(rows, entries)

    def value(r: Row):
        return r.cells[col].value if col in r.cells else None

    rows.sort(key=lambda r: (value(r) is None, -(value(r) or 0.0), r.entry.submission_hash))
    section = Section(bench, section_protocol(entries), columns, col, rows)
    ranked = [r for r in rows if value(r) is not None]
    if not col:
        draws, methods = None, ["no column the board scored itself (judged columns on the submitter's verdicts only)"]
    else:
        draws, methods = _rank_section(ranked, col, bench_seed(bench)) if ranked else (None, [f"no row has {col}"])
    section.method = " ".join(
        [CELL_METHOD, *methods, f"Judged columns on the submitter's verdicts ({UNVERIFIED_NOTE})",
         "Reference rows (the papers' numbers) are never ranked"]
    )  # fmt: skip
    section.rows += reference_rows(bench, section, entries, anchors_dir)
    return section, draws


def overall(mains: dict[str, tuple[Section, object]], entries: list[Entry]) -> tuple[Section | None, str]:
    """The mean rank over the benchmarks' main sections, when every model has a ranked row in each; else why not."""
    import numpy as np

    if len(mains) < 2:
        return None, "the board has fewer than two benchmarks"
    models = sorted({e.display_name for e in entries})  # a model is its display name across benchmarks
    missing = []
    index: dict[str, dict[str, int]] = {}
    for bench, (section, draws) in mains.items():
        ranked = [r for r in section.rows if not r.reference and r.rank is not None]
        labels = [r.label for r in ranked]
        if draws is None:
            missing.append(f"{bench} has no rank interval")
        if len(set(labels)) < len(labels):
            missing.append(f"{bench} ranks a model twice")
        index[bench] = {r.label: j for j, r in enumerate(ranked)}
        for model in models:
            if model not in index[bench]:
                missing.append(f"{model} has no ranked row in {bench}'s main section")
    if missing:
        shown = "; ".join(missing[:5]) + (f"; and {len(missing) - 5} more" if len(missing) > 5 else "")
        return None, f"not every row has every benchmark comparable ({shown})"
    benches = list(mains)
    point = {m: [mains[b][0].rows[index[b][m]].rank for b in benches] for m in models}
    mean_draws = np.mean([mains[b][1][:, [index[b][m] for m in models]] for b in benches], axis=0)  # iters x models
    means = [sum(point[m]) / len(benches) for m in models]
    overall_draws = 1 + (mean_draws[:, None, :] < mean_draws[:, :, None]).sum(axis=2)
    rows = []
    for j, (model, mean, rank) in enumerate(zip(models, means, competition_ranks(means, higher_better=False))):
        cells = {}
        for b, r in zip(benches, point[model]):
            src = mains[b][0].rows[index[b][model]]
            cells[f"{b}/rank"] = Cell(float(r), src.rank_low, src.rank_high, note=mains[b][0].ranking_column)
        low, high = (float(_quantile(mean_draws[:, j], q)) for q in (0.025, 0.975))
        cells["mean_rank"] = Cell(mean, low, high)
        rows.append(
            Row(model, cells, rank=rank, rank_low=int(_quantile(overall_draws[:, j], 0.025)),
                rank_high=int(_quantile(overall_draws[:, j], 0.975)))
        )  # fmt: skip
    rows.sort(key=lambda r: (r.rank, r.label))
    method = (
        f"Mean rank over {', '.join(benches)} (each benchmark's main section, by its ranking column); lower is "
        f"better. Its interval: the 2.5th and 97.5th percentiles of the mean of the benchmarks' bootstrap ranks, "
        f"draw by draw ({RANK_ITERS} draws, independent docs per benchmark); the rank interval likewise"
    )
    columns = [f"{b}/rank" for b in benches] + ["mean_rank"]
    return Section("overall", {}, columns, "mean_rank", rows, method=method, lower_is_better=list(columns)), ""


def _choose_main(candidates: list[tuple[Section, object, tuple]]) -> int:
    def score(item):
        section = item[0]
        entries = [r for r in section.rows if not r.reference]
        refs = sum(1 for r in section.rows if r.reference and r.comparable)
        return (not section.ranking_column, -len(entries), -refs, repr(item[2]))

    return min(range(len(candidates)), key=lambda i: score(candidates[i]))


def rank(
    entries: list[Entry],
    rejected: list[Rejected],
    anchors_dir: str = anchor_mod.ANCHORS_DIR,
    cache_dir: str | None = None,
) -> Board:
    """The board: per benchmark its main section first, then each other protocol apart; the overall mean rank or why
    there is none; the rejected files as given. ``cache_dir``: where each submission's cells are kept (:func:`cells`;
    the intake's cache folder)."""
    board = Board(rejected=list(rejected))
    by_bench: dict[str, dict[tuple, list[Entry]]] = {}
    for entry in entries:
        by_bench.setdefault(entry.benchmark, {}).setdefault(section_key(entry.benchmark, entry), []).append(entry)
    order = [b for b in BENCHMARKS if b in by_bench] + sorted(set(by_bench) - set(BENCHMARKS))
    mains = {}
    for bench in order:
        built = [
            (*build_section(bench, group, anchors_dir, cache_dir, key[0]), key)
            for key, group in by_bench[bench].items()
        ]
        main = built.pop(_choose_main(built))
        built.sort(key=lambda item: (-sum(not r.reference for r in item[0].rows), repr(item[2])))
        for section, _, key in built:
            section.apart = section_apart(key, main[2])
        board.sections += [main[0], *(s for s, _, _ in built)]
        mains[bench] = (main[0], main[1])
    board.overall, board.overall_absent = overall(mains, entries)
    return board
