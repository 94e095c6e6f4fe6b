"""Bounding boxes: parsing a VLM's box answer, coordinate conventions, and IoU (official CVLUE +1-pixel rule).

Paper: Wang et al., CVLUE (AAAI 2025), Table 2/4 ("IoU" for visual grounding = mean IoU x 100). The official scorer
``evaluation/eval_vg.py`` (WangYuxuan93/CVLUE @ 47e34aa, spec §2.3) scores pixel ``[x, y, w, h]`` boxes (top-left
origin) with inclusive ``+1`` areas; an empty prediction scores 0 and counts in the denominator.

Boxes from a generative VLM are read by :func:`parse_box` and mapped to pixels by :func:`to_pixel_xywh` under a
coordinate convention chosen per model (``COORD_FORMATS``), never by comparing with the gold box.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

#: Coordinate conventions -> the scale that maps one unit to the image width/height fraction.
#: ``norm1``: floats in [0, 1] (LLaVA-1.5, lmms-eval ``refcoco_bbox_rec``); ``qwen1000``: ints in [0, 1000)
#: (Qwen-VL, Qwen2-VL; divided by 1000); ``pixel``: absolute pixels of the original image. Qwen2.5-VL answers in
#: absolute pixels of the image as it saw it, so the size it saw depends on who resized the picture:
#: ``qwen25_pixel``: lmms-eval's ``--model qwen2_5_vl`` (two resizes, :func:`qwen25_chat_input_size`);
#: ``qwen25_served_pixel``: an engine serving the model (one resize, :func:`qwen25_served_input_size`).
COORD_FORMATS = {"norm1": 1.0, "qwen1000": 1000.0, "pixel": None, "qwen25_pixel": None, "qwen25_served_pixel": None}

#: Qwen2.5-VL's sides are multiples of 28 (14-pixel patches merged 2 x 2); bounds below are in pixels.
QWEN25_FACTOR = 28
#: lmms-eval 0.7.3's ``qwen2_5_vl`` defaults (256 and 2048 merged patches), which it hands to the processor. A run
#: with other ``min_pixels``/``max_pixels`` model_args sees other sizes: the scorer cannot know the model's settings.
QWEN25_MIN_PIXELS = 256 * 28 * 28
QWEN25_MAX_PIXELS = 2048 * 28 * 28
#: qwen_vl_utils 0.0.14's own bounds for a message image that names none (``IMAGE_MIN_TOKEN_NUM`` 4 and
#: ``IMAGE_MAX_TOKEN_NUM`` 16384 merged patches): lmms-eval's chat ``qwen2_5_vl`` names them for videos only.
QWEN_VL_UTILS_MIN_PIXELS = 4 * 28 * 28
QWEN_VL_UTILS_MAX_PIXELS = 16384 * 28 * 28
#: Qwen2.5-VL's own ``preprocessor_config.json`` (``min_pixels`` 3136, ``max_pixels`` 12845056), what vLLM or SGLang
#: load with the weights unless told otherwise (not transformers' class defaults, 3136 and 1003520).
QWEN25_MODEL_MIN_PIXELS = 3136
QWEN25_MODEL_MAX_PIXELS = 12845056

_NUM = r"(-?\d+(?:\.\d+)?)"
_QWEN_PAIRS = re.compile(rf"\(\s*{_NUM}\s*,\s*{_NUM}\s*\)\s*,?\s*\(\s*{_NUM}\s*,\s*{_NUM}\s*\)")
_LIST4 = re.compile(rf"\[\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*\]")
#: The list after a ``"bbox"`` key is at most this long (a bound on the regex's work: without it, many unclosed
#: ``"bbox": [`` in one answer make the search quadratic).
_JSON_VALUE_MAX = 500
_JSON_KEY = re.compile(rf"\"(bbox_2d|bbox)\"\s*:\s*(\[[^\]]{{0,{_JSON_VALUE_MAX}}}\])")


def _finite_box(values) -> tuple[float, float, float, float] | None:
    """Four finite floats, or None: NaN/inf (``NaN`` in JSON, a 400-digit number) is a parse failure, never a box."""
    try:
        box = tuple(float(v) for v in values)
    except OverflowError:  # a JSON integer with hundreds of digits
        return None
    return box if all(math.isfinite(v) for v in box) else None


def parse_box(text: str | None) -> tuple[float, float, float, float] | None:
    """The first box in a model answer as ``(x1, y1, x2, y2)`` in the model's own units, or ``None``.

    Order (spec §6.3): Qwen ``(x1,y1),(x2,y2)``, then a JSON ``bbox_2d``/``bbox`` value, then the first ``[a,b,c,d]``.
    The first pattern that matches decides: a box with NaN or inf there is unparsed (``None``), never a NaN IoU.
    Work is linear in the answer's length; nesting, huge numbers or any other input never raise.

    >>> parse_box("<ref>唢呐</ref><box>(12,340),(560,780)</box>")
    (12.0, 340.0, 560.0, 780.0)
    >>> parse_box('```json\\n[{"bbox_2d": [10, 20, 30, 40], "label": "鱼"}]\\n```')
    (10.0, 20.0, 30.0, 40.0)
    >>> parse_box("The box is [0.12, 0.5, 0.3, 0.61].")
    (0.12, 0.5, 0.3, 0.61)
    >>> parse_box("我看不到唢呐") is None
    True
    >>> parse_box('{"bbox": [NaN, 1, 2, 3]}') is None
    True
    """
    if not isinstance(text, str):
        return None
    m = _QWEN_PAIRS.search(text)
    if m:
        return _finite_box(m.groups())
    m = _JSON_KEY.search(text)
    if m:
        try:
            values = json.loads(m.group(2))
        except (ValueError, RecursionError):  # RecursionError: "[[[[...]" nested past the interpreter's limit
            values = None
        if (
            isinstance(values, list)
            and len(values) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        ):
            return _finite_box(values)
    m = _LIST4.search(text)
    if m:
        return _finite_box(m.groups())
    return None


def qwen25_input_size(
    width: int,
    height: int,
    min_pixels: int = QWEN25_MIN_PIXELS,
    max_pixels: int = QWEN25_MAX_PIXELS,
    factor: int = QWEN25_FACTOR,
    *,
    side_can_round_to_zero: bool = False,
) -> tuple[int, int]:
    """``(width, height)`` of a W x H image after ONE Qwen2.5-VL resize (Qwen2.5-VL report §2.1, "native resolution").

    Each side is rounded to the nearest multiple of ``factor``; if the area then exceeds ``max_pixels`` both sides
    shrink by the same ratio, rounded down, and if it falls under ``min_pixels`` they grow, rounded up. Python's
    ``round`` (half to even), as Qwen's own code uses. qwen_vl_utils rounds a side to at least ``factor``; transformers'
    image processor lets a side of 14 px or less round to 0, so the area falls under ``min_pixels`` and grows
    (``side_can_round_to_zero=True``). Either way a side never comes out under ``factor``.

    >>> qwen25_input_size(640, 480)
    (644, 476)
    >>> qwen25_input_size(200, 100)
    (644, 336)
    >>> qwen25_input_size(2000, 1500)
    (1456, 1092)
    >>> qwen25_input_size(10, 1000, 3136, 12845056), qwen25_input_size(10, 1000, 3136, 12845056, side_can_round_to_zero=True)
    ((28, 1008), (28, 560))
    """
    w_bar = round(width / factor) * factor
    h_bar = round(height / factor) * factor
    if not side_can_round_to_zero:
        w_bar, h_bar = max(factor, w_bar), max(factor, h_bar)
    if w_bar * h_bar > max_pixels:
        beta = math.sqrt(width * height / max_pixels)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
    elif w_bar * h_bar < min_pixels:
        beta = math.sqrt(min_pixels / (width * height))
        w_bar = math.ceil(width * beta / factor) * factor
        h_bar = math.ceil(height * beta / factor) * factor
    return w_bar, h_bar


def qwen25_chat_input_size(
    width: int, height: int, min_pixels: int = QWEN25_MIN_PIXELS, max_pixels: int = QWEN25_MAX_PIXELS
) -> tuple[int, int]:
    """The size at which lmms-eval 0.7.3's ``--model qwen2_5_vl`` (its chat class) gives a W x H picture to the model.

    It resizes twice: ``qwen_vl_utils.fetch_image`` within qwen_vl_utils' own bounds (the chat class names
    ``min_pixels``/``max_pixels`` for videos only), then the processor resizes that picture again within the
    wrapper's ``min_pixels``/``max_pixels`` (its model_args; defaults 200,704 and 1,605,632). A run with other
    model_args gives other sizes: pass them here to map its boxes.

    >>> qwen25_chat_input_size(640, 480)
    (644, 476)
    >>> qwen25_chat_input_size(300, 200), qwen25_input_size(300, 200)  # grown from 308 x 196, not from 300 x 200
    ((588, 364), (560, 392))
    >>> qwen25_chat_input_size(1920, 1080), qwen25_input_size(1920, 1080)  # shrunk from 1932 x 1092
    ((1680, 952), (1680, 924))
    >>> qwen25_chat_input_size(4032, 3024)
    (1456, 1092)
    """
    w, h = qwen25_input_size(width, height, QWEN_VL_UTILS_MIN_PIXELS, QWEN_VL_UTILS_MAX_PIXELS)
    return qwen25_input_size(w, h, min_pixels, max_pixels, side_can_round_to_zero=True)


def qwen25_served_input_size(
    width: int, height: int, min_pixels: int = QWEN25_MODEL_MIN_PIXELS, max_pixels: int = QWEN25_MODEL_MAX_PIXELS
) -> tuple[int, int]:
    """The size at which an engine serving Qwen2.5-VL (vLLM, SGLang: transformers' image processor with the model's
    own ``preprocessor_config.json``) gives the model a W x H picture that lmms-eval's ``openai`` / ``async_openai``
    clients sent as it is (they encode the doc's picture without resizing it): one resize within 3,136 and
    12,845,056 pixels. An engine started with other bounds (e.g. vLLM ``--mm-processor-kwargs``) sees other sizes.

    >>> qwen25_served_input_size(640, 480), qwen25_served_input_size(300, 200)
    ((644, 476), (308, 196))
    >>> qwen25_served_input_size(1920, 1080), qwen25_served_input_size(4032, 3024)
    ((1932, 1092), (4032, 3024))
    """
    return qwen25_input_size(width, height, min_pixels, max_pixels, side_can_round_to_zero=True)


#: absolute-pixel conventions -> the size of the model's input, from the original image's width and height
_INPUT_SIZE = {"qwen25_pixel": qwen25_chat_input_size, "qwen25_served_pixel": qwen25_served_input_size}


def coord_range(coord_format: str, width: float, height: float) -> tuple[float, float]:
    """The largest x and y a box in ``coord_format`` can hold for a W x H image (beyond: off scale).

    >>> coord_range("qwen1000", 640, 480)
    (1000.0, 1000.0)
    >>> coord_range("qwen25_pixel", 1920, 1080), coord_range("qwen25_served_pixel", 1920, 1080)
    ((1680, 952), (1932, 1092))
    """
    scale = COORD_FORMATS[coord_format]
    if scale is not None:
        return scale, scale
    size = _INPUT_SIZE.get(coord_format)
    return size(width, height) if size else (width, height)


def to_pixel_xywh(box: Sequence[float], coord_format: str, width: float, height: float) -> list[float]:
    """Map a parsed ``(x1, y1, x2, y2)`` in ``coord_format`` to a valid pixel ``[x, y, w, h]`` of a W x H image.

    Corners are reordered (x1 <= x2, y1 <= y2) and clipped to the image (spec §6.3 "Validation"). Absolute-pixel
    boxes (``qwen25_pixel``, ``qwen25_served_pixel``) are rescaled from the model's input size to W x H (spec §6.3,
    "rescale by original/resized size").

    >>> to_pixel_xywh((0.1, 0.2, 0.5, 0.6), "norm1", 200, 100)
    [20.0, 20.0, 80.0, 40.0]
    >>> to_pixel_xywh((500, 600, 100, 1200), "qwen1000", 1000, 500)
    [100.0, 300.0, 400.0, 200.0]
    >>> to_pixel_xywh((0, 0, 728, 546), "qwen25_pixel", 4032, 3024)  # seen as 1456 x 1092
    [0.0, 0.0, 2016.0, 1512.0]
    """
    if coord_format not in COORD_FORMATS:
        raise ValueError(f"unknown coord_format {coord_format!r}; known: {', '.join(COORD_FORMATS)}")
    x1, y1, x2, y2 = (float(v) for v in box)
    if coord_format != "pixel":
        x_max, y_max = coord_range(coord_format, width, height)
        x1, x2 = x1 / x_max * width, x2 / x_max * width
        y1, y2 = y1 / y_max * height, y2 / y_max * height
    x1, x2 = sorted((min(max(x1, 0.0), width), min(max(x2, 0.0), width)))
    y1, y2 = sorted((min(max(y1, 0.0), height), min(max(y2, 0.0), height)))
    return [x1, y1, x2 - x1, y2 - y1]


def iou_official(pred_xywh: Sequence[float], gold_xywh: Sequence[float]) -> float:
    """IoU of two pixel ``[x, y, w, h]`` boxes with the official +1-pixel rule (``eval_vg.py``, spec §2.3).

    Corners x2 = x + w (no -1); intersection and areas use ``+ 1``; each intersection side is clamped at 0 separately.
    An empty prediction scores 0. Do not use on [0, 1]-normalised boxes.

    >>> iou_official([0, 0, 9, 9], [0, 0, 9, 9])
    1.0
    >>> round(iou_official([0, 0, 9, 9], [5, 0, 9, 9]), 4)
    0.3333
    >>> iou_official([], [0, 0, 9, 9])
    0.0
    """
    if not pred_xywh:
        return 0.0
    ax1, ay1, aw, ah = pred_xywh
    bx1, by1, bw, bh = gold_xywh
    ax2, ay2, bx2, by2 = ax1 + aw, ay1 + ah, bx1 + bw, by1 + bh
    inter = max(0, min(ax2, bx2) - max(ax1, bx1) + 1) * max(0, min(ay2, by2) - max(ay1, by1) + 1)
    area_a = (ax2 - ax1 + 1) * (ay2 - ay1 + 1)
    area_b = (bx2 - bx1 + 1) * (by2 - by1 + 1)
    return inter / float(area_a + area_b - inter)


def iou_continuous(pred_xywh: Sequence[float], gold_xywh: Sequence[float]) -> float:
    """Plain geometric IoU (no +1), for comparison only; not the official metric.

    >>> round(iou_continuous([0, 0, 10, 10], [5, 0, 10, 10]), 4)
    0.3333
    """
    if not pred_xywh:
        return 0.0
    ax1, ay1, aw, ah = pred_xywh
    bx1, by1, bw, bh = gold_xywh
    inter = max(0.0, min(ax1 + aw, bx1 + bw) - max(ax1, bx1)) * max(0.0, min(ay1 + ah, by1 + bh) - max(ay1, by1))
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


def mean_iou(ious: Sequence[float]) -> float:
    """Official ``avg_iou``: sum over all items / number of items (failed parses included as 0).

    >>> mean_iou([0.0, 0.5, 1.0])
    0.5
    """
    return sum(ious) / len(ious) if ious else 0.0


def accuracy_at_iou(ious: Sequence[float], threshold: float = 0.5) -> float:
    """Fraction of items with IoU strictly greater than ``threshold`` (the CVLUE readme's "over 0.5").

    >>> accuracy_at_iou([0.5, 0.51, 0.0, 0.9])
    0.5
    """
    return sum(1 for v in ious if v > threshold) / len(ious) if ious else 0.0
