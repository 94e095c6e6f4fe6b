"""CVLUE breakdown cost at full test size: the report's breakdowns from the sample log vs the official per-category way.

Synthetic items of the real sizes (VQA ~21k items; IR rerank@16: 44,865 queries x 16 = 718k pairs). Prints the time
of (a) the task's headline aggregation, (b) the culture-group and field breakdowns ``hanyi report`` computes from the
logged items (hanyi.metrics.cvlue_breakdowns: 3 groups + 3 macro + 15 fields, ITR re-ranked once), (c) our one-pass
92-category table (hanyi.report.cvlue_breakdown), and (d) the official ``*_by_category.py`` way: re-running the
scorer once per category subset (92 passes).

    .venv/bin/python benchmarks/cvlue_breakdown_cost.py [--queries 44865] [--k 16]
"""

import argparse
import random
import time

from hanyi.data.cvlue_categories import SLUGS, culture_group
from hanyi.metrics import cvlue_aggregations, cvlue_breakdowns
from hanyi.report.cvlue_breakdown import category_rows


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vqa", type=int, default=21500)
    ap.add_argument("--queries", type=int, default=44865)
    ap.add_argument("--k", type=int, default=16)
    args = ap.parse_args()
    rng = random.Random(0)
    cat = lambda: rng.choice(SLUGS)  # noqa: E731
    vqa = [
        {"v": float(rng.random() < 0.4), "category": (c := cat()), "culture_group": culture_group(c)}
        for _ in range(args.vqa)
    ]
    itr = []
    for q in range(args.queries):
        c = cat()
        gold = rng.randrange(args.k + 3)
        for r in range(1, args.k + 1):
            itr.append({"query": f"q{q}", "stage1_rank": r, "is_gold": r == gold, "score": -rng.random(),
                        "category": c, "culture_group": culture_group(c)})  # fmt: skip
    report("VQA", vqa, cvlue_breakdowns.vqa_groups, cvlue_aggregations.cvlue_mean, "accuracy")
    report("IR rerank", itr, cvlue_breakdowns.r1_groups, cvlue_aggregations.cvlue_itr_r1, "r1")


def report(name, items, breakdowns, headline, key):
    _, t_head = timed(lambda: headline(items))
    keys, t_keys = timed(lambda: breakdowns(items))
    samples = [{key: it} for it in items]
    rows, t_cat = timed(lambda: category_rows(samples))
    by_cat = {}
    for it in items:
        by_cat.setdefault(it["category"], []).append(it)
    _, t_official = timed(lambda: {c: headline(sub) for c, sub in by_cat.items()})
    print(
        f"{name}: {len(items):,} items; headline {t_head * 1e3:.0f} ms; {len(keys)} breakdown keys from the sample log "
        f"{t_keys * 1e3:.0f} ms; 92-category table one pass {t_cat * 1e3:.0f} ms ({len(rows)} rows); "
        f"official per-category re-scoring ({len(by_cat)} subsets) {t_official * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
