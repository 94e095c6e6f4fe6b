"""VULCA human embedding reference: the released MHEB texts -> per-text embeddings under one named embedder.

Input: the folder ``full_data/human_expert/data/`` of yha9806/EMNLP2025-VULCA at commit
``91a6131fffbcfcb5f2abc448d13923962ec64bcb`` (163 ``<work>/<section>.txt`` files: copyrighted book excerpts, the
texts behind ``human_expert_features_consolidated.csv``). Output: ``hanyi/tasks/vulca/reference/human_embeddings.json``
with the embedder id, dimension, normalisation, the sorted file ids (citations) and the L2-normalised embeddings as
float32 base64; no text. Regenerate (e.g. with the paper's embedder, then set ``HANYI_VULCA_EMBED_MODEL`` to it)::

    git -C <EMNLP2025-VULCA clone> archive 91a6131f full_data/human_expert/data | tar -x -C /tmp/mheb
    python -m hanyi.data.vulca_embed_reference /tmp/mheb/full_data/human_expert/data [--model <id or path>] [--out f]
"""

from __future__ import annotations

import argparse
import functools
import json
import os

from hanyi import TASKS_DIR

SOURCE = {
    "repo": "yha9806/EMNLP2025-VULCA",
    "commit": "91a6131fffbcfcb5f2abc448d13923962ec64bcb",
    "path": "full_data/human_expert/data/*/*.txt",
}
DEFAULT_OUT = os.path.join(TASKS_DIR, "vulca", "reference", "human_embeddings.json")


def read_texts(folder: str) -> dict[str, str]:
    """``{"<work>\\\\<section>.txt": stripped text}`` (the CSV's file_id form), sorted; empty files raise."""
    texts = {}
    for work in sorted(os.listdir(folder)):
        if not os.path.isdir(os.path.join(folder, work)):
            continue
        for name in sorted(os.listdir(os.path.join(folder, work))):
            if name.endswith(".txt"):
                with open(os.path.join(folder, work, name), encoding="utf-8-sig") as f:
                    text = f.read().strip()
                if not text:
                    raise ValueError(f"{work}/{name}: empty text")
                texts[f"{work}\\{name}"] = text
    if not texts:
        raise FileNotFoundError(f"no <work>/<section>.txt files under {folder}")
    return texts


def build_reference(folder: str, model: str | None = None) -> dict:
    from hanyi.metrics.critique_embed import EmbedConfig, embed_texts, encode_vectors

    if model:
        os.environ["HANYI_VULCA_EMBED_MODEL"] = model
    config = EmbedConfig.from_env()
    texts = read_texts(folder)
    vectors = embed_texts(list(texts.values()), config)
    if vectors is None:
        raise SystemExit(f"embedder {config.path!r} cannot be loaded")
    return {
        "embedder": config.model_id,
        "normalized": True,
        "n": len(vectors),
        "dim": len(vectors[0]),
        "source": SOURCE,
        "file_ids": list(texts),
        "vectors_b64": encode_vectors(vectors),
    }


@functools.lru_cache(maxsize=1)
def load_embed_reference(path: str = DEFAULT_OUT) -> dict | None:
    """The shipped reference, or ``None`` when the file is absent."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("texts", help="full_data/human_expert/data folder")
    ap.add_argument("--model", help="embedder (local path or id); default $HANYI_VULCA_EMBED_MODEL")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    ref = build_reference(args.texts, args.model)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"{args.out}: {ref['n']} texts, {ref['dim']}-d, embedder {ref['embedder']}")


if __name__ == "__main__":
    main()
