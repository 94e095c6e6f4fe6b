"""What stays live per doc on the served path: Python allocations (tracemalloc) when the last doc is scored.

    .venv/bin/python benchmarks/served_memory.py [--only punrebus_matching,mmstar_jpeg] [--sizes 100,400] [--top 6]

benchmarks/served_cost.py judges peak RSS growth per doc, which also counts what is not a Python object (Arrow
buffers, the allocator's free lists, pages of the data files read). This script says what of it is objects kept per
doc, and whose: each case runs as served_cost.py's child (``async_openai`` at concurrency 64 against a local server
answering at once) under tracemalloc, which takes a snapshot when every doc is scored, as lmms-eval starts the
aggregations (every request, answer and logged item is live then). Printed per case: the live Python memory per extra doc between the
two sizes, and the source lines that grew most. tracemalloc slows every allocation: no CPU figure here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]  # as full_scale.py: no shadowing
PAIRS = ("punrebus_matching", "mmstar_jpeg", "cii", "ii_bench", "cvlue_vqa", "chartqa", "unpie_grounding")


def served_cost():
    name = "hanyi_bench_served_cost"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "served_cost.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def child(case: str, data_file: str, out: str, base_url: str) -> None:
    import tracemalloc

    import lmms_eval.evaluator_utils as eu

    with open(data_file) as f:
        data = json.load(f)
    original = eu.TaskOutput.calculate_aggregate_metric

    def calculate_aggregate_metric(self, *a, **k):
        if not os.path.exists(out + ".snap"):
            tracemalloc.take_snapshot().dump(out + ".snap")
        return original(self, *a, **k)

    eu.TaskOutput.calculate_aggregate_metric = calculate_aggregate_metric
    tracemalloc.start(1)
    args = argparse.Namespace(child=case, data=json.dumps(data), out=out, base_url=base_url, concurrency=64)
    served_cost().child(args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(PAIRS))
    ap.add_argument("--sizes", default="100,400", help="two sizes, in rows")
    ap.add_argument("--top", type=int, default=6, help="source lines shown per case")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    import tracemalloc

    sc = served_cost()
    fs = sc.full_scale()
    from hanyi.data.build_samples import build_full, full_root

    root, work = full_root(), tempfile.mkdtemp(prefix="hanyi-served-memory-")
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(root, "hf-cache")
    small, large = sorted(int(s) for s in args.sizes.split(","))
    server, base_url = sc.start_server(work)
    try:
        for case in filter(None, args.only.split(",")):
            snaps, docs = [], []
            for n in (small, large):
                name, bench = f"{case}@{n}", fs.case_bench(case) if case not in fs.BUILTIN_TASK else None
                data = {
                    name: fs.build_builtin_one(root, case, n)
                    if bench is None
                    else build_full((bench,), root, {bench: n})[bench]
                }
                data_file, out = os.path.join(work, f"{name}.json"), os.path.join(work, name)
                with open(data_file, "w") as f:
                    json.dump(data, f)
                env = {"OMP_NUM_THREADS": "1", **os.environ, **fs.case_env(name, data)}
                cmd = [
                    sys.executable,
                    os.path.abspath(__file__),
                    "--child",
                    name,
                    data_file,
                    out,
                    base_url,
                ]
                proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
                if proc.returncode != 0 or not os.path.exists(out + ".snap"):
                    print(f"{case}@{n}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}")
                    break
                with open(out) as f:
                    docs.append(json.load(f)["docs"])  # docs scored (CVLUE-VQA: three questions a picture)
                snaps.append(tracemalloc.Snapshot.load(out + ".snap"))
            if len(snaps) != 2:
                continue
            extra = docs[1] - docs[0]
            grown = sum(s.size for s in snaps[1].statistics("filename")) - sum(
                s.size for s in snaps[0].statistics("filename")
            )
            print(f"{case}: {grown / extra / 1024:.2f} KB live per extra doc ({docs[0]} -> {docs[1]} docs)")
            for stat in snaps[1].compare_to(snaps[0], "lineno")[: args.top]:
                frame = stat.traceback[0]
                where = frame.filename.split("site-packages/")[-1].split(os.path.dirname(HERE) + "/")[-1]
                print(f"  {stat.size_diff / extra:8.0f} B/doc  {where}:{frame.lineno}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
