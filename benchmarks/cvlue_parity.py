"""CVLUE parity and cost: hanyi's metric functions vs the official scorers' recorded output on the repo examples.

Reads ../shared/data/cvlue (the official test_example files and official_eval_outputs/stdout.txt). Prints, per task,
the official value, ours, and whether they are identical; then the scoring time per item of each metric function.

    .venv/bin/python benchmarks/cvlue_parity.py [--data ../shared/data/cvlue]
"""

import argparse
import json
import os
import re
import sys
import timeit

from hanyi.metrics.bbox import accuracy_at_iou, iou_continuous, iou_official, mean_iou
from hanyi.metrics.ranking import itr_recall_official, parse_loglikelihood, vd_recall_official
from hanyi.metrics.short_answer_zh import vqa_accuracy_official


def load(data, name):
    with open(os.path.join(data, name), encoding="utf-8") as f:
        return json.load(f)


def official_values(stdout: str) -> dict:
    nums = lambda pat: [float(x) for x in re.search(pat, stdout).groups()]  # noqa: E731
    return {
        "vqa_lenient": nums(r"VQA non-strict: \((\d+), (\d+), ([\d.]+)\)")[2],
        "vqa_strict": nums(r"VQA strict: \((\d+), (\d+), ([\d.]+)\)")[2],
        "vg_miou": nums(r"VG: \((\d+), ([\d.]+)\)")[1],
        "vd": dict(zip(("r1", "r5", "r10"), nums(r"VD: \(\d+, ([\d.]+), ([\d.]+), ([\d.]+)\)"))),
        "i2t": dict(zip(("r1", "r5", "r10"), nums(r"'i2t_r1': ([\d.]+), 'i2t_r5': ([\d.]+), 'i2t_r10': ([\d.]+)"))),
        "t2i": dict(zip(("r1", "r5", "r10"), nums(r"'t2i_r1': ([\d.]+), 't2i_r5': ([\d.]+), 't2i_r10': ([\d.]+)"))),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "cvlue"))
    data = ap.parse_args().data
    with open(os.path.join(data, "official_eval_outputs", "stdout.txt"), encoding="utf-8") as f:
        official = official_values(f.read())

    gold_vqa, sub_vqa = load(data, "test_example__VQA__gold.json"), load(data, "test_example__VQA__submit_VQA.json")
    preds, golds = [x["answer"] for x in sub_vqa], [x["answer"] for x in gold_vqa]
    gold_vg, sub_vg = load(data, "test_example__VG__gold.json"), load(data, "test_example__VG__submit_VG.json")
    ious = [iou_official(p["bbox"], g["bbox"]) for p, g in zip(sub_vg, gold_vg)]
    gold_vd, sub_vd = load(data, "test_example__VD__gold.json")["data"], load(data, "test_example__VD__submit_VD.json")
    vd_preds = [{"question": p["question"], "answer_sort": p["answer_sort"]} for p in sub_vd]
    ic = load(data, "test_example__IC__gold.json")
    i2t_gold = {g["image"]: g["caption"] for g in ic}
    t2i_gold: dict = {}
    for g in ic:
        for c in g["caption"]:
            t2i_gold.setdefault(c, []).append(g["image"])
    ours = {
        "vqa_lenient": vqa_accuracy_official(preds, golds)["accuracy"],
        "vqa_strict": vqa_accuracy_official(preds, golds, strict=True)["accuracy"],
        "vg_miou": mean_iou(ious),
        "vd": {k: v for k, v in vd_recall_official(vd_preds, gold_vd).items() if k != "n"},
        "i2t": {
            k: v
            for k, v in itr_recall_official(load(data, "test_example__IC__i2t_submit.json"), i2t_gold).items()
            if k != "n"
        },
        "t2i": {
            k: v
            for k, v in itr_recall_official(load(data, "test_example__IC__t2i_submit.json"), t2i_gold).items()
            if k != "n"
        },
    }
    ok = True
    print(f"{'metric':<12} {'official':<44} {'hanyi':<44} identical")
    for key, value in official.items():
        same = value == ours[key]
        ok &= same
        print(f"{key:<12} {str(value):<44} {str(ours[key]):<44} {same}")
    print(
        f"VG extras: acc@IoU>0.5 = {accuracy_at_iou(ious):.4f}; continuous IoU (not official) = "
        f"{mean_iou([iou_continuous(p['bbox'], g['bbox']) for p, g in zip(sub_vg, gold_vg)])!r}"
    )

    n = 20000
    t_vqa = timeit.timeit(lambda: vqa_accuracy_official(preds, golds), number=n // len(preds)) / n * 1e6
    t_vg = (
        timeit.timeit(lambda: [iou_official(p["bbox"], g["bbox"]) for p, g in zip(sub_vg, gold_vg)], number=n // 6)
        / n
        * 1e6
    )
    t_ll = timeit.timeit(lambda: parse_loglikelihood("(-1.2345678, False)"), number=n) / n * 1e6
    print(
        f"cost per item: VQA rule {t_vqa:.2f} us, VG IoU {t_vg:.2f} us, loglikelihood string parse {t_ll:.2f} us "
        f"(x100 candidates per VD question = {t_ll * 100:.0f} us)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
