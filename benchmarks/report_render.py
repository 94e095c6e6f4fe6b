"""How long ``hanyi report`` takes on a 5-benchmark result set (target: < 5 s), against lmms-eval's own flat table.

Builds a synthetic lmms-eval 0.7.3 output dir with every (task, metric) our anchor maps name plus every category
metric our tasks' YAMLs declare, for N models (default 3), then times, in this process:

* ``lmms-eval``'s way: ``lmms_eval.utils.make_table`` on the same results (the flat table the CLI prints);
* ``hanyi report``: load + build + plots + write, total and per stage, with and without plots.

Usage: ``python benchmarks/report_render.py [--models 3] [--repeat 3] [--dir RESULTS_DIR]`` (``--dir`` times a real
output dir instead, e.g. the sample run of all five groups).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time


def synthetic_results(n_models: int, root: str) -> list[str]:
    import yaml

    from hanyi import TASKS_DIR
    from hanyi.results.anchors import ANCHORS_DIR

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: None)
    tasks: dict[str, set[str]] = {}
    for dirpath, _dirs, files in os.walk(TASKS_DIR):
        for name in files:
            if name.endswith(".yaml"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    cfg = yaml.load(f, Loader=Loader) or {}
                if isinstance(cfg.get("task"), str) and cfg.get("metric_list"):
                    tasks[cfg["task"]] = {m["metric"] for m in cfg["metric_list"]}
    for name in os.listdir(ANCHORS_DIR):  # make sure every mapped metric is present
        if name.endswith(".yaml"):
            with open(os.path.join(ANCHORS_DIR, name), encoding="utf-8") as f:
                data = yaml.safe_load(f)
            for entry in data["map"]:
                keys = list((entry.get("columns") or {None: None}).keys())
                metrics = entry["metric"] if isinstance(entry["metric"], list) else [entry["metric"]]
                for key in keys:
                    task = entry["task"].replace("{}", key or "").rstrip("*")
                    tasks.setdefault(task, set()).add(metrics[0].replace("{}", key or ""))
    rng = random.Random(0)
    dirs = []
    for i in range(n_models):
        results = {t: {"alias": t, **{f"{m},none": rng.random() for m in sorted(ms)}} for t, ms in tasks.items()}
        d = os.path.join(root, f"model{i}")
        os.makedirs(d)
        data = {
            "results": results,
            "group_subtasks": {t: [] for t in results},
            "configs": {},
            "versions": {t: 1.0 for t in results},
            "higher_is_better": {t: {m: True for m in ms} for t, ms in tasks.items()},
            "n-samples": {t: {"original": 100, "effective": 100} for t in results},
            "config": {"model": "replay", "model_args": f"pretrained=org/model-{i}"},
            "model_name": f"org/model-{i}",
            "date": "20250101_000000",
        }
        with open(os.path.join(d, "20250101_000000_results.json"), "w", encoding="utf-8") as f:
            json.dump(data, f)
        dirs.append(d)
    return dirs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=None, help="time a real lmms-eval output dir instead of the synthetic set")
    args = parser.parse_args()

    from hanyi.report import make_report

    with tempfile.TemporaryDirectory() as tmp:
        paths = [args.dir] if args.dir else synthetic_results(args.models, tmp)
        n_tasks = sum(
            len(json.load(open(f))["results"])
            for p in paths
            for f in __import__("glob").glob(os.path.join(p, "**", "*_results.json"), recursive=True)
        )
        print(f"input: {len(paths)} dir(s), {n_tasks} task results in all")

        t0 = time.perf_counter()
        from lmms_eval.utils import make_table

        t_import = time.perf_counter() - t0
        flat = []
        for p in paths:
            for f in __import__("glob").glob(os.path.join(p, "**", "*_results.json"), recursive=True):
                data = json.load(open(f))
                data.setdefault("n-shot", {t: 0 for t in data["results"]})
                t = time.perf_counter()
                make_table(data)
                flat.append(time.perf_counter() - t)
        print(
            f"lmms-eval make_table (flat table, official way): {sum(flat):.3f} s for {len(flat)} file(s) (+ {t_import:.1f} s lmms-eval import)"
        )

        for plots in (True, False):
            totals, stages = [], []
            for r in range(args.repeat):
                out = os.path.join(tmp, f"rep-{plots}-{r}")
                t = time.perf_counter()
                written = make_report(paths, out, plots=plots)
                totals.append(time.perf_counter() - t)
                stages.append(written["timings"])
            n_plots = len(written["plots"])
            stage = {k: statistics.median(s[k] for s in stages) for k in stages[0]}
            print(
                f"hanyi report ({'with' if plots else 'without'} plots): median {statistics.median(totals):.3f} s, "
                f"max {max(totals):.3f} s over {args.repeat} runs; {n_plots} plots, "
                f"{len(written['benchmarks'])} benchmarks; stages: "
                + ", ".join(f"{k} {v:.3f}" for k, v in stage.items())
            )
            html_size = os.path.getsize(written["html"]) / 1e6
            print(
                f"  html {html_size:.2f} MB (self-contained), markdown {os.path.getsize(written['markdown']) / 1e3:.0f} kB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
