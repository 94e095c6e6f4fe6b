"""The caption file of UNPIE's Socratic-Model (``*_sm``) tasks: read at task load, written with any image-to-text model.

    python -m hanyi.data.unpie_captions --out <prepared unpie dir>/captions.json \
        [--model Salesforce/blip2-opt-2.7b] [--source <hub id or prepared dir>] [--max-new-tokens 30]

Captions the explanation image of every pun (key ``<split>-<row>``) and both disambiguator images (keys
``<split>-<row>-0`` / ``-1``), greedy, unconditional (the paper used BLIP-2 OPT-2.7B and gives no caption prompt or
decoding settings). Tasks find the file via ``$HANYI_UNPIE_CAPTIONS`` or ``captions.json`` in the data directory
(:func:`hanyi.data.unpie_caption_file.captions_path`) and attach each doc's caption when they load
(:func:`hanyi.data.unpie_caption_file.attach_captions`). Writing needs the
model's weights (and, realistically, a GPU); not run in CI.
Unresolvable disambiguator images get no caption and are listed at the end.
"""

from __future__ import annotations

import argparse
import json
import sys

from hanyi.data.unpie import HUB_ID, SPLITS, caption_key, load_disamb_image, unpie_id
from hanyi.logs import get_logger

log = get_logger(__name__)


def caption_images(items, captioner, batch_size: int = 8) -> dict[str, str]:
    """``{key: caption}`` for ``items`` = ``[(key, PIL image)]``; ``captioner(list of images) -> list of str``.

    >>> caption_images([("a", None), ("b", None)], lambda imgs: ["x"] * len(imgs), batch_size=1)
    {'a': 'x', 'b': 'x'}
    """
    out = {}
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        for (key, _), text in zip(chunk, captioner([img for _, img in chunk])):
            out[key] = text.strip()
    return out


def collect_images(rows_by_split) -> tuple[list, list[str]]:
    """``([(caption key, PIL image)], [unresolved messages])`` for explanation and disambiguator images."""
    items, unresolved = [], []
    for split, rows in rows_by_split.items():
        for idx, row in enumerate(rows):
            pid = unpie_id(split, idx)
            items.append((caption_key(pid), row["pun_exp_image"].convert("RGB")))
            for j in (0, 1):
                try:
                    items.append((caption_key(pid, j), load_disamb_image(row[f"disamb_image{j + 1}"], doc_hint=pid)))
                except Exception as exc:
                    unresolved.append(str(exc))
    return items, unresolved


def hf_captioner(model: str, max_new_tokens: int):
    """A transformers ``image-to-text`` pipeline as a captioner (greedy)."""
    from transformers import pipeline

    pipe = pipeline("image-to-text", model=model)
    kwargs = {"max_new_tokens": max_new_tokens, "do_sample": False}
    return lambda images: [out[0]["generated_text"] for out in pipe(images, generate_kwargs=kwargs)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default="Salesforce/blip2-opt-2.7b")
    ap.add_argument("--source", default=HUB_ID)
    ap.add_argument("--max-new-tokens", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args(argv)
    import datasets

    rows = {split: datasets.load_dataset(args.source, split=split) for split in SPLITS}
    items, unresolved = collect_images(rows)
    captions = caption_images(items, hf_captioner(args.model, args.max_new_tokens), args.batch_size)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(captions.items())), f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(captions)} captions to {args.out}; {len(unresolved)} images unresolved")
    for msg in unresolved:
        print("  unresolved:", msg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
