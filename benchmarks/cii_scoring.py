"""CII-Bench scoring on the real release: category denominators, extractor agreement and speed.

    python benchmarks/cii_scoring.py [dir with test.json and dev.json]

Default input: ../shared/data/cii_bench/ (the official data/test.json and data/dev.json). The JSON labels are first
turned into the hub's Python-repr strings (as ``hanyi prepare`` and the hub store them) and parsed back, so the
printed question-level denominators are what the task's per-category metrics divide by; they are compared with the
paper's (spec §1.4). Then 800 questions x 8 answer styles are scored by the official extractor port and hanyi's
robust parser: accuracy per style, and the time per answer of each (the official way = ``extract_option_labels``
alone; hanyi's per-doc scoring = both extractors plus bookkeeping, ``score_response``).
"""

import json
import os
import sys
import time
from collections import Counter

from hanyi.data.cii import label_zh, parse_multilabel, to_hub_cell
from hanyi.metrics.cii_extract import extract_answer_robust, extract_option_labels, score_response
from hanyi.tasks.cii.constants import CATEGORY_METRICS

DEFAULT = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "cii_bench")
PAPER_DENOMINATORS = {
    "acc_domain_life": 240, "acc_domain_art": 147, "acc_domain_society": 194, "acc_domain_politics": 24,
    "acc_domain_environment": 58, "acc_domain_ctc": 137, "acc_emotion_positive": 241, "acc_emotion_negative": 276,
    "acc_emotion_neutral": 283, "acc_difficulty_easy": 350, "acc_difficulty_medium": 328, "acc_difficulty_hard": 122,
    "acc_type_illustration": 218, "acc_type_meme": 153, "acc_type_poster": 102, "acc_type_single_panel_comic": 176,
    "acc_type_multi_panel_comic": 38, "acc_type_painting": 125, "acc_rhetoric_metaphor": 645,
    "acc_rhetoric_exaggerate": 144, "acc_rhetoric_symbolism": 281, "acc_rhetoric_contrast": 105,
    "acc_rhetoric_visual_dislocation": 46, "acc_rhetoric_personification": 79, "acc_rhetoric_analogy": 21,
    "acc_rhetoric_antithesis": 13,
}  # fmt: skip
STYLES = {
    "bare letter": lambda g, o: g,
    "答案：X": lambda g, o: f"答案：{g}",
    "CoT, last line 答案：X": lambda g, o: f"选项A和选项B都不对。\n答案：{g}",
    "答案是X (CJK-adjacent)": lambda g, o: f"我认为答案是{g}选项",
    "(X) + option text": lambda g, o: f"({g}) {o}",
    "option text only": lambda g, o: o,
    "English sentence": lambda g, o: f"The answer is {g}.",
    "blank": lambda g, o: "  ",
}


def load(root):
    rows = []
    for split in ("test", "dev"):
        with open(os.path.join(root, f"{split}.json"), encoding="utf-8") as f:
            for rec in json.load(f):
                meta = rec["meta_data"]
                for q in rec["questions"]:
                    rows.append({**q, **{k: to_hub_cell(meta[k]) for k in ("domain", "emotion", "difficulty",
                                                                           "image_type", "rhetoric")}})  # fmt: skip
    return rows


def denominators(rows):
    counts = Counter()
    for r in rows:
        labels = {"domain": r["domain"], "emotion": r["emotion"], "difficulty": r["difficulty"],
                  "image_types": [label_zh(x) for x in parse_multilabel(r["image_type"])],
                  "rhetorics": parse_multilabel(r["rhetoric"])}  # fmt: skip
        for name, (field, label) in CATEGORY_METRICS.items():
            value = labels[field]
            counts[name] += label in value if isinstance(value, list) else value == label
    return counts


def timed(fn, answers):
    t0 = time.perf_counter()
    out = [fn(a, o, g) for a, o, g in answers]
    return out, (time.perf_counter() - t0) / len(answers) * 1e6


def main(root):
    rows = load(root)
    counts = denominators(rows)
    bad = {k: (counts[k], v) for k, v in PAPER_DENOMINATORS.items() if counts[k] != v}
    print(f"questions: {len(rows)}; category denominators equal to the paper's: {len(PAPER_DENOMINATORS) - len(bad)}"
          f"/{len(PAPER_DENOMINATORS)} {bad or ''}")  # fmt: skip
    print(f"{'answer style':28} {'official acc':>12} {'robust acc':>10} {'official miss':>13}")
    answers = []
    for style, make in STYLES.items():
        batch = [(make(r["answer"], r["options"][ord(r["answer"]) - 65]), r["options"], r["answer"]) for r in rows]
        answers += batch
        scored = [score_response(a, o, g) for a, o, g in batch]
        n = len(scored)
        acc = 100 * sum(s["correct"] for s in scored) / n
        rob = 100 * sum(s["correct_robust"] for s in scored) / n
        miss = 100 * sum(s["miss"] for s in scored) / n
        print(f"{style:28} {acc:12.2f} {rob:10.2f} {miss:13.2f}")
    _, t_off = timed(lambda a, o, g: extract_option_labels(a, o), answers)
    _, t_rob = timed(lambda a, o, g: extract_answer_robust(a, o), answers)
    _, t_all = timed(score_response, answers)
    print(
        f"per answer ({len(answers)} answers): official extractor {t_off:.1f} us, robust {t_rob:.1f} us, "
        f"hanyi score_response (both + bookkeeping) {t_all:.1f} us"
    )
    return 0 if not bad else 1


def _args():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument(
        "path", nargs="?", default=DEFAULT, help=f"folder with test.json and dev.json (default {DEFAULT})"
    )
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main(_args().path))
