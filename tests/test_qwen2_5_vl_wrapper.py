"""lmms-eval's own ``qwen2_5_vl`` wrapper on CPU: one task of every benchmark group on the tiny random Qwen2.5-VL.

The wrapper needs torchvision, which this project's venv (torch 2.13.0+cpu) cannot have, so the run happens in the
second venv ``make venv-tv`` builds (the same lock, PyPI's torch + torchvision pair): a subprocess runs
benchmarks/qwen2_5_vl_tiny.py --quick there and writes what it recorded around the unchanged wrapper. Without that
venv every test here skips and says how to build it. ``HANYI_TV_PYTHON`` points at another interpreter with
torchvision, qwen-vl-utils and decord.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

pytestmark = pytest.mark.slow

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "benchmarks", "qwen2_5_vl_tiny.py")
TV_VENV = os.path.join(REPO, "out", "venv-tv")
TV_PYTHON = os.environ.get("HANYI_TV_PYTHON") or os.path.join(TV_VENV, "bin", "python")
#: The --quick set, one task per group; all of them send the doc's picture
TASKS = {
    "punrebus": "punrebus_matching",
    "cvlue": "cvlue_vg_abs",
    "cii": "cii_none",
    "unpie": "unpie_grounding",
    "vulca": "vulca_baseline",
}
LIMIT = 2
MAX_NEW_TOKENS = 12


@pytest.fixture(scope="module")
def qwen_run(tmp_path_factory):
    if not os.environ.get("HANYI_TV_PYTHON") and not os.path.isfile(os.path.join(TV_VENV, ".hanyi-installed")):
        pytest.skip(
            "no out/venv-tv: lmms-eval's qwen2_5_vl needs torchvision, which the project venv cannot have; "
            "`make venv-tv` builds it (the lock with torch 2.14.1 + torchvision 0.29.1, about 7 GB)"
        )
    tmp = tmp_path_factory.mktemp("qwen_wrapper")
    out = tmp / "run.json"
    cmd = [TV_PYTHON, SCRIPT, "--device", "cpu", "--quick", "--limit", str(LIMIT)]
    cmd += ["--max-new-tokens", str(MAX_NEW_TOKENS), "--out", str(tmp / "tiny_qwen2_5_vl"), "--json", str(out)]
    env = {**os.environ, "HANYI_DATA_ROOT": "sample", "PYTHONPATH": REPO}
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=1200)
    seconds = time.perf_counter() - t
    assert out.is_file(), f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    report = json.loads(out.read_text(encoding="utf-8"))
    return proc, report, seconds


def test_every_group_runs_and_scores_through_the_wrapper(qwen_run):
    proc, report, seconds = qwen_run
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert report["torchvision"] and report["device"] == "cpu"
    assert set(report["groups"]) == set(TASKS)
    for group, task in TASKS.items():
        res = report["groups"][group]
        assert res["ok"], (group, res.get("problems") or res.get("error"))
        assert res["docs"] == {task: LIMIT}, group
        assert res["metrics"][task], f"{task}: no score came out"
        assert all(isinstance(v, (int, float)) for v in res["metrics"][task].values())
        answers = [a for resps in res["answers"][task] for a in resps]
        assert len(answers) == LIMIT and all(isinstance(a, (str, list)) for a in answers)
        assert not any("LMMS_EVAL_REQUEST_FAILED" in str(a) for a in answers)
    print(f"\nqwen2_5_vl tiny on CPU: {len(TASKS)} tasks x {LIMIT} docs in {seconds:.1f} s (subprocess)")


def test_each_request_reaches_the_processor_with_its_images_and_prompt(qwen_run):
    """What the task gives (its own doc_to_visual pictures, pixel for pixel, and its doc_to_text prompt) is what the
    wrapper hands to qwen_vl_utils, one user turn per doc, and the generation settings reach generate."""
    _, report, _ = qwen_run
    for group, task in TASKS.items():
        res = report["groups"][group]
        asked, seen = res["requests"], res["processor"]
        assert res["wrapper"] == "lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL"  # what --model qwen2_5_vl loads
        assert len(asked) == len(seen) == LIMIT, group
        assert {r["task"] for r in asked} == {task}
        # lmms-eval's own log of each sample (its first argument is the context) holds the same prompts
        assert sorted(r["context"] for r in asked) == sorted(res["inputs"][task])
        assert sorted(r["text"] for r in asked) == sorted(r["context"] for r in asked)
        for r in asked:
            assert r["images"] and r["text"].strip(), (task, r["doc_id"])
        assert sorted((r["text"], r["images"]) for r in asked) == sorted((s["text"], s["images"]) for s in seen)
        for s in seen:
            assert s["roles"] == ["user"] and s["image_kind"] == ["pixels"], (group, s["roles"], s["image_kind"])
            assert s["max_new_tokens"] == MAX_NEW_TOKENS and s["do_sample"] is False
            assert len(s["grid_thw"]) == len(s["images"])
        assert {r["max_new_tokens"] for r in asked} == {MAX_NEW_TOKENS}


#: qwen_vl_utils' own bounds when a message gives none (4 and 16384 merged 28 x 28 patches): lmms-eval 0.7.3's chat
#: qwen2_5_vl passes its min_pixels / max_pixels to the processor and to videos, not to the images of a message
QWEN_VL_UTILS_BOUNDS = (4 * 28 * 28, 16384 * 28 * 28)


def _two_resizes(width: int, height: int) -> list[int]:
    """The size the wrapper gives the model: qwen_vl_utils resizes within its own bounds, then the processor resizes
    that within the wrapper's (the same rule each time, hanyi.metrics.bbox.qwen25_input_size)."""
    from hanyi.metrics.bbox import qwen25_input_size

    return list(qwen25_input_size(*qwen25_input_size(width, height, *QWEN_VL_UTILS_BOUNDS)))


