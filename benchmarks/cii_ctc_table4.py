"""CII-Bench Table 4 from the released GPT-4o judge outputs, through hanyi's CTC aggregation.

    python benchmarks/cii_ctc_table4.py [path/to/exp_CTC_with_scores.json]

Default input: ../shared/data/cii_bench/ctc_exp_CTC_with_scores.json (the official CTC_Evaluation/exp_CTC.json with
its ``score`` column). Prints hanyi's numbers beside a plain re-statement of the notebook's arithmetic (first ``\\d+``,
0 when absent, sum / n; per-label means) and the paper's Table 4, plus the time per call.
"""

import json
import os
import re
import sys
import time

from hanyi.metrics.cii_ctc import ctc_group_mean, ctc_mean, ctc_scores, parse_ctc_score

DEFAULT = os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "data", "cii_bench", "ctc_exp_CTC_with_scores.json"
)
REPEATS = 200
PAPER = {"overall": 2.71, "简单": 3.0, "中等": 3.2, "困难": 2.35, "积极": 2.63, "消极": 3.0, "中性": 2.82}


def official_way(records):
    scores = []
    for r in records:
        found = re.findall(r"\d+", r["score"])
        scores.append(int(found[0]) if found else 0)
    out = {"overall": sum(scores) / len(scores)}
    for field in ("difficulty", "emotion"):
        for label in sorted({r[field] for r in records}):
            chosen = [s for s, r in zip(scores, records) if r[field] == label]
            out[label] = sum(chosen) / len(chosen)
    return out


def hanyi_way(records):
    scores = ctc_scores(parse_ctc_score(r["score"]) for r in records)
    out = {"overall": ctc_mean(scores)}
    for field in ("difficulty", "emotion"):
        labels = [r[field] for r in records]
        for label in sorted(set(labels)):
            out[label] = ctc_group_mean(scores, labels, label)
    return out


def main(path):
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    ours, ref = hanyi_way(records), official_way(records)  # warm-up (regex compilation)
    t0 = time.perf_counter()
    for _ in range(REPEATS):
        ours = hanyi_way(records)
    t_ours = (time.perf_counter() - t0) / REPEATS
    t0 = time.perf_counter()
    for _ in range(REPEATS):
        ref = official_way(records)
    t_ref = (time.perf_counter() - t0) / REPEATS
    print(f"records: {len(records)}  per call: hanyi {t_ours * 1e3:.3f} ms, official-style {t_ref * 1e3:.3f} ms")
    print(f"{'cell':8} {'hanyi':>8} {'official':>9} {'paper':>6}  match")
    ok = True
    for key, paper in PAPER.items():
        same = abs(ours[key] - ref[key]) < 1e-12 and round(ours[key], 2) == paper
        ok &= same
        print(f"{key:8} {ours[key]:8.4f} {ref[key]:9.4f} {paper:6.2f}  {'yes' if same else 'NO'}")
    return 0 if ok else 1


def _args():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("path", nargs="?", default=DEFAULT, help=f"exp_CTC_with_scores.json (default {DEFAULT})")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main(_args().path))
