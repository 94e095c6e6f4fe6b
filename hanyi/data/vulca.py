"""VULCA (Yu et al., EMNLP 2025): the twelve "Twelve Months" paintings -> hub-format dataset, plus the sample.

The images are in no repository: they are the National Palace Museum (Taipei) open-data images of 清院 十二月令圖
(paper App. A.1: CC BY 4.0; see docs/vulca.md "Data"). ``hanyi prepare vulca --images <dir>`` finds one image per
month in ``<dir>`` and writes config ``whole`` (one doc per painting, split ``test``) and, with ``--slices``, config
``slices`` (the same docs plus ``image_slices``: the released preprocessing's 2560-px windows, stride 0.75 x window,
each resized to 640 x 640; spec §1.2). Doc schema (spec §5.3): ``doc_id`` ("01".."12"), ``month_en``, ``month_zh``,
``title_zh``, ``image``.
"""

from __future__ import annotations

import os
import re

from hanyi.data.safepath import inside
from hanyi.data.vulca_constants import MONTHS, TITLE_PREFIX

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp")
SLICE_WINDOW, SLICE_STRIDE, SLICE_OUT = 2560, 0.75, 640
SAMPLE_MONTHS = ("01", "04", "05", "08", "10", "12")
_ZH_NUM = {zh.split("_")[0]: doc_id for doc_id, _, zh in MONTHS}


def month_of(filename: str) -> str | None:
    """doc_id ("01".."12") named by an image file name: Chinese month (十二月令图_一月_正月), English month, or a
    leading/trailing month number. None when the name names no single month.

    >>> month_of("清_清院_十二月令图_十一月.jpg"), month_of("october.png"), month_of("05_dragon_boats.tif"), month_of("x.jpg")
    ('11', '10', '05', None)
    """
    stem = os.path.splitext(os.path.basename(filename))[0]
    zh = re.findall(r"(十[一二]?|[一二三四五六七八九])月", stem)
    if zh:
        return _ZH_NUM.get(zh[-1] + "月")
    low = stem.lower()
    for doc_id, en, _ in MONTHS:
        if en.lower() in low:
            return doc_id
    m = re.fullmatch(r"(?:0?([1-9]|1[0-2]))(?:[_\- ].*)?|.*[_\- ](?:0?([1-9]|1[0-2]))", stem)
    if m:
        return f"{int(m.group(1) or m.group(2)):02d}"
    return None


def slice_boxes(width: int, height: int, window: int = SLICE_WINDOW, stride: float = SLICE_STRIDE) -> list[tuple]:
    """(x, y, x + w, y + w) windows of the released sliding-window crop; none when the window exceeds min(W, H).

    >>> slice_boxes(5000, 3000)
    [(0, 0, 2560, 2560), (1920, 0, 4480, 2560)]
    """
    if window > min(width, height):
        return []
    step = int(window * stride)
    return [
        (x, y, x + window, y + window)
        for y in range(0, height - window + 1, step)
        for x in range(0, width - window + 1, step)
    ]


def _features(slices: bool):
    import datasets

    cols = {k: datasets.Value("string") for k in ("doc_id", "month_en", "month_zh", "title_zh")}
    cols["image"] = datasets.Image()
    if slices:
        cols["image_slices"] = datasets.Sequence(datasets.Image())
    return datasets.Features(cols)


def _rows(images: dict, slices: bool) -> list[dict]:
    rows = []
    for doc_id, en, zh in MONTHS:
        if doc_id not in images:
            continue
        img = images[doc_id]
        row = {"doc_id": doc_id, "month_en": en, "month_zh": zh, "title_zh": TITLE_PREFIX + zh, "image": img}
        if slices:
            row["image_slices"] = [img.crop(b).resize((SLICE_OUT, SLICE_OUT)) for b in slice_boxes(*img.size)]
        rows.append(row)
    return rows


def _write(out_dir: str, images: dict, card: str, info: dict, slices: bool) -> dict:
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    configs = {"whole": {"test": datasets.Dataset.from_list(_rows(images, False), features=_features(False))}}
    if slices:
        configs["slices"] = {"test": datasets.Dataset.from_list(_rows(images, True), features=_features(True))}
    return write_hub_dataset(out_dir, configs, card=card, info=info)


