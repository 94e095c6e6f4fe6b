"""The full per-category table (92 Table 3 categories) of a CVLUE run, from lmms-eval's ``--log_samples`` file.

``hanyi report`` computes the culture-group (``<metric>_<group>``, ``_macro``) and Table 3's 15 semantic-field
(``<metric>_field_<field>``) breakdowns from the sample log (``hanyi.metrics.cvlue_breakdowns``); the per-category
view (paper Figure 4; spec §6.0 "the 92 categories as a JSON side output") is computed here from the same log, where
every item carries ``category``, ``culture_group`` and its value ``v``, from the same units (ITR: one per query):

    python -m hanyi.report.cvlue_breakdown <dir>/<model>/<date>_samples_cvlue_vg.jsonl [--json out.json]

Headline metric per task: VQA ``accuracy``, VG ``miou``, VD ``r1``, ITR ``r1`` (per query, after re-ranking).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping

from hanyi.data.cvlue_categories import CATEGORIES, culture_group, semantic_field
from hanyi.metrics.breakdown import breakdown_table
from hanyi.metrics.cvlue_breakdowns import units

#: The metric whose items a sample line carries, tried in this order (VQA, VG, VD/ITR).
HEADLINE = ("accuracy", "miou", "r1")
_NAMES = {slug: (en, zh) for slug, en, zh in CATEGORIES}


def category_units(samples: Iterable[Mapping]) -> tuple[str, list[dict]]:
    """``(metric, units)``: one unit ``{v, category, culture_group}`` per doc, or per query for ITR pairs.

    >>> category_units([{"miou": {"v": 0.5, "category": "2-cow", "culture_group": "coco"}}])
    ('miou', [{'v': 0.5, 'category': '2-cow', 'culture_group': 'coco'}])
    """
    samples = list(samples)
    if not samples:
        return "", []
    metric = next((m for m in HEADLINE if m in samples[0]), None)
    if metric is None:
        raise ValueError(f"not a CVLUE sample log: no {'/'.join(HEADLINE)} item in {sorted(samples[0])[:8]}")
    return metric, [{k: u[k] for k in ("v", "category", "culture_group")} for u in units([s[metric] for s in samples])]


def category_rows(samples: Iterable[Mapping]) -> list[dict]:
    """One row per category present, in Table 3 order: slug, names, field, culture group, ``n``, ``mean``.

    >>> rows = category_rows([{"accuracy": {"v": 1.0, "category": "84-suona", "culture_group": "non_wordnet"}},
    ...                       {"accuracy": {"v": 0.0, "category": "2-cow", "culture_group": "coco"}}])
    >>> [(r["category"], r["name"], r["field"], r["n"], r["mean"]) for r in rows]
    [('2-cow', 'cow', 'animal', 1, 0.0), ('84-suona', 'suona', 'instruments', 1, 1.0)]
    """
    metric, units = category_units(samples)
    order = {slug: i for i, (slug, _, _) in enumerate(CATEGORIES)}
    rows = breakdown_table(units, "v", ["category"])
    out = []
    for row in sorted(rows, key=lambda r: order.get(r["category"], len(order))):
        slug = row["category"]
        en, zh = _NAMES.get(slug, (slug, ""))
        out.append(
            {
                "category": slug,
                "name": en,
                "name_zh": zh,
                "field": semantic_field(slug),
                "culture_group": culture_group(slug),
                "metric": metric,
                "n": row["n"],
                "mean": row["mean"],
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", help="an lmms-eval *_samples_cvlue_<task>.jsonl file")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    from hanyi.results.samples import SamplesFileError, read_samples

    try:
        samples = read_samples(args.samples)
    except SamplesFileError as exc:
        print(f"hanyi: {exc}", file=sys.stderr)
        return 1
    rows = category_rows(samples)
    print(f"{'category':<20} {'field':<13} {'culture group':<13} {'n':>6} {rows[0]['metric'] if rows else ''}")
    for r in rows:
        print(f"{r['category']:<20} {r['field']:<13} {r['culture_group']:<13} {r['n']:>6} {r['mean']:.4f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
