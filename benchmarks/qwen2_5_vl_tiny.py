"""Every benchmark group through lmms-eval's own ``qwen2_5_vl`` on the tiny random Qwen2.5-VL (needs torchvision).

    make venv-tv && out/venv-tv/bin/python benchmarks/qwen2_5_vl_tiny.py --device cpu [--limit 2] [--quick]
    python benchmarks/qwen2_5_vl_tiny.py --device cuda        # a GPU machine with torchvision, qwen-vl-utils, decord

The wrapper does not run in this project's locked venv (torch 2.13.0+cpu, no torchvision): ``qwen_vl_utils`` imports
torchvision, and transformers' Qwen2.5-VL processor needs its torchvision-backed video processor even for images
(tests/test_tiny_qwen2_5_vl.py pins both). ``make venv-tv`` builds a second venv from the same lock with PyPI's
torch + torchvision pair, which runs on CPU too.

It builds the checkpoint (``hanyi.models.tiny_qwen2_5_vl``, no network), runs each group on the bundled sample
(``HANYI_DATA_ROOT=sample``) with ``--limit`` docs per task and the wrapper's default pixel bounds, and prints one
PASS/FAIL line per group. Besides "every task scored its docs and no answer is an lmms-eval failure marker", it
watches the wrapper from outside (its code is not changed): each task's own pictures (``doc_to_visual``: pixel for
pixel to lmms-eval 0.7.3's chat class, as JPEG data URLs to the older simple one) and its ``doc_to_text`` prompt must
reach ``qwen_vl_utils.process_vision_info`` unchanged, the request's ``max_new_tokens`` must reach ``generate``, and
for ``cvlue_vg_abs`` the size the model sees (``image_grid_thw`` x 14) must be the one the task maps boxes back from
(:func:`hanyi.metrics.bbox.qwen25_chat_input_size`). A resize probe prints what the model sees for larger and
smaller pictures than the sample's: the chat class resizes twice (``qwen_vl_utils``, then the processor), so 1920 x
1080 is seen as 1680 x 952 where one resize would give 1680 x 924 (docs/cvlue.md).

CVLUE runs ``cvlue_vqa`` and ``cvlue_vg_abs`` (Qwen2.5-VL's absolute-pixel boxes), not the group's ``cvlue_vg``
([0, 1] floats). ``qwen2_5_vl`` has no ``loglikelihood``: tasks of that type are left out. Answers of random weights
are noise; the figures checked are plumbing, not quality. ``--json FILE`` writes the per-group results and every
recorded request (tests/test_qwen2_5_vl_wrapper.py reads it).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HANYI_DATA_ROOT="sample")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
#: group -> the generate_until tasks run for it (Qwen2.5-VL boxes: cvlue_vg_abs); other groups run as themselves
GROUP_TASKS = {"cvlue": ["cvlue_vqa", "cvlue_vg_abs"]}
#: --quick: one task per group (the CPU test's set)
QUICK_TASKS = {
    "punrebus": ["punrebus_matching"],
    "cvlue": ["cvlue_vg_abs"],
    "cii": ["cii_none"],
    "unpie": ["unpie_grounding"],
    "vulca": ["vulca_baseline"],
}
FAILED_MARKER = "[LMMS_EVAL_REQUEST_FAILED"


def _pixels(image) -> str:
    """A digest of a picture's pixels (mode, size, bytes): equal only for the same picture, whatever object holds it."""
    h = hashlib.sha256(f"{image.mode}:{image.size}:".encode())
    h.update(image.tobytes())
    return h.hexdigest()[:16]


