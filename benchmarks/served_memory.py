"""Memory per doc on the served path, resolved: the slope of peak RSS over three sizes and several rounds, beside the
slope of live Python memory (tracemalloc), each case of ours against its built-in.

    .venv/bin/python benchmarks/served_memory.py [--only cii,ii_bench] [--sizes 100,400,1600] [--rounds 3]
        [--parts rss,python] [--python-sizes 100,400] [--top 6] [--baseline DIR] [--json FILE]

Every run is benchmarks/served_cost.py's child (lmms-eval's ``async_openai`` client at concurrency 64 against a local
server answering at once, synthetic docs in the released schemas), in a fresh process. ``--sizes`` are numbers of
docs (CVLUE-VQA: a third as many pictures, three questions each; UNPIE grounding: twice as many, two meanings a
pun); the default spans x16.

``--baseline DIR``: each case of ours also runs from another copy of the code (``git archive <commit> | tar -x -C
DIR``; the children import hanyi from there), interleaved with the others in every round and printed as
``<case>@base``: a before/after comparison under the same load.

``rss`` (the rule): each run resets its peak (``/proc/self/clear_refs``) when the evaluation starts, after the
imports, and reports the evaluation's peak RSS over the RSS it started from; the per-doc figure is the least-squares
slope of that growth over every run at every size, with its standard error from the scatter about the line and the
range of the per-round slopes. Rounds interleave ours and the built-ins at every size, as served_cost.py does. The
target of served_cost.py, "peak memory flat in the number of docs": ours at most 1.5 x the built-in's slope + 1 KB.
A verdict is printed as resolved only where the distance to that limit exceeds twice the combined standard error.
The whole process's peak (imports included), the figure served_cost.py read before, is printed beside it as info;
on this path it is the evaluation's (the imports never peak above the RSS they leave), but the start differs by up
to 1 MB between runs, which the growth over the start does not count.

``python`` (what the objects are): one run a size under tracemalloc, which takes a snapshot when every doc is scored
(lmms-eval starting the aggregations: every request, answer and logged item is live then); the slope of live Python
memory per doc and the source lines that grew most from the smallest size to the largest. tracemalloc slows every
allocation: no CPU figure here, and RSS under it is not comparable.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]  # as full_scale.py: no shadowing
#: ours -> the built-in it is judged against (served_cost.py's TARGET), in the order of the printed table
PAIRS = (("punrebus_matching", "mmstar_jpeg"), ("cii", "ii_bench"), ("cvlue_vqa", "chartqa"),
         ("unpie_grounding", "chartqa"))  # fmt: skip
#: docs per row of a case's builder, where that is not one (CVLUE-VQA: three questions a picture; UNPIE: two splits)
DOCS_PER_ROW = {"cvlue_vqa": 3, "unpie_grounding": 2}


def served_cost():
    name = "hanyi_bench_served_cost"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "served_cost.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


# --- children -------------------------------------------------------------------------------------------------------


def rss_child(case: str, data_file: str, out: str, base_url: str) -> None:
    """served_cost.py's child, with the peak reset when the evaluation starts; ``out + '.rss'`` gets the readings."""
    import lmms_eval.evaluator as ev
    import lmms_eval.evaluator_utils as eu

    with open(data_file) as f:
        data = json.load(f)
    readings: dict = {}
    evaluate, aggregate = ev.simple_evaluate, eu.TaskOutput.calculate_aggregate_metric

    sc = served_cost()
    rss_mb = sc._rss_mb

    def read_rss(field: str = "VmHWM") -> float:
        if field == "VmRSS":  # served_cost.py's child reads its start, then resets the peak itself
            readings.setdefault("imports_peak_mb", _status_mb("VmHWM"))
        return rss_mb(field)

    def simple_evaluate(*a, **k):
        gc.collect()
        readings.setdefault("imports_peak_mb", _status_mb("VmHWM"))
        readings["start_mb"] = _status_mb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux 4.0+): the peak of the evaluation alone
        try:
            return evaluate(*a, **k)
        finally:
            readings["peak_mb"] = _status_mb("VmHWM")

    def calculate_aggregate_metric(self, *a, **k):
        readings.setdefault("scored_mb", _status_mb("VmRSS"))  # every doc scored, nothing aggregated yet
        readings.setdefault("peak_to_scored_mb", _status_mb("VmHWM"))
        return aggregate(self, *a, **k)

    ev.simple_evaluate, eu.TaskOutput.calculate_aggregate_metric = simple_evaluate, calculate_aggregate_metric
    sc._rss_mb = read_rss
    args = argparse.Namespace(child=case, data=json.dumps(data), out=out, base_url=base_url, concurrency=64)
    sc.child(args)
    with open(out + ".rss", "w") as f:
        json.dump(readings, f)


