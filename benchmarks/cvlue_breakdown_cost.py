"""CVLUE breakdown cost at full test size: the per-key aggregation hooks vs the official per-category way.

Synthetic items of the real sizes (VQA ~21k items; IR rerank@16: 44,865 queries x 16 = 718k pairs). Prints the time
of (a) every breakdown aggregation lmms-eval calls for a task (3 groups + 3 macro + 15 fields; ITR re-ranks all
queries once per key), (b) our one-pass 92-category table (hanyi.report.cvlue_breakdown), and (c) the official
``*_by_category.py`` way: re-running the scorer once per category subset (92 passes).

    .venv/bin/python benchmarks/cvlue_breakdown_cost.py [--queries 44865] [--k 16]
"""

import argparse
import random
import time

from hanyi.data.cvlue_categories import SLUGS, culture_group
from hanyi.report.cvlue_breakdown import category_rows
from hanyi.tasks.cvlue import aggregate
from hanyi.tasks.cvlue.constants import CULTURE_GROUPS, FIELDS


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
    hooks = [getattr(aggregate, f"cvlue_{g}") for g in CULTURE_GROUPS]
    hooks += [getattr(aggregate, f"cvlue_{g}_macro") for g in CULTURE_GROUPS]
    hooks += [getattr(aggregate, f"cvlue_field_{f}") for f in FIELDS]
    report("VQA", vqa, hooks, aggregate.cvlue_mean, "accuracy")
    report("IR rerank", itr, hooks[:3] + hooks[6:], aggregate.cvlue_itr_r1, "r1")  # ITR: no macro keys


def report(name, items, fns, headline, key):
    _, t_head = timed(lambda: headline(items))
    _, t_keys = timed(lambda: [fn(items) for fn in fns])
    samples = [{key: it} for it in items]
    rows, t_cat = timed(lambda: category_rows(samples))
    by_cat = {}
    for it in items:
        by_cat.setdefault(it["category"], []).append(it)
    _, t_official = timed(lambda: {c: headline(sub) for c, sub in by_cat.items()})
    print(
        f"{name}: {len(items):,} items; headline {t_head * 1e3:.0f} ms; {len(fns)} breakdown keys "
        f"{t_keys * 1e3:.0f} ms; 92-category table one pass {t_cat * 1e3:.0f} ms ({len(rows)} rows); "
        f"official per-category re-scoring ({len(by_cat)} subsets) {t_official * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    main()
