"""Per-category and per-group breakdowns of per-item scores (micro and macro).

CVLUE reports results by object category and by three culture groups (paper §"Analysis", Figures 4-6; the categories
are organised in 15 semantic fields, Table 3); whether the paper's group averages are pooled over items (micro) or
averaged over categories (macro) is not stated (spec §3), so both are computed here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence


def mean_by(items: Iterable[Mapping], value: str, key: str) -> dict[str, float]:
    """Mean of ``item[value]`` per ``item[key]`` (micro within each key), keys sorted.

    >>> mean_by([{"v": 1.0, "c": "b"}, {"v": 0.0, "c": "a"}, {"v": 0.0, "c": "b"}], "v", "c")
    {'a': 0.0, 'b': 0.5}
    """
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for item in items:
        acc = sums[str(item[key])]
        acc[0] += float(item[value])
        acc[1] += 1
    return {k: sums[k][0] / sums[k][1] for k in sorted(sums)}


def group_scores(items: Iterable[Mapping], value: str, group: str, category: str = "category") -> dict[str, dict]:
    """``{group: {"micro", "macro", "n", "n_categories"}}``: micro = mean over items, macro = mean of category means.

    >>> items = [{"v": 1.0, "g": "x", "category": "a"}, {"v": 1.0, "g": "x", "category": "a"},
    ...          {"v": 0.0, "g": "x", "category": "b"}]
    >>> group_scores(items, "v", "g")
    {'x': {'micro': 0.6666666666666666, 'macro': 0.5, 'n': 3, 'n_categories': 2}}
    """
    by_group: dict[str, list[Mapping]] = defaultdict(list)
    for item in items:
        by_group[str(item[group])].append(item)
    out = {}
    for name in sorted(by_group):
        rows = by_group[name]
        per_cat = mean_by(rows, value, category)
        out[name] = {
            "micro": sum(float(r[value]) for r in rows) / len(rows),
            "macro": sum(per_cat.values()) / len(per_cat),
            "n": len(rows),
            "n_categories": len(per_cat),
        }
    return out


def subset_mean(items: Iterable[Mapping], value: str, key: str, label: str) -> float:
    """Mean of ``item[value]`` over the items whose ``item[key] == label``; NaN when there are none (not a zero).

    >>> subset_mean([{"v": 1.0, "f": "a"}, {"v": 0.0, "f": "a"}, {"v": 1.0, "f": "b"}], "v", "f", "a")
    0.5
    >>> subset_mean([{"v": 1.0, "f": "b"}], "v", "f", "a")
    nan
    """
    rows = [float(item[value]) for item in items if item[key] == label]
    return sum(rows) / len(rows) if rows else float("nan")


def breakdown_table(items: Iterable[Mapping], value: str, keys: Sequence[str]) -> list[dict]:
    """One row per distinct combination of ``keys`` (sorted): the key values, ``n`` and the ``mean`` of ``value``.

    >>> breakdown_table([{"v": 1, "c": "x", "g": "G"}, {"v": 0, "c": "x", "g": "G"}, {"v": 1, "c": "y", "g": "H"}],
    ...                 "v", ["g", "c"])
    [{'g': 'G', 'c': 'x', 'n': 2, 'mean': 0.5}, {'g': 'H', 'c': 'y', 'n': 1, 'mean': 1.0}]
    """
    cells: dict[tuple, list[float]] = defaultdict(list)
    for item in items:
        cells[tuple(str(item[k]) for k in keys)].append(float(item[value]))
    return [{**dict(zip(keys, combo)), "n": len(v), "mean": sum(v) / len(v)} for combo, v in sorted(cells.items())]
