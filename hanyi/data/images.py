"""Image values in docs -> PIL images, and deterministic synthetic images for the bundled samples."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import io
import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


class ImageUnavailableError(ValueError):
    """A doc's image cannot be turned into a picture. The message names the doc."""


#: The default of ``HANYI_IMAGE_MAX_PIXELS``, the most pixels an image may declare, checked before decoding (as
#: ``hanyi prepare vulca``'s default limit). Memory budget: a doc's image is decoded in full when the doc is read
#: (datasets' ``Image`` feature) and reaches the model as that RGB image (:func:`to_pil` copies no RGB image), about
#: 4.3 bytes per pixel at the peak (3 for its pixels, the rest the decoder's buffers; one more copy of 3 when its mode
#: is not RGB): 0.38 GB measured at 88 million pixels, about 0.65 GB at this cap (docs/when-things-go-wrong.md).
MAX_PIXELS, _PNG = 150_000_000, b"\x89PNG\r\n\x1a\n"


def max_pixels() -> int:
    """The pixel cap in force: ``HANYI_IMAGE_MAX_PIXELS`` (validated, :mod:`hanyi.settings`), else :data:`MAX_PIXELS`."""
    from hanyi import settings

    return int(settings.value("HANYI_IMAGE_MAX_PIXELS", MAX_PIXELS))


_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


@functools.cache
def _pil():
    """Pillow's ``Image`` module, imported when first needed and then held: an import statement in a function costs
    0.3-0.5 us each time it runs, and a served model's path ran three per picture."""
    from PIL import Image

    return Image


def image_source(value, *, doc_hint: str = "", base_dir: str | None = None):
    """An image cell (PIL image, ``{"bytes", "path"}`` dict, bytes, ``data:`` URI, base64, a path under ``base_dir``;
    never a URL) as a PIL image, bytes or an existing file path (``~`` expanded); else raises naming ``doc_hint``."""
    Image = _pil()
    if value is None:
        raise ImageUnavailableError(f"{doc_hint}: the doc has no image")
    if isinstance(value, dict):
        if value.get("bytes") or value.get("path"):
            return image_source(value.get("bytes") or value["path"], doc_hint=doc_hint, base_dir=base_dir)
        raise ImageUnavailableError(f"{doc_hint}: empty image record (no bytes, no path)")
    if isinstance(value, (Image.Image, bytes, bytearray)):
        return value
    if isinstance(value, str):
        s = value.strip()
        if s.startswith(("http://", "https://")):
            raise ImageUnavailableError(f"{doc_hint}: image is a URL ({s[:80]}); resolve it to a local file first")
        if s.startswith("data:") and "," in s:
            s = s.split(",", 1)[1]
        path = os.path.expanduser(s if os.path.isabs(s) or base_dir is None else os.path.join(base_dir, s))
        if os.path.isfile(path):
            return path
        if len(s) > 64:
            try:
                return base64.b64decode(s, validate=True)
            except (binascii.Error, ValueError):
                pass
        raise ImageUnavailableError(f"{doc_hint}: image file not found: {s[:120]}")
    raise ImageUnavailableError(f"{doc_hint}: unsupported image value of type {type(value).__name__}")


def to_pil(value, *, doc_hint: str = "", base_dir: str | None = None):
    """Turn an image cell (:func:`image_source`) into an RGB ``PIL.Image``; raises naming ``doc_hint``. An image
    already RGB is returned as decoded, not copied: ``convert("RGB")`` copies every pixel, which doubled the peak
    memory of a large image (:data:`MAX_PIXELS`)."""
    Image = _pil()
    # a decoded picture (what datasets' Image feature hands a task) needs none of image_source's other cases
    src = value if isinstance(value, Image.Image) else image_source(value, doc_hint=doc_hint, base_dir=base_dir)
    try:
        if isinstance(src, Image.Image):
            return _plain(src) if src.mode == "RGB" else src.convert("RGB")
        image = Image.open(io.BytesIO(src) if isinstance(src, (bytes, bytearray)) else src)
        image.load()
        return _plain(image) if image.mode == "RGB" else image.convert("RGB")
    except Exception as exc:
        raise ImageUnavailableError(f"{doc_hint}: image does not decode ({exc})") from None


