"""Per-category and per-group breakdowns of per-item scores (micro and macro).

CVLUE reports results by object category and by three culture groups (paper §"Analysis", Figures 4-6); whether the
paper's group averages are pooled over items (micro) or averaged over categories (macro) is not stated (spec §3), so
both are computed here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping


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