def test_the_model_sees_each_doc_picture_resized_twice(qwen_run):
    """Recomputed here from the docs' own sizes, against the grid the model was given (14 px per patch)."""
    _, report, _ = qwen_run
    for group in TASKS:
        res = report["groups"][group]
        by_key = {(r["text"], tuple(r["images"])): r for r in res["requests"]}
        for s in res["processor"]:
            r = by_key[(s["text"], tuple(s["images"]))]
            assert [[w * 14, h * 14] for _, h, w in s["grid_thw"]] == [_two_resizes(*wh) for wh in r["sizes"]], group


def test_resize_probe_through_the_wrappers_own_image_path(qwen_run):
    """Sizes the sample's small pictures do not reach: in the bounds, under min_pixels, over max_pixels."""
    _, report, _ = qwen_run
    probe = {tuple(p["size"]): p for p in report["resize_probe"]}
    assert set(probe) == {(640, 480), (300, 200), (1920, 1080), (4032, 3024)}
    for (w, h), p in probe.items():
        assert p["model_input"] == _two_resizes(w, h), p
    assert probe[(640, 480)]["model_input"] == [644, 476]
    assert probe[(1920, 1080)]["model_input"] == [1680, 952]  # one resize would give 1680 x 924


def test_cvlue_vg_abs_maps_a_box_back_from_the_size_the_model_saw(qwen_run):
    """A box on the lower left quarter of what the model saw must land on the lower left quarter of the picture
    (cvlue_vg_abs follows the wrapper's two resizes: hanyi.metrics.bbox.qwen25_chat_input_size)."""
    from hanyi.metrics.bbox import to_pixel_xywh

    _, report, _ = qwen_run
    for p in report["resize_probe"]:
        (w, h), (mw, mh) = p["size"], p["model_input"]
        got = to_pixel_xywh((0, mh / 2, mw / 2, mh), "qwen25_pixel", w, h)
        assert got == pytest.approx([0, h / 2, w / 2, h / 2], abs=0.5), p
