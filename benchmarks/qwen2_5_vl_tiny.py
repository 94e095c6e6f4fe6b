"""Every benchmark group through lmms-eval's own ``qwen2_5_vl`` on the tiny random Qwen2.5-VL (a machine with torchvision).

    python benchmarks/qwen2_5_vl_tiny.py [--device cuda] [--limit 4] [--groups punrebus,cvlue,cii,unpie,vulca]

Not runnable in this project's locked environment: ``qwen_vl_utils`` imports torchvision, and transformers 5's
Qwen2.5-VL processor needs its torchvision-backed video processor even for images (tests/test_tiny_qwen2_5_vl.py
pins both). On a machine with torch, torchvision (the build matching torch), qwen-vl-utils, decord and hanyi
installed, this builds the checkpoint (``hanyi.models.tiny_qwen2_5_vl``, no network), runs each group on the bundled
sample (``HANYI_DATA_ROOT=sample``) with ``--limit`` docs per task, and prints one PASS/FAIL line per group: it ran,
every task scored its docs, and no answer was an lmms-eval failure marker. CVLUE runs ``cvlue_vqa`` and
``cvlue_vg_abs`` (Qwen2.5-VL's absolute-pixel boxes), not the group's ``cvlue_vg`` ([0, 1] floats). ``qwen2_5_vl``
has no ``loglikelihood``: tasks of that type are left out. Answers of random weights are noise; the figures checked
are plumbing (images, prompts, generation settings, scoring), not quality.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HANYI_DATA_ROOT="sample")
#: group -> the generate_until tasks run for it (Qwen2.5-VL boxes: cvlue_vg_abs)
GROUP_TASKS = {"cvlue": ["cvlue_vqa", "cvlue_vg_abs"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("--groups", default="punrebus,cvlue,cii,unpie,vulca")
    ap.add_argument("--out", default="", help="folder for the checkpoint (default: a temporary one)")
    args = ap.parse_args()
    missing = [m for m in ("torchvision", "qwen_vl_utils", "decord") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"FAIL  cannot run lmms-eval's qwen2_5_vl here: {', '.join(missing)} not installed")
        return 2
    from lmms_eval import evaluator
    from lmms_eval.tasks import TaskManager

    import hanyi
    from hanyi.models.tiny_qwen2_5_vl import build_tiny_qwen2_5_vl

    ckpt = build_tiny_qwen2_5_vl(args.out or os.path.join(tempfile.mkdtemp(), "tiny_qwen2_5_vl"))
    tm = TaskManager("ERROR", include_path=hanyi.TASKS_DIR)
    failed = 0
    for group in filter(None, args.groups.split(",")):
        tasks = GROUP_TASKS.get(group, [group])
        t = time.perf_counter()
        try:
            res = evaluator.simple_evaluate(
                model="qwen2_5_vl",
                model_args=f"pretrained={ckpt},device={args.device},device_map={args.device},max_pixels=200704",
                tasks=tasks,
                task_manager=tm,
                limit=args.limit,
                gen_kwargs="max_new_tokens=16",
                log_samples=True,
                bootstrap_iters=0,
            )
        except Exception as exc:  # noqa: BLE001 - one line per group: what broke
            print(f"FAIL  {group}: {type(exc).__name__}: {str(exc)[:300]}")
            failed += 1
            continue
        samples = res.get("samples", {}) if res else {}
        n = {task: len(s) for task, s in samples.items()}
        broken = sum(
            "[LMMS_EVAL_REQUEST_FAILED" in str(r) for s in samples.values() for x in s for r in x.get("resps", [])
        )
        ok = bool(n) and all(v > 0 for v in n.values()) and not broken
        print(f"{'PASS' if ok else 'FAIL'}  {group}: {n} docs scored in {time.perf_counter() - t:.1f} s; "
              f"metrics {sorted(k for r in res['results'].values() for k in r if ',' in k)[:8]}")  # fmt: skip
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
