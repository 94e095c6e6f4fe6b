"""a JPEG that several tasks of one process use is checked once (memo by content hash)."""

import io

from PIL import Image

from hanyi.data import images


def _jpeg(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(buf, "JPEG")
    return buf.getvalue()


def test_an_image_used_by_several_tasks_is_decoded_once(monkeypatch, tmp_path):
    calls = []
    check = images.undecodable
    monkeypatch.setattr(images, "undecodable", lambda data: calls.append(1) or check(data))
    monkeypatch.setattr(images, "_CHECKED", {})
    good, other = _jpeg("red"), _jpeg("blue")
    path = tmp_path / "a.jpg"
    path.write_bytes(other)
    for _ in range(3):  # three tasks' load-time checks, the same bytes as new objects each time
        assert images.check_images([("a", bytes(good)), ("b", str(path))]) == []
    assert len(calls) == 2
    broken = good[: len(good) // 2]  # other content: checked on its own, and found bad
    assert images.check_images([("c", broken)])[0][0] == "c" and len(calls) == 3
    path.write_bytes(broken)  # the file changed: checked again
    assert images.check_images([("d", str(path))])[0][0] == "d" and len(calls) == 4
