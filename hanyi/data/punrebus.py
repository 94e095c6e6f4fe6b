"""Pun Rebus Art (Zhang et al., 2024): official release -> hub-format dataset, plus the bundled sample.

Configs written (see ``docs/punrebus.md``): ``images`` (one doc per artwork image, split ``test``) and ``textonly``
(one doc per unique Chinese story name, split ``test``). Doc schema, spec §1.5: ``image_id``, ``image``,
``story_pinyin``, ``story_zh``, ``categories`` (every category of the story, CSV order, deduplicated),
``category_rows`` (the category of every answer-sheet row of the story, duplicates kept: the official per-category
denominators count them),
``elements_en`` (the scorer's ground truth: last CSV row of the story wins, lowercased, right-stripped, duplicates
kept) and the optional ``pun_wish_en`` / ``pun_design_en`` / ``punning_details_en`` from ``english_pun_detail.json``.

``hanyi prepare punrebus`` reads the answer sheet (``scorer/answer_sheet_w_element.csv`` of the official repo at the
pinned commit, checked by SHA-256) and the image zip (the authors' Dropbox link) or local copies of either. Every
anomaly (malformed or duplicate rows, odd file names, images whose story is not in the sheet, undecodable images) is
counted in the returned dict and listed in ``hanyi_build.json``; nothing is dropped silently.

Reading the release (answer sheet, image files, pun details, downloads) is :mod:`hanyi.data.punrebus_release`; this
module joins them into the dataset and writes it.
"""

from __future__ import annotations

import functools
import logging
import os
import re

from hanyi.data.punrebus_release import (  # noqa: F401  (re-exported: hanyi.data.punrebus stays the public entry)
    CATEGORIES,
    HEADER,
    PUN_DETAIL_ID_OVERRIDES,
    _decodes,
    _read_source,
    iter_image_files,
    load_pun_details,
    normalise_gt_element,
    parse_answer_sheet,
    sha256_bytes,
)

log = logging.getLogger(__name__)

OFFICIAL_REPO = "zhang-tuo-pdf/Pun-Rebus-Art-Benchmark"
OFFICIAL_COMMIT = "61c497f5bd5075239c8a1dedfa49fbf7e679cc94"
ANSWER_SHEET_URL = (
    f"https://raw.githubusercontent.com/{OFFICIAL_REPO}/{OFFICIAL_COMMIT}/scorer/answer_sheet_w_element.csv"
)
ANSWER_SHEET_SHA256 = "6cc2949c005cce9d06ecc7eef5b5673ecc85f981fff87a79fae7d4e5f617b741"
IMAGES_URL = (
    "https://www.dropbox.com/scl/fi/1s958fi0f4j8l5nmtf3y5/Pun_Chinese_Painting.zip"
    "?rlkey=q9fotvuqt6zvvdni7fc3cbn9u&st=l0i2kzaf&dl=1"
)
#: SHA-256 of Pun_Chinese_Painting.zip. Unknown: the zip could not be downloaded when this builder was written, so
#: the builder records the observed hash in hanyi_build.json; set this constant once a reference download is checked.
IMAGES_ZIP_SHA256: str | None = None
EXPECTED_IMAGES = 1011
EXPECTED_STORIES = 375
#: The official scorers' image-name rule: ``<pinyin>_<n>.<ext>``; the story key is the part before the first "_".
IMAGE_NAME = re.compile(r"^\S+_\d+\.(jpg|png|jpeg)$")

#: (Chinese name, pinyin, categories, elements of the last CSV row, images) for the synthetic sample.
#: Facts copied from the official answer sheet. The first five are the 5-shot exemplar stories.
SAMPLE_STORIES = (
    ("安居（图）", "anjutu", ("G",), ("Quail", "Chrysanthemum"), 1),
    ("福在眼前", "fuzaiyanqian", ("B",), ("Bat", "Coin"), 1),
    ("必定升官", "bidingshengguan", ("C",), ("Pen Brush", "Ingot", "Official Hat"), 1),
    ("大富贵", "dafugui", ("E",), ("Peony",), 1),
    ("高风亮节", "gaofengliangjie", ("F",), ("Bamboo",), 1),
    ("马上封侯", "mashangfenghou", ("C",), ("Horse", "Monkey"), 2),
    ("吉庆双余", "jiqingshuangyu", ("B",), ("Halbard", "Stone Musical Triangle", "Fish"), 1),
    ("福寿双全", "fushoushuangquan", ("A", "B"), ("Bat", "Coin", "Peach"), 1),
    ("加官", "jiaguan", ("C",), ("Official Hat", "Official Hat"), 1),
    ("三多", "sanduo", ("A", "B", "D"), ("Bat", "Pomegranate"), 1),
    ("同偕", "tongxie", ("D",), ("Shoes",), 1),
)