def _text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def instrument(log: dict) -> None:
    """Record, without changing what they do, what the wrapper is asked (``generate_until``), what reaches the vision
    preprocessing (``process_vision_info``, looked up in the wrapper's module at call time) and what reaches
    ``generate``. ``--model qwen2_5_vl`` is the class lmms-eval's registry gives (0.7.3: the chat one, which reads the
    task's ``doc_to_messages``; older: the simple one, ``doc_to_visual`` + JPEG data URLs); both are watched. The
    reference for each request is the task's own ``doc_to_visual`` and ``doc_to_text``. Batches are of one request
    (batch_size=1), so the three records stay in step."""
    import torch
    from lmms_eval.models import get_model
    from PIL import Image

    wrapper = get_model("qwen2_5_vl")
    module = sys.modules[wrapper.__module__]
    log.update(wrapper=f"{wrapper.__module__}.{wrapper.__qualname__}")
    requests, seen = log.setdefault("requests", []), log.setdefault("processor", [])
    generate_until = wrapper.generate_until
    process_vision_info = module.process_vision_info
    model_class = sys.modules["lmms_eval.models.simple.qwen2_5_vl"].Qwen2_5_VLForConditionalGeneration
    generate = model_class.generate

    def recorded_generate_until(self, reqs):
        for req in reqs:
            chat = callable(
                req.args[1]
            )  # (ctx, doc_to_messages, gen_kwargs, ...) vs (ctx, gen_kwargs, doc_to_visual, ...)
            context, gen_kwargs = req.args[0], req.args[2 if chat else 1]
            doc_id, task_name, split = req.args[3:6]
            task = (req.args[1] if chat else req.args[2]).__self__
            doc = self.task_dict[task_name][split][doc_id]
            images = [v for v in task.doc_to_visual(doc) or [] if isinstance(v, Image.Image)]
            encode = getattr(self, "_encode_image_data_url", None)
            requests.append(
                {
                    "task": task_name,
                    "doc_id": doc_id,
                    "context": context,
                    "text": task.doc_to_text(doc),
                    "max_new_tokens": gen_kwargs.get("max_new_tokens"),
                    "images": [_pixels(im) for im in images],
                    "image_urls": [_text(encode(im)) for im in images] if encode else [],
                    "sizes": [list(im.size) for im in images],
                }
            )
        return generate_until(self, reqs)

    def recorded_process_vision_info(conversations, *args, **kwargs):
        out = process_vision_info(conversations, *args, **kwargs)
        fetched = iter(out[0] or [])
        for conv in conversations:
            parts = [p for turn in conv if isinstance(turn["content"], list) for p in turn["content"]]
            pictures = [p["image"] for p in parts if p.get("type") == "image"]
            seen.append(
                {
                    "roles": [turn["role"] for turn in conv],
                    "text": "".join(p["text"] for p in parts if p.get("type") == "text"),
                    "images": [_pixels(x) if isinstance(x, Image.Image) else _text(x) for x in pictures],
                    "image_kind": sorted({"pixels" if isinstance(x, Image.Image) else "url" for x in pictures}),
                    "image_kwargs": [
                        {k: v for k, v in p.items() if k.endswith("pixels")} for p in parts if p.get("type") == "image"
                    ],
                    "fetched_sizes": [list(next(fetched).size) for _ in pictures],
                }
            )
        return out

    def recorded_generate(self, *args, **kwargs):
        grid = kwargs.get("image_grid_thw")
        if seen:
            seen[-1]["grid_thw"] = grid.tolist() if isinstance(grid, torch.Tensor) else []
            seen[-1]["max_new_tokens"] = kwargs.get("max_new_tokens")
            seen[-1]["do_sample"] = kwargs.get("do_sample")
        return generate(self, *args, **kwargs)

    wrapper.generate_until = recorded_generate_until
    module.process_vision_info = recorded_process_vision_info
    model_class.generate = recorded_generate


