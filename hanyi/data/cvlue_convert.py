"""CVLUE official records -> doc rows, one function per task, and the hub config schemas (``hanyi prepare cvlue``).

Pure: lists and dicts of the release in (already read and gold-checked by :mod:`hanyi.data.cvlue`), doc rows out.
Every row carries ``category`` (image folder slug) and ``culture_group``. Anomalies are appended to the list given,
never fixed silently.
"""

from __future__ import annotations

import random

from hanyi.data.cvlue_categories import category_of, culture_group

MC_SIZE = 10
#: ``stage1_rank`` of the placeholder row of an ITR query that the stage-1 shortlist does not cover.
UNCOVERED_RANK = 0
MC_SEED = 20250101


def _tags(image: str) -> dict:
    cat = category_of(image)
    return {"category": cat, "culture_group": culture_group(cat)}


def convert_vqa(items: list[dict]) -> list[dict]:
    """Official VQA list -> docs (file order kept: the official merge zips by position)."""
    return [
        {
            "question_id": int(it["question_id"]),
            "image_path": it["image"],
            "question": it["question"],
            "answer": it.get("answer") or "",
            **_tags(it["image"]),
        }
        for it in items
    ]


def convert_vg(items: list[dict], anomalies: list[str]) -> list[dict]:
    """Official VG list -> docs; gold boxes outside the image are reported, not changed."""
    docs = []
    for it in items:
        bbox = [float(v) for v in it.get("bbox") or []]
        if len(bbox) == 4 and (bbox[0] + bbox[2] > it["width"] + 1e-6 or bbox[1] + bbox[3] > it["height"] + 1e-6):
            anomalies.append(f"VG ref_id {it['ref_id']}: gold box exceeds the {it['width']}x{it['height']} image")
        docs.append(
            {
                "ref_id": int(it["ref_id"]),
                "image_path": it["image"],
                "text": it["text"],
                "width": int(it["width"]),
                "height": int(it["height"]),
                "bbox": bbox,
                **_tags(it["image"]),
            }
        )
    return docs


def convert_vd(release: dict, gold: dict | None, anomalies: list[str], n_options: int = 100) -> list[dict]:
    """Official VD file -> one doc per (image, round) with history and options resolved to text (spec §1.8)."""
    q_text, a_text = release["id2question"], release["id2answer"]
    gold_by_key = {(g["image_id"], g["question"]): g for g in (gold or {}).get("data", [])}
    docs = []
    for dlg in release["dialogs"]:
        rounds = dlg["dialog"]
        for position, turn in enumerate(rounds):
            if "answer_options" not in turn:
                continue
            history = [r for r in rounds[:position] if "answer" in r]
            options = [int(o) for o in turn["answer_options"]]
            g = gold_by_key.get((dlg["image_id"], turn["question"]), {})
            answer = g.get("answer", turn.get("answer", -1))  # the gold file wins over the dialog file
            if len(options) != n_options:
                anomalies.append(f"VD image_id {dlg['image_id']} question {turn['question']}: {len(options)} options")
            if answer != -1 and answer not in options:
                anomalies.append(f"VD image_id {dlg['image_id']} question {turn['question']}: gold not among options")
            docs.append(
                {
                    "image_id": int(dlg["image_id"]),
                    "image_path": dlg["image"],
                    "caption": dlg.get("caption", ""),
                    "dialog_id": int(g.get("dialog_id", position + 1)),
                    "question_id": int(turn["question"]),
                    "question": q_text[str(turn["question"])],
                    "history_questions": [q_text[str(r["question"])] for r in history],
                    "history_answers": [a_text[str(r["answer"])] for r in history],
                    "answer_option_ids": options,
                    "answer_options": [a_text[str(o)] for o in options],
                    "answer_id": int(answer),
                    "gold_index": options.index(answer) if answer in options else -1,
                    **_tags(dlg["image"]),
                }
            )
    return docs


def _itr_row(direction, protocol, query, image, caption, rank, is_gold, n_gold, query_image):
    return {
        "direction": direction,
        "protocol": protocol,
        "query": query,
        "image_path": image,
        "caption": caption,
        "stage1_rank": rank,
        "is_gold": is_gold,
        "n_gold": n_gold,
        **_tags(query_image),
    }


