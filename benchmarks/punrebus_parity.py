"""Pun Rebus Art: re-score responses the official way and hanyi's way, and time S_Sim both ways.

Usage::

    python benchmarks/punrebus_parity.py [--responses FILE.jsonl] [--answer-sheet CSV] [--n 1011] [--seed 0]

``--responses``: JSONL records ``{"task": "matching"|"elements"|"textonly", "image_id" | "story_zh", "response"}``
(e.g. converted from the official result logs). Without it, realistic synthetic responses are generated from the
answer sheet (element lists of 1-6 items mixing GT names, plurals, distractors, Chinese glosses and free text).

The "official way" rebuilds the official scorers' log text (``Image: <file>\\n\\n<response>\\n\\n###``) and applies
their regexes, split rule, per-pair Sentence-BERT loop and lemmatisation with NLTK's own ``WordNetLemmatizer``
(independent of hanyi's lemmatiser, so drift in ours, e.g. its rule fallback, shows up as a difference); "ours" is
hanyi.metrics as the tasks call it (each distinct string encoded once, in batches, where the official loop encodes
one string per call; both average in float32 as the official tensors do, so the two S_Sim values agree within the
float rule of docs/dev/contributing.md, not bit for bit). Prints both values, their
difference, the words the two lemmatisers disagree on, and the S_Sim wall-time ratio.

The official path needs the WordNet data offline (``hanyi setup`` installs it; or point NLTK_DATA at a
``corpora/wordnet`` folder); without it the script stops with that message rather than fall back to ours.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import sys
import time

from hanyi import floats
from hanyi.metrics import elements as el
from hanyi.metrics.choice import accuracy_over_parsed, extract_leading_letter
from hanyi.metrics.choice_punrebus import extract_first_char_letter

DEFAULT_SHEET = os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "data", "pun_rebus", "answer_sheet_w_element.csv"
)
DISTRACTORS = [
    "rock",
    "tree",
    "pine tree",
    "cloud",
    "bird",
    "flower",
    "vase",
    "peach",
    "bat",
    "water",
    "mountain",
    "crane",
]
FILLERS = ["The artwork shows", "Key elements:", "In this painting,", ""]


def load_sheet(path):
    gt, cats = {}, {}
    with open(path, encoding="utf-8-sig") as f:
        for row in list(csv.reader(f))[1:]:
            gt[row[1]] = [e.lower().rstrip() for e in row[3:] if e]
            cats.setdefault(row[1], []).append(row[2])
    return gt, cats


def synthetic(gt, cats, n, rng):
    stories = sorted(gt)
    out = []
    for i in range(n):
        s = stories[i % len(stories)]
        items = [g if rng.random() < 0.5 else g + "s" for g in gt[s] if rng.random() < 0.6]
        items += rng.sample(DISTRACTORS, rng.randint(0, 4))
        if rng.random() < 0.1:
            items = [it + " (桃)" for it in items]
        rng.shuffle(items)
        text = ", ".join(x.title() for x in items) or rng.choice(FILLERS)
        if rng.random() < 0.2:
            text += ".\nThese symbolise good fortune and a long life in Chinese culture."
        letter = rng.choice("ABCDEFG")
        mc = rng.choice(
            [f"{letter}. option", f"Option {letter}", f"**{letter}**", "Based on the image, " + letter, letter]
        )
        out.append({"image_id": f"{s}_{i // len(stories) + 1}.jpg", "story": s, "elements": text, "mc": mc})
    return out


# ------------------------------------------------------------------ the official pipeline, on its log format
WORDNET_MISSING = (
    "The official path needs NLTK's WordNet lemmatiser and its data, which were not found ({}). Install them with "
    "`hanyi setup` (offline WordNet for NLTK), or set NLTK_DATA to a folder holding corpora/wordnet. This script does "
    "not fall back to hanyi's lemmatiser: the comparison would be circular."
)


def official_lemmatizer():
    """``nltk.stem.WordNetLemmatizer().lemmatize`` as the official ``to_singular`` calls it; exits if unusable."""
    try:
        import nltk
        from nltk.stem import WordNetLemmatizer

        nltk.data.find("corpora/wordnet")
        lemmatizer = WordNetLemmatizer()
        lemmatizer.lemmatize("bats", "n")
    except (ImportError, LookupError, OSError) as exc:
        where = "nltk not importable" if isinstance(exc, ImportError) else "corpora/wordnet not on the NLTK data path"
        raise SystemExit(WORDNET_MISSING.format(f"{type(exc).__name__}: {where}")) from None
    return lambda word: lemmatizer.lemmatize(word, "n")


def official_log(records, field):
    return "".join(f"Image: {r['image_id']}\n\n{r[field]}\n\n{'#' * 30}\n" for r in records)


def official_elements(log, gt, model, with_sim, lemmatize):
    abs_total = count = 0
    sims = []
    for name, _ext, line in re.findall(r"Image: (\S+_\d+\.(jpg|png|jpeg))\n\n([^\n]+)", log):
        story = name.split("_")[0]
        if story not in gt:
            continue
        preds = [
            " ".join(lemmatize(w) for w in p.replace(".", "").replace("(", "").replace(")", "").lower().split())
            for p in line.split(", ")
        ]
        abs_total += sum(1 for g in gt[story] for p in preds if g in p) / len(gt[story])
        if with_sim:
            sims.append(el.element_sim_official(gt[story], preds, model))
        count += 1
    return abs_total / count, (el.official_mean(sims) if with_sim else None), count


def official_matching(log, cats):
    correct = total = 0
    for name, _ext, answer in re.findall(r"Image: (\S+_\d+\.(jpg|png|jpeg))\n\n([A-G]|Option\s[A-G])", log):
        total += 1
        correct += answer[-1] in cats.get(name.split("_")[0], [])
    return correct / total, total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--responses")
    ap.add_argument("--answer-sheet", default=DEFAULT_SHEET)
    ap.add_argument("--n", type=int, default=1011)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-official-sim", action="store_true", help="skip the slow per-pair S_Sim loop")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.answer_sheet):
        print(f"answer sheet not found: {args.answer_sheet}")
        return 1
    lemmatize = official_lemmatizer()
    gt, cats = load_sheet(args.answer_sheet)
    if args.responses:
        with open(args.responses, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        records = [
            {
                "image_id": r["image_id"],
                "story": r["image_id"].split("_")[0],
                "elements": r["response"],
                "mc": r["response"],
            }
            for r in rows
        ]
    else:
        records = synthetic(gt, cats, args.n, random.Random(args.seed))
    print(f"records: {len(records)}; lemmatiser: {el.lemmatizer_backend()}")

    # matching: official regex over the log vs hanyi's parser + parsed-only accuracy
    off_acc, off_n = official_matching(official_log(records, "mc"), cats)
    items = []
    for r in records:
        pred = extract_leading_letter(r["mc"], "ABCDEFG")
        items.append({"parsed": pred is not None, "correct": pred in cats[r["story"]]})
    ours_acc = accuracy_over_parsed(items)
    print(
        f"matching accuracy: official {off_acc:.6f} (n={off_n})  hanyi {ours_acc:.6f} (n={sum(i['parsed'] for i in items)})  equal={off_acc == ours_acc}"
    )
    text_items = [extract_first_char_letter(r["mc"]) in cats[r["story"]] for r in records]
    print(f"text-only rule on the same answers: accuracy over all {sum(text_items) / len(text_items):.6f}")

    model = el.load_sbert()
    t0 = time.perf_counter()
    pairs = [(gt[r["story"]], el.parse_elements_official(r["elements"])) for r in records]
    pairs = [(g, p) for g, p in pairs if p is not None]
    ours_abs = el.mean_or_zero([el.element_abs(g, p) for g, p in pairs])
    ours_sim = el.official_mean(el.element_sim_scores(pairs, model))
    t_ours = time.perf_counter() - t0
    print(f"element_abs: hanyi {ours_abs:.6f}; element_sim: hanyi {ours_sim:.6f} ({t_ours:.2f} s, n={len(pairs)})")
    t0 = time.perf_counter()
    off_abs, off_sim, off_n = official_elements(
        official_log(records, "elements"), gt, model, not args.skip_official_sim, lemmatize
    )
    t_off = time.perf_counter() - t0
    print(f"element_abs: official {off_abs:.6f} (n={off_n})  |diff| {abs(off_abs - ours_abs):.2e}")
    words = sorted(
        {w for _g, p in pairs for item in p for w in item.split()}
        | {w + "s" for g in gt.values() for e in g for w in e.split()}
    )
    drift = [(w, el.lemmatize_noun(w), lemmatize(w)) for w in words if el.lemmatize_noun(w) != lemmatize(w)]
    print(
        f"lemmatiser drift (hanyi {el.lemmatizer_backend()} vs NLTK WordNet): {len(drift)}/{len(words)} words {drift[:8]}"
    )
    if off_sim is not None:
        diff = abs(off_sim - ours_sim)
        ok = floats.close(off_sim, ours_sim)
        print(f"element_sim: official {off_sim:.6f} ({t_off:.2f} s)  |diff| {diff:.2e}  within the float rule: {ok}")
        print(
            f"S_Sim speed-up (official per-pair encode / hanyi, each distinct string once, batched): {t_off / t_ours:.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