def _plain(image):
    """A decoded file's image (``PngImageFile``, ...) as a plain ``Image`` over the same pixels, not copied. Saving
    an image file compares its file name's absolute path with the target's first (two ``abspath`` and a
    ``getcwd`` a save: about 5 us a picture when a served model's client encodes it, 8 % of a 48-px PNG's encoding),
    and the file object keeps the compressed bytes alive as long as the picture."""
    if type(image) is _pil().Image:
        return image
    image.load()
    return image._new(image.im)  # Pillow's own shallow copy (what convert() and copy() build on): pixels shared


def _too_big(width: int, height: int, limit: int | None = None) -> str | None:
    limit = max_pixels() if limit is None else limit
    if width * height <= limit:
        return None
    return f"{width}x{height} pixels, over the limit of {limit:,} (HANYI_IMAGE_MAX_PIXELS)"


def _png_problem(data: bytes) -> str | None:
    """PIL's ``verify`` (a first ``IHDR``, each chunk's CRC, an ``IEND``) without PIL, the pixel limit, and the image
    data inflated in full: exactly the size the header declares (bad zlib data behind valid CRCs reached the model
    black)."""
    pos, inflate, raw, expected = 8, zlib.decompressobj(), 0, 0
    while True:  # chunks: length, type, data, CRC
        size, kind = int.from_bytes(data[pos : pos + 4], "big"), data[pos + 4 : pos + 8]
        if pos == 8:
            if kind != b"IHDR" or size != 13 or len(data) < 33:
                return "broken PNG file: no valid IHDR chunk"
            width, height, depth, color, _, _, interlace = (
                *(int.from_bytes(data[i : i + 4], "big") for i in (16, 20)),
                *data[24:29],
            )
            if _too_big(width, height):
                return _too_big(width, height)
            bits = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color, 0) * depth
            for x0, y0, dx, dy in _ADAM7 if interlace else ((0, 0, 1, 1),):  # bytes per row: 1 filter byte + pixels
                w, h = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
                expected += h * ((w * bits + 7) // 8 + 1) if w else 0
        if kind == b"IEND" or pos + 12 + size > len(data):  # PIL's verify stops at IEND, its CRC unread
            if kind != b"IEND":
                return "image file is truncated (no IEND chunk)"
            return (
                None if inflate.eof and raw == expected else f"broken PNG file: image data is not {width}x{height} px"
            )
        if zlib.crc32(data[pos + 4 : pos + 8 + size]) != int.from_bytes(data[pos + 8 + size : pos + 12 + size], "big"):
            return f"broken PNG file: bad CRC in chunk {kind!r}"
        chunk = data[pos + 8 : pos + 8 + size] if kind == b"IDAT" else b""
        while chunk and raw <= expected:  # 4 MB at a time: memory stays bounded whatever the ratio
            raw, chunk = raw + len(inflate.decompress(chunk, 1 << 22)), inflate.unconsumed_tail
        pos += 12 + size


def undecodable(data) -> str | None:
    """Why an image (bytes, path, PIL image) would not reach a model whole, or ``None``. PNG: :func:`_png_problem`;
    others: the pixel limit, then decoded in full (JPEG at 1/8 scale: every entropy-coded byte is still read), with
    ``ImageFile.LOAD_TRUNCATED_IMAGES`` unset by the caller (:func:`check_images`)."""
    from PIL import Image

    try:
        if isinstance(data, Image.Image) or not data:
            return _too_big(*data.size) if data else "empty image: no bytes and no path"
        data = Path(data).expanduser().read_bytes() if isinstance(data, str) else bytes(data)
        if data[:8] == _PNG:
            return _png_problem(data)
        with Image.open(io.BytesIO(data)) as image:
            if _too_big(*image.size):
                return _too_big(*image.size)
            image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))  # JPEG only; others: no-op
            image.load()
    except Exception as exc:  # noqa: BLE001 - a corrupt file makes PIL raise anything (OSError, SyntaxError, ...)
        return f"{type(exc).__name__}: {str(exc)[:120]}"


