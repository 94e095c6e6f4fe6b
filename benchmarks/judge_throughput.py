"""A judged task end to end against the fake judge: docs/s of scoring, against N x latency / concurrency.

Runs ``unpie_reconstruction_text_de`` (both splits, text only; every non-empty answer judged) on synthetic UNPIE data
at ``--size`` puns through ``lmms_eval.evaluator.simple_evaluate`` with the ``replay`` model and lmms-eval's default
``--process_docs_parallel 4``, against ``tests/judge_server.py`` answering each request after ``--delay-ms`` (200).
Each mode starts from an empty judge cache:

* ``ahead``: as the task runs (its response filter announces every judge request; tasks/_ahead.py);
* ``per-doc``: the filter's ahead step off, so each doc asks the judge in ``process_results`` (the 0.x behaviour:
  at most ``--process_docs_parallel`` requests in flight);
* ``no-judge``: no judge configured: the task's own scoring (BLEU, METEOR), the time a judge adds nothing to.

It prints, per mode, the scoring time (filters + ``process_results``), docs/s, the judge's requests and most in
flight, and the bound ``N x latency / concurrency`` (the time N requests take at the judge's concurrency), then the
judge line that ``benchmarks/full_scale.py`` prints too: PASS when scoring with the judge takes at most the scoring
without it plus 1.25 x the bound::

    .venv/bin/python benchmarks/judge_throughput.py [--size 500] [--delay-ms 200] [--concurrency 16]
        [--workers 4] [--modes ahead,per-doc,no-judge]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
TASK = "unpie_reconstruction_text_de"


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_mode(mode: str, args, replay: str, fake, task_manager) -> dict:
    import lmms_eval.api.task as api_task
    import lmms_eval.evaluator as ev

    from hanyi.models.replay import ReplayModel
    from hanyi.tasks import _ahead
    from hanyi.tasks._common import ValidUtf8Responses

    spent = [0.0]

    def timed(owner, attr):
        orig = getattr(owner, attr)

        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t

        setattr(owner, attr, wrapper)
        return orig

    originals = [(api_task.ConfigurableTask, "apply_filters", timed(api_task.ConfigurableTask, "apply_filters"))]
    originals.append((ev, "_thread_map_ordered", timed(ev, "_thread_map_ordered")))
    originals.append((_ahead.ScoreAhead, "apply", _ahead.ScoreAhead.apply))
    if mode == "per-doc":
        _ahead.ScoreAhead.apply = ValidUtf8Responses.apply
    try:
        with (
            tempfile.TemporaryDirectory(prefix="hanyi-judge-bench-") as cache,
            fake.serve_fake_judge(
                delay_s=args.delay_ms / 1000,
                answer=lambda messages: ("Yes", "No")[len(str(messages[-1]["content"])) % 2],
            ) as judge,
        ):
            os.environ.update(
                HANYI_JUDGE_BASE_URL=judge.base_url,
                HANYI_JUDGE_MODEL="fake-judge",
                HANYI_JUDGE_CONCURRENCY=str(args.concurrency),
                HANYI_JUDGE_CACHE_DIR=cache,
            )
            if mode == "no-judge":
                for var in ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL"):
                    os.environ.pop(var)
            res = ev.simple_evaluate(
                model=ReplayModel(path=replay),
                tasks=[TASK],
                task_manager=task_manager,
                bootstrap_iters=0,
                log_samples=False,
                verbosity="ERROR",
                process_docs_parallel=args.workers,
            )
            requests, in_flight = judge.total_requests, judge.max_in_flight
    finally:
        for owner, attr, orig in originals:
            setattr(owner, attr, orig)
    docs = res["n-samples"][TASK]["effective"]
    return {
        "docs": docs,
        "scoring_s": spent[0],
        "requests": requests,
        "in_flight": in_flight,
        "score": res["results"][TASK].get("correct_custom_judge,none"),
    }


def measure(args) -> dict:
    """Each of ``args.modes`` run once (see the module docstring): ``{mode: figures}``."""
    import lmms_eval.tasks

    import hanyi
    from hanyi.data.build_samples import build_full, full_root

    full_scale = _load("hanyi_bench_full_scale", os.path.join(HERE, "full_scale.py"))
    fake = _load("hanyi_bench_judge_server", os.path.join(REPO_ROOT, "tests", "judge_server.py"))
    saved = dict(os.environ)
    data = build_full(("unpie",), full_root(), {"unpie": args.size})["unpie"]
    os.environ["HANYI_UNPIE_DATA"] = data
    os.environ.setdefault("LMMS_EVAL_DATASETS_CACHE", os.path.join(full_root(), "hf-cache"))
    try:
        task_manager = lmms_eval.tasks.TaskManager("ERROR", include_path=[hanyi.TASKS_DIR], include_defaults=False)
        replay = os.path.join(tempfile.mkdtemp(prefix="hanyi-judge-throughput-"), "replay.jsonl")
        full_scale.write_replay(replay, lmms_eval.tasks.get_task_dict([TASK], task_manager), seed=0, right=0.6)
        return {mode: run_mode(mode, args, replay, fake, task_manager) for mode in args.modes.split(",")}
    finally:
        os.environ.clear()
        os.environ.update(saved)


def judge_line(args, runs: dict) -> tuple[bool, str] | None:
    """PASS/FAIL text: scoring with the judge (ahead) within the scoring without it + 1.25 x N x latency / concurrency."""
    if "ahead" not in runs or "no-judge" not in runs:
        return None
    ahead, base = runs["ahead"], runs["no-judge"]
    bound = ahead["requests"] * args.delay_ms / 1000 / args.concurrency
    extra = ahead["scoring_s"] - base["scoring_s"]
    return extra <= 1.25 * bound, (
        f"judge: {TASK} ({ahead['docs']} docs) scored in {ahead['scoring_s']:.1f} s with a {args.delay_ms:g} ms judge, "
        f"{base['scoring_s']:.1f} s without: +{extra:.1f} s for {ahead['requests']} requests vs N x latency / "
        f"concurrency {args.concurrency} = {bound:.1f} s ({extra / max(bound, 1e-9):.2f}x; target <= 1.25x; at most "
        f"{ahead['in_flight']} in flight with --process_docs_parallel {args.workers})"
    )


def add_arguments(parser) -> None:
    parser.add_argument("--size", type=int, default=500, help="UNPIE puns (the paper's: 500)")
    parser.add_argument("--delay-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=16, help="HANYI_JUDGE_CONCURRENCY")
    parser.add_argument("--workers", type=int, default=4, help="lmms-eval --process_docs_parallel (default 4)")
    parser.add_argument("--modes", default="ahead,per-doc,no-judge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()
    print(
        f"{TASK} on {args.size} UNPIE puns; fake judge {args.delay_ms:g} ms per request; HANYI_JUDGE_CONCURRENCY "
        f"{args.concurrency}; --process_docs_parallel {args.workers}; load {os.getloadavg()[0]:.2f}"
    )
    runs = measure(args)
    for mode, r in runs.items():
        bound = r["requests"] * args.delay_ms / 1000 / args.concurrency
        print(
            f"{mode:>8}: {r['docs']} docs scored in {r['scoring_s']:.1f} s = {r['docs'] / r['scoring_s']:.1f} docs/s; "
            f"{r['requests']} judge requests, at most {r['in_flight']} in flight; N x latency / concurrency = "
            f"{bound:.1f} s"
            + (f" ({r['scoring_s'] / bound:.2f}x of it)" if bound else "")
            + f"; correct_custom_judge {r['score']}"
        )
    line = judge_line(args, runs)
    if line:
        print(f"{'PASS' if line[0] else 'FAIL'}  {line[1]}")


if __name__ == "__main__":
    main()
