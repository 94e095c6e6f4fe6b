"""A synthetic CVLUE release in the official file formats (our own images and Chinese text), for the bundled sample.

It is not the shared ``test_example`` data: images come from :func:`hanyi.data.images.synthetic_image`, questions,
captions and boxes are written here. Category folders cover all three culture groups.
"""

from __future__ import annotations

import json
import os

SIZE = 48
SAMPLE_RERANK_K = 2
SAMPLE_VD_OPTIONS = 6

_A = {
    "suona": "images/test/A/84-suona/A-84-1.png",
    "cow": "images/test/A/2-cow/A-2-1.png",
    "panda": "images/test/A/1-panda/A-1-1.png",
    "baozi": "images/val/A/15-baozi/A-15-1.png",
}
_B = {
    "fish": "images/test/B/3-fish/B-3-1.png",
    "tv": "images/test/B/60-tv/B-60-1.png",
    "lantern": "images/val/B/75-lantern/B-75-1.png",
}

VQA = {
    "test": [
        (_A["suona"], 101, "图中有几个唢呐？", "2"),
        (_A["suona"], 102, "唢呐是被人拿在手里吗？", "是"),
        (_A["cow"], 201, "牛是站着还是躺着？", "站着"),
        (_A["cow"], 202, "有几头牛？", "3"),
        (_A["panda"], 301, "熊猫在吃竹子吗？", "否"),
        (_A["panda"], 302, "熊猫在树上还是在地上？", "地上"),
    ],
    "val": [(_A["baozi"], 401, "盘子里有几个包子？", "4"), (_A["baozi"], 402, "包子是白色的吗？", "是")],
}
VG = {
    "test": [
        (_A["suona"], 11, "左边那个人手里的唢呐", [2.5, 10.0, 14.0, 6.0]),
        (_A["suona"], 12, "右边那个人手里的唢呐", [28.0, 12.5, 15.0, 5.5]),
        (_A["cow"], 21, "最高的那头牛", [5.0, 4.0, 20.0, 30.0]),
        (_A["cow"], 22, "低着头的牛", [26.0, 20.0, 18.0, 22.0]),
        (_A["panda"], 31, "坐着的熊猫", [0.0, 8.0, 22.0, 30.0]),
        (_A["panda"], 32, "躺着的熊猫", [24.0, 30.0, 24.0, 18.0]),
    ],
    "val": [
        (_A["baozi"], 41, "最大的包子", [10.0, 10.0, 20.0, 16.0]),
        (_A["baozi"], 42, "最小的包子", [34.0, 30.0, 8.0, 6.0]),
    ],
}
VD_QUESTIONS = (
    "鱼缸里有几条鱼？",
    "鱼是什么颜色的？",
    "鱼缸放在哪里？",
    "电视开着吗？",
    "电视旁边有什么？",
    "房间里有人吗？",
    "花灯是什么形状的？",
    "花灯挂在哪里？",
)
VD_ANSWERS = (
    "鱼缸里有四条鱼。",
    "鱼是红色和白色的。",
    "鱼缸放在白色的柜子上。",
    "电视是开着的。",
    "电视旁边有一盆花。",
    "房间里没有人。",
    "花灯是圆形的。",
    "花灯挂在门口。",
    "桌子的颜色是白色的。",
    "我看不清楚。",
    "是的。",
    "不是。",
)
#: (image, caption, image_id, [(q, a) history ids], current q id, gold answer id, option ids)
VD = {
    "test": [
        (_B["fish"], "白色的柜子上放着一个鱼缸", 1, [(0, 0)], 1, 1, [8, 1, 9, 0, 10, 2]),
        (_B["fish"], "白色的柜子上放着一个鱼缸", 1, [(0, 0), (1, 1)], 2, 2, [2, 8, 9, 11, 0, 3]),
        (_B["tv"], "客厅里有一台电视", 2, [], 3, 3, [10, 11, 3, 8, 9, 5]),
        (_B["tv"], "客厅里有一台电视", 2, [(3, 3)], 4, 4, [8, 9, 4, 5, 3, 10]),
    ],
    "val": [(_B["lantern"], "门口挂着一个红色的花灯", 3, [(6, 6)], 7, 7, [7, 8, 6, 9, 10, 11])],
}
IC = {
    "test": [
        (
            _A["suona"],
            (
                "两个人在吹唢呐",
                "唢呐被两个人拿在手里",
                "穿红衣服的人吹着唢呐",
                "两个唢呐在阳光下发亮",
                "婚礼上有人吹唢呐",
            ),
        ),
        (_A["cow"], ("草地上站着三头牛", "三头牛在吃草", "牛的背后有一片树林", "一头牛低着头", "三头黑色的牛")),
        (
            _B["fish"],
            ("鱼缸里游着四条鱼", "白色的柜子上放着鱼缸", "红白相间的鱼在游", "鱼缸里有水草", "四条鱼在鱼缸里"),
        ),
    ],
}


