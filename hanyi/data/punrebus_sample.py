"""Pun Rebus Art synthetic data: the bundled sample and the same data at any size (``python -m hanyi.data.build_samples``).

Real story labels (``SAMPLE_STORIES``) extended with synthetic stories, synthetic images, written through the real
builder (:func:`hanyi.data.punrebus.build_dataset`).
"""

from __future__ import annotations

import functools
import io

from hanyi.data.punrebus import HEADER, SAMPLE_STORIES, build_dataset

#: The paper's size: 1,011 images of 375 stories (the text-only names).
FULL_SIZE = {"images": 1011, "stories": 375}


def _letters(i: int) -> str:
    """``0 -> "a"``, ``25 -> "z"``, ``26 -> "ba"``: digit-free story-key suffixes (image names split on "_")."""
    out = ""
    while True:
        out = "abcdefghijklmnopqrstuvwxyz"[i % 26] + out
        i //= 26
        if not i:
            return out


def scaled_stories(n_images: int, n_stories: int | None = None) -> tuple:
    """The sample stories, then synthetic ones, until ``n_stories`` stories hold ``n_images`` images in all.

    Deterministic. Synthetic stories reuse the sample stories' categories and elements under new names, and take
    the images round-robin (so some stories have 2-3 images, as in the release). ``n_stories`` defaults to the
    paper's images-per-story ratio.
    """
    if n_images < 1:
        raise ValueError(f"punrebus: size must be at least 1 image, got {n_images}")
    if n_stories is None:
        n_stories = max(1, round(n_images * FULL_SIZE["stories"] / FULL_SIZE["images"]))
    n_stories = min(n_stories, n_images)
    base = [(zh, py, cats, els) for zh, py, cats, els, _ in SAMPLE_STORIES]
    stories = base[:n_stories] + [
        (f"{base[i % len(base)][0]}{i}", f"{base[i % len(base)][1]}x{_letters(i)}", *base[i % len(base)][2:])
        for i in range(len(base), n_stories)
    ]
    per_story = [n_images // n_stories + (i < n_images % n_stories) for i in range(n_stories)]
    return tuple((*st, n) for st, n in zip(stories, per_story))


def sample_answer_sheet(stories=SAMPLE_STORIES) -> str:
    """The answer-sheet CSV text of the synthetic sample stories (one row per story and category)."""
    lines = [",".join(HEADER)]
    for zh, pinyin, cats, elements, _ in stories:
        cells = list(elements) + [""] * (4 - len(elements))
        lines += [",".join([zh, pinyin, cat, *cells]) for cat in cats]
    return "\n".join(lines) + "\n"


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """Write the synthetic sample through the real builder: real story labels, synthetic images.

    ``size``: number of images (``FULL_SIZE["images"]`` for the paper's size); the sample stories are extended with
    synthetic ones (:func:`scaled_stories`). ``None``: the bundled 12-image sample.
    """
    from hanyi.data.images import synthetic_image

    stories = SAMPLE_STORIES if size is None else scaled_stories(size)
    files = []
    for _, pinyin, _, _, n_images in stories:
        for n in range(1, n_images + 1):
            buf = io.BytesIO()
            synthetic_image(f"{pinyin}_{n}.jpg").save(buf, format="JPEG", quality=90)
            files.append((f"{pinyin}_{n}.jpg", functools.partial(bytes, buf.getvalue())))
    card = "# Pun Rebus Art: synthetic sample\n\nReal story labels, synthetic images. For smoke tests only; see docs/punrebus.md."
    info = {"source": "synthetic sample" if size is None else f"synthetic, size={size}"}
    return build_dataset(sample_answer_sheet(stories), files, out_dir, info=info, card=card)
