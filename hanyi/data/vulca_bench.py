"""VULCA-Bench (Yu et al., arXiv 2601.07986): the release's JSONL + a folder of images -> hub-format dataset, and the
bundled sample.

The release (GitHub ``yha9806/VULCA-Bench``, CC BY 4.0 since commit 8552527) ships ``data/vulca_bench.jsonl`` and
``data/culture_subsets/<culture>.jsonl`` without images; each row's ``image_path`` is a path on the authors' disk
(``/mnt/i/VULCA 2.0/.../optimized_images/<culture>/<file>`` or ``data/optimized_images/...``), so ``hanyi prepare
vulca_bench --jsonl <file or folder> --images <dir>`` maps it to ``<dir>`` by file name alone. Two rows may name one
image (the same artwork annotated twice: 65 pairs among the 1,327 rows at hand): both get it, and the task clusters on it.

Doc schema (config ``default``, folder ``data``, split ``test``): the release's fields (``pair_id``, ``ulid``,
``culture``, ``image_path``, ``artist``, ``title``, ``critique_zh``, ``critique_en``, ``covered_dimensions`` as a list
(the release stores a JSON string), ``art_form``, ``art_style``, ``art_genre``, ``medium``, ``quality_score``) and
``image``. Every row is checked (:func:`check_row`) before anything is written.
"""

from __future__ import annotations

import glob
import json
import os

from hanyi.data.safepath import no_link
from hanyi.metrics.vulca_bench import CULTURES, bad_dimensions, parse_dimensions

HUB_ID = "harryHURRY/vulca-bench"
#: The release's culture sizes (README: 7,408 in all), largest first.
RELEASE_SIZES = {
    "western": 4041,
    "chinese": 2041,
    "japanese": 401,
    "islamic": 205,
    "mural": 200,
    "hermitage": 196,
    "indian": 173,
    "korean": 151,
}
FULL_SIZE = sum(RELEASE_SIZES.values())
TEXT_FIELDS = ("pair_id", "ulid", "culture", "image_path", "artist", "title", "critique_zh", "critique_en")
OPTIONAL_FIELDS = ("art_form", "art_style", "art_genre", "medium")
REQUIRED = ("pair_id", "culture", "image_path", "critique_zh", "critique_en", "covered_dimensions")
IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff")
#: Rows per culture in the bundled sample.
SAMPLE_PER_CULTURE = 3


def image_name(image_path: str) -> str:
    """The file name the release's ``image_path`` ends in (POSIX or Windows separators).

    >>> image_name("/mnt/i/VULCA 2.0/x/optimized_images/korean/kr-amitabha-buddha.jpg"), image_name("a\\\\b.jpg")
    ('kr-amitabha-buddha.jpg', 'b.jpg')
    """
    return image_path.replace("\\", "/").rsplit("/", 1)[-1]


