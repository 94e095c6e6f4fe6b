"""``hanyi prepare`` never reads or writes outside its inputs and ``--out``: every builder
gets a crafted release whose paths use ``..``, absolute paths or symlinks to a file outside, and must refuse with an
error naming the record, writing nothing outside. ``HANYI_DATA_ROOT=sample`` without ``--out`` is refused too."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from hanyi.data.safepath import UnsafePathError, inside


@pytest.mark.parametrize(
    "rel, message",
    [
        ("../x.png", "goes up out of"),
        ("a/../../x.png", "goes up out of"),
        ("a\\..\\..\\x.png", "goes up out of"),
        ("/etc/passwd", "is an absolute path"),
        ("C:\\x.png", "is an absolute path"),
        ("", "is not a relative file path"),
        (None, "is not a relative file path"),
    ],
)
def test_inside_refuses_traversal_and_absolute_paths(tmp_path, rel, message):
    with pytest.raises(UnsafePathError, match=message):
        inside(str(tmp_path), rel, "record 7 image")


def test_inside_refuses_a_symlink_out_and_accepts_a_plain_file(tmp_path):
    (tmp_path / "rel").mkdir()
    (tmp_path / "secret.png").write_bytes(b"x")
    (tmp_path / "rel" / "ok.png").write_bytes(b"x")
    os.symlink(tmp_path / "secret.png", tmp_path / "rel" / "link.png")
    assert inside(str(tmp_path / "rel"), "ok.png") == str(tmp_path / "rel" / "ok.png")
    with pytest.raises(UnsafePathError, match=r"outside .* \(a symlink\?\)"):
        inside(str(tmp_path / "rel"), "link.png")


# ---- CVLUE ------------------------------------------------------------------------------------------------------------
def _cvlue_release(tmp_path):
    from hanyi.data.cvlue_sample import write_synthetic_release

    shortlist = write_synthetic_release(str(tmp_path / "rel"))
    (tmp_path / "sl.json").write_text(json.dumps(shortlist, ensure_ascii=False), encoding="utf-8")
    return tmp_path / "rel"


def _cvlue_prepare(tmp_path, shortlist=None):
    from hanyi.data import cvlue

    ns = argparse.Namespace(
        root=str(tmp_path / "rel"), out_dir=str(tmp_path / "out"), itr_shortlist=shortlist, rerank_k=2
    )
    return cvlue.run_prepare(ns)


def _set_first_vqa_image(rel, value):
    path = rel / "VQA" / "test.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0]["image"] = value
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return records[0]["question_id"]


@pytest.mark.parametrize("kind", ["traversal", "absolute", "symlink"])
def test_cvlue_prepare_refuses_image_paths_outside_the_release(tmp_path, kind):
    rel = _cvlue_release(tmp_path)
    outside = tmp_path / "outside.png"
    first_image = json.loads((rel / "VQA" / "test.json").read_text(encoding="utf-8"))[0]["image"]
    outside.write_bytes((rel / first_image).read_bytes())
    if kind == "symlink":
        os.remove(rel / first_image)
        os.symlink(outside, rel / first_image)
        qid = None
    else:
        qid = _set_first_vqa_image(rel, "../outside.png" if kind == "traversal" else str(outside))
    with pytest.raises(UnsafePathError) as err:
        _cvlue_prepare(tmp_path)
    assert "refused" in str(err.value) and (qid is None or f"question_id={qid}" in str(err.value))


@pytest.mark.parametrize("kind", ["traversal", "absolute"])
def test_cvlue_itr_images_are_never_copied_outside_out(tmp_path, kind):
    """The bug report: ``../`` in IC/<split>.json escaped ``--out``; an absolute path crashed with SameFileError."""
    rel = _cvlue_release(tmp_path)
    ic = rel / "IC" / "test.json"
    image = json.loads(ic.read_text(encoding="utf-8"))[0]["image"]
    (tmp_path / "escape").mkdir()
    (tmp_path / "escape" / "x.png").write_bytes((rel / image).read_bytes())
    bad = "../escape/x.png" if kind == "traversal" else str(tmp_path / "escape" / "x.png")
    for path in (ic, tmp_path / "sl.json"):
        path.write_text(path.read_text(encoding="utf-8").replace(json.dumps(image)[1:-1], bad), encoding="utf-8")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(UnsafePathError, match="refused"):
        _cvlue_prepare(tmp_path, shortlist=str(tmp_path / "sl.json"))
    assert sorted(os.listdir(tmp_path)) == before and os.listdir(tmp_path / "escape") == ["x.png"]


# ---- CII ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("local_path", ["../../secret.jpg", "/etc/hostname"])
def test_cii_prepare_refuses_a_local_path_outside_the_clone(tmp_path, local_path):
    from hanyi.data import cii

    clone = tmp_path / "clone"
    (clone / "data").mkdir(parents=True)
    (clone / "images" / "test").mkdir(parents=True)
    (tmp_path / "secret.jpg").write_bytes(b"jpg")
    rec = {"id": "test-1", "local_path": local_path, "questions": [], "meta_data": {}}
    (clone / "data" / "test.json").write_text(json.dumps([rec]), encoding="utf-8")
    (clone / "data" / "dev.json").write_text("[]", encoding="utf-8")
    args = argparse.Namespace(source="github", github_root=str(clone), hub_id=None, out_dir=str(tmp_path / "o"))
    with pytest.raises(UnsafePathError, match=r"test.json record id='test-1' local_path: .*refused"):
        cii.run_prepare(args)


# ---- PunRebus, VULCA: image folders with a symlink to a file elsewhere ----------------------------------------------------
def test_punrebus_image_folder_symlink_out_is_refused(tmp_path):
    from hanyi.data.punrebus import iter_image_files

    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "jiaguan_1.jpg").write_bytes(b"x")
    (tmp_path / "private.jpg").write_bytes(b"x")
    os.symlink(tmp_path / "private.jpg", tmp_path / "imgs" / "fudao_1.jpg")
    with pytest.raises(UnsafePathError, match="fudao_1.jpg"):
        list(iter_image_files(str(tmp_path / "imgs")))


def test_vulca_image_folder_symlink_out_is_refused(tmp_path):
    from hanyi.data.vulca import run_prepare

    (tmp_path / "imgs").mkdir()
    (tmp_path / "private.png").write_bytes(b"x")
    os.symlink(tmp_path / "private.png", tmp_path / "imgs" / "january.png")
    with pytest.raises(UnsafePathError, match="january.png"):
        run_prepare(argparse.Namespace(images=str(tmp_path / "imgs"), out_dir=str(tmp_path / "o"), slices=False))


# ---- UNPIE: disambiguator image paths ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["../private.png", "ABS"])
def test_unpie_image_paths_stay_inside_the_image_root(tmp_path, monkeypatch, value):
    from hanyi.data import unpie

    (tmp_path / "root").mkdir()
    (tmp_path / "private.png").write_bytes(b"x")
    (tmp_path / "root" / "ok.png").write_bytes(b"x")
    value = str(tmp_path / "private.png") if value == "ABS" else value
    monkeypatch.setenv(unpie.IMAGE_ROOT_ENV, str(tmp_path / "root"))
    assert unpie.resolve_image_source("ok.png", doc_hint="unpie_id=1") == str(tmp_path / "root" / "ok.png")
    with pytest.raises(UnsafePathError, match="unpie_id=1"):
        unpie.resolve_image_source(value, doc_hint="unpie_id=1")
    monkeypatch.delenv(unpie.IMAGE_ROOT_ENV)
    if value.startswith("/"):
        with pytest.raises(UnsafePathError, match="unpie_id=1"):
            unpie.resolve_image_source(value, doc_hint="unpie_id=1")


# ---- item 9: the bundled samples are never a prepare target -----------------------------------------------------------
def test_prepare_with_the_sample_root_and_no_out_refuses_to_touch_the_bundled_samples(monkeypatch, capsys):
    from hanyi.cli import main
    from hanyi.data.sources import SAMPLE_DIR

    before = {p: os.path.getmtime(os.path.join(d, p)) for d, _, fs in os.walk(SAMPLE_DIR) for p in fs}
    monkeypatch.setenv("HANYI_DATA_ROOT", "sample")
    assert main(["prepare", "vulca", "--images", "/nonexistent"]) == 2
    assert "bundled with hanyi" in capsys.readouterr().err
    assert main(["prepare", "vulca", "--out", SAMPLE_DIR, "--images", "/nonexistent"]) == 2
    assert "--out points into the samples bundled with hanyi" in capsys.readouterr().err
    after = {p: os.path.getmtime(os.path.join(d, p)) for d, _, fs in os.walk(SAMPLE_DIR) for p in fs}
    assert after == before


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` x ``height`` and holds no pixel data (a decompression bomb's header)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def test_vulca_prepare_keeps_the_decompression_bomb_check_with_an_explicit_limit(tmp_path):
    """Image.MAX_IMAGE_PIXELS = None let a tiny PNG declaring 16000x16000 px take 1.27 GB."""
    from PIL import Image

    from hanyi.data.images import synthetic_image
    from hanyi.data.vulca import MAX_PIXELS, MONTHS, run_prepare

    (tmp_path / "imgs").mkdir()
    names = [f"{chinese}.png" for _, _, chinese in MONTHS]
    for name in names[:-1]:
        synthetic_image(name, size=16).save(tmp_path / "imgs" / name)
    (tmp_path / "imgs" / names[-1]).write_bytes(_png_header(16000, 16000))
    before = Image.MAX_IMAGE_PIXELS
    args = argparse.Namespace(images=str(tmp_path / "imgs"), out_dir=str(tmp_path / "o"), slices=False)
    with pytest.raises(
        ValueError, match=rf"{names[-1]}: 16000x16000 = 256,000,000 pixels, over the limit of 150,000,000"
    ):
        run_prepare(args)
    assert Image.MAX_IMAGE_PIXELS == before and MAX_PIXELS == 150_000_000  # PIL's check is left as it was
    args.max_pixels = 300_000_000  # a larger scan is allowed explicitly; this one then fails to decode, named
    with pytest.raises(ValueError, match=rf"{names[-1]}: image does not decode"):
        run_prepare(args)
