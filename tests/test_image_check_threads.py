"""The load-time image check hands its threads one slice of the images each, not one task per image (the
slopes of cii and punrebus_matching grew past 10 % once every PNG went through the pool one future at a time, a
future costing more than checking a 48-px image); the verdicts and their order are the same."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

from hanyi.data import images


def _png(seed: str) -> bytes:
    buf = io.BytesIO()
    images.synthetic_image(seed).save(buf, format="PNG")
    return buf.getvalue()


def test_threads_get_one_slice_each_and_the_verdicts_keep_doc_order(monkeypatch):
    work = [(f"doc{i}", _png(str(i))) for i in range(1000)]
    for i in (3, 500, 999):  # truncated: each keeps its doc id, in order
        work[i] = (work[i][0], work[i][1][:-20])
    submitted = []
    submit = ThreadPoolExecutor.submit
    monkeypatch.setattr(
        ThreadPoolExecutor, "submit", lambda self, *a, **k: submitted.append(1) or submit(self, *a, **k)
    )
    images._CHECKED.clear()
    bad = images.check_images(work, threads=4)
    assert [key for key, _ in bad] == ["doc3", "doc500", "doc999"]
    assert all("truncated" in why or "IEND" in why for _, why in bad), bad
    assert len(submitted) <= 4  # one slice per thread (was one future per image: 1,000)
    assert images.check_images([]) == []
