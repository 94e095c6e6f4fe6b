"""Batched zero-shot NLI vs one HF pipeline call per (critique, label), on the tiny offline NLI model.

    python benchmarks/vulca_nli_batching.py [--texts 108] [--chars 11000]

Prints wall-clock seconds of both ways and the ratio, and the largest score difference between them (fidelity).
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "vulca"))

from tiny_nli import build_tiny_nli  # noqa: E402

from hanyi.metrics.critique_profile import FEATURE_LABELS, QUALITY_LABELS, STANCE_LABELS  # noqa: E402
from hanyi.metrics.zeroshot_nli import NLIConfig, extract_features, hf_logits_fn  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=108)
    ap.add_argument("--chars", type=int, default=11000, help="critique length (Gemini critiques are ~11k chars)")
    args = ap.parse_args()
    model = build_tiny_nli(os.path.join(tempfile.gettempdir(), "hanyi_vulca_tiny_nli"))
    base = "The court ladies watch lanterns under the willows; the colours are rich and the perspective Western. "
    texts = [f"Critique {i}. " + base * (args.chars // len(base)) for i in range(args.texts)]

    fn = hf_logits_fn(NLIConfig(model=model, batch_size=64))
    t0 = time.perf_counter()
    ours = extract_features(texts, fn, STANCE_LABELS, FEATURE_LABELS, QUALITY_LABELS)
    batched = time.perf_counter() - t0

    from transformers import pipeline

    pipe = pipeline("zero-shot-classification", model=model, device=-1)
    t0 = time.perf_counter()
    diff = 0.0
    for text, mine in zip(texts, ours):
        for label in FEATURE_LABELS + QUALITY_LABELS:
            score = pipe(text, [label], multi_label=True)["scores"][0]
            diff = max(diff, abs(score - {**mine["features"], **mine["quality"]}[label]))
        for label in STANCE_LABELS:  # the per-label way cannot normalise across labels; time it the same way
            pipe(text, [label], multi_label=True)
    naive = time.perf_counter() - t0
    n = args.texts * (len(STANCE_LABELS) + len(FEATURE_LABELS) + len(QUALITY_LABELS))
    print(f"critiques={args.texts} labels=38 pairs={n} model=tiny BERT (2 layers, hidden 32), CPU, max_length 512")
    print(
        f"batched (ours): {batched:.2f} s   one pipeline call per label: {naive:.2f} s   ratio: {naive / batched:.1f}x"
    )
    print(f"max |score difference| on the 28 multi-label scores: {diff:.2e}")


if __name__ == "__main__":
    main()
