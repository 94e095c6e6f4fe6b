"""The image pixel cap is a validated setting, and an image costs about 4 bytes per pixel at its peak when the model
gets it (docs/when-things-go-wrong.md, "memory budget")."""

import io
import os
import subprocess
import sys

import pytest


def _jpeg(size: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (size, size), (10, 200, 30)).save(buf, format="JPEG")
    return buf.getvalue()


@pytest.mark.parametrize("value", ["0", "-5", "many", "1.5e8"])
def test_the_cap_setting_is_validated(value):
    from hanyi import settings

    assert settings.problems({"HANYI_IMAGE_MAX_PIXELS": value}) == [
        f"HANYI_IMAGE_MAX_PIXELS={value!r}: expected an integer >= 1"
    ]


def test_the_cap_setting_moves_the_load_time_limit(monkeypatch):
    from hanyi.data import images

    assert images.max_pixels() == images.MAX_PIXELS == 150_000_000  # unset: the default
    monkeypatch.setenv("HANYI_IMAGE_MAX_PIXELS", str(40 * 40))
    why = images.undecodable(_jpeg(48))
    assert why == "48x48 pixels, over the limit of 1,600 (HANYI_IMAGE_MAX_PIXELS)"
    assert images.undecodable(_jpeg(32)) is None
    assert images.checked(_jpeg(48))[0] == why  # the memo is keyed by the cap in force
    monkeypatch.setenv("HANYI_IMAGE_MAX_PIXELS", str(48 * 48))
    assert images.checked(_jpeg(48))[0] is None


def test_an_rgb_image_reaches_the_model_without_a_copy():
    from PIL import Image

    from hanyi.data.images import to_pil

    rgb = Image.new("RGB", (8, 8))
    assert to_pil(rgb) is rgb
    assert to_pil(Image.new("L", (8, 8))).mode == "RGB"  # other modes: converted (one copy)
    decoded = to_pil({"bytes": _jpeg(16), "path": None}, doc_hint="d")
    assert decoded.mode == "RGB" and decoded.size == (16, 16)


_PEAK = """
import sys
from hanyi.data.images import to_pil

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

data = open(sys.argv[1], "rb").read()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak (VmHWM) starts again from the current RSS: imports before this do not count
before = status("VmRSS")
image = to_pil({"bytes": data, "path": None}, doc_hint="big")
print((status("VmHWM") - before) / (image.width * image.height))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's peak-RSS reset")
def test_a_large_image_costs_about_four_bytes_per_pixel_at_its_peak(tmp_path):
    """16 million pixels, measured in a fresh process: about 3 bytes each for the RGB image, plus the decoder's
    buffers (4.3 measured); copying the decoded image (``convert("RGB")`` on an RGB image) took it to 8.2."""
    from PIL import Image

    path = tmp_path / "big.jpg"
    Image.effect_noise((400, 400), 64).convert("RGB").resize((4000, 4000)).save(path, format="JPEG", quality=80)
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True, timeout=120
    )
    per_pixel = float(out.stdout.strip())
    assert 2.5 < per_pixel < 5.5, per_pixel
