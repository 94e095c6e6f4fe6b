"""What circular evaluation costs besides the N x model calls: expanding the docs, scoring, aggregating.

Builds a CII-shaped dataset of ``--docs`` questions with ``--image-kb`` KB of image bytes each (embedded, as in the
hub parquet), expands it to 6 rotations with :func:`hanyi.tasks._circular.expand_rotations`, then scores every
rotation with ``cii_circular_process_results`` and aggregates the six circular metrics. Prints seconds and the
resident-memory growth of the expansion (images are shared between rotations, not copied).

    .venv/bin/python benchmarks/circular_overhead.py [--docs 800] [--image-kb 200]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import time


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build(n: int, image_kb: int):
    import datasets

    rng = random.Random(0)
    rows = {
        "id": [f"test-{i + 1}" for i in range(n)],
        "image": [{"bytes": rng.randbytes(image_kb * 1024), "path": None} for _ in range(n)],
        "question": ["这张图片有什么隐喻？"] * n,
        **{f"option{j}": [f"选项{j}-{i}" for i in range(n)] for j in range(1, 7)},
        "answer": [rng.choice("ABCDEF") for _ in range(n)],
    }
    features = datasets.Features(
        {k: datasets.Value("string") for k in rows if k != "image"} | {"image": datasets.Image(decode=False)}
    )
    return datasets.Dataset.from_dict(rows, features=features).filter(lambda a: a != "Z", input_columns="answer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=800)
    parser.add_argument("--image-kb", type=int, default=200)
    args = parser.parse_args()

    from hanyi.metrics import circular as circular_metrics
    from hanyi.tasks import _circular
    from hanyi.tasks.cii import circular

    base = build(args.docs, args.image_kb)  # filtered: an index map, as after the CII load-time checks
    rss0, t0 = _rss_mb(), time.perf_counter()
    expanded = _circular.expand_rotations(base, 6)
    t1 = time.perf_counter()
    rss1 = _rss_mb()
    docs = expanded.select_columns([c for c in expanded.column_names if c != "image"]).to_list()
    rng = random.Random(1)
    t2 = time.perf_counter()
    out = [circular.cii_circular_process_results(d, [f"答案：{rng.choice('ABCDEF')}"]) for d in docs]
    t3 = time.perf_counter()
    aggregations = circular_metrics.aggregations("cii")
    metrics = (*_circular.METRICS, *_circular.ROBUST_METRICS)
    scores = {m: aggregations[f"cii_{m}"]([o[m] for o in out]) for m in metrics}
    t4 = time.perf_counter()
    print(f"questions {args.docs}, image {args.image_kb} KB each ({args.docs * args.image_kb / 1024:.0f} MB)")
    print(f"expand to {len(expanded)} docs: {t1 - t0:.3f} s, resident memory +{rss1 - rss0:.0f} MB")
    print(f"process_results x {len(docs)}: {t3 - t2:.3f} s ({1e6 * (t3 - t2) / len(docs):.0f} us/doc)")
    print(f"6 aggregations: {t4 - t3:.3f} s; random answers: circular_acc {scores['circular_acc']:.4f}, "
          f"rotation_acc {scores['rotation_acc']:.4f}")  # fmt: skip
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
