"""cvlue_vg_abs (lmms-eval's qwen2_5_vl) and cvlue_vg_abs_served (a served engine): Qwen2.5-VL's absolute-pixel
boxes, mapped back from the size the model saw to the doc's own image size."""

import ast
import io
import math
import os
import typing

import pytest

from hanyi.metrics import bbox
from hanyi.metrics.bbox import (
    iou_official,
    qwen25_chat_input_size,
    qwen25_input_size,
    qwen25_served_input_size,
    to_pixel_xywh,
)

ABS_TASKS = ("cvlue_vg_abs", "cvlue_vg_abs_served")
#: (width, height) -> (lmms-eval chat qwen2_5_vl: two resizes, one resize at the wrapper's bounds, served: one resize
#: at the model's own bounds), re-derived by hand from the rule: the four pictures of the wrapper's resize probe
PROBE = {
    (640, 480): ((644, 476), (644, 476), (644, 476)),  # inside both bounds: every path agrees
    (300, 200): ((588, 364), (560, 392), (308, 196)),  # grown from 308 x 196, not from 300 x 200
    (1920, 1080): ((1680, 952), (1680, 924), (1932, 1092)),  # shrunk from 1932 x 1092
    (4032, 3024): ((1456, 1092), (1456, 1092), (4032, 3024)),  # already multiples of 28; under 12,845,056 served
}


def _res(results, task):
    return {k.split(",")[0]: v for k, v in results["results"][task].items() if not k.endswith("_stderr,none")}


def _qwen_vl_utils_module():
    """qwen_vl_utils' resize functions and constants, read from its installed source: importing the package needs
    torchvision, which this venv cannot have (tests/test_tiny_qwen2_5_vl.py)."""
    import importlib.util

    spec = importlib.util.find_spec("qwen_vl_utils")
    if spec is None:
        pytest.skip("qwen-vl-utils is not installed")
    path = os.path.join(os.path.dirname(spec.origin), "vision_process.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    wanted = {"round_by_factor", "ceil_by_factor", "floor_by_factor", "smart_resize"}
    body = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name in wanted)
        or (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.BinOp)))
    ]
    namespace = {"math": math, "Optional": typing.Optional, "Tuple": tuple}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)  # noqa: S102 - the package's own code
    return namespace


def _transformers_resize(width, height, min_pixels, max_pixels):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

    h, w = smart_resize(height, width, factor=28, min_pixels=min_pixels, max_pixels=max_pixels)
    return w, h


SIZES = [(48, 48), (640, 480), (500, 333), (1024, 768), (2000, 1500), (4032, 3024), (28, 5000), (1, 1), (3000, 10)]
SIZES += [(300, 200), (1920, 1080), (10, 1000), (14, 14), (15, 29), (7000, 7000), (200, 100), (56, 56)]


@pytest.mark.parametrize(("width", "height"), [(640, 480), (300, 200), (1920, 1080), (4032, 3024)])
def test_probe_sizes_per_pipeline(width, height):
    chat, once, served = PROBE[(width, height)]
    assert qwen25_chat_input_size(width, height) == chat
    assert qwen25_input_size(width, height) == once
    assert qwen25_served_input_size(width, height) == served


def test_bounds_are_the_installed_qwen_vl_utils_ones():
    qvu = _qwen_vl_utils_module()
    factor = 14 * qvu["SPATIAL_MERGE_SIZE"]
    assert factor == bbox.QWEN25_FACTOR
    assert qvu["IMAGE_MIN_TOKEN_NUM"] * factor**2 == bbox.QWEN_VL_UTILS_MIN_PIXELS
    assert qvu["IMAGE_MAX_TOKEN_NUM"] * factor**2 == bbox.QWEN_VL_UTILS_MAX_PIXELS


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_input_size_matches_transformers_qwen2_vl_resize(width, height):
    """One resize against transformers' own (the processor lmms-eval's qwen2_5_vl and the serving engines run)."""
    bounds = [
        (bbox.QWEN25_MIN_PIXELS, bbox.QWEN25_MAX_PIXELS),
        (bbox.QWEN25_MODEL_MIN_PIXELS, bbox.QWEN25_MODEL_MAX_PIXELS),
    ]
    for low, high in bounds:
        if max(width, height) / min(width, height) > 200:
            with pytest.raises(ValueError):
                _transformers_resize(width, height, low, high)
            continue
        got = qwen25_input_size(width, height, low, high, side_can_round_to_zero=True)
        assert got == _transformers_resize(width, height, low, high)
    if max(width, height) / min(width, height) <= 200:
        assert qwen25_served_input_size(width, height) == _transformers_resize(width, height, *bounds[1])


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_chat_input_size_is_qwen_vl_utils_then_the_processor(width, height):
    """lmms-eval's chat qwen2_5_vl: qwen_vl_utils.fetch_image within its own bounds (the wrapper names none for
    images), then the processor within the wrapper's min_pixels / max_pixels."""
    qvu = _qwen_vl_utils_module()
    if max(width, height) / min(width, height) > 200:
        return  # both refuse the picture; the model never answers for it
    h1, w1 = qvu["smart_resize"](height, width, factor=28)
    assert qwen25_input_size(width, height, bbox.QWEN_VL_UTILS_MIN_PIXELS, bbox.QWEN_VL_UTILS_MAX_PIXELS) == (w1, h1)
    expected = _transformers_resize(w1, h1, bbox.QWEN25_MIN_PIXELS, bbox.QWEN25_MAX_PIXELS)
    assert qwen25_chat_input_size(width, height) == expected


