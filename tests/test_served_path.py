"""hanyi's per-request work on a served model's path: each prompt rendered once, pictures handed over as plain
images (benchmarks/served_cost.py measures the cost; docs/performance.md)."""

import io

import pytest


def _png(size=8):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (size, size), (200, 10, 30)).save(buf, "PNG")
    return buf.getvalue()


def test_a_decoded_picture_is_a_plain_image_over_the_same_pixels():
    """An image file object costs lmms-eval's encoder two abspath calls a save and keeps its compressed bytes."""
    from PIL import Image

    from hanyi.data.images import to_pil

    decoded = to_pil({"bytes": _png(), "path": None}, doc_hint="d")
    assert type(decoded) is Image.Image and decoded.mode == "RGB" and decoded.getpixel((3, 3)) == (200, 10, 30)
    opened = Image.open(io.BytesIO(_png()))  # what datasets' Image feature hands a task
    plain = to_pil(opened, doc_hint="d")
    assert type(plain) is Image.Image and plain.im is opened.im  # no pixel copy (the memory budget)
    rgb = Image.new("RGB", (4, 4))
    assert to_pil(rgb) is rgb


def test_a_broken_picture_file_object_names_the_doc():
    from PIL import Image

    from hanyi.data.images import ImageUnavailableError, to_pil

    truncated = Image.open(io.BytesIO(_png(64)[:60]))
    with pytest.raises(ImageUnavailableError, match="doc 7: image does not decode"):
        to_pil(truncated, doc_hint="doc 7")
