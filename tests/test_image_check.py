"""The load-time image check (hanyi.tasks._common): PNGs are read as their chunks without PIL (issue 30, item 2);
the verdict must stay what PIL's ``verify`` (PNG) and a 1/8-scale decode (JPEG) gave, for every truncation and byte
flip of real encoder output, with the reason named and the docs in order."""

from __future__ import annotations

import io
import random

import pytest
from PIL import Image, ImageFile

from hanyi.data.images import synthetic_image
from hanyi.tasks import _common


def _pil_verdict(data: bytes):
    """What the check did before: PIL's ``verify`` for PNG, a 1/8-scale decode for JPEG (truncation not tolerated)."""
    truncated_ok, ImageFile.LOAD_TRUNCATED_IMAGES = ImageFile.LOAD_TRUNCATED_IMAGES, False
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format == "PNG":
                image.verify()
            else:
                image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
                image.load()
    except Exception as exc:
        return exc
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = truncated_ok
    return None


def _ours(data: bytes):
    """The check's reason for one image, through the path every task takes (``_check_cells``), or ``None``."""
    return dict(_common._check_cells([("doc", data)], threads=2)).get("doc")


def _encoded(fmt: str, size: int, **kw) -> bytes:
    buf = io.BytesIO()
    synthetic_image(f"{fmt}{size}", size=size).save(buf, format=fmt, **kw)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def _pil_flag_as_lmms_eval_sets_it(monkeypatch):
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)


@pytest.mark.parametrize(
    "fmt,size,kw",
    [("PNG", 48, {}), ("PNG", 200, {"optimize": True}), ("JPEG", 48, {}), ("JPEG", 120, {"progressive": True})],
)
def test_every_truncation_and_byte_flip_gets_the_verdict_pil_gives(fmt, size, kw):
    data = _encoded(fmt, size, **kw)
    assert _ours(data) is None and _pil_verdict(data) is None
    rng = random.Random(size)
    variants = [data[:cut] for cut in range(0, len(data), max(1, len(data) // 150))]
    for _ in range(150):
        flipped = bytearray(data)
        flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        variants.append(bytes(flipped))
    rejected = 0
    for variant in variants:
        ours, pil = _ours(variant), _pil_verdict(variant)
        assert (ours is None) == (pil is None), (len(variant), ours, pil)
        rejected += ours is not None
    assert rejected >= 150  # the variants are not all harmless: every truncation is rejected


def test_png_reasons_name_the_fault():
    data = _encoded("PNG", 48)
    assert "truncated" in _ours(data[:-20])
    bad_crc = bytearray(data)
    bad_crc[40] ^= 0xFF  # inside the first IDAT's data
    assert "bad CRC" in _ours(bytes(bad_crc))
    assert "IHDR" in _ours(data[:12] + b"IDAT" + data[16:])  # the first chunk is not the header


def test_the_dataset_check_names_bad_docs_in_order_png_and_jpeg_and_files(tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)  # as lmms-eval sets it when imported

    good_png, good_jpeg = _encoded("PNG", 48), _encoded("JPEG", 48)
    blobs = [good_png, good_jpeg[:-40], good_jpeg, good_png[:-30], b"GIF89a nonsense", good_png] * 300
    rows = [{"id": f"d{i}", "image": {"bytes": b, "path": None}} for i, b in enumerate(blobs)]
    path = tmp_path / "x.png"
    path.write_bytes(good_png[:-30])
    rows.append({"id": "on-disk", "image": {"bytes": None, "path": str(path)}})
    rows.append({"id": "none", "image": None})
    feats = datasets.Features({"id": datasets.Value("string"), "image": datasets.Image()})
    bad = _common.undecodable_images(datasets.Dataset.from_list(rows, features=feats), "image", "id")
    expected = [f"d{i}" for i in range(len(blobs)) if i % 6 in (1, 3, 4)] + ["on-disk"]
    assert [rid for rid, _ in bad] == expected  # 1,024-row batches, threads for JPEG: doc order kept
    assert all(why for _, why in bad)
    assert ImageFile.LOAD_TRUNCATED_IMAGES is True  # lmms-eval's setting is back after the check
