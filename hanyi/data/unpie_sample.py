"""UNPIE synthetic data: the paper's Fig. 6/7 examples as the bundled sample, or cycled to any size.

Written through the real schema (:func:`hanyi.data.unpie.features`) with synthetic images and captions.
"""

from __future__ import annotations

import json
import os

from hanyi.data.unpie import CAPTIONS_FILE, CONFIG, SPLITS, caption_key, features, to_data_uri, unpie_id

#: The one sample disambiguator image that is deliberately an (uncached) URL, to show the unresolved-image count.
SAMPLE_UNRESOLVED_URL = "https://example.invalid/unpie/sample-tractor.jpg"


#: The paper's size: 500 puns per split.
FULL_SIZE = 500


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """Write the synthetic sample: the paper's Fig. 6/7 examples (3 per split), synthetic images, plus captions.

    Disambiguator images are stored as a data URI, bare base64, or (once) an uncached URL that stays unresolved.
    ``size``: rows per split (``FULL_SIZE`` for the paper's 500), cycling the examples with a numbered sentence.
    """
    import datasets

    from hanyi.data.hubformat import write_hub_dataset
    from hanyi.data.images import synthetic_image
    from hanyi.data.unpie_examples import PAPER_EXAMPLES

    splits, captions = {}, {}
    for split in SPLITS:
        rows = []
        examples = [e for e in PAPER_EXAMPLES if e["split"] == split]
        if size is not None:
            if size < 1:
                raise ValueError(f"unpie: size must be at least 1 row per split, got {size}")
            examples = [
                {**ex, "pun_sentence": f"{ex['pun_sentence']} ({i})"} if i >= len(examples) else ex
                for i, ex in ((i, examples[i % len(examples)]) for i in range(size))
            ]
        for idx, ex in enumerate(examples):
            pid = unpie_id(split, idx)
            disamb = [to_data_uri(synthetic_image(f"{pid}-{j}")) for j in (0, 1)]
            disamb[1] = disamb[1].split(",", 1)[1] if idx == 1 else disamb[1]
            if split == "heterographic" and idx == 2:
                disamb[1] = SAMPLE_UNRESOLVED_URL
            row = {k: v for k, v in ex.items() if k != "split"}
            row["alter_sentence"] = ex["pun_sentence"].replace(ex["pun_phrase"], ex["alter_phrase"])
            row.update(disamb_image1=disamb[0], disamb_image2=disamb[1], pun_exp_image=synthetic_image(pid))
            rows.append(row)
            captions[caption_key(pid)] = f"a drawing about {ex['meaning1']} and {ex['meaning2']}"
            for j in (0, 1):
                captions[caption_key(pid, j)] = f"a photo of {ex[f'meaning{j + 1}']}"
        splits[split] = datasets.Dataset.from_list(rows, features=features())
    card = "# UNPIE: synthetic sample\n\nPaper Fig. 6/7 annotations, synthetic images. Smoke tests only; see docs/unpie.md."
    counts = write_hub_dataset(out_dir, {CONFIG: splits}, card, {"source": "synthetic sample (paper Figs. 6-7)"})
    with open(os.path.join(out_dir, CAPTIONS_FILE), "w", encoding="utf-8") as f:
        json.dump(dict(sorted(captions.items())), f, ensure_ascii=False, indent=1)
        f.write("\n")
    return counts