def check_plumbing(requests: list[dict], seen: list[dict], min_pixels: int, max_pixels: int) -> list[str]:
    """Problems between what the tasks asked and what reached the processor and the model; [] when none."""
    from hanyi.metrics.bbox import qwen25_chat_input_size

    if not requests:
        return ["no request reached the wrapper's generate_until (not watched?)"]
    problems = []
    if len(requests) != len(seen):
        problems.append(f"{len(requests)} request(s) but {len(seen)} reached process_vision_info")
    url = any("url" in s["image_kind"] for s in seen)
    asked = sorted((r["text"], r["image_urls"] if url else r["images"]) for r in requests)
    got = sorted((s["text"], s["images"]) for s in seen)
    if asked != got:
        problems.append(
            f"prompts or images changed on the way to the processor, e.g. {[a for a in asked if a not in got][:1]}"
        )
    if any(not r["images"] for r in requests):
        problems.append("a request carries no image")
    by_key = {(r["text"], tuple(r["image_urls"] if url else r["images"])): r for r in requests}
    resized = 0
    for s in seen:
        r = by_key.get((s["text"], tuple(s["images"])))
        grid = [[w * 14, h * 14] for _, h, w in s.get("grid_thw") or []]
        if r and r["task"] == "cvlue_vg_abs":
            resized += grid != [list(qwen25_chat_input_size(w, h, min_pixels, max_pixels)) for w, h in r["sizes"]]
    if resized:
        problems.append(f"cvlue_vg_abs: {resized} picture(s) seen at another size than the one its boxes map back from")
    if sorted(r["max_new_tokens"] for r in requests) != sorted(s.get("max_new_tokens") for s in seen):
        problems.append("max_new_tokens did not reach generate")
    return problems


#: picture sizes (width, height) for the resize probe: in the wrapper's bounds, under min_pixels, over max_pixels
PROBE_SIZES = ((640, 480), (300, 200), (1920, 1080), (4032, 3024))


