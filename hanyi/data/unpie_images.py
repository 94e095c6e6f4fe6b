"""UNPIE disambiguator images: a release cell (string, bytes, path, URL) to something PIL opens, and back.

Used by the builder (:mod:`hanyi.data.unpie`, ``hanyi prepare unpie --download-images``), the caption builder and the
task glue. URLs are read from a local cache and downloaded only on explicit opt-in (spec §6.3).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import urllib.request

from hanyi.data.safepath import UnsafePathError, inside

IMAGE_ROOT_ENV = "HANYI_UNPIE_IMAGE_ROOT"
IMAGE_CACHE_ENV = "HANYI_UNPIE_IMAGE_CACHE"
DOWNLOAD_ENV = "HANYI_UNPIE_DOWNLOAD_IMAGES"
IMAGE_OK = "ok"
INVALID_HOST = "a reserved .invalid host that never resolves: the bundled synthetic sample keeps one such image on purpose, to show how a doc without its image is left out and counted; nothing to fix"


def image_cache_dir() -> str:
    """``$HANYI_UNPIE_IMAGE_CACHE``, else ``$HANYI_CACHE_DIR/unpie_images``, else ``~/.cache/hanyi/unpie_images``."""
    if os.environ.get(IMAGE_CACHE_ENV):
        return os.path.expanduser(os.environ[IMAGE_CACHE_ENV])
    root = os.environ.get("HANYI_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "hanyi")
    return os.path.join(os.path.expanduser(root), "unpie_images")


def url_cache_path(url: str, cache_dir: str | None = None) -> str:
    """Where a URL's image is cached: ``<cache dir>/<sha1(url)>``."""
    return os.path.join(
        cache_dir or image_cache_dir(), hashlib.sha1(url.encode("utf-8"), usedforsecurity=False).hexdigest()
    )


def _download(url: str, path: str, timeout: float = 30.0) -> None:
    req = urllib.request.Request(url, headers={"User-Agent": "cultural-eval-unpie/0.1"})  # noqa: S310 - http(s) only
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - explicit opt-in only
        data = resp.read()
    from PIL import Image

    Image.open(io.BytesIO(data)).verify()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".part", "wb") as f:
        f.write(data)
    os.replace(path + ".part", path)


def resolve_image_source(value, *, download: bool | None = None, doc_hint: str = ""):
    """Turn a disambiguator-image cell into something the image loader (``images.to_pil``) opens (spec §6.3).

    Order: PIL image / ``{"bytes"}`` dict / bytes / ``data:`` URI / base64 are returned as they are; a path is taken
    as is or under ``$HANYI_UNPIE_IMAGE_ROOT``; an ``http(s)`` URL maps to the local cache file (keyed by sha1 of
    the URL), downloaded only when ``download`` (default: ``$HANYI_UNPIE_DOWNLOAD_IMAGES=1``) is set.
    Raises :class:`hanyi.data.images.ImageUnavailableError` naming the doc when nothing local exists.
    """
    from hanyi.data.images import ImageUnavailableError

    if not isinstance(value, str):
        return value
    s = value.strip()
    if s.startswith(("http://", "https://")):
        path = url_cache_path(s)
        if os.path.isfile(path):
            return path
        if download is None:
            from hanyi import settings

            download = settings.value(DOWNLOAD_ENV, False)  # validated: YES, True, 1 all mean yes
        if not download:  # no download can fetch from an .invalid host (RFC 2606): advise none
            fix = (
                INVALID_HOST
                if s.split("/")[2].rsplit("@", 1)[-1].split(":")[0].endswith(".invalid")
                else f"set {DOWNLOAD_ENV}=1 to download, or run: hanyi prepare unpie --download-images"
            )
            raise ImageUnavailableError(
                f"{doc_hint}: image URL {s[:100]} is not in the cache {os.path.dirname(path)} ({fix})"
            )
        try:
            _download(s, path)
        except Exception as exc:  # noqa: BLE001 - network, HTTP or PIL errors alike: this doc's image is unavailable
            raise ImageUnavailableError(f"{doc_hint}: download of {s[:100]} failed ({exc})") from None
        return path
    root = os.environ.get(IMAGE_ROOT_ENV)
    if not s.startswith("data:") and len(s) < 4096 and os.path.exists(os.path.join(root or "", s)):
        # a file path from the release: only inside $HANYI_UNPIE_IMAGE_ROOT, never absolute, '..' or a symlink out
        if root:
            return inside(root, s, f"{doc_hint} image path")
        if os.path.isabs(s) or ".." in s.replace("\\", "/").split("/"):
            raise UnsafePathError(f"{doc_hint}: image path {s[:200]!r} leaves the working folder; refused")
    return s


def load_disamb_image(value, *, doc_hint: str = "", download: bool | None = None):
    """The disambiguator image as an RGB PIL image; raises ``ImageUnavailableError`` naming the doc."""
    from hanyi.data.images import to_pil

    return to_pil(resolve_image_source(value, download=download, doc_hint=doc_hint), doc_hint=doc_hint)


def image_status(value, *, doc_hint: str = "", download: bool | None = None, digests: dict | None = None) -> str:
    """``"ok"`` when the image resolves and passes :func:`hanyi.data.images.undecodable` (pixel limit, full decode, no
    truncation), else the reason; ``digests`` gets ``{doc_hint: sha256}`` of the bytes checked."""
    from hanyi.data.images import ImageUnavailableError, check_images, image_source

    try:
        src = image_source(resolve_image_source(value, download=download, doc_hint=doc_hint), doc_hint=doc_hint)
    except ImageUnavailableError as exc:
        return str(exc)
    bad = check_images([(doc_hint, src)], 1, digests)
    return f"{doc_hint}: image does not decode ({bad[0][1]})" if bad else IMAGE_OK


def to_data_uri(img) -> str:
    """PNG ``data:`` URI of a PIL image (how prepared and sample datasets store disambiguator images)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