def test_lmms_eval_wrapper_defaults_are_the_ones_assumed():
    """Both classes (``--model qwen2_5_vl`` loads the chat one, which inherits the simple one's __init__)."""
    import inspect

    from lmms_eval.models.chat.qwen2_5_vl import Qwen2_5_VL as Chat
    from lmms_eval.models.simple.qwen2_5_vl import Qwen2_5_VL as Simple

    for cls in (Chat, Simple):
        params = inspect.signature(cls.__init__).parameters
        assert params["min_pixels"].default == bbox.QWEN25_MIN_PIXELS
        assert params["max_pixels"].default == bbox.QWEN25_MAX_PIXELS


@pytest.mark.parametrize(
    ("answer", "fmt", "size", "expected"),
    [
        # 640 x 480 is seen as 644 x 476 either way: the whole input maps to the whole image
        (
            '```json\n[{"bbox_2d": [0, 0, 644, 476], "label": "唢呐"}]\n```',
            "qwen25_pixel",
            (640, 480),
            [0, 0, 640, 480],
        ),
        ('{"bbox_2d": [0, 0, 644, 476]}', "qwen25_served_pixel", (640, 480), [0, 0, 640, 480]),
        # 1920 x 1080: the lower right quarter of 1680 x 952 (chat) and of 1932 x 1092 (served)
        ('{"bbox_2d": [840, 476, 1680, 952]}', "qwen25_pixel", (1920, 1080), [960, 540, 960, 540]),
        ('{"bbox_2d": [966, 546, 1932, 1092]}', "qwen25_served_pixel", (1920, 1080), [960, 540, 960, 540]),
        # 4032 x 3024 is seen as 1456 x 1092 by the chat wrapper, as it is by an engine
        ('{"bbox_2d": [728, 546, 1456, 1092]}', "qwen25_pixel", (4032, 3024), [2016, 1512, 2016, 1512]),
        ('{"bbox_2d": [728, 546, 1456, 1092]}', "qwen25_served_pixel", (4032, 3024), [728, 546, 728, 546]),
        # corners swapped and past the input: reordered, clipped to the image
        ('{"bbox_2d": [700, 500, 322, 238]}', "qwen25_pixel", (640, 480), [320, 240, 320, 240]),
    ],
)
def test_absolute_pixel_answers_map_back_to_the_original_image(answer, fmt, size, expected):
    box = bbox.parse_box(answer)
    assert to_pixel_xywh(box, fmt, *size) == pytest.approx(expected)


def test_the_one_resize_map_would_misplace_a_chat_box():
    """What the task did before: 1920 x 1080 mapped back from 1680 x 924, a box's lower edge 3 % too low."""
    chat = to_pixel_xywh((0, 476, 840, 952), "qwen25_pixel", 1920, 1080)
    assert chat == pytest.approx([0, 540, 960, 540])
    assert qwen25_input_size(1920, 1080) == (1680, 924)
    assert 952 / 924 > 1.03  # read against 924 rows, the box's lower edge (row 952) falls past the picture


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
def abs_tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(list(ABS_TASKS), task_manager)


def test_tasks_are_registered_generate_until_with_their_own_key(abs_tasks):
    for name in ABS_TASKS:
        task = abs_tasks[name]
        assert task.config.output_type == "generate_until"
        assert [m["metric"] for m in task.config.metric_list] == ["miou_abs"]
        assert task.config.metadata["version"] == 0.7  # 0.7: the chat map follows the wrapper's two resizes


def test_prompt_snapshot(abs_tasks, snapshot):
    snapshot("cvlue_vg_abs__0", abs_tasks["cvlue_vg_abs"].doc_to_text(abs_tasks["cvlue_vg_abs"].test_docs()[0]))


