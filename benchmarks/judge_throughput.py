"""Judge client throughput: N judgements against the fake judge (fixed per-request delay), concurrency 1 vs 16.

Each run uses a fresh, empty cache, so every judgement is one HTTP call. Usage::

    .venv/bin/python benchmarks/judge_throughput.py [--n 200] [--delay-ms 50] [--concurrency 1 16]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from hanyi.metrics.judge import JudgeClient, JudgeConfig, parse_integer_score  # noqa: E402


def load_fake_judge():
    spec = importlib.util.spec_from_file_location("hanyi_bench_judge_server", REPO_ROOT / "tests" / "judge_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def judgements_per_second(base_url: str, n: int, concurrency: int) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory(prefix="hanyi-judge-bench-") as cache_dir:
        config = JudgeConfig(base_url=base_url, model="fake-judge", concurrency=concurrency, cache_dir=cache_dir)
        client = JudgeClient(config)
        prompts = [f"benchmark prompt {concurrency}-{i}" for i in range(n)]
        start = time.perf_counter()
        results = client.judge_many(prompts, lambda text: parse_integer_score(text, 1, 5))
        elapsed = time.perf_counter() - start
        client.close()
    assert all(r.error is None for r in results), "benchmark judgements failed"
    return n / elapsed, client.stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    args = parser.parse_args()

    fake = load_fake_judge()
    rates = {}
    with fake.serve_fake_judge(delay_s=args.delay_ms / 1000) as server:
        print(f"fake judge at {server.base_url}, {args.delay_ms:g} ms per request, {args.n} judgements per run")
        for concurrency in args.concurrency:
            rate, stats = judgements_per_second(server.base_url, args.n, concurrency)
            rates[concurrency] = rate
            print(f"concurrency {concurrency:>3}: {rate:8.1f} judgements/s  (HTTP calls {stats['calls_made']})")
    low, high = min(rates), max(rates)
    print(f"speed-up concurrency {high} vs {low}: {rates[high] / rates[low]:.1f}x")


if __name__ == "__main__":
    main()
