"""Per-doc harness overhead of a hanyi task vs lmms-eval's built-in ``ii_bench``, with the zero-cost replay model.

Both tasks are 6/7-way image MCQs with a custom letter parser. Both run in this one process, on synthetic local
datasets of the same size (``--docs``), through ``lmms_eval.evaluator.simple_evaluate`` with the same replay model (which calls ``doc_to_visual`` like a real model),
so the difference is what each task's YAML, prompt rendering, image handling and scoring cost per doc.

    .venv/bin/python benchmarks/per_doc_overhead.py [--docs 400] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")


def build_datasets(root: str, n: int) -> tuple[str, str]:
    """The bundled Pun Rebus sample repeated to ``n`` image docs, and ``n`` ii_bench docs with the same images."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset
    from hanyi.data.sources import SAMPLE_DIR

    sample = os.path.join(SAMPLE_DIR, "punrebus")
    images = datasets.load_dataset(sample, name="images", split="test")
    images = datasets.concatenate_datasets([images] * (n // len(images) + 1)).select(range(n))
    textonly = datasets.load_dataset(sample, name="textonly", split="test")
    pr = os.path.join(root, "punrebus")
    write_hub_dataset(pr, {"images": {"test": images}, "textonly": {"test": textonly}})
    ii_rows = [
        {
            "id": str(i),
            "image": images[i]["image"],
            "question": "这幅图的含义是什么？",
            "answers": "A",
            **{f"option{k}": f"选项{k}" for k in range(1, 7)},
        }
        for i in range(n)
    ]
    ii = os.path.join(root, "ii_bench")
    write_hub_dataset(ii, {"default": {"test": datasets.Dataset.from_list(ii_rows)}})
    return pr, ii


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hanyi-bench-")
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(tmp, "cache")
    pr_dir, ii_dir = build_datasets(tmp, args.docs)
    os.environ["HANYI_PUNREBUS_DATA"] = pr_dir

    t0 = time.perf_counter()
    import lmms_eval.tasks
    from lmms_eval import evaluator

    import hanyi
    from hanyi.models.replay import ReplayModel

    import_s = time.perf_counter() - t0
    ii_yaml_dir = os.path.join(os.path.dirname(lmms_eval.tasks.__file__), "ii_bench")
    tm = lmms_eval.tasks.TaskManager("ERROR", include_path=[hanyi.TASKS_DIR, ii_yaml_dir], include_defaults=False)
    replay_path = os.path.join(tmp, "replay.jsonl")
    with open(replay_path, "w") as f:
        for i in range(args.docs):
            f.write(json.dumps({"task": "punrebus_matching", "doc_id": i, "response": "C. Prestige"}) + "\n")
            f.write(json.dumps({"task": "ii-bench", "doc_id": i, "response": "(A) 选项1"}) + "\n")
    os.chdir(tmp)  # ii_bench writes its submission file under ./submissions
    # TaskManager pops "task" out of a dict entry, so each run gets a fresh list
    cases = {
        "hanyi punrebus_matching": lambda: ["punrebus_matching"],
        "lmms-eval ii_bench": lambda: [{"task": "ii-bench", "dataset_path": ii_dir}],
    }
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats + 1):  # the first round warms caches and is dropped
        for name, tasks in cases.items():
            t = time.perf_counter()
            evaluator.simple_evaluate(
                model=ReplayModel(path=replay_path, touch_visuals=True),
                tasks=tasks(),
                task_manager=tm,
                bootstrap_iters=0,
                log_samples=True,
                verbosity="ERROR",
            )
            timings[name].append(time.perf_counter() - t)
    print(f"docs per task: {args.docs}; repeats: {args.repeats} (after 1 warm-up); lmms-eval import: {import_s:.1f} s")
    print(f"{'task':<26} {'median wall (s)':>16} {'per doc (ms)':>13}")
    med = {}
    for name, ts in timings.items():
        med[name] = statistics.median(ts[1:])
        print(f"{name:<26} {med[name]:>16.3f} {1000 * med[name] / args.docs:>13.2f}")
    a, b = med["hanyi punrebus_matching"], med["lmms-eval ii_bench"]
    print(f"ratio hanyi / built-in: {a / b:.2f}")


if __name__ == "__main__":
    main()
