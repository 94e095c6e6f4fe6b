"""hanyi's own work per request when the model is served: lmms-eval's ``async_openai`` client at concurrency 64.

    .venv/bin/python benchmarks/served_cost.py [--only cii,mmstar] [--scale 1.0] [--sizes 1,4] [--repeat 2]
        [--concurrency 64] [--budget-ms 1.5] [--ratio 1.10]

A local OpenAI-compatible server (tests/judge_server.py, in its own process so that its CPU is not counted) answers
every request at once. Each case runs in a fresh child process through ``lmms_eval.evaluator.simple_evaluate`` with
``async_openai`` (``num_cpus`` = the concurrency) on synthetic docs in the released schemas (the builders
benchmarks/full_scale.py uses), at ``--sizes`` x its base size (x1: CII's 800 questions; x4: CVLUE's 7,169 images,
three questions each), ``--repeat`` rounds, ours and the built-ins interleaved.

What is measured, per doc, as thread CPU time inside the task's own hooks (lmms-eval calls them from the client's
event loop and its scoring threads): ``visual`` (``doc_to_visual``), ``prompt`` (``doc_to_text``), ``encode`` (the
client's base64 encoding of the images the task hands it: ``ChatMessages.to_openai_messages``) and ``score``
(``process_results``, lmms-eval's wrapper included). The HTTP client's own work (openai, httpx) is the same for every
task and is not the task's cost; it is printed as info (``client``: the rest of the evaluation's CPU).

The per-doc figure is the marginal one: the least-squares slope of hook CPU seconds against docs over the cheapest
run at each size (noise on a shared machine only adds). Targets (PASS/FAIL lines), each of ours against the
built-in image task it is paired with (``TARGET``: full_scale.py's slope pairs, the same kind of work and image
codec; CII against ``ii_bench`` on CII-Bench's own rows):
at most ``--ratio`` x the built-in's per-doc cost, within ``--budget-ms`` per doc, and peak memory flat in the number
of docs (the child's peak RSS growth from the smallest to the largest size, per extra doc, at most 1.5 x the
built-in's + 1 KB).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]  # as full_scale.py: no shadowing
OURS = ("cii", "punrebus_matching", "cvlue_vqa", "unpie_grounding")
#: the built-in each of ours is judged against: full_scale.py's slope pairs, except CII, judged against ii_bench on
#: CII-Bench's own rows (the same pictures to encode and the same fields; mmstar's pictures differ)
TARGET = {"cii": "ii_bench", "punrebus_matching": "mmstar_jpeg", "cvlue_vqa": "chartqa", "unpie_grounding": "chartqa"}
#: built-ins measured beside a target to check the pairing (info lines, not judged): lmms-eval's ocrbench is the closest
#: to UNPIE grounding (one picture, a short question, a free-text answer matched as a string, an evidence item per
#: doc), where chartqa's relaxed match logs a number; built here (build_closer), at CLOSER_BASE docs at scale 1
CLOSER = {"unpie_grounding": "ocrbench"}
CLOSER_BASE = {"ocrbench": 1000}  # UNPIE grounding's 500 puns at scale 1 are 1,000 docs (both splits)
HOOKS = ("visual", "prompt", "encode", "score")
#: the fixed answer of the fake server: a letter reads as a choice for the MCQs and as a wrong short answer
ANSWER = "B"


def full_scale():
    """benchmarks/full_scale.py, loaded by path: its data builders, case names and like-for-like pairs."""
    name = "hanyi_bench_full_scale"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "full_scale.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        module.BUILTIN_TASK.update({case: case for case in CLOSER_BASE})  # their data: build_closer
    return sys.modules[name]


def build_closer(root: str, case: str, n: int) -> str:
    """``n`` synthetic rows of a :data:`CLOSER` built-in in its released schema (echo840/OCRBench: ``dataset``,
    ``question``, ``question_type``, ``answer`` a list of strings, ``image``), hub layout, built once under ``root``,
    the pictures drawn as full_scale.py's builders draw theirs."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset
    from hanyi.data.images import synthetic_image

    path = os.path.join(root, f"{case}-{n}")
    if not os.path.exists(os.path.join(path, ".done")):
        kinds = ("Regular Text Recognition", "Scene Text-centric VQA", "Doc-oriented VQA", "Key Information Extraction")
        rows = [
            {"dataset": ("IIIT5K", "textVQA", "docVQA", "FUNSD")[i % 4], "question": f"What is written here? ({i})",
             "question_type": kinds[i % 4], "answer": [f"word {i}"], "image": synthetic_image(f"{case}-{i}")}
            for i in range(n)
        ]  # fmt: skip
        write_hub_dataset(path, {"default": {"test": datasets.Dataset.from_list(rows)}})
        open(os.path.join(path, ".done"), "w").close()
    return path