def test_served_variant_asks_the_same_prompt_with_the_same_settings(abs_tasks):
    chat, served = abs_tasks["cvlue_vg_abs"], abs_tasks["cvlue_vg_abs_served"]
    for doc_a, doc_b in zip(chat.test_docs(), served.test_docs(), strict=True):
        assert chat.doc_to_text(doc_a) == served.doc_to_text(doc_b)
    assert chat.config.generation_kwargs == served.config.generation_kwargs


#: The synthetic release's 48 x 48 pictures: lmms-eval's qwen2_5_vl gives them as 448 x 448 (56 x 56, then grown to
#: 200,704 px), an engine as 56 x 56. The same answers, scored by each task
RESPONSES = [
    '[{"bbox_2d": [56, 56, 224, 336], "label": "唢呐"}]',  # chat: pixels (6, 6)-(24, 36); served: past the input
    "我看不到",  # unparsed -> 0
    '{"bbox_2d": [0, 0, 448, 448]}',  # chat: the whole input = the whole image
    '{"bbox_2d": [0, 0, 4480, 4480]}',  # past the input either way: off scale, clipped to the whole image
    "",
    '{"bbox_2d": [7, 7, 28, 42]}',  # served: pixels (6, 6)-(24, 36)
]


@pytest.fixture(scope="module")
def abs_run(replay):
    records = [{"task": t, "doc_id": i, "response": r} for t in ABS_TASKS for i, r in enumerate(RESPONSES)]
    return replay(records, list(ABS_TASKS))


def test_end_to_end_through_the_replay_model(abs_run):
    out = abs_run
    for task, fmt, seen in (("cvlue_vg_abs", "qwen25_pixel", 448), ("cvlue_vg_abs_served", "qwen25_served_pixel", 56)):
        r = _res(out, task)
        assert {k for k in r if k != "alias" and "_stderr" not in k} == {"miou_abs"}
        samples = {s["doc_id"]: s["miou_abs"] for s in out["samples"][task]}
        assert {s["coord_format"] for s in samples.values()} == {fmt}
        golds = {i: s["gold_bbox"] for i, s in samples.items()}
        preds = [to_pixel_xywh(bbox.parse_box(a), fmt, 48, 48) if bbox.parse_box(a) else [] for a in RESPONSES]
        assert [samples[i]["pred_bbox"] for i in range(6)] == preds  # the same arithmetic: exact
        assert r["miou_abs"] == pytest.approx(sum(iou_official(p, golds[i]) for i, p in enumerate(preds)) / 6)
        from hanyi.metrics.from_samples import derive

        diag = {k: v for k, (v, _) in derive(task, out["samples"][task]).items()}
        assert diag["parse_failure_rate"] == pytest.approx(2 / 6)
        off = [max(b[0], b[2]) > seen or max(b[1], b[3]) > seen for b in map(bbox.parse_box, RESPONSES) if b]
        assert diag["off_scale_rate"] == pytest.approx(sum(off) / 6)
    chat = {s["doc_id"]: s["miou_abs"]["pred_bbox"] for s in out["samples"]["cvlue_vg_abs"]}
    served = {s["doc_id"]: s["miou_abs"]["pred_bbox"] for s in out["samples"]["cvlue_vg_abs_served"]}
    assert chat[0] == pytest.approx([6, 6, 18, 30]) and chat[2] == pytest.approx([0, 0, 48, 48])
    assert served[5] == pytest.approx([6, 6, 18, 30]) and served[0] == pytest.approx([48, 48, 0, 0])
    assert _res(out, "cvlue_vg_abs")["miou_abs"] > 0.05  # the sample's golds are reachable by these answers


@pytest.mark.parametrize("size", [(48, 48), (1920, 1080), (300, 200)])
def test_lmms_eval_openai_clients_send_the_picture_unresized(abs_tasks, size):
    """cvlue_vg_abs_served's premise: lmms-eval's openai / async_openai clients encode the doc's picture as it is
    (ChatMessages.to_openai_messages), so the engine's one resize starts from the doc's own size."""
    import base64

    from lmms_eval.protocol import ChatMessages
    from PIL import Image

    task = abs_tasks["cvlue_vg_abs_served"]
    doc = task.test_docs()[0]
    [picture] = task.doc_to_visual(doc)
    pictures = [picture] if size == (48, 48) else [Image.new("RGB", size, (90, 30, 200))]
    assert pictures[0].size == size
    content = [{"type": "image", "url": pictures[0]}, {"type": "text", "text": task.doc_to_text(doc)}]
    sent = ChatMessages(messages=[{"role": "user", "content": content}]).to_openai_messages()
    url = sent[0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as got:
        assert got.size == size
