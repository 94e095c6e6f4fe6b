"""cvlue_vg_abs: Qwen2.5-VL's absolute-pixel boxes (pixels of its resized input), mapped back by the doc's image size."""

import io

import pytest

from hanyi.metrics import bbox
from hanyi.metrics.bbox import iou_official, qwen25_input_size, to_pixel_xywh


def _res(results, task):
    return {k.split(",")[0]: v for k, v in results["results"][task].items() if not k.endswith("_stderr,none")}


@pytest.mark.parametrize(
    ("width", "height"),
    [(48, 48), (640, 480), (500, 333), (1024, 768), (2000, 1500), (4032, 3024), (28, 5000), (1, 1), (3000, 10)],
)
def test_input_size_matches_transformers_qwen2_vl_resize(width, height):
    """Our resize against transformers' own (the processor lmms-eval's qwen2_5_vl runs), at the wrapper's defaults."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

    if max(width, height) / min(width, height) > 200:
        with pytest.raises(ValueError):
            smart_resize(height, width, factor=28, min_pixels=bbox.QWEN25_MIN_PIXELS, max_pixels=bbox.QWEN25_MAX_PIXELS)
        return
    h, w = smart_resize(height, width, factor=28, min_pixels=bbox.QWEN25_MIN_PIXELS, max_pixels=bbox.QWEN25_MAX_PIXELS)
    assert qwen25_input_size(width, height) == (w, h)


def test_lmms_eval_wrapper_defaults_are_the_ones_assumed():
    import inspect

    from lmms_eval.models.simple.qwen2_5_vl import Qwen2_5_VL

    params = inspect.signature(Qwen2_5_VL.__init__).parameters
    assert params["min_pixels"].default == bbox.QWEN25_MIN_PIXELS
    assert params["max_pixels"].default == bbox.QWEN25_MAX_PIXELS


@pytest.mark.parametrize(
    ("answer", "size", "expected"),
    [
        # 640 x 480 is seen as 644 x 476: the whole input maps to the whole image
        ('```json\n[{"bbox_2d": [0, 0, 644, 476], "label": "唢呐"}]\n```', (640, 480), [0.0, 0.0, 640.0, 480.0]),
        # 2000 x 1500 is seen as 1456 x 1092: the input's half is the image's half
        ('{"bbox_2d": [728, 546, 1456, 1092]}', (2000, 1500), [1000.0, 750.0, 1000.0, 750.0]),
        # corners swapped and past the input: reordered, clipped to the image
        ('{"bbox_2d": [700, 500, 322, 238]}', (640, 480), [320.0, 240.0, 320.0, 240.0]),
    ],
)
def test_absolute_pixel_answers_map_back_to_the_original_image(answer, size, expected):
    box = bbox.parse_box(answer)
    assert to_pixel_xywh(box, "qwen25_pixel", *size) == pytest.approx(expected)


def test_plain_pixel_reading_would_be_off_by_the_resize():
    """The rescale matters: for a 48-px image Qwen2.5-VL sees 448 px, and its boxes read as raw pixels miss."""
    box = (56, 56, 224, 336)
    assert to_pixel_xywh(box, "qwen25_pixel", 48, 48) == pytest.approx([6.0, 6.0, 18.0, 30.0])
    assert to_pixel_xywh(box, "pixel", 48, 48) == [48.0, 48.0, 0.0, 0.0]  # clipped to the corner


def test_image_size_comes_from_the_doc_image_not_the_release_metadata():
    from PIL import Image

    from hanyi.tasks.cvlue import utils

    buf = io.BytesIO()
    Image.new("RGB", (96, 48)).save(buf, format="PNG")
    doc = {"ref_id": 7, "image": {"bytes": buf.getvalue(), "path": None}, "width": 48, "height": 48}
    assert utils._image_size(doc) == (96, 48)
    doc_without_image = {"ref_id": 8, "image": None, "width": 30, "height": 20}
    assert utils._image_size(doc_without_image) == (30, 20)  # a scorer never raises: the release's size stands in


@pytest.fixture(scope="module")
def abs_task(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(["cvlue_vg_abs"], task_manager)["cvlue_vg_abs"]


def test_task_is_registered_generate_until_with_its_own_key(abs_task):
    assert abs_task.config.output_type == "generate_until"
    assert [m["metric"] for m in abs_task.config.metric_list] == ["miou_abs"]
    assert abs_task.config.metadata["version"] == 0.6  # the VG family's version; new task, nothing changed before


def test_prompt_snapshot(abs_task, snapshot):
    snapshot("cvlue_vg_abs__0", abs_task.doc_to_text(abs_task.test_docs()[0]))


def test_end_to_end_through_the_replay_model(replay):
    # the synthetic release's 48 x 48 images are seen by Qwen2.5-VL as 448 x 448 (x 28/3)
    responses = [
        '[{"bbox_2d": [56, 56, 224, 336], "label": "唢呐"}]',  # -> pixels (6, 6)-(24, 36)
        "我看不到",  # unparsed -> 0
        '{"bbox_2d": [0, 0, 448, 448]}',  # the whole input = the whole image
        '{"bbox_2d": [0, 0, 4480, 4480]}',  # past the input: off scale, clipped to the whole image
        "",
        "[0.1, 0.1, 0.5, 0.5]",  # [0, 1] floats read as input pixels: a sub-pixel box at the corner
    ]
    out = replay(
        [{"task": "cvlue_vg_abs", "doc_id": i, "response": r} for i, r in enumerate(responses)], ["cvlue_vg_abs"]
    )
    r = _res(out, "cvlue_vg_abs")
    assert {k for k in r if k != "alias" and "_stderr" not in k} == {"miou_abs"}
    samples = {s["doc_id"]: s["miou_abs"] for s in out["samples"]["cvlue_vg_abs"]}
    golds = {i: s["gold_bbox"] for i, s in samples.items()}
    assert samples[0]["pred_bbox"] == pytest.approx([6.0, 6.0, 18.0, 30.0])
    assert samples[0]["v"] == pytest.approx(iou_official([6, 6, 18, 30], golds[0]))
    assert samples[0]["v"] > 0.1
    expected = [samples[0]["v"], 0.0, iou_official([0, 0, 48, 48], golds[2]), iou_official([0, 0, 48, 48], golds[3])]
    expected += [0.0, iou_official(to_pixel_xywh((0.1, 0.1, 0.5, 0.5), "qwen25_pixel", 48, 48), golds[5])]
    assert r["miou_abs"] == pytest.approx(sum(expected) / 6)
    assert {s["coord_format"] for s in samples.values()} == {"qwen25_pixel"}
    from hanyi.metrics.from_samples import derive

    diag = {k: v for k, (v, _) in derive("cvlue_vg_abs", out["samples"]["cvlue_vg_abs"]).items()}
    assert diag["parse_failure_rate"] == pytest.approx(2 / 6)
    assert diag["off_scale_rate"] == pytest.approx(1 / 6)