def check_row(row, where: str) -> dict:
    """One release row, checked and normalised (``covered_dimensions`` a list); raises ``ValueError`` naming ``where``.

    >>> check_row({"pair_id": "P1", "culture": "Korean", "image_path": "a/k.jpg", "critique_zh": "", "critique_en": "x",
    ...            "covered_dimensions": '["KR_L1_D1"]'}, "f:1")["covered_dimensions"]
    ['KR_L1_D1']
    >>> check_row({"pair_id": "P1", "culture": "thai", "image_path": "a", "critique_zh": "", "critique_en": "",
    ...            "covered_dimensions": "[]"}, "f:2")
    Traceback (most recent call last):
    ...
    ValueError: f:2 (pair_id P1): unknown culture 'thai' (expected one of chinese, hermitage, indian, islamic, japanese, korean, mural, western)
    """
    if not isinstance(row, dict):
        raise ValueError(f"{where}: not a JSON object")
    missing = [k for k in REQUIRED if row.get(k) is None]
    label = f"{where} (pair_id {row.get('pair_id')})"
    if missing:
        raise ValueError(f"{label}: missing field(s) {', '.join(missing)}")
    out = {k: row.get(k) for k in (*TEXT_FIELDS, *OPTIONAL_FIELDS)}
    for k, v in out.items():
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{label}: {k} must be text, got {type(v).__name__}")
    if not out["pair_id"].strip() or not image_name(out["image_path"]).strip():
        raise ValueError(f"{label}: empty pair_id or image_path")
    culture = out["culture"] = out["culture"].strip().lower()
    if culture not in CULTURES:
        raise ValueError(f"{label}: unknown culture {row['culture']!r} (expected one of {', '.join(sorted(CULTURES))})")
    try:
        dims = parse_dimensions(row["covered_dimensions"])
    except ValueError as exc:
        raise ValueError(f"{label}: covered_dimensions: {exc}") from None
    bad = bad_dimensions(dims, culture)
    if bad:
        raise ValueError(f"{label}: dimension id(s) {bad[:5]} are not {CULTURES[culture][0]}_L<1-5>_D<n> ({culture})")
    score = row.get("quality_score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise ValueError(f"{label}: quality_score must be a number, got {type(score).__name__}")
    return {**out, "covered_dimensions": dims, "quality_score": None if score is None else float(score)}


def read_release(paths) -> list[dict]:
    """Every row of the release JSONL files (or folders of them), checked; blank lines skipped; a duplicate
    ``pair_id`` raises naming both places."""
    files = []
    for path in paths:
        files += sorted(glob.glob(os.path.join(glob.escape(path), "*.jsonl"))) if os.path.isdir(path) else [path]
    if not files:
        raise FileNotFoundError(f"no .jsonl file in {', '.join(paths)}")
    rows, seen = [], {}
    for file in files:
        with open(file, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{file}:{n}"
                try:
                    raw = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{where}: not JSON ({exc})") from None
                row = check_row(raw, where)
                if row["pair_id"] in seen:
                    raise ValueError(f"{where}: pair_id {row['pair_id']} also at {seen[row['pair_id']]}")
                seen[row["pair_id"]] = where
                rows.append(row)
    return rows


def _features():
    import datasets

    cols = {k: datasets.Value("string") for k in (*TEXT_FIELDS, *OPTIONAL_FIELDS)}
    cols["covered_dimensions"] = datasets.Sequence(datasets.Value("string"))
    cols["quality_score"] = datasets.Value("float64")
    cols["image"] = datasets.Image()
    return datasets.Features(cols)


def _write(out_dir: str, rows: list[dict], card: str, info: dict) -> dict:
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    rows = sorted(rows, key=lambda r: (r["culture"], r["pair_id"]))
    ds = datasets.Dataset.from_list(rows, features=_features())
    return write_hub_dataset(out_dir, {"default": {"test": ds}}, card=card, info=info, config_dirs={"default": "data"})


_SAMPLE_TEXT = {
    "en": "The {form} shows {genre} with a balanced composition, clear line and warm color. {term} technique in ink "
    "and pigment on {medium}; its symbolism and motif follow a tradition of the {period} period, whose style "
    "influenced later artists; the work evokes harmony and spiritual meaning.",
    "zh": "此作构图平衡，线条清晰，色彩温暖；以{medium_zh}为媒材，笔法精到。其象征与寓意承袭传统，体现{period_zh}时期的风格与影响，意境和谐。",
}
_SAMPLE_TERMS = {
    "chinese": ("gongbi", "宋"),
    "western": ("sfumato", "文艺复兴"),
    "japanese": ("ukiyo-e", "江户"),
    "korean": ("minhwa", "朝鲜"),
    "islamic": ("arabesque", "萨法维"),
    "indian": ("mughal", "莫卧儿"),
    "hermitage": ("glaze", "巴洛克"),
    "mural": ("fresco", "唐"),
}


def synthetic_rows(sizes: dict) -> list[dict]:
    """``sizes[culture]`` synthetic rows per culture in the release's schema: made-up critiques that touch every layer,
    two to five annotated dimensions, a 32-px synthetic image each (the 1st and 2nd rows of a culture share one
    image, as the release's re-annotated artworks do)."""
    from hanyi.data.images import synthetic_image

    rows = []
    for culture in sorted(sizes):
        prefix, term = CULTURES[culture][0], _SAMPLE_TERMS[culture]
        for i in range(sizes[culture]):
            art = max(0, i - 1)  # rows 0 and 1 share an image
            dims = [f"{prefix}_L{1 + (i + k) % 5}_D{1 + (i * 3 + k) % 5}" for k in range(2 + i % 4)]
            variant = i % 3
            text = _SAMPLE_TEXT["en"].format(
                form=("painting", "scroll", "panel")[variant],
                genre=("a landscape", "figures", "flowers and birds")[variant],
                term=term[0] if variant != 2 else "Careful",
                medium=("silk", "paper", "canvas")[variant],
                period=("early", "middle", "late")[variant],
            )
            rows.append(
                {
                    "pair_id": f"SYN_{culture[:3].upper()}_{i:05d}",
                    "ulid": f"SYNTHETIC{culture[:3].upper()}{i:012d}",
                    "culture": culture,
                    "image_path": f"data/optimized_images/{culture}/{culture}_{art:05d}.jpg",
                    "artist": "Synthetic",
                    "title": f"Synthetic {culture} artwork {art}",
                    "critique_zh": _SAMPLE_TEXT["zh"].format(
                        medium_zh="绢本" if variant else "纸本", period_zh=term[1]
                    ),
                    "critique_en": text if i % 7 != 6 else text.split(";")[0] + ".",
                    "covered_dimensions": sorted(set(dims)),
                    "art_form": "painting",
                    "art_style": "synthetic",
                    "art_genre": ("landscape", "figure", "flower_bird")[variant],
                    "medium": ("silk", "paper", "canvas")[variant],
                    "quality_score": float(70 + i % 30),
                    "image": synthetic_image(f"vulca_bench-{culture}-{art}", size=32),
                }
            )
    return rows


def sample_sizes(size: int | None) -> dict:
    """Rows per culture: :data:`SAMPLE_PER_CULTURE` each by default; ``size`` spread over the cultures in the
    release's proportions (largest remainders, ties by culture name), so :data:`FULL_SIZE` gives the release's counts.

    >>> sample_sizes(FULL_SIZE) == RELEASE_SIZES, sample_sizes(20)
    (True, {'western': 9, 'chinese': 5, 'japanese': 1, 'islamic': 1, 'mural': 1, 'hermitage': 1, 'indian': 1, 'korean': 1})
    """
    if size is None:
        return {c: SAMPLE_PER_CULTURE for c in RELEASE_SIZES}
    if size < len(RELEASE_SIZES):
        raise ValueError(f"vulca_bench: size must be at least {len(RELEASE_SIZES)} (one row per culture), got {size}")
    exact = {c: size * n / FULL_SIZE for c, n in RELEASE_SIZES.items()}
    out = {c: int(v) for c, v in exact.items()}
    for c in sorted(exact, key=lambda c: (-(exact[c] - int(exact[c])), c))[: size - sum(out.values())]:
        out[c] += 1
    for c in [c for c, n in out.items() if n == 0]:  # every culture keeps a row, taken from the largest
        out[max(out, key=lambda k: (out[k], k))] -= 1
        out[c] = 1
    return out


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """The bundled sample: synthetic rows and images for all eight cultures (no real artwork, no real critique).
    ``size``: that many rows in the release's culture proportions (:data:`FULL_SIZE` is the release's 7,408)."""
    card = (
        "# VULCA-Bench sample\n\nSynthetic rows and images only (no real artwork or critique); the schema of "
        "`hanyi prepare vulca_bench`. See docs/vulca_bench.md."
    )
    builder = "hanyi.data.vulca_bench.build_sample" + ("" if size is None else f"(size={size})")
    return _write(out_dir, synthetic_rows(sample_sizes(size)), card, {"builder": builder, "synthetic": True})


def add_prepare_arguments(parser) -> None:
    parser.add_argument(
        "--jsonl",
        action="append",
        required=True,
        help="the release's data/vulca_bench.jsonl, a culture subset, or a folder of them (repeatable)",
    )
    parser.add_argument(
        "--images", required=True, help="folder (searched recursively) holding the images, matched by file name"
    )
    parser.add_argument(
        "--skip-missing",
        action="store_true",
        help="drop rows whose image is not in --images (counted) instead of failing",
    )


def index_images(root: str) -> dict:
    """``{file name: [paths]}`` of the images under ``root`` (recursively, sorted; symbolic links not followed)."""
    found: dict[str, list] = {}
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.lower().endswith(IMAGE_EXTS) and not os.path.islink(path) and os.path.isfile(path):
                found.setdefault(name, []).append(path)
    return found


def find_image(index: dict, image_path: str) -> str | None:
    """The image of a row: the only file of its name, else the one in a folder named as the row's path's folder (the
    release keeps a folder per culture, and one name can be in two: a mural and a Korean row share
    大禹庙正殿_b58c6135.jpg). None when there is none; ``ValueError`` when the folder does not decide.

    >>> find_image({"a.jpg": ["/i/korean/a.jpg", "/i/mural/a.jpg"]}, "/mnt/x/optimized_images/mural/a.jpg")
    '/i/mural/a.jpg'
    """
    candidates = index.get(image_name(image_path), [])
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    parts = image_path.replace("\\", "/").split("/")
    folder = parts[-2] if len(parts) > 1 else ""
    narrowed = [p for p in candidates if os.path.basename(os.path.dirname(p)) == folder]
    if len(narrowed) == 1:
        return narrowed[0]
    raise ValueError(
        f"{len(candidates)} images named {image_name(image_path)!r} ({', '.join(candidates[:3])}) and the row's folder "
        f"{folder!r} does not pick one; keep one, or put each in a folder named as in the release"
    )


def run_prepare(args) -> dict:
    """Rows of ``args.jsonl`` with their images from ``args.images`` -> ``args.out_dir``. A row whose image is not
    found raises (listing up to 10), unless ``--skip-missing``; an image that does not decode raises naming it."""
    from hanyi.data.images import check_images

    rows = read_release(args.jsonl)
    if not os.path.isdir(args.images):
        raise FileNotFoundError(f"--images {args.images}: no such folder")
    index = index_images(args.images)
    found = {r["pair_id"]: find_image(index, r["image_path"]) for r in rows}
    missing = [r["pair_id"] + ": " + image_name(r["image_path"]) for r in rows if found[r["pair_id"]] is None]
    if missing and not getattr(args, "skip_missing", False):
        shown = "; ".join(missing[:10]) + (f"; and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise FileNotFoundError(
            f"{len(missing)} row(s) have no image in {args.images} ({shown}); or pass --skip-missing"
        )
    kept = [r for r in rows if found[r["pair_id"]] is not None]
    if not kept:
        raise FileNotFoundError(f"no row's image is in {args.images}")
    blobs = {}
    for path in sorted({found[r["pair_id"]] for r in kept}):
        with open(no_link(path, "image"), "rb") as f:
            blobs[path] = f.read()
    bad = check_images(sorted(blobs.items()))
    if bad:
        raise ValueError("image(s) that do not decode: " + "; ".join(f"{n}: {why}" for n, why in bad[:10]))
    for r in kept:
        r["image"] = {"bytes": blobs[found[r["pair_id"]]], "path": None}
    card = (
        "# VULCA-Bench\n\nYu, Yang, He, Zhang, Yi. VULCA-Bench (arXiv 2601.07986). Data: GitHub yha9806/VULCA-Bench, "
        "CC BY 4.0; critiques and annotations by the authors. Images matched by file name from a local folder."
    )
    info = {"builder": "hanyi.data.vulca_bench.run_prepare", "jsonl": [os.path.basename(p) for p in args.jsonl]}
    counts = _write(args.out_dir, kept, card, info)
    by = {}
    for r in kept:
        by[r["culture"]] = by.get(r["culture"], 0) + 1
    return {
        "rows": len(kept),
        "skipped_no_image": len(missing),
        "images": len(blobs),
        **by,
        "test": counts["default"]["test"],
    }