_CHECKED: dict = {}  # {pixel limit: {sha256 digest, or a file's (path, size, mtime): answer}}: 0.1 KB an image


def checked(data) -> tuple:
    """``(reason, sha256)``: :func:`undecodable`, once per image content and pixel limit in the process (bytes by
    sha256, a file by path, size and mtime): an image that several tasks use is checked once; the sha256 of
    the bytes read is what tasks log, so paired runs are matched on the same pixels."""
    seen = _CHECKED.setdefault(max_pixels(), {})
    if isinstance(data, (bytes, bytearray)):
        if (digest := hashlib.sha256(data).digest()) not in seen:  # the digest kept, its hex made when asked
            seen[digest] = undecodable(data)
        return seen[digest], digest.hex()
    if not (isinstance(data, str) and os.path.isfile(data)):
        return undecodable(data), None
    if (key := (data, os.stat(data).st_size, os.stat(data).st_mtime_ns)) not in seen:
        blob = Path(data).read_bytes()  # read once, checked and hashed
        seen[key] = (undecodable(blob), hashlib.sha256(blob).hexdigest())
    return seen[key]


def check_images(work: list[tuple], threads: int = 4, digests: dict | None = None) -> list[tuple]:
    """``[(key, reason), ...]``, in order, for the ``(key, image)`` of ``work`` that do not pass :func:`undecodable`,
    in ``threads`` threads, a slice of ``work`` each (PIL and zlib decode outside the GIL; a PNG is inflated in full).
    ``digests`` gets ``{key: sha256}`` of the bytes read (several images of one key: a hash of theirs)."""
    from PIL import ImageFile

    # lmms-eval sets it (a truncated image filled in grey): unset once for all threads, which share the flag
    truncated_ok, ImageFile.LOAD_TRUNCATED_IMAGES = ImageFile.LOAD_TRUNCATED_IMAGES, False
    size = max(1, -(-len(work) // min(threads, len(work) // 64 + 1)))  # a slice per thread, not a future per image
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(work) // 64 + 1))) as pool:
            why = [
                found
                for part in pool.map(
                    lambda part: [checked(x) for _, x in part], (work[i : i + size] for i in range(0, len(work), size))
                )
                for found in part
            ]
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = truncated_ok
    for (key, _), (_, sha) in zip(work, why, strict=True) if digests is not None else ():
        digests[key] = hashlib.sha256(f"{digests[key]} {sha}".encode()).hexdigest() if key in digests else sha
    return [(key, reason) for (key, _), (reason, _) in zip(work, why, strict=True) if reason]


def synthetic_image(seed: str, size: int = 48):
    """A small deterministic RGB picture (coloured shapes) derived from ``seed``; used by the sample builders."""
    from PIL import Image, ImageDraw

    h = hashlib.sha256(seed.encode("utf-8")).digest()
    img = Image.new("RGB", (size, size), (h[0], h[1], h[2]))
    draw = ImageDraw.Draw(img)
    for i in range(3):
        x0, y0 = h[3 + 4 * i] % size, h[4 + 4 * i] % size
        x1, y1 = min(size - 1, x0 + 6 + h[5 + 4 * i] % (size // 2)), min(size - 1, y0 + 6 + h[6 + 4 * i] % (size // 2))
        fill = (h[16 + i], h[19 + i], h[22 + i])
        (draw.ellipse if i % 2 else draw.rectangle)([x0, y0, x1, y1], fill=fill)
    return img
