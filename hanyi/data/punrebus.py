"""Pun Rebus Art (Zhang et al., 2024): official release -> hub-format dataset, plus the bundled sample.

Configs written (see ``docs/punrebus.md``): ``images`` (one doc per artwork image, split ``test``) and ``textonly``
(one doc per unique Chinese story name, split ``test``). Doc schema, spec §1.5: ``image_id``, ``image``,
``story_pinyin``, ``story_zh``, ``categories`` (every category of the story, CSV order, deduplicated) and
``elements_en`` (the scorer's ground truth: last CSV row of the story wins, lowercased, right-stripped, duplicates
kept).
"""

from __future__ import annotations

#: (Chinese name, pinyin, categories, elements of the last CSV row) for the stories of the synthetic sample.
#: Facts copied from the official answer sheet ``scorer/answer_sheet_w_element.csv``.
SAMPLE_STORIES = (
    ("马上封侯", "mashangfenghou", ("C",), ("Horse", "Monkey")),
    ("吉庆双余", "jiqingshuangyu", ("B",), ("Halbard", "Stone Musical Triangle", "Fish")),
    ("福寿双全", "fushoushuangquan", ("A", "B"), ("Bat", "Coin", "Peach")),
    ("加官", "jiaguan", ("C",), ("Official Hat", "Official Hat")),
    ("加官多子", "jiaguanduozi", ("C", "D"), ("Cockscomb", "Chicken")),
    ("富贵有余", "fuguiyouyu", ("E",), ("Peony", "Fish")),
    ("白头高节", "baitougaojie", ("F",), ("Bamboo", "Chinese Bulbul")),
    ("竹报平安（祝报平安）", "zhubaopingan", ("G",), ("Quail", "Bamboo")),
)


def normalise_gt_element(element: str) -> str:
    """Ground-truth element as the official scorer keeps it: lowercased and right-stripped (not lemmatised).

    >>> normalise_gt_element("Shou Character ")
    'shou character'
    """
    return element.lower().rstrip()


def _features():
    import datasets

    return datasets.Features(
        {
            "image_id": datasets.Value("string"),
            "image": datasets.Image(),
            "story_pinyin": datasets.Value("string"),
            "story_zh": datasets.Value("string"),
            "categories": datasets.Sequence(datasets.Value("string")),
            "elements_en": datasets.Sequence(datasets.Value("string")),
        }
    )


def _textonly_features():
    import datasets

    return datasets.Features(
        {
            "story_zh": datasets.Value("string"),
            "story_pinyin": datasets.Value("string"),
            "categories": datasets.Sequence(datasets.Value("string")),
        }
    )


def build_sample(out_dir: str) -> dict:
    """Write the synthetic sample: one image per sample story (two for the first), same schema as ``prepare``."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset
    from hanyi.data.images import synthetic_image

    rows = []
    for i, (zh, pinyin, cats, elements) in enumerate(SAMPLE_STORIES):
        for n in range(1, 3 if i == 0 else 2):
            image_id = f"{pinyin}_{n}.jpg"
            rows.append(
                {
                    "image_id": image_id,
                    "image": synthetic_image(image_id),
                    "story_pinyin": pinyin,
                    "story_zh": zh,
                    "categories": list(cats),
                    "elements_en": [normalise_gt_element(e) for e in elements],
                }
            )
    images = datasets.Dataset.from_list(rows, features=_features())
    text = datasets.Dataset.from_list(
        [{"story_zh": zh, "story_pinyin": p, "categories": list(c)} for zh, p, c, _ in SAMPLE_STORIES],
        features=_textonly_features(),
    )
    card = "# Pun Rebus Art: synthetic sample\n\nReal story labels, synthetic images. For smoke tests only; see docs/punrebus.md."
    return write_hub_dataset(out_dir, {"images": {"test": images}, "textonly": {"test": text}}, card, {"source": "synthetic sample"})