def _features():
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "image_id": text,
            "image": datasets.Image(),
            "story_pinyin": text,
            "story_zh": text,
            "categories": datasets.Sequence(text),
            "category_rows": datasets.Sequence(text),
            "elements_en": datasets.Sequence(text),
            "pun_wish_en": text,
            "pun_design_en": datasets.Sequence(text),
            "punning_details_en": datasets.Sequence(text),
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


# --------------------------------------------------------------------------------------------- build
def build_dataset(
    answer_sheet_text: str, image_files, out_dir: str, pun_details: dict | None = None, info=None, card=None
) -> dict:
    """Join images to stories and write the ``images`` and ``textonly`` configs; returns the counts."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    stories, names, anomalies = parse_answer_sheet(answer_sheet_text)
    pun_details = pun_details or {}
    rows, by_name, report = [], {}, {"odd_file_names": [], "images_without_story": [], "undecodable_images": []}
    report["duplicate_file_names"], report["non_image_files"] = [], []
    for rel, load in image_files:
        base = rel.rsplit("/", 1)[-1]
        if base.startswith(".") or rel.startswith("__MACOSX/"):
            report["non_image_files"].append(rel)
            continue
        if not IMAGE_NAME.match(base):
            report["odd_file_names"].append(rel)
            continue
        if base in by_name:
            report["duplicate_file_names"].append(rel)
            continue
        pinyin = base.split("_")[0]
        if pinyin not in stories:
            report["images_without_story"].append(rel)
            continue
        data = load()
        if not _decodes(data):
            report["undecodable_images"].append(rel)
            continue
        by_name[base] = rel
        story, extra = stories[pinyin], pun_details.get(pinyin, {})
        rows.append(
            {
                "image_id": base,
                "image": {"bytes": data, "path": base},
                "story_pinyin": pinyin,
                "story_zh": story["story_zh"],
                "categories": list(story["categories"]),
                "category_rows": list(story["category_rows"]),
                "elements_en": list(story["elements_en"]),
                "pun_wish_en": extra.get("pun_wish_en"),
                "pun_design_en": extra.get("pun_design_en", []),
                "punning_details_en": extra.get("punning_details_en", []),
            }
        )
    if not rows:
        seen = sum(len(v) for v in report.values())
        origin = (info or {}).get("images_source", "the image source")
        other = f" ({seen} other file(s): none is an image of a story in the answer sheet)" if seen else ""
        raise ValueError(f"no images found in {origin}{other}")
    rows.sort(key=lambda r: r["image_id"])
    with_images = {r["story_pinyin"] for r in rows}
    text_rows = [{"story_zh": zh, **v} for zh, v in sorted(names.items(), key=lambda kv: kv[1]["story_pinyin"])]
    counts = {
        "images": len(rows),
        "stories": len(stories),
        "textonly_docs": len(text_rows),
        "images_with_no_story": len(report["images_without_story"]),
        "stories_without_images": len(set(stories) - with_images),
        **{k: len(v) for k, v in report.items() if k != "images_without_story"},
        **{k: len(v) for k, v in anomalies.items()},
    }
    for key, items in {**report, **anomalies}.items():
        if items:
            log.warning("hanyi prepare punrebus: %d %s (listed in hanyi_build.json)", len(items), key.replace("_", " "))
    images = datasets.Dataset.from_list(rows, features=_features())
    text = datasets.Dataset.from_list(text_rows, features=_textonly_features())
    card = card or (
        "# Pun Rebus Art (hanyi build)\n\nBuilt by `hanyi prepare punrebus` from the official answer sheet "
        f"({OFFICIAL_REPO}@{OFFICIAL_COMMIT[:7]}) and image zip. Images: CC0 per the authors. See docs/punrebus.md."
    )
    build_info = {**(info or {}), "counts_detail": counts, "anomalies": {**report, **anomalies}}
    write_hub_dataset(out_dir, {"images": {"test": images}, "textonly": {"test": text}}, card, build_info)
    return counts


def add_prepare_arguments(parser) -> None:
    """Options of ``hanyi prepare punrebus`` (the CLI adds ``--out``)."""
    parser.add_argument("--answer-sheet", default=ANSWER_SHEET_URL, help="answer_sheet_w_element.csv: path or URL")
    parser.add_argument(
        "--images", default=IMAGES_URL, help="Pun_Chinese_Painting.zip, or a folder of images: path or URL"
    )
    parser.add_argument("--pun-detail", default=None, help="optional english_pun_detail.json (reference explanations)")


def run_prepare(args) -> dict:
    """Build the dataset into ``args.out_dir``; returns the counts to print. Checks the pinned SHA-256 values."""
    cache = os.path.join(args.out_dir, ".downloads")
    sheet, sheet_origin = _read_source(args.answer_sheet, cache, "answer_sheet_w_element.csv")
    sheet_sha = sha256_bytes(sheet)
    if sheet_sha != ANSWER_SHEET_SHA256:
        if args.answer_sheet == ANSWER_SHEET_URL:
            raise ValueError(f"answer sheet SHA-256 {sheet_sha} != pinned {ANSWER_SHEET_SHA256}")
        log.warning(
            "hanyi prepare punrebus: %s is not the pinned official answer sheet (SHA-256 differs)", sheet_origin
        )
    images = args.images
    images_sha = None
    if images.startswith(("http://", "https://")):
        _, images = _read_source(images, cache, "Pun_Chinese_Painting.zip")
    if os.path.isfile(images):
        with open(images, "rb") as f:
            images_sha = sha256_bytes(f.read())
        if IMAGES_ZIP_SHA256 and images_sha != IMAGES_ZIP_SHA256:
            raise ValueError(f"image zip SHA-256 {images_sha} != pinned {IMAGES_ZIP_SHA256}")
    elif not os.path.isdir(images):
        raise FileNotFoundError(f"--images {images!r} is neither a zip file nor a folder")
    details = load_pun_details(
        _read_source(args.pun_detail, cache, "english_pun_detail.json")[0] if args.pun_detail else None
    )
    info = {
        "source_repo": OFFICIAL_REPO,
        "source_commit": OFFICIAL_COMMIT,
        "answer_sheet_sha256": sheet_sha,
        "answer_sheet_is_pinned_official": sheet_sha == ANSWER_SHEET_SHA256,
        "images_zip_sha256": images_sha,
        "images_zip_pinned_sha256": IMAGES_ZIP_SHA256,
        "images_source": images,
    }
    counts = build_dataset(sheet.decode("utf-8-sig"), iter_image_files(images), args.out_dir, details, info)
    if counts["images"] != EXPECTED_IMAGES:
        log.warning("hanyi prepare punrebus: %d images joined, the paper reports %d", counts["images"], EXPECTED_IMAGES)
    if sheet_sha == ANSWER_SHEET_SHA256 and counts["stories"] != EXPECTED_STORIES:
        raise AssertionError(f"the official answer sheet gave {counts['stories']} stories, expected {EXPECTED_STORIES}")
    return counts


@functools.lru_cache(maxsize=4)
def load_exemplar_docs(dataset_path: str, stories: tuple[str, ...]) -> tuple[dict, ...]:
    """The 5-shot exemplar docs: the first image (by ``image_id``) of each story in ``stories``, in that order.

    Loaded once per process from the ``images`` config at ``dataset_path``. Raises ``ValueError`` naming the
    stories that have no image in the dataset.
    """
    import datasets

    ds = datasets.load_dataset(dataset_path, "images", split="test")
    first: dict[str, tuple[str, int]] = {}
    for i, (pinyin, image_id) in enumerate(zip(ds["story_pinyin"], ds["image_id"])):
        if pinyin in stories and (pinyin not in first or image_id < first[pinyin][0]):
            first[pinyin] = (image_id, i)
    missing = [s for s in stories if s not in first]
    if missing:
        raise ValueError(f"punrebus 5-shot: exemplar stories {missing} have no image in {dataset_path}")
    return tuple(ds[first[s][1]] for s in stories)