def _rss_mb(field: str = "VmHWM") -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


# --- the fake server, in its own process ----------------------------------------------------------------------------


def serve(port_file: str) -> None:
    spec = importlib.util.spec_from_file_location("judge_server", os.path.join(HERE, "..", "tests", "judge_server.py"))
    js = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(js)
    server = js.FakeJudgeServer(answer=lambda messages: ANSWER)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


def start_server(workdir: str):
    port_file = os.path.join(workdir, "server.port")
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", port_file])
    for _ in range(300):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return proc, f"http://127.0.0.1:{f.read()}/v1"
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the fake server did not start")


# --- one measured run (child process) ------------------------------------------------------------------------------


class _HookClock:
    """Thread CPU seconds spent inside each hook; an inner call of the same hook is not counted twice."""

    def __init__(self):
        self.s = dict.fromkeys(HOOKS, 0.0)
        self.calls = dict.fromkeys(HOOKS, 0)
        self.lock = threading.Lock()
        self.depth = threading.local()

    def wrap(self, owner, attr: str, hook: str) -> None:
        orig = getattr(owner, attr)
        clock = self

        def timed(*a, **k):
            if getattr(clock.depth, hook, 0):
                return orig(*a, **k)
            setattr(clock.depth, hook, 1)
            t = time.thread_time()
            try:
                return orig(*a, **k)
            finally:
                dt = time.thread_time() - t
                setattr(clock.depth, hook, 0)
                with clock.lock:
                    clock.s[hook] += dt
                    clock.calls[hook] += 1

        setattr(owner, attr, timed)


def child(args) -> None:
    fs = full_scale()
    data = json.loads(args.data)
    import lmms_eval.api.task as api_task
    import lmms_eval.evaluator as ev
    import lmms_eval.protocol as protocol
    import lmms_eval.tasks
    from lmms_eval.models.chat.async_openai import AsyncOpenAIChat

    import hanyi

    tasks = fs.case_tasks(args.child, data)
    include = [hanyi.TASKS_DIR]
    if isinstance(tasks[0], dict):
        # lmms-eval 0.7.3 loads a task given as a dict config as a simple task even for a chat model (the client then
        # gets no messages): a YAML that includes the built-in's own file, with the synthetic data's path, is loaded
        # by name like ours
        folder = os.path.join(os.path.dirname(args.out), f"tasks-{args.child.replace('@', '-')}")
        os.makedirs(folder, exist_ok=True)
        name = tasks[0]["task"]
        own = os.path.join(fs.builtin_folder(args.child), f"{name.replace('-', '_')}.yaml")
        with open(os.path.join(folder, f"{name}.yaml"), "w") as f:
            json.dump({"include": own, "task": name, "dataset_path": tasks[0]["dataset_path"]}, f)  # JSON is YAML
        include, tasks = [folder], [name]
    tm = lmms_eval.tasks.TaskManager("ERROR", include_path=include, include_defaults=False)
    clock = _HookClock()
    clock.wrap(api_task.ConfigurableTask, "doc_to_visual", "visual")
    clock.wrap(api_task.ConfigurableTask, "doc_to_text", "prompt")
    clock.wrap(api_task.ConfigurableTask, "process_results", "score")
    clock.wrap(protocol.ChatMessages, "to_openai_messages", "encode")
    model = AsyncOpenAIChat(
        model_version="fake", base_url=args.base_url, api_key="not-a-key", num_cpus=args.concurrency, max_retries=1
    )
    rss_start = _rss_mb("VmRSS")
    try:  # the evaluation's own peak, read over the RSS it started from: runs start 1 MB apart (served_memory.py)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # Linux 4.0+: VmHWM back to the current RSS
    except OSError:
        pass
    t, cpu = time.perf_counter(), time.process_time()
    res = ev.simple_evaluate(
        model=model,
        tasks=tasks,
        task_manager=tm,
        bootstrap_iters=0,
        log_samples=False,
        verbosity="ERROR",
    )
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    docs = sum(v.get("effective", v.get("original", 0)) for v in res.get("n-samples", {}).values())
    out = {
        "case": args.child,
        "docs": docs,
        "hooks_s": clock.s,
        "calls": clock.calls,
        "evaluate_s": wall,
        "evaluate_cpu_s": cpu,
        "rss_start_mb": rss_start,
        "rss_peak_mb": _rss_mb(),
    }
    with open(args.out, "w") as f:
        json.dump(out, f)