def itr_rerank_rows(gallery: list[dict], shortlist: dict, k: int, anomalies: list[str]) -> dict[str, list[dict]]:
    """Pair docs for the ``rerank@K`` protocol: per query the top-``k`` of the fixed stage-1 ``shortlist``.

    ``shortlist`` is in the official submission format: ``{"i2t": {image: [captions]}, "t2i": {caption: [images]}}``.
    A query absent from it is reported and gets one placeholder row with ``stage1_rank`` 0 (:data:`UNCOVERED_RANK`;
    caption ``""`` for TR, its first gold image for IR), which the rerank metrics skip as a candidate but count as a
    query: a miss in R@k and outside the stage-1 ceiling, so both stay over all queries.
    """
    caps = {it["image"]: list(it["caption"]) for it in gallery}
    by_caption: dict[str, list[str]] = {}
    for image, cs in caps.items():
        for c in cs:
            by_caption.setdefault(c, []).append(image)
    tr, ir = [], []
    for image in sorted(caps):
        listed = shortlist.get("i2t", {}).get(image)
        if not listed:
            anomalies.append(f"ITR i2t shortlist has no entry for image {image} (counted as a miss)")
            tr.append(_itr_row("tr", f"rerank@{k}", image, image, "", UNCOVERED_RANK, False, len(caps[image]), image))
            continue
        tr += [
            _itr_row("tr", f"rerank@{k}", image, image, c, r, c in caps[image], len(caps[image]), image)
            for r, c in enumerate(listed[:k], 1)
        ]
    for caption in sorted(by_caption):
        listed = shortlist.get("t2i", {}).get(caption)
        golds = by_caption[caption]
        if not listed:
            anomalies.append(f"ITR t2i shortlist has no entry for caption {caption!r} (counted as a miss)")
            ir.append(
                _itr_row("ir", f"rerank@{k}", caption, golds[0], caption, UNCOVERED_RANK, False, len(golds), golds[0])
            )
            continue
        ir += [
            _itr_row("ir", f"rerank@{k}", caption, im, caption, r, im in golds, len(golds), golds[0])
            for r, im in enumerate(listed[:k], 1)
        ]
    return {"itr_tr_rerank": tr, "itr_ir_rerank": ir}


def itr_mc_rows(gallery: list[dict], n: int = MC_SIZE, seed: int = MC_SEED) -> dict[str, list[dict]]:
    """Pair docs for the lite ``mc{n}`` protocol: gold + n-1 seeded distractors, half from the same category."""
    rng = random.Random(seed)
    images = sorted(it["image"] for it in gallery)
    caps = {it["image"]: list(it["caption"]) for it in gallery}
    n = min(n, len(images))

    def distractors(gold_image):
        same = [im for im in images if im != gold_image and category_of(im) == category_of(gold_image)]
        other = [im for im in images if im != gold_image and im not in same]
        picked = rng.sample(same, min(len(same), (n - 1) // 2))
        return picked + rng.sample(other, min(len(other), n - 1 - len(picked)))

    tr, ir = [], []
    for image in images:
        cands = [(caps[image][0], True)] + [(caps[im][0], False) for im in distractors(image)]
        rng.shuffle(cands)
        tr += [_itr_row("tr", f"mc{n}", image, image, c, r, g, 1, image) for r, (c, g) in enumerate(cands, 1)]
        cands = [(image, True)] + [(im, False) for im in distractors(image)]
        rng.shuffle(cands)
        ir += [
            _itr_row("ir", f"mc{n}", caps[image][0], im, caps[image][0], r, g, 1, image)
            for r, (im, g) in enumerate(cands, 1)
        ]
    return {"itr_tr_mc": tr, "itr_ir_mc": ir}


def _features(config: str):
    import datasets

    V, S = datasets.Value, datasets.Sequence
    tags = {"category": V("string"), "culture_group": V("string")}
    if config == "vqa":
        return datasets.Features(
            {
                "question_id": V("int64"),
                "image": datasets.Image(),
                "image_path": V("string"),
                "question": V("string"),
                "answer": V("string"),
                **tags,
            }
        )
    if config == "vg":
        return datasets.Features(
            {
                "ref_id": V("int64"),
                "image": datasets.Image(),
                "image_path": V("string"),
                "text": V("string"),
                "width": V("int64"),
                "height": V("int64"),
                "bbox": S(V("float64")),
                **tags,
            }
        )
    if config == "vd":
        return datasets.Features(
            {
                "image_id": V("int64"),
                "image": datasets.Image(),
                "image_path": V("string"),
                "caption": V("string"),
                "dialog_id": V("int64"),
                "question_id": V("int64"),
                "question": V("string"),
                "history_questions": S(V("string")),
                "history_answers": S(V("string")),
                "answer_option_ids": S(V("int64")),
                "answer_options": S(V("string")),
                "answer_id": V("int64"),
                "gold_index": V("int64"),
                **tags,
            }
        )
    return datasets.Features(
        {
            "direction": V("string"),
            "protocol": V("string"),
            "query": V("string"),
            "image_path": V("string"),
            "caption": V("string"),
            "stage1_rank": V("int64"),
            "is_gold": V("bool"),
            "n_gold": V("int64"),
            **tags,
        }
    )
