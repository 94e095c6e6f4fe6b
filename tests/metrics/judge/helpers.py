"""What the judge tests share: the fake OpenAI-compatible judge (tests/judge_server.py, loaded once under the name
tests/conftest.py also uses) and the client configuration and parsing the tests judge with."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hanyi.metrics.judge import JudgeConfig, parse_integer_score

REPO_ROOT = Path(__file__).resolve().parents[3]


def _load_judge_server():
    name = "hanyi_tests_judge_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tests" / "judge_server.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


judge_server = _load_judge_server()


def score_1_to_5(text: str) -> int | None:
    return parse_integer_score(text, 1, 5)


def expected_score(prompt: str) -> int:
    return score_1_to_5(judge_server.default_answer([{"role": "user", "content": prompt}]))


def make_config(base_url: str, cache_dir: Path, **overrides) -> JudgeConfig:
    options = dict(concurrency=4, max_retries=10, backoff_base_s=0.005, backoff_max_s=0.05, timeout_s=10.0)
    options.update(overrides)
    return JudgeConfig(base_url=base_url, model="fake-judge", cache_dir=str(cache_dir), **options)


def cache_files(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.rglob("*.json") if not p.name.startswith(".tmp-"))