def resize_probe(ckpt: str, device: str, sizes=PROBE_SIZES) -> list[dict]:
    """The size the model is given for a W x H picture, through the wrapper's own image path (no generation): the
    wrapper built as ``--model qwen2_5_vl`` builds it, lmms-eval's ``ChatMessages.to_hf_messages`` as its chat class
    calls it, ``process_vision_info`` from its module, then its processor. Beside it, what
    :func:`hanyi.metrics.bbox.qwen25_chat_input_size` (the map ``cvlue_vg_abs`` uses) says."""
    from lmms_eval.models import get_model
    from lmms_eval.protocol import ChatMessages
    from PIL import Image

    from hanyi.metrics.bbox import qwen25_chat_input_size

    wrapper = get_model("qwen2_5_vl")(pretrained=ckpt, device=device, device_map=device)
    process_vision_info = sys.modules[type(wrapper).__module__].process_vision_info
    video_kwargs = {"max_pixels": wrapper.max_pixels, "min_pixels": wrapper.min_pixels}
    out = []
    for w, h in sizes:
        image = Image.new("RGB", (w, h), (120, 60, 30))
        chat = ChatMessages(
            messages=[{"role": "user", "content": [{"type": "image", "url": image}, {"type": "text", "text": "?"}]}]
        )
        messages = [chat.to_hf_messages(video_kwargs=video_kwargs)]
        images = process_vision_info(messages, return_video_kwargs=True, return_video_metadata=True)[0]
        text = wrapper.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        _, gh, gw = wrapper.processor(text=text, images=images, return_tensors="pt")["image_grid_thw"][0].tolist()
        out.append(
            {
                "size": [w, h],
                "fetched": list(images[0].size),
                "model_input": [gw * 14, gh * 14],
                "maps_from": list(qwen25_chat_input_size(w, h, wrapper.min_pixels, wrapper.max_pixels)),
            }
        )
    del wrapper
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("--groups", default="punrebus,cvlue,cii,unpie,vulca")
    ap.add_argument("--quick", action="store_true", help="one task per group (QUICK_TASKS) instead of the groups")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--out", default="", help="folder for the checkpoint (default: a temporary one)")
    ap.add_argument("--json", default="", help="write the results and recorded requests here")
    args = ap.parse_args()
    missing = [m for m in ("torchvision", "qwen_vl_utils", "decord") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"FAIL  cannot run lmms-eval's qwen2_5_vl here: {', '.join(missing)} not installed (make venv-tv)")
        return 2
    import torch
    import torchvision
    from lmms_eval import evaluator
    from lmms_eval.tasks import TaskManager

    import hanyi
    from hanyi.metrics.bbox import QWEN25_MAX_PIXELS, QWEN25_MIN_PIXELS
    from hanyi.models.tiny_qwen2_5_vl import build_tiny_qwen2_5_vl

    t0 = time.perf_counter()
    ckpt = build_tiny_qwen2_5_vl(args.out or os.path.join(tempfile.mkdtemp(), "tiny_qwen2_5_vl"))
    tm = TaskManager("ERROR", include_path=hanyi.TASKS_DIR, include_defaults=False)
    report = {"torch": torch.__version__, "torchvision": torchvision.__version__, "device": args.device, "groups": {}}
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, device {args.device}, limit {args.limit}")
    report["resize_probe"] = resize_probe(ckpt, args.device)
    for p in report["resize_probe"]:
        same = p["model_input"] == p["maps_from"]
        print(f"{'same' if same else 'DIFF'}  {p['size'][0]}x{p['size'][1]}: the model sees {p['model_input'][0]}x"
              f"{p['model_input'][1]} (qwen_vl_utils gave {p['fetched'][0]}x{p['fetched'][1]}); cvlue_vg_abs maps "
              f"from {p['maps_from'][0]}x{p['maps_from'][1]}")  # fmt: skip
    log: dict = {}
    instrument(log)
    failed = 0
    for group in filter(None, args.groups.split(",")):
        tasks = (QUICK_TASKS if args.quick else GROUP_TASKS).get(group, [group])
        log["requests"].clear()
        log["processor"].clear()
        t = time.perf_counter()
        try:
            res = evaluator.simple_evaluate(
                model="qwen2_5_vl",
                model_args=f"pretrained={ckpt},device={args.device},device_map={args.device}",
                tasks=tasks,
                task_manager=tm,
                limit=args.limit,
                gen_kwargs=f"max_new_tokens={args.max_new_tokens}",
                log_samples=True,
                bootstrap_iters=0,
            )
        except Exception as exc:  # noqa: BLE001 - one line per group: what broke
            print(f"FAIL  {group}: {type(exc).__name__}: {str(exc)[:300]}")
            report["groups"][group] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
            failed += 1
            continue
        seconds = time.perf_counter() - t
        samples = res.get("samples", {}) if res else {}
        n = {task: len(s) for task, s in samples.items()}
        broken = sum(FAILED_MARKER in str(r) for s in samples.values() for x in s for r in x.get("resps", []))
        metrics = {
            task: {k: v for k, v in r.items() if "," in k and "stderr" not in k and isinstance(v, (int, float))}
            for task, r in res["results"].items()
        }
        # the wrapper's default min_pixels / max_pixels (256 and 2048 merged patches of 28 px), as cvlue_vg_abs assumes
        problems = check_plumbing(log["requests"], log["processor"], QWEN25_MIN_PIXELS, QWEN25_MAX_PIXELS)
        if broken:
            problems.append(f"{broken} answer(s) are lmms-eval failure markers")
        if not n or not all(v > 0 for v in n.values()):
            problems.append(f"a task scored no docs: {n}")
        if not any(metrics.values()):
            problems.append("no metric came out")
        ok = not problems
        print(f"{'PASS' if ok else 'FAIL'}  {group}: {n} docs scored in {seconds:.1f} s; "
              f"{len(log['requests'])} requests, {sum(map(len, (r['images'] for r in log['requests'])))} images; "
              f"metrics {sorted(k for m in metrics.values() for k in m)[:6]}{'; ' + '; '.join(problems) if problems else ''}")  # fmt: skip
        report["groups"][group] = {
            "ok": ok,
            "problems": problems,
            "seconds": round(seconds, 1),
            "docs": n,
            "metrics": metrics,
            "answers": {task: [x["resps"] for x in s] for task, s in samples.items()},
            # lmms-eval's own log of each request: [context, generation settings, doc_id, task, split]
            "inputs": {task: [(x.get("arguments") or [None])[0] for x in s] for task, s in samples.items()},
            "wrapper": log["wrapper"],
            "requests": list(log["requests"]),
            "processor": list(log["processor"]),
        }
        failed += not ok
    report["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=1, default=str)
    print(f"{'PASS' if not failed else 'FAIL'}  {len(report['groups']) - failed}/{len(report['groups'])} groups, "
          f"{report['seconds']} s")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
