"""Image values in docs -> PIL images, and deterministic synthetic images for the bundled samples."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os


class ImageUnavailableError(ValueError):
    """A doc's image cannot be turned into a picture. The message names the doc."""


def to_pil(value, *, doc_hint: str = "", base_dir: str | None = None):
    """Turn an image cell into an RGB ``PIL.Image``.

    Accepts a PIL image, a ``{"bytes": ..., "path": ...}`` dict (the ``datasets.Image`` storage form), raw bytes,
    a ``data:`` URI or bare base64 string, or a local path (relative paths are taken from ``base_dir``). URLs are
    not fetched here. Raises :class:`ImageUnavailableError` naming ``doc_hint`` otherwise.
    """
    from PIL import Image

    if value is None:
        raise ImageUnavailableError(f"{doc_hint}: the doc has no image")
    if isinstance(value, Image.Image):
        return value.convert("RGB")
    if isinstance(value, dict):
        if value.get("bytes"):
            return to_pil(value["bytes"], doc_hint=doc_hint, base_dir=base_dir)
        if value.get("path"):
            return to_pil(value["path"], doc_hint=doc_hint, base_dir=base_dir)
        raise ImageUnavailableError(f"{doc_hint}: empty image record")
    if isinstance(value, (bytes, bytearray)):
        try:
            return Image.open(io.BytesIO(value)).convert("RGB")
        except Exception as exc:
            raise ImageUnavailableError(f"{doc_hint}: image bytes do not decode ({exc})") from None
    if isinstance(value, str):
        s = value.strip()
        if s.startswith(("http://", "https://")):
            raise ImageUnavailableError(f"{doc_hint}: image is a URL ({s[:80]}); resolve it to a local file first")
        if s.startswith("data:") and "," in s:
            s = s.split(",", 1)[1]
        path = s if os.path.isabs(s) or base_dir is None else os.path.join(base_dir, s)
        if os.path.isfile(path):
            return Image.open(path).convert("RGB")
        if len(s) > 64:
            try:
                return to_pil(base64.b64decode(s, validate=True), doc_hint=doc_hint)
            except (binascii.Error, ValueError):
                pass
        raise ImageUnavailableError(f"{doc_hint}: image file not found: {s[:120]}")
    raise ImageUnavailableError(f"{doc_hint}: unsupported image value of type {type(value).__name__}")


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