def python_child(case: str, data_file: str, out: str, base_url: str) -> None:
    """served_cost.py's child under tracemalloc; ``out + '.snap'``: the snapshot when every doc is scored."""
    import tracemalloc

    import lmms_eval.evaluator_utils as eu

    with open(data_file) as f:
        data = json.load(f)
    original = eu.TaskOutput.calculate_aggregate_metric

    def calculate_aggregate_metric(self, *a, **k):
        if not os.path.exists(out + ".snap"):
            gc.collect()  # only what is reachable: a cycle not yet collected made two runs of the same code differ
            tracemalloc.take_snapshot().dump(out + ".snap")
        return original(self, *a, **k)

    eu.TaskOutput.calculate_aggregate_metric = calculate_aggregate_metric
    tracemalloc.start(1)
    args = argparse.Namespace(child=case, data=json.dumps(data), out=out, base_url=base_url, concurrency=64)
    served_cost().child(args)


# --- figures --------------------------------------------------------------------------------------------------------


def slope_se(points) -> tuple[float, float]:
    """Least-squares slope of ``points`` [(x, y), ...] and its standard error (NaN with fewer than three points).

    >>> slope_se([(100, 1.0), (200, 2.0), (400, 4.0)])
    (0.01, 0.0)
    """
    xs, ys = [float(x) for x, _ in points], [float(y) for _, y in points]
    if len(set(xs)) < 2:
        raise ValueError("a slope needs runs at two sizes at least")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    if len(xs) < 3:
        return round(slope, 12), math.nan
    rss = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return round(slope, 12), round(math.sqrt(rss / (len(xs) - 2) / sxx), 12)


def base(case: str) -> str:
    """The case a (possibly ``@base``) label runs: ``cii@base`` -> ``cii``."""
    return case.split("@")[0]


def rss_figures(runs: list) -> dict:
    """KB per doc: the evaluation's peak growth (slope, standard error, per-round range), the whole process's peak and
    the RSS when every doc is scored, from ``runs`` [{docs, round, start_mb, peak_mb, ...}, ...]."""
    kb = 1024

    def fit(value):
        return slope_se([(r["docs"], value(r)) for r in runs])

    slope, se = fit(lambda r: r["peak_mb"] - r["start_mb"])
    per_round = []
    for rnd in sorted({r["round"] for r in runs}):
        pts = [(r["docs"], r["peak_mb"] - r["start_mb"]) for r in runs if r["round"] == rnd]
        if len({x for x, _ in pts}) >= 2:
            per_round.append(kb * slope_se(pts)[0])
    whole = fit(lambda r: max(r["peak_mb"], r["imports_peak_mb"]))[0]
    scored = fit(lambda r: r["scored_mb"] - r["start_mb"])[0]
    return {
        "kb_per_doc": kb * slope,
        "se": kb * se,
        "rounds": per_round,
        "whole_peak_kb_per_doc": kb * whole,
        "scored_kb_per_doc": kb * scored,
        "sizes": sorted({r["docs"] for r in runs}),
        "peak_growth_mb": max(r["peak_mb"] - r["start_mb"] for r in runs),
    }


def verdict(ours: dict, builtin: dict, factor: float = 1.5, allowance_kb: float = 1.0) -> tuple[str, float, str]:
    """(PASS/FAIL, limit, resolved or not) of ``ours`` against ``factor`` x ``builtin`` + ``allowance_kb``.

    >>> verdict({"kb_per_doc": 3.0, "se": 0.2}, {"kb_per_doc": 2.0, "se": 0.2})
    ('PASS', 4.0, 'resolved')
    >>> verdict({"kb_per_doc": 4.2, "se": 0.5}, {"kb_per_doc": 2.0, "se": 0.2})[::2]
    ('FAIL', 'not resolved')
    """
    limit = factor * max(builtin["kb_per_doc"], 0.0) + allowance_kb
    noise = math.hypot(ours["se"], factor * builtin["se"])
    if math.isnan(noise):
        resolved = "no spread: three points or more needed"
    else:
        resolved = "resolved" if abs(limit - ours["kb_per_doc"]) > 2 * noise else "not resolved"
    return ("PASS" if ours["kb_per_doc"] <= limit else "FAIL"), limit, resolved