def build_synthetic(out_dir: str, doc_ids=SAMPLE_MONTHS, builder: str = "hanyi.data.vulca.build_sample") -> dict:
    """A dataset of the given months (real doc ids and titles) with synthetic 64-px images, config ``whole``.

    Used for the bundled sample and to re-score released critiques (``benchmarks/vulca_rescore_released.py``).
    """
    from hanyi.data.images import synthetic_image

    unknown = sorted(set(doc_ids) - {d for d, _, _ in MONTHS})
    if unknown:
        raise ValueError(f"unknown VULCA doc ids {unknown}; expected 01..12")
    images = {d: synthetic_image(f"vulca-{d}", size=64) for d in doc_ids}
    card = "# VULCA sample\n\nSynthetic images only (no real paintings); schema of `hanyi prepare vulca`. See docs/vulca.md."
    return _write(out_dir, images, card, {"builder": builder, "synthetic": True}, slices=False)


#: The largest painting `hanyi prepare vulca` decodes: 25x the paper's "6 million pixels" scans (§3.2), 0.45 GB as
#: RGB. PIL's decompression-bomb check stays on at this limit (a 31 KB PNG declaring 16000x16000 px would take
#: 1.3 GB); ``--max-pixels`` raises it for larger scans.
MAX_PIXELS = 150_000_000

#: The paper's size: the 12 months (x 9 prompt configurations = 108 critiques).
FULL_SIZE = 12


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """The bundled sample: six months with synthetic images (the real schema, no real paintings).

    ``size``: the first ``size`` months (1..12; ``FULL_SIZE`` is the paper's 12 paintings).
    """
    if size is None:
        return build_synthetic(out_dir, SAMPLE_MONTHS)
    if not 1 <= size <= FULL_SIZE:
        raise ValueError(f"vulca: size must be 1..{FULL_SIZE} paintings, got {size}")
    return build_synthetic(out_dir, tuple(d for d, _, _ in MONTHS[:size]), builder=f"build_sample(size={size})")


def add_prepare_arguments(parser) -> None:
    parser.add_argument(
        "--images", required=True, help="folder with one image per month (Chinese or English month in the name)"
    )
    parser.add_argument(
        "--slices", action="store_true", help="also write config 'slices' (2560-px windows resized to 640)"
    )
    parser.add_argument(
        "--max-pixels",
        type=int,
        default=MAX_PIXELS,
        help=f"refuse an image larger than this many pixels before decoding it (default {MAX_PIXELS:,}; "
        "the paper's scans are about 6 million)",
    )


def _open_painting(path: str, name: str, limit: int):
    """Decode one painting as RGB, refusing one that declares more than ``limit`` pixels before decoding it."""
    import warnings

    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limit  # PIL's own check at our limit (it raises at twice the limit), restored after
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our check below names the file
            image = Image.open(path)
        width, height = image.size
        if width * height > limit:
            raise ValueError(
                f"{name}: {width}x{height} = {width * height:,} pixels, over the limit of {limit:,} "
                "(a decompression bomb, or a larger scan: raise --max-pixels)"
            )
        return image.convert("RGB")
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(f"{name}: image does not decode ({exc})") from None
    finally:
        Image.MAX_IMAGE_PIXELS = before


def run_prepare(args) -> dict:
    """Find the twelve paintings under ``args.images`` and write the dataset to ``args.out_dir``.

    Raises ``FileNotFoundError`` naming the missing months and ``ValueError`` for two images of one month or an
    unreadable image; files that name no month are reported in the returned counts, not silently dropped.
    """
    found, unmatched = {}, []
    for name in sorted(os.listdir(args.images)):
        path = inside(args.images, name, "VULCA image")  # a symlink to a file elsewhere is refused
        if not (os.path.isfile(path) and name.lower().endswith(IMAGE_EXTS)):
            continue
        doc_id = month_of(name)
        if doc_id is None:
            unmatched.append(name)
        elif doc_id in found:
            raise ValueError(f"two images for month {doc_id}: {found[doc_id]} and {name}")
        else:
            found[doc_id] = name
    missing = [d for d, _, _ in MONTHS if d not in found]
    if missing:
        raise FileNotFoundError(
            f"no image for month(s) {', '.join(missing)} in {args.images} (unmatched files: {unmatched})"
        )
    limit = int(getattr(args, "max_pixels", None) or MAX_PIXELS)
    images = {
        doc_id: _open_painting(inside(args.images, name, "VULCA image"), name, limit) for doc_id, name in found.items()
    }
    card = "# VULCA: Twelve Months paintings\n\nImages: National Palace Museum (Taipei) open data, 清院 十二月令圖 (paper: CC BY 4.0)."
    info = {"builder": "hanyi.data.vulca.run_prepare", "files": dict(sorted(found.items()))}
    counts = _write(args.out_dir, images, card, info, slices=bool(getattr(args, "slices", False)))
    return {
        "paintings": len(images),
        "unmatched_files": len(unmatched),
        **{f"{c}/test": n["test"] for c, n in counts.items()},
    }
