"""The served path's hooks without the HTTP client: thread CPU per doc of each hook, in lmms-eval's chat call order.

    .venv/bin/python benchmarks/hook_cost.py [--only unpie_grounding,chartqa] [--scale 0.25] [--rounds 5]

benchmarks/served_cost.py measures the task hooks inside a real ``async_openai`` run, where the client's own work
(ten times any task's) makes every figure noisy on a shared machine. This script loads the same synthetic data and
tasks (one process, every case loaded once) and calls the hooks as lmms-eval 0.7.3's chat path does: first every
doc's ``doc_to_text`` (``build_all_requests``: the request's context, ``ctx``), then per doc ``doc_to_visual``,
``doc_to_text`` again (the messages, ``prompt``) and the client's ``to_openai_messages`` (``encode``), and after
generation ``process_results`` (``score``, here with the fake server's answer). Each doc is read anew from the
dataset for every call, as lmms-eval does, and a task's prompt cache is emptied before each round (a served run is a
fresh process). Rounds interleave the cases; the figure is the cheapest round. Thread CPU as served_cost.py counts it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]  # as full_scale.py: no shadowing
COLUMNS = ("visual", "ctx", "prompt", "encode", "score")
#: the tasks' prompt caches, emptied before each round: a served run renders each distinct prompt once per process
PROMPT_CACHES = (("hanyi.tasks._common", "_render_key"), ("hanyi.tasks.cvlue.prompts", "prompt"),
                 ("hanyi.tasks.punrebus.utils", "_prompt"))  # fmt: skip


def _served_cost():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hanyi_bench_served_cost", os.path.join(HERE, "served_cost.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _task(sc, case: str, path: str):
    """The case's lmms-eval task object, loaded by name as served_cost.py's child loads it."""
    import lmms_eval.tasks
    from lmms_eval.tasks import get_task_dict

    import hanyi

    fs = sc.full_scale()
    include, names = [hanyi.TASKS_DIR], fs.case_tasks(case, {case: path})
    if isinstance(names[0], dict):  # a built-in: a YAML that includes its own file, with the synthetic data's path
        folder, name = tempfile.mkdtemp(prefix="hanyi-hook-cost-"), names[0]["task"]
        own = os.path.join(fs.builtin_folder(case), f"{name.replace('-', '_')}.yaml")
        with open(os.path.join(folder, f"{name}.yaml"), "w") as f:
            json.dump({"include": own, "task": name, "dataset_path": path}, f)
        include, names = [folder], [name]
    os.environ.update(fs.case_env(case, {case: path}))
    tm = lmms_eval.tasks.TaskManager("ERROR", include_path=include, include_defaults=False)
    found = get_task_dict(names, tm, task_type="chat")
    while isinstance(found, dict):
        found = next(iter(found.values()))
    return found


def one_round(task, answer: str) -> dict:
    """Thread CPU seconds per column over every doc of ``task``, in lmms-eval's chat call order."""
    import lmms_eval.protocol as protocol

    for module, name in PROMPT_CACHES:
        cached = getattr(sys.modules.get(module), name, None)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
    docs, clock, spent = task.test_docs(), time.thread_time, dict.fromkeys(COLUMNS, 0.0)
    video = {"max_pixels": None, "min_pixels": None, "nframes": 8}
    for i in range(len(docs)):
        doc = docs[i]
        t = clock()
        task.doc_to_text(doc)
        spent["ctx"] += clock() - t
    for i in range(len(docs)):
        doc = docs[i]
        t = clock()
        visuals = task.doc_to_visual(doc)
        t1 = clock()
        text = task.doc_to_text(doc)
        t2 = clock()
        spent["visual"], spent["prompt"] = spent["visual"] + t1 - t, spent["prompt"] + t2 - t1
        messages = protocol.ChatMessages(messages=task._build_user_turn(visuals or [], text))
        t = clock()
        messages.to_openai_messages(video)
        spent["encode"] += clock() - t
    for i in range(len(docs)):
        doc = docs[i]
        t = clock()
        task.process_results(doc, [answer])
        spent["score"] += clock() - t
    return {"docs": len(docs), **spent}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="cvlue_vqa,chartqa,unpie_grounding", help="comma-separated served_cost cases")
    ap.add_argument("--scale", type=float, default=0.25, help="fraction of the base sizes (served_cost.py's x1)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    sc = _served_cost()
    fs = sc.full_scale()
    from hanyi.data.build_samples import build_full, full_root

    root = full_root()
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(root, "hf-cache")
    base = {c: n for _, (_, _, sizes) in fs.SLOPES.items() for c, n in sizes.items()} | sc.CLOSER_BASE
    tasks = {}
    for case in filter(None, args.only.split(",")):
        n = max(1, round(base[case] * args.scale))
        if case in sc.CLOSER_BASE:
            path = sc.build_closer(root, case, n)
        elif case in fs.BUILTIN_TASK:
            path = fs.build_builtin_one(root, case, n)
        else:
            path = build_full((fs.case_bench(case),), root, {fs.case_bench(case): n})[fs.case_bench(case)]
        tasks[case] = _task(sc, case, path)
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for case, task in tasks.items():
            r = one_round(task, sc.ANSWER)
            per_doc = {k: 1e6 * r[k] / r["docs"] for k in COLUMNS}
            best[case] = {k: min(best.get(case, per_doc)[k], v) for k, v in per_doc.items()} | {"docs": r["docs"]}
    print(f"{'case':<20}{'docs':>7}" + "".join(f"{c:>9}" for c in COLUMNS) + f"{'hooks':>9}{'no-enc':>9}")
    for case, b in best.items():
        hooks = sum(b[c] for c in COLUMNS)
        print(f"{case:<20}{b['docs']:>7}" + "".join(f"{b[c]:>9.1f}" for c in COLUMNS)
              + f"{hooks:>9.1f}{hooks - b['encode']:>9.1f}")  # fmt: skip
    print(f"(us per doc, cheapest of {args.rounds} interleaved rounds; ctx + prompt: the two doc_to_text calls a served "
          "doc costs; hooks: served_cost.py's sum; no-enc: without the client's image encoding)")  # fmt: skip
    for case, target in sc.TARGET.items():
        for other in filter(None, (target, sc.CLOSER.get(case))):
            if case in best and other in best:
                a, b = (sum(best[c][k] for k in COLUMNS) for c in (case, other))
                print(f"info  {case} / {other}: {a / b:.2f} (served_cost.py's target is at most 1.10 on its own run)")


if __name__ == "__main__":
    main()