# --- driver ---------------------------------------------------------------------------------------------------------


class Runner:
    """Builds each case's data once per size and runs the children against one fake server."""

    def __init__(self, work: str, base_url: str, baseline: str | None = None):
        self.work, self.base_url, self.baseline = work, base_url, baseline
        self.fs = served_cost().full_scale()

    def run(self, label: str, docs: int, kind: str, tag: str) -> dict | None:
        from hanyi.data.build_samples import build_full, full_root

        fs, root, case = self.fs, full_root(), base(label)
        n = max(1, round(docs / DOCS_PER_ROW.get(case, 1)))
        name = f"{case}@{n}"
        bench = fs.case_bench(case) if case not in fs.BUILTIN_TASK else None
        data = {
            name: fs.build_builtin_one(root, case, n)
            if bench is None
            else build_full((bench,), root, {bench: n})[bench]
        }
        where = "base" if label != case else "here"
        data_file = os.path.join(self.work, f"{name}.json")
        out = os.path.join(self.work, f"{name}.{where}.{kind}{tag}")
        with open(data_file, "w") as f:
            json.dump(data, f)
        env = {"OMP_NUM_THREADS": "1", **os.environ, **fs.case_env(name, data)}
        script = os.path.abspath(__file__)
        if label != case:  # the baseline's hanyi (and its served_cost.py child) first on the path
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (self.baseline, env.get("PYTHONPATH"))))
            script = os.path.join(self.baseline, "benchmarks", os.path.basename(__file__))
        cmd = [sys.executable, script, f"--{kind}-child", name, data_file, out, self.base_url]
        proc = subprocess.run(cmd, env=env, cwd=self.work, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            print(f"  {name}: FAILED (exit {proc.returncode})\n{proc.stderr[-2000:]}", flush=True)
            return None
        with open(out) as f:
            res = json.load(f)
        res["out"] = out
        if kind == "rss":
            with open(out + ".rss") as f:
                res.update(json.load(f))
        return res


def rss_part(runner: Runner, cases: list, sizes: list, rounds: int) -> dict:
    runs: dict[str, list] = {}
    for rnd in range(rounds):
        for docs in sizes:
            for case in cases:
                res = runner.run(case, docs, "rss", f".r{rnd}")
                if res is None:
                    continue
                res["round"] = rnd
                runs.setdefault(case, []).append(res)
                print(f"  round {rnd + 1}: {case:<20}{res['docs']:>7} docs  start {res['start_mb']:6.1f} MB  "
                      f"eval peak +{res['peak_mb'] - res['start_mb']:6.1f} MB  scored +"
                      f"{res['scored_mb'] - res['start_mb']:6.1f} MB  eval {res['evaluate_s']:5.1f} s", flush=True)  # fmt: skip
    return {case: {"figures": rss_figures(rs), "runs": rs} for case, rs in runs.items() if len(rs) >= 2}


def python_part(runner: Runner, cases: list, sizes: list, top: int) -> dict:
    import tracemalloc

    out = {}
    for case in cases:
        points, snaps = [], {}
        for docs in sizes:
            res = runner.run(case, docs, "python", "")
            if res is None or not os.path.exists(res["out"] + ".snap"):
                continue
            snap = tracemalloc.Snapshot.load(res["out"] + ".snap")
            points.append((res["docs"], sum(s.size for s in snap.statistics("filename"))))
            snaps[res["docs"]] = snap
        if len(points) < 2:
            continue
        slope, se = slope_se(points)
        lo, hi = min(snaps), max(snaps)
        lines = []
        for stat in snaps[hi].compare_to(snaps[lo], "lineno")[:top]:
            frame = stat.traceback[0]
            where = frame.filename.split("site-packages/")[-1].split(os.path.dirname(HERE) + "/")[-1]
            lines.append((stat.size_diff / (hi - lo), f"{where}:{frame.lineno}"))
        out[case] = {"kb_per_doc": slope / 1024, "se": se / 1024, "sizes": sorted(snaps), "lines": lines}
        spread = "" if math.isnan(se) else f" +-{se / 1024:.2f}"
        print(f"  {case}: {slope / 1024:.2f}{spread} KB live per doc ({', '.join(map(str, sorted(snaps)))} docs)")
        for size, where in lines:
            print(f"      {size:8.0f} B/doc  {where}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated cases (default: the four pairs)")
    ap.add_argument("--sizes", default="100,400,1600", help="docs per run, three sizes or more for a spread")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the rss part, ours and the built-ins interleaved")
    ap.add_argument("--parts", default="rss,python", help="rss (the rule), python (tracemalloc), or both")
    ap.add_argument("--python-sizes", default="100,400", help="docs per run of the python part (deterministic)")
    ap.add_argument("--top", type=int, default=6, help="source lines shown per case (python part)")
    ap.add_argument("--baseline", help="a copy of the code to run our cases from as well (before/after)")
    ap.add_argument("--json", help="write every reading and figure to this file")
    ap.add_argument("--rss-child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--python-child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        return rss_child(*args.rss_child)
    if args.python_child:
        return python_child(*args.python_child)

    sc = served_cost()
    from hanyi.data.build_samples import full_root

    only = set(filter(None, args.only.split(",")))
    cases = list(dict.fromkeys(c for pair in PAIRS for c in pair if not only or c in only))
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        cases = [x for c in cases for x in ((c, f"{c}@base") if c in dict(PAIRS) else (c,))]
    sizes = sorted(int(s) for s in args.sizes.split(","))
    parts = set(args.parts.split(","))
    work = tempfile.mkdtemp(prefix="hanyi-served-memory-")
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(full_root(), "hf-cache")
    server, base_url = sc.start_server(work)
    result: dict = {"sizes": sizes, "rounds": args.rounds}
    try:
        runner = Runner(work, base_url, args.baseline)
        if "rss" in parts:
            print(f"peak RSS of the evaluation, {args.rounds} round(s) at {sizes} docs, interleaved", flush=True)
            result["rss"] = rss_part(runner, cases, sizes, args.rounds)
        if "python" in parts:
            py_sizes = sorted(int(s) for s in args.python_sizes.split(","))
            print(f"\nlive Python memory when every doc is scored (tracemalloc), at {py_sizes} docs", flush=True)
            result["python"] = python_part(runner, cases, py_sizes, args.top)
    finally:
        server.terminate()
        server.wait()
    rss, py = result.get("rss", {}), result.get("python", {})
    if rss:
        print(f"\n{'case':<20}{'KB/doc':>8}{'+-se':>7}{'rounds':>16}{'scored':>8}{'whole':>8}{'python':>8}")
        for case in cases:
            if case in rss:
                f = rss[case]["figures"]
                rounds = "/".join(f"{x:.1f}" for x in f["rounds"])
                python = f"{py[case]['kb_per_doc']:8.2f}" if case in py else f"{'':>8}"
                print(f"{case:<20}{f['kb_per_doc']:8.2f}{f['se']:7.2f}{rounds:>16}{f['scored_kb_per_doc']:8.2f}"
                      f"{f['whole_peak_kb_per_doc']:8.2f}{python}")  # fmt: skip
        print("(KB per doc, slopes: KB/doc = the evaluation's peak RSS growth, +-se its standard error, rounds the "
              "per-round slopes; scored = RSS when every doc is scored; whole = the process's peak, imports included; "
              "python = live Python objects, tracemalloc)")  # fmt: skip
    print("\ntargets")
    for ours, builtin in [(x, b) for o, b in PAIRS for x in (o, f"{o}@base")]:
        if ours in rss and builtin in rss:
            a, b = rss[ours]["figures"], rss[builtin]["figures"]
            ok, limit, resolved = verdict(a, b)
            print(f"{ok}  {ours}: peak RSS {a['kb_per_doc']:.2f} +-{a['se']:.2f} KB per extra doc vs {builtin} "
                  f"{b['kb_per_doc']:.2f} +-{b['se']:.2f} (at most {limit:.2f}: flat in the number of docs; "
                  f"{resolved} at two standard errors)")  # fmt: skip
        if ours in py and builtin in py:
            a, b = py[ours], py[builtin]
            ok, limit, _ = verdict(a, b)
            print(f"info  {ours}: live Python {a['kb_per_doc']:.2f} KB per doc vs {builtin} {b['kb_per_doc']:.2f} "
                  f"(the same rule on objects: {ok}, at most {limit:.2f})")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=str)
        print(f"every reading: {args.json}")


if __name__ == "__main__":
    main()
