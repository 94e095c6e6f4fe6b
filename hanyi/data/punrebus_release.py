"""Pun Rebus Art release reading for ``hanyi prepare punrebus``: the answer sheet, the image files, the pun details.

Parsing keeps the official scorer's conventions (ground-truth elements lowercased and right-stripped, the last CSV
row of a story wins) and lists every anomaly; joining and writing the dataset is :mod:`hanyi.data.punrebus`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import re
import urllib.request
import zipfile
from collections import OrderedDict

from hanyi.data.safepath import inside

log = logging.getLogger("hanyi.data.punrebus")  # the builder's logger: the download message reads as before

HEADER = ["Chinese Name", "Pinyin Name", "Category", "Element 1", "Element 2", "Element 3", "Element 4"]
CATEGORIES = "ABCDEFG"
#: english_pun_detail.json ids that differ from the CSV pinyin after normalisation (spec §1.4 b).
PUN_DETAIL_ID_OVERRIDES = {"bailinmeishou": "bailingmeishou"}


def normalise_gt_element(element: str) -> str:
    """Ground-truth element as the official scorer keeps it: lowercased and right-stripped (not lemmatised).

    >>> normalise_gt_element("Shou Character ")
    'shou character'
    """
    return element.lower().rstrip()


# --------------------------------------------------------------------------------------------- answer sheet
def parse_answer_sheet(text: str) -> tuple[OrderedDict, OrderedDict, dict]:
    """Parse the answer-sheet CSV text into ``(stories, names, anomalies)``.

    ``stories``: pinyin -> ``{"story_zh", "categories", "category_rows", "elements_en"}`` (categories over all rows,
    deduplicated in order, and ``category_rows`` with duplicates kept; elements from the *last* row, as the scorer keeps them). ``names``: Chinese name -> ``{"story_pinyin",
    "categories"}`` (the text-only GT, keyed by name as in the text scorer). ``anomalies`` lists malformed rows
    (skipped), exact duplicate rows, repeated (pinyin, category) pairs, stories whose rows disagree on elements, and
    names mapped to several pinyins (and back).

    >>> s, n, a = parse_answer_sheet("Chinese Name,Pinyin Name,Category,Element 1,Element 2,Element 3,Element 4\\n"
    ...     "福到,fudao,B,Bat,,,\\n福到,fudao,B,Fu,,,\\n坏,,Z,,,,\\n")
    >>> s["fudao"]["elements_en"], s["fudao"]["categories"], len(a["malformed_rows"]), a["element_conflicts"]
    (['fu'], ['B'], 1, ['fudao'])
    """
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows or [h.strip() for h in rows[0]] != HEADER:
        raise ValueError(f"answer sheet header is {rows[0] if rows else None!r}, expected {HEADER}")
    stories: OrderedDict = OrderedDict()
    names: OrderedDict = OrderedDict()
    anomalies = {k: [] for k in ("malformed_rows", "duplicate_rows", "duplicate_categories", "element_conflicts")}
    anomalies["names_with_several_pinyins"] = {}
    anomalies["pinyins_with_several_names"] = {}
    seen_rows, seen_pairs, elements_seen = set(), set(), {}
    for lineno, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(HEADER) or not row[0].strip() or not row[1].strip() or row[2].strip() not in CATEGORIES:
            anomalies["malformed_rows"].append({"line": lineno, "row": row})
            continue
        zh, pinyin, cat = row[0].strip(), row[1].strip(), row[2].strip()
        elements = [normalise_gt_element(e) for e in row[3:] if e.strip()]
        if tuple(row) in seen_rows:
            anomalies["duplicate_rows"].append(lineno)
        elif (pinyin, cat) in seen_pairs:
            anomalies["duplicate_categories"].append(lineno)
        seen_rows.add(tuple(row))
        seen_pairs.add((pinyin, cat))
        story = stories.setdefault(
            pinyin, {"story_zh": zh, "categories": [], "category_rows": [], "elements_en": elements}
        )
        story["category_rows"].append(cat)
        if elements_seen.setdefault(pinyin, elements) != elements and pinyin not in anomalies["element_conflicts"]:
            anomalies["element_conflicts"].append(pinyin)
        story["elements_en"] = elements  # last row wins
        if cat not in story["categories"]:
            story["categories"].append(cat)
        if story["story_zh"] != zh:
            anomalies["pinyins_with_several_names"].setdefault(pinyin, [story["story_zh"]]).append(zh)
        name = names.setdefault(zh, {"story_pinyin": pinyin, "categories": []})
        if cat not in name["categories"]:
            name["categories"].append(cat)
        if name["story_pinyin"] != pinyin:
            anomalies["names_with_several_pinyins"].setdefault(zh, [name["story_pinyin"]]).append(pinyin)
    return stories, names, anomalies


# --------------------------------------------------------------------------------------------- inputs
def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_source(src: str, cache_dir: str, name: str) -> tuple[bytes, str]:
    """Bytes of a local file or URL (downloaded once into ``cache_dir``); returns ``(data, origin)``."""
    if src.startswith(("http://", "https://")):
        os.makedirs(cache_dir, exist_ok=True)
        path = os.path.join(cache_dir, name)
        if not os.path.isfile(path):
            log.info("hanyi prepare punrebus: downloading %s", src.split("?")[0])
            from tqdm import tqdm

            try:
                with urllib.request.urlopen(src, timeout=120) as resp, open(path + ".part", "wb") as out:
                    total = int(getattr(resp, "headers", {}).get("Content-Length") or 0) or None
                    with tqdm(total=total, unit="B", unit_scale=True, desc=name) as bar:
                        while chunk := resp.read(1 << 20):
                            out.write(chunk)
                            bar.update(len(chunk))
            except OSError as exc:
                raise RuntimeError(
                    f"cannot download {src.split('?')[0]} ({exc}); download it by hand and pass the local path "
                    f"(--answer-sheet / --images)"
                ) from None
            os.replace(path + ".part", path)
        src = path
    with open(src, "rb") as f:
        return f.read(), src


def iter_image_files(images: str):
    """Yield ``(relative path, loader)`` for every file of a zip or folder, sorted by path."""
    if os.path.isdir(images):
        paths = sorted(os.path.relpath(os.path.join(d, f), images) for d, _, files in os.walk(images) for f in files)
        for rel in paths:
            path = inside(images, rel, "PunRebus image")  # a symlink to a file elsewhere is refused
            yield rel.replace(os.sep, "/"), lambda path=path: open(path, "rb").read()
        return
    with zipfile.ZipFile(images) as zf:
        for info in sorted((i for i in zf.infolist() if not i.is_dir()), key=lambda i: i.filename):
            yield info.filename, lambda info=info: zf.read(info)


def _decodes(data: bytes) -> bool:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
        return True
    except Exception:
        return False


def load_pun_details(data: bytes | None) -> dict:
    """``english_pun_detail.json`` -> ``{pinyin: {"pun_wish_en", "pun_design_en", "punning_details_en"}}``."""
    if not data:
        return {}
    out = {}
    for rec in json.loads(data.decode("utf-8")):
        key = re.sub(r"[\s()（）]", "", str(rec.get("id", ""))).lower()
        key = PUN_DETAIL_ID_OVERRIDES.get(key, key)
        details = [
            d.strip() for d in rec.get("Punning Details", []) if isinstance(d, str) and d.strip().startswith("-")
        ]
        out[key] = {
            "pun_wish_en": rec.get("Pun Wish"),
            "pun_design_en": list(rec.get("Pun Design", [])),
            "punning_details_en": details,
        }
    return out