def same_counts(ours, builtin, tolerance: float = 0.01) -> bool:
    """Whether two runs' doc counts match (within 1 %): a memory slope depends on its range (the growth per extra doc
    is larger between more docs), so two slopes are compared only over the same counts.

    >>> same_counts([5376, 21507], [5377, 21507]), same_counts([1000, 4000], [5377, 21507])
    (True, False)
    """
    return len(ours) == len(builtin) and all(abs(x - y) <= tolerance * max(y, 1) for x, y in zip(ours, builtin))


def run_case(case: str, data: dict, workdir: str, base_url: str, concurrency: int) -> dict | None:
    fs = full_scale()
    out = os.path.join(workdir, f"{case}.served.json")
    env = {"OMP_NUM_THREADS": "1", **os.environ, **fs.case_env(case, data)}
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case, "--data", json.dumps(data), "--out", out,
           "--base-url", base_url, "--concurrency", str(concurrency)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.exists(out):
        print(f"  {case}: FAILED (exit {proc.returncode})\n{proc.stderr[-3000:]}")
        return None
    with open(out) as f:
        return json.load(f)


# --- figures -------------------------------------------------------------------------------------------------------


def per_doc(runs: list) -> dict:
    """Marginal per-doc cost in ms (slope over the cheapest run at each size), per hook and in all, and the peak RSS
    growth per extra doc in KB from the smallest to the largest size (the evaluation's peak over the RSS it started
    from, lowest at each size)."""
    fs = full_scale()
    out = {}
    for key in (*HOOKS, "hooks", "client"):
        cheapest: dict[int, float] = {}
        for r in runs:
            hooks = sum(r["hooks_s"].values())
            value = {"hooks": hooks, "client": r["evaluate_cpu_s"] - hooks}.get(key, r["hooks_s"].get(key, 0.0))
            cheapest[r["docs"]] = min(cheapest.get(r["docs"], float("inf")), value)
        out[key] = 1000 * fs.least_squares(sorted(cheapest.items()))[0]
    rss: dict[int, float] = {}
    for r in runs:
        rss[r["docs"]] = min(rss.get(r["docs"], float("inf")), r["rss_peak_mb"] - r["rss_start_mb"])
    lo, hi = min(rss), max(rss)
    out["rss_kb_per_doc"] = 1024 * (rss[hi] - rss[lo]) / (hi - lo)
    out["rss_peak_mb"] = min(r["rss_peak_mb"] for r in runs if r["docs"] == hi)
    out["sizes"] = sorted(rss)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated cases (default: ours and their built-ins)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the base sizes")
    ap.add_argument("--sizes", default="1,4", help="multiples of each case's base size (two at least)")
    ap.add_argument("--repeat", type=int, default=2, help="rounds, every case at every size, interleaved")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--budget-ms", type=float, default=1.5, help="hanyi's own work per doc, at most (ms)")
    ap.add_argument("--ratio", type=float, default=1.10, help="ours / built-in per-doc cost, at most")
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--base-url", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        return serve(args.serve)
    if args.child:
        return child(args)

    fs = full_scale()
    from hanyi.data.build_samples import build_full, full_root

    base = {c: n for _, (_, _, sizes) in fs.SLOPES.items() for c, n in sizes.items()} | CLOSER_BASE
    only = set(filter(None, args.only.split(",")))
    ours = [c for c in OURS if not only or c in only]
    builtins = list(dict.fromkeys([*(TARGET[c] for c in OURS), *(CLOSER[c] for c in OURS if c in CLOSER)]))
    builtins = [b for b in builtins if not only or b in only]
    scales = sorted({float(x) * args.scale for x in args.sizes.split(",")})
    if len(scales) < 2:
        ap.error("--sizes needs two sizes at least")
    root = full_root()
    data, cases = {}, []
    for k in scales:
        for case in (*ours, *builtins):
            n = max(1, round(base[case] * k))
            name = f"{case}@{n}"
            if case in CLOSER_BASE:
                data[name] = build_closer(root, case, n)
            elif case in fs.BUILTIN_TASK:
                data[name] = fs.build_builtin_one(root, case, n)
            else:
                bench = fs.case_bench(case)
                data[name] = build_full((bench,), root, {bench: n})[bench]
            cases.append((name, case))
    workdir = tempfile.mkdtemp(prefix="hanyi-served-cost-")
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(root, "hf-cache")
    server, base_url = start_server(workdir)
    print(f"async_openai at concurrency {args.concurrency} against a local server answering {ANSWER!r} at once")
    print("figures from a shared 2-core machine: noisy; thread CPU inside each hook, cheapest run per size")
    runs: dict[str, list] = {}
    try:
        for rnd in range(max(1, args.repeat)):
            for name, case in cases:
                res = run_case(name, data, workdir, base_url, args.concurrency)
                if res is None:
                    continue
                runs.setdefault(case, []).append(res)
                hooks = 1000 * sum(res["hooks_s"].values()) / max(res["docs"], 1)
                print(f"  round {rnd + 1}: {name:<26}{res['docs']:>7} docs  eval {res['evaluate_s']:6.2f} s  "
                      f"hooks {hooks:.3f} ms/doc  peak RSS {res['rss_peak_mb']:.0f} MB", flush=True)  # fmt: skip
    finally:
        server.terminate()
        server.wait()
    figures = {}
    for case, rs in runs.items():
        try:
            figures[case] = per_doc(rs)
        except ValueError:
            print(f"  {case}: runs at fewer than two sizes")
    print(f"\n{'case':<20}{'sizes':>12}" + "".join(f"{h:>9}" for h in HOOKS) + f"{'hooks':>9}{'client':>9}"
          f"{'KB/doc':>8}{'peakMB':>8}")  # fmt: skip
    for case, f in figures.items():
        print(f"{case:<20}{'/'.join(map(str, f['sizes'])):>12}" + "".join(f"{f[h]:>9.3f}" for h in HOOKS)
              + f"{f['hooks']:>9.3f}{f['client']:>9.3f}{f['rss_kb_per_doc']:>8.2f}{f['rss_peak_mb']:>8.0f}")  # fmt: skip
    print("(ms per doc, marginal: visual, prompt, encode, score = the task's hooks; client = the rest of the run's CPU, "
          "the HTTP client's and lmms-eval's; KB/doc: peak RSS growth per extra doc)")  # fmt: skip
    print("\ntargets")
    for case in ours:
        target = TARGET[case]
        if case not in figures or target not in figures:
            continue
        a, b = figures[case], figures[target]
        ratio = a["hooks"] / b["hooks"] if b["hooks"] > 0 else float("inf")
        ok = "PASS" if ratio <= args.ratio else "FAIL"
        print(f"{ok}  {case} / {target}: {a['hooks']:.3f} / {b['hooks']:.3f} ms per doc = {ratio:.2f} "
              f"(at most {args.ratio:.2f})")  # fmt: skip
        own = (a["hooks"] - a["encode"]) / max(b["hooks"] - b["encode"], 1e-9)
        print(f"info  {case} / {target} without the client's image encoding: {own:.2f} (encoding {a['encode']:.3f} / "
              f"{b['encode']:.3f} ms: the pictures' PNG, whose content the builders decide)")  # fmt: skip
        closer = figures.get(CLOSER.get(case))
        if closer:
            print(f"info  {case} / {CLOSER[case]} (the closest built-in): {a['hooks']:.3f} / {closer['hooks']:.3f} ms "
                  f"per doc = {a['hooks'] / closer['hooks']:.2f}; {CLOSER[case]} / {target} "
                  f"{closer['hooks'] / b['hooks']:.2f}")  # fmt: skip
        ok = "PASS" if a["hooks"] <= args.budget_ms else "FAIL"
        print(f"{ok}  {case}: {a['hooks']:.3f} ms of hanyi's own work per doc (budget {args.budget_ms} ms)")
        limit = 1.5 * max(b["rss_kb_per_doc"], 0.0) + 1.0
        ok = ("PASS" if a["rss_kb_per_doc"] <= limit else "FAIL") if same_counts(a["sizes"], b["sizes"]) else "info"
        print(f"{ok}  {case}: peak RSS {a['rss_kb_per_doc']:.2f} KB per extra doc vs {target} "
              f"{b['rss_kb_per_doc']:.2f} (at most {limit:.2f}: flat in the number of docs; two sizes, one reading "
              f"each: benchmarks/served_memory.py gives the slope over three sizes with its spread"
              + ("" if ok != "info" else f"; no verdict: {'/'.join(map(str, a['sizes']))} docs against "
                 f"{'/'.join(map(str, b['sizes']))}, and the growth per doc depends on the range") + ")")  # fmt: skip
    with open(os.path.join(workdir, "served_cost.json"), "w") as f:
        json.dump({"runs": runs, "figures": figures}, f, indent=1)
    print(f"raw figures: {os.path.join(workdir, 'served_cost.json')}")


if __name__ == "__main__":
    main()
