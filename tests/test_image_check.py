"""The load-time image check (hanyi.tasks._common): PNGs are read as their chunks without PIL;
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


# --- every image checked where it is read, before any model call ---------------------------------


def _png_with(data: bytes, kind: bytes, body: bytes) -> bytes:
    """``data`` (a PNG) with the first chunk of ``kind`` given ``body`` and a valid CRC."""
    import zlib

    pos = 8
    while data[pos + 4 : pos + 8] != kind:
        pos += 12 + int.from_bytes(data[pos : pos + 4], "big")
    size = int.from_bytes(data[pos : pos + 4], "big")
    chunk = len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")
    return data[:pos] + chunk + data[pos + 12 + size :]


def _hostile_pngs() -> dict:
    import struct

    good = _encoded("PNG", 48)
    huge = _png_with(good, b"IHDR", struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0))
    pos = good.index(b"IDAT") - 4
    idat = good[pos + 8 : pos + 8 + int.from_bytes(good[pos : pos + 4], "big")]
    garbled = idat[:10] + bytes(b ^ 0x5A for b in idat[10:40]) + idat[40:]
    return {
        "huge": huge,
        "bad zlib": _png_with(good, b"IDAT", garbled),
        "short data": _png_with(good, b"IDAT", idat[:-30]),
    }


def test_hostile_pngs_with_valid_crcs_are_refused_and_good_ones_pass():
    """A PNG whose valid IHDR declares 100000x100000, and bad or short compressed data behind valid CRCs (it reached
    the model all black), are refused; interlaced, palette and grey PNGs pass."""
    reasons = {name: _ours(data) for name, data in _hostile_pngs().items()}
    assert "over the limit" in reasons["huge"] and "100000x100000" in reasons["huge"]
    assert reasons["bad zlib"] and reasons["short data"], reasons
    for mode, kw in (("RGB", {"interlace": 1}), ("P", {}), ("L", {"optimize": True}), ("RGBA", {}), ("1", {})):
        buf = io.BytesIO()
        synthetic_image(mode, size=37).convert(mode).save(buf, format="PNG", **kw)
        assert _ours(buf.getvalue()) is None, mode


def test_a_large_jpeg_or_gif_is_refused_before_decoding(monkeypatch):
    from hanyi.data import images

    monkeypatch.setattr(images, "MAX_PIXELS", 40 * 40)
    assert "over the limit" in _ours(_encoded("JPEG", 48)) and _ours(_encoded("JPEG", 32)) is None


def _dataset(cells):
    import datasets

    feats = datasets.Features({"id": datasets.Value("string"), "image": datasets.Image()})
    return datasets.Dataset.from_list([{"id": f"d{i}", "image": c} for i, c in enumerate(cells)], features=feats)


def test_empty_bytes_with_no_path_and_every_hostile_png_stop_the_load_naming_the_doc():
    from hanyi.data.images import ImageUnavailableError

    good = {"bytes": _encoded("PNG", 48), "path": None}
    _common.require_images(_dataset([good, good]), "image", "id", "FIX")
    cells = [good, {"bytes": b"", "path": None}, *({"bytes": d, "path": None} for d in _hostile_pngs().values())]
    with pytest.raises(ImageUnavailableError, match=r"4 doc\(s\) .*d1: empty image.*d2: .*over the limit.*d3.*d4.*FIX"):
        _common.require_images(_dataset(cells), "image", "id", "FIX")


def test_cii_images_found_through_the_image_root_are_decoded_and_tilde_expanded(tmp_path, monkeypatch):
    """``HANYI_CII_IMAGE_ROOT``: a file found there was checked for existence only, and ``~`` was not expanded."""
    import datasets

    from hanyi.data.images import ImageUnavailableError
    from hanyi.tasks.cii import loading

    feats = datasets.Features(
        {"id": datasets.Value("string"), "image": datasets.Image(), "local_path": datasets.Value("string")}
    )
    ds = datasets.Dataset.from_list(
        [{"id": f"c{i}", "image": None, "local_path": f"img/{i}.jpg"} for i in range(2)], features=feats
    )
    (tmp_path / "clone" / "img").mkdir(parents=True)
    (tmp_path / "clone" / "img" / "0.jpg").write_bytes(_encoded("JPEG", 48))
    (tmp_path / "clone" / "img" / "1.jpg").write_bytes(_encoded("JPEG", 48)[:-60])  # truncated: reached it grey
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HANYI_CII_IMAGE_ROOT", "~/clone")
    with pytest.raises(ImageUnavailableError, match=r"1 doc\(s\) have an image that does not decode \(id c1: "):
        loading.with_images(ds)
    (tmp_path / "clone" / "img" / "1.jpg").write_bytes(_encoded("JPEG", 48))
    assert len(loading.with_images(ds)) == 2
    assert loading.cii_doc_to_visual(ds[1])[0].size == (48, 48)


def test_unpie_explanation_and_truncated_disambiguator_images_are_checked_at_load():
    """UNPIE's explanation image was never checked at load, and a truncated disambiguator image reached the model
    grey (lmms-eval's LOAD_TRUNCATED_IMAGES): the first stops the load naming the pun, the second leaves its doc out
    (documented and counted, docs/unpie.md)."""
    import datasets

    from hanyi.data import unpie
    from hanyi.data.images import ImageUnavailableError

    tr = {"de": "d", "fr": "f", "ko": "k"}
    row = {"pun_sentence": "s", "pun_phrase": "p", "translation1": tr, "translation2": tr}
    good, broken = _encoded("JPEG", 48), _encoded("JPEG", 48)[:-60]
    rows = [
        {**row, "pun_exp_image": {"bytes": good, "path": None}},
        {**row, "pun_exp_image": {"bytes": broken, "path": None}},
    ]
    feats = datasets.Features(
        {**{k: datasets.Value("string") for k in ("pun_sentence", "pun_phrase")}, "pun_exp_image": datasets.Image()}
    )
    feats.update({f"translation{j}": {k: datasets.Value("string") for k in tr} for j in (1, 2)})
    ds = datasets.Dataset.from_list(rows, features=feats)
    for kind, lang in (("grounding", None), ("reconstruction", "de")):
        with pytest.raises(ImageUnavailableError, match=r"1 explanation image.*homographic-1: "):
            unpie.expand(ds, kind, "homographic", lang)
    assert len(unpie.expand(ds.select([0]), "grounding", "homographic")) == 1
    assert len(unpie.expand(ds, "grounding", "homographic", captions=True)) == 2  # captions replace the image
    uri = lambda b: "data:image/jpeg;base64," + __import__("base64").b64encode(b).decode()  # noqa: E731
    assert unpie.image_status(uri(good)) == "ok"
    assert "does not decode" in unpie.image_status(uri(broken), doc_hint="pun-1")


def test_vulca_slices_are_checked_like_the_painting(monkeypatch):
    """VULCA's ``image_slices`` (a list of images per doc) were never checked at load."""
    import datasets

    from hanyi.data.images import ImageUnavailableError
    from hanyi.tasks.vulca import utils

    monkeypatch.setattr(utils.backbones, "require", lambda *names: None)
    good, bad = ({"bytes": _encoded(fmt, 48)[: None if fmt == "PNG" else -60], "path": None} for fmt in ("PNG", "JPEG"))
    feats = datasets.Features(
        {
            "doc_id": datasets.Value("string"),
            "image": datasets.Image(),
            "image_slices": datasets.Sequence(datasets.Image()),
        }
    )
    rows = [
        {"doc_id": "01", "image": good, "image_slices": [good, good]},
        {"doc_id": "02", "image": good, "image_slices": [good, bad]},
    ]
    with pytest.raises(ImageUnavailableError, match=r"1 doc\(s\) have an image that does not decode \(doc_id 02: "):
        utils.vulca_process_docs(datasets.Dataset.from_list(rows, features=feats))
    assert len(utils.vulca_process_docs(datasets.Dataset.from_list(rows[:1], features=feats))) == 1
