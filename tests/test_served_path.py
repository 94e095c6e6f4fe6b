"""hanyi's per-request work on a served model's path: each prompt rendered once (or joined), pictures handed over as plain
images (benchmarks/served_cost.py measures the cost; docs/dev/performance.md)."""

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


def test_a_broken_picture_file_object_names_the_doc(monkeypatch):
    from PIL import Image, ImageFile

    from hanyi.data.images import ImageUnavailableError, to_pil

    # lmms-eval sets LOAD_TRUNCATED_IMAGES when imported (another test module of this process may have imported it),
    # and then Pillow pads a truncated file instead of failing; the load-time check refuses such files before this
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", False)

    truncated = Image.open(io.BytesIO(_png(64)[:60]))
    with pytest.raises(ImageUnavailableError, match="doc 7: image does not decode"):
        to_pil(truncated, doc_hint="doc 7")


def _counting(monkeypatch, module):
    """Count the Jinja renders ``module`` asks for."""
    calls = []
    original = module.render

    def counted(*a, **k):
        calls.append(a)
        return original(*a, **k)

    monkeypatch.setattr(module, "render", counted)
    return calls


def test_template_reads_follows_includes():
    from hanyi.tasks._common import template_reads

    assert template_reads("punrebus", "matching.jinja") == {"options"}  # through _options.jinja
    assert template_reads("punrebus", "textonly.jinja") == {"doc", "options"}
    assert template_reads("unpie", "grounding_image.jinja") == {"pun_sentence", "image_context"}


def test_punrebus_prompt_rendered_once_per_distinct_text(monkeypatch):
    """lmms-eval's chat path asks for each doc's prompt twice (the request's context, then its messages)."""
    from hanyi.tasks.punrebus import utils

    utils._prompt.cache_clear()
    calls = _counting(monkeypatch, utils)
    kw = {"prompt": "matching", "prompt_variant": "paper"}
    first = utils.punrebus_doc_to_text({"story_zh": "福"}, kw)
    assert utils.punrebus_doc_to_text({"story_zh": "福"}, kw) is first
    assert utils.punrebus_doc_to_text({"story_zh": "寿"}, kw) is first  # the picture prompt reads no doc field
    assert len(calls) == 1
    kw = {"prompt": "textonly", "prompt_variant": "paper"}
    texts = [utils.punrebus_doc_to_text({"story_zh": s, "categories": ["A"]}, kw) for s in ("福", "寿", "福")]
    assert "福" in texts[0] and "寿" in texts[1] and texts[2] is texts[0]
    assert len(calls) == 3


def test_unpie_prompt_joined_without_jinja(monkeypatch):
    """UNPIE's templates are plain substitution: each call joins the text (as cheap as a cache hit), never through
    Jinja, and the text is Jinja's (tests/test_plain_render.py holds the two equal for every template)."""
    from hanyi.tasks import _common
    from hanyi.tasks.unpie import utils

    _common._render_key.cache_clear()
    kw = {"mode": "vlm", "template": "disambiguation.jinja", "image_slot": ""}
    doc = {"pun_sentence": "A pun.", "lang": "de", "unpie_id": 3, "image_status": "ok", "categories": ["x"]}
    jinja = _common._template("unpie", "disambiguation.jinja").render(image_context="", language="German", **doc)
    monkeypatch.setattr(_common, "_template", lambda *a: pytest.fail("a plain UNPIE prompt went through Jinja"))
    first = utils.unpie_doc_to_text(doc, kw)
    assert first == jinja and utils.unpie_doc_to_text(dict(doc), kw) == first
    other = utils.unpie_doc_to_text({**doc, "lang": "fr"}, kw)
    assert "French" in other and "German" not in other
    assert _common._render_key.cache_info().currsize == 0


def test_render_once_renders_every_time_what_it_cannot_key():
    from hanyi.tasks import _common

    kw = {"image_context": "", "language": "German"}
    with pytest.raises(Exception, match="pun_sentence"):  # a missing variable still stops the render
        _common.render_once("unpie", "disambiguation.jinja", **kw)
    text = _common.render_once("unpie", "disambiguation.jinja", pun_sentence=1, **kw)  # not text: rendered, no key
    assert "[English]: 1" in text