def _shortlist() -> dict:
    """A fixed stage-1 shortlist (official submission format) where one query of each direction misses at K=2."""
    images, captions = [img for img, _ in IC["test"]], [c for _, cs in IC["test"] for c in cs]
    i2t = {img: [c for c in captions if c in cs] + [c for c in captions if c not in cs] for img, cs in IC["test"]}
    i2t[images[1]] = [captions[0], captions[10]] + [c for c in captions if c not in (captions[0], captions[10])]
    t2i = {}
    for n, c in enumerate(captions):
        gold = images[n // 5]
        others = [i for i in images if i != gold]
        t2i[c] = others + [gold] if n == 7 else ([others[0], gold, others[1]] if n % 2 else [gold] + others)
    return {"i2t": i2t, "t2i": t2i}


def write_synthetic_release(root: str) -> dict:
    """Write the synthetic release under ``root`` (official layout); returns its stage-1 ITR shortlist."""
    from hanyi.data.images import synthetic_image

    def dump(rel, obj):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=1)

    for rel in sorted({*_A.values(), *_B.values()}):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        synthetic_image(rel, SIZE).save(os.path.join(root, rel))
    for split in ("val", "test"):
        dump(
            f"VQA/{split}.json",
            [{"image": i, "question_id": q, "question": t, "answer": a} for i, q, t, a in VQA[split]],
        )
        dump(
            f"VG/{split}.json",
            [
                {"ref_id": r, "image": i, "text": t, "width": SIZE, "height": SIZE, "bbox": b}
                for i, r, t, b in VG[split]
            ],
        )
        dialogs, gold = [], []
        for img, cap, image_id, hist, q, a, opts in VD[split]:
            turns = [{"question": hq, "answer": ha} for hq, ha in hist] + [{"question": q, "answer_options": opts}]
            dialogs.append({"image_id": image_id, "image": img, "caption": cap, "dialog": turns})
            gold.append(
                {
                    "image_id": image_id,
                    "image": img,
                    "caption": cap,
                    "dialog_id": len(hist) + 1,
                    "question": q,
                    "answer_options": opts,
                    "answer": a,
                }
            )
        dump(
            f"VD/{split}.json",
            {
                "dialogs": dialogs,
                "id2question": dict(enumerate(VD_QUESTIONS)),
                "id2answer": dict(enumerate(VD_ANSWERS)),
            },
        )
        dump(f"VD/{split}_gold.json", {"data": gold})
    dump("IC/test.json", [{"image": i, "caption": list(cs)} for i, cs in IC["test"]])
    return _shortlist()


#: The paper's test sizes (spec §1: images per task; VQA has ~3 questions per image, VD one 100-option round each).
FULL_SIZE = {"vqa_images": 7169, "vg_images": 5385, "vd_images": 2036}
FULL_VD_OPTIONS = 100


def write_scaled_release(root: str, size: int, vd_options: int = FULL_VD_OPTIONS) -> dict:
    """A synthetic test release at ``size`` VQA images (``FULL_SIZE["vqa_images"]`` = the paper's), official layout.

    VQA: 3 questions per image; VG: one referring expression per image, ``size * 5385 / 7169`` images; VD: one
    ``vd_options``-candidate round per image, ``size * 2036 / 7169`` images. Questions, boxes and dialogs cycle the
    sample's, images are synthetic and spread over all 92 category folders. Deterministic. No IC (ITR) file.
    Returns the counts written.
    """
    from hanyi.data.cvlue_categories import SLUGS
    from hanyi.data.images import synthetic_image

    if size < 1:
        raise ValueError(f"cvlue: size must be at least 1 VQA image, got {size}")
    n_vg = max(1, round(size * FULL_SIZE["vg_images"] / FULL_SIZE["vqa_images"]))
    n_vd = max(1, round(size * FULL_SIZE["vd_images"] / FULL_SIZE["vqa_images"]))

    def image(subset: str, n: int) -> str:
        slug = SLUGS[n % len(SLUGS)]
        rel = f"images/test/{subset}/{slug}/{subset}-{slug.split('-')[0]}-{n + 1}.png"
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        synthetic_image(rel, SIZE).save(os.path.join(root, rel))
        return rel

    def dump(rel, obj):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False)

    vqa, vg = [], []
    for n in range(size):
        img = image("A", n)
        for k in range(3):
            _, _, q, a = VQA["test"][(3 * n + k) % len(VQA["test"])]
            vqa.append({"image": img, "question_id": 3 * n + k + 1, "question": q, "answer": a})
        if n < n_vg:
            _, _, text, box = VG["test"][n % len(VG["test"])]
            vg.append({"ref_id": n + 1, "image": img, "text": text, "width": SIZE, "height": SIZE, "bbox": box})
    questions = {i: f"{VD_QUESTIONS[i % len(VD_QUESTIONS)]}（{i}）" for i in range(max(n_vd + 1, len(VD_QUESTIONS)))}
    answers = {i: f"{VD_ANSWERS[i % len(VD_ANSWERS)]}（{i}）" for i in range(max(n_vd + vd_options, len(VD_ANSWERS)))}
    dialogs, gold = [], []
    for n in range(n_vd):
        img, cap = image("B", n), VD["test"][n % len(VD["test"])][1]
        opts = [(n + j) % len(answers) for j in range(vd_options)]  # distinct: len(answers) >= vd_options
        turns = [{"question": n, "answer": opts[1]}, {"question": n + 1, "answer_options": opts}]
        dialogs.append({"image_id": n + 1, "image": img, "caption": cap, "dialog": turns})
        gold.append(
            {
                "image_id": n + 1,
                "image": img,
                "caption": cap,
                "dialog_id": 2,
                "question": n + 1,
                "answer_options": opts,
                "answer": opts[n % vd_options],
            }
        )
    dump("VQA/test.json", vqa)
    dump("VG/test.json", vg)
    dump("VD/test.json", {"dialogs": dialogs, "id2question": questions, "id2answer": answers})
    dump("VD/test_gold.json", {"data": gold})
    return {"vqa": len(vqa), "vg": len(vg), "vd": len(dialogs)}
