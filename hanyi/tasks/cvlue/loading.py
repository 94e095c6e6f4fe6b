"""CVLUE load-time checks: every image present and every gold box finite before any model call. See docs/cvlue.md."""

import math

from hanyi.tasks import _common
from hanyi.tasks._common import require_images
from hanyi.tasks.cvlue.constants import LITE_DOCS

_IMAGE_FIX = (
    "Rebuild the data with `hanyi prepare cvlue --root <release dir>`; docs/cvlue.md says what the release holds."
)


def cvlue_process_docs(dataset):
    """Every image present, checked at load time before any model call: embedded ``image`` (VQA, VG, VD) or the
    ``image_path`` files under the data root (retrieval)."""
    if {"bbox", "ref_id"} <= set(dataset.column_names):  # a NaN gold box would leave the mIoU mean silently
        bad = [
            r
            for r, b in zip(dataset["ref_id"], dataset["bbox"])
            if b and not all(isinstance(v, (int, float)) and math.isfinite(v) for v in b)
        ]
        if bad:
            raise ValueError(
                f"{len(bad)} doc(s) have a non-finite gold bbox (ref_id: {', '.join(map(str, bad[:10]))}). {_IMAGE_FIX}"
            )
    if "image" in dataset.column_names:
        id_field = next(f for f in ("question_id", "ref_id", "image_id", "image_path") if f in dataset.column_names)
        return require_images(dataset, "image", id_field, _IMAGE_FIX)
    if "image_path" in dataset.column_names:
        from hanyi.data.sources import resolve

        sha = _common.require_image_files(resolve("cvlue"), dataset["image_path"], _IMAGE_FIX)
        return _common.add_mapped_column(dataset, "image_sha256", [sha.get(p) for p in dataset["image_path"]])
    return dataset


def cvlue_lite_docs(dataset):
    return cvlue_process_docs(dataset.select(range(min(LITE_DOCS, len(dataset)))))
