"""Tests of hanyi.metrics.judge against the fake OpenAI-compatible server in tests/judge_server.py."""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hanyi.metrics.judge import (
    JudgeClient,
    JudgeConfig,
    JudgeResult,
    get_judge_client,
    parse_integer_score,
    parse_yes_no,
    summarize_judgements,
    warn_judge_disabled,
)

from .helpers import REPO_ROOT, cache_files, expected_score, judge_server, make_config, score_1_to_5

# A child process that judges N prompts; optionally waits for a start signal so two children overlap.
CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from hanyi.metrics.judge import JudgeClient, JudgeConfig, parse_integer_score
    base_url, cache_dir, n, concurrency, barrier = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    if barrier != "-":
        open(barrier + ".ready-" + str(os.getpid()), "w").close()
        while not os.path.exists(barrier + ".go"):
            time.sleep(0.005)
    config = JudgeConfig(base_url=base_url, model="fake-judge", cache_dir=cache_dir, concurrency=concurrency,
                         max_retries=10, backoff_base_s=0.005, backoff_max_s=0.05)
    client = JudgeClient(config)
    results = client.judge_many([f"prompt {i}" for i in range(n)], lambda t: parse_integer_score(t, 1, 5))
    print(json.dumps({"values": [r.value for r in results], "errors": [r.error for r in results], "stats": client.stats}))
    """
)


def spawn_child(base_url: str, cache_dir: Path, n: int, concurrency: int, barrier: str = "-") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    args = [sys.executable, "-c", CHILD, base_url, str(cache_dir), str(n), str(concurrency), barrier]
    return subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# --- client behaviour --------------------------------------------------------------------------------------------


def test_injected_failures_30_percent_every_judgement_still_completes(fake_judge, tmp_path):
    fake_judge.configure(failure_rate=0.3, seed=1234)
    prompts = [f"item {i}" for i in range(100)]
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, concurrency=8))

    results = client.judge_many(prompts, score_1_to_5)

    assert [r.error for r in results] == [None] * 100
    assert [r.value for r in results] == [expected_score(p) for p in prompts]
    failed = fake_judge.status_counts[429] + fake_judge.status_counts[500]
    assert failed > 10  # the failures really happened ...
    assert client.stats["retries"] == failed  # ... and each one was retried
    assert client.stats["calls_made"] == fake_judge.total_requests == 100 + failed
    assert client.stats["failures"] == 0


def test_rerun_with_warm_cache_makes_zero_http_calls(fake_judge, tmp_path):
    prompts = [f"cached {i}" for i in range(20)]
    first = JudgeClient(make_config(fake_judge.base_url, tmp_path)).judge_many(prompts, score_1_to_5)
    assert fake_judge.total_requests == 20 and not any(r.cached for r in first)

    fake_judge.reset_counters()
    fresh_client = JudgeClient(make_config(fake_judge.base_url, tmp_path))
    second = fresh_client.judge_many(prompts, score_1_to_5)

    assert fake_judge.total_requests == 0
    assert all(r.cached for r in second)
    assert [r.value for r in second] == [r.value for r in first]
    assert fresh_client.stats == {"calls_made": 0, "cache_hits": 20, "retries": 0, "failures": 0, "parse_failures": 0}


def test_cache_key_depends_on_model_system_and_max_tokens(fake_judge, tmp_path):
    config = make_config(fake_judge.base_url, tmp_path)
    JudgeClient(config).judge_many(["same prompt"], score_1_to_5)
    JudgeClient(config).judge_many(["same prompt"], score_1_to_5, system="You are a strict judge.")
    JudgeClient(make_config(fake_judge.base_url, tmp_path, max_tokens=64)).judge_many(["same prompt"], score_1_to_5)
    other_model = JudgeConfig(base_url=fake_judge.base_url, model="other", cache_dir=str(tmp_path))
    JudgeClient(other_model).judge_many(["same prompt"], score_1_to_5)
    assert fake_judge.total_requests == 4
    assert len(cache_files(tmp_path)) == 4


def _wait_until_quiet(server, quiet_s: float = 0.3, timeout_s: float = 5.0) -> None:
    """Return once the server has received no new request for ``quiet_s`` (its delay is 40 ms)."""
    last, since, deadline = server.total_requests, time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
        time.sleep(0.02)
        if server.total_requests != last:
            last, since = server.total_requests, time.monotonic()


def test_kill_midway_then_resume_reuses_every_finished_judgement(tmp_path):
    # 150 judgements x 40 ms / 2 workers = 3 s of work: a loaded machine still sees 10 finish long before the end
    n, concurrency = 150, 2
    with judge_server.serve_fake_judge(delay_s=0.04) as server:
        child = spawn_child(server.base_url, tmp_path, n, concurrency)
        deadline = time.monotonic() + 30
        while len(cache_files(tmp_path)) < 10 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.01)
        child.kill()
        child.communicate()
        _wait_until_quiet(server)  # requests the child sent just before dying may still be arriving
        finished = len(cache_files(tmp_path))
        calls_before_kill = server.total_requests
        assert 10 <= finished < n, "the child was not killed halfway"
        # requests in flight at the kill were sent but never cached: at most one per worker
        assert finished <= calls_before_kill <= finished + concurrency

        server.reset_counters()
        client = JudgeClient(make_config(server.base_url, tmp_path, concurrency=concurrency))
        prompts = [f"prompt {i}" for i in range(n)]
        results = client.judge_many(prompts, score_1_to_5)

        assert [r.value for r in results] == [expected_score(p) for p in prompts]
        assert sum(r.cached for r in results) == finished == client.stats["cache_hits"]
        assert server.total_requests == n - finished
        assert calls_before_kill + server.total_requests <= n + concurrency


def test_two_processes_writing_one_cache_at_once(tmp_path):
    cache_dir, barrier, n = tmp_path / "cache", str(tmp_path / "barrier"), 40
    with judge_server.serve_fake_judge(delay_s=0.05) as server:
        children = [spawn_child(server.base_url, cache_dir, n, 4, barrier) for _ in range(2)]
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("barrier.ready-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        Path(barrier + ".go").touch()
        outputs = [child.communicate(timeout=60) for child in children]
        assert [child.returncode for child in children] == [0, 0], [err for _, err in outputs]
        assert server.max_in_flight > 4  # both processes were sending at the same time
        expected = [expected_score(f"prompt {i}") for i in range(n)]
        for stdout, _ in outputs:
            report = json.loads(stdout)
            assert report["values"] == expected and report["errors"] == [None] * n

        files = cache_files(cache_dir)
        assert len(files) == n
        assert not [p for p in cache_dir.rglob(".tmp-*")]
        for path in files:
            record = json.loads(path.read_text(encoding="utf-8"))
            assert record["key"] == path.stem and score_1_to_5(record["raw"]) is not None

        server.reset_counters()
        JudgeClient(make_config(server.base_url, cache_dir)).judge_many([f"prompt {i}" for i in range(n)], score_1_to_5)
        assert server.total_requests == 0


def test_concurrency_bound_holds_and_requests_really_overlap(tmp_path):
    with judge_server.serve_fake_judge(delay_s=0.1) as server:
        client = JudgeClient(make_config(server.base_url, tmp_path, concurrency=4))
        client.judge_many([f"c {i}" for i in range(16)], score_1_to_5)
        assert 2 <= server.max_in_flight <= 4

        # two threads sharing one client still respect the client's bound
        server.reset_counters()
        threads = [
            threading.Thread(target=client.judge_many, args=([f"t{t} {i}" for i in range(12)], score_1_to_5))
            for t in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert server.total_requests == 24
        assert 2 <= server.max_in_flight <= 4


def test_api_key_never_leaks_into_logs_results_or_cache(fake_judge, tmp_path, monkeypatch, caplog, capfd):
    secret = "sk-hanyi-test-" + secrets.token_hex(16)
    monkeypatch.setenv("HANYI_TEST_JUDGE_KEY", secret)
    caplog.set_level(logging.DEBUG)
    config = make_config(fake_judge.base_url, tmp_path, api_key_env="HANYI_TEST_JUDGE_KEY")
    client = JudgeClient(config)

    fake_judge.configure(failure_rate=0.3, echo_auth_in_errors=True, seed=7)
    ok = client.judge_many([f"k {i}" for i in range(30)], score_1_to_5)
    assert fake_judge.last_authorization == f"Bearer {secret}"  # the key really was sent
    fake_judge.configure(failure_rate=1.0, failure_statuses=(401,))
    unauthorized = client.judge_many(["k 401"], score_1_to_5)
    fake_judge.configure(failure_statuses=(429,))
    exhausted = client.judge_many(["k 429"], score_1_to_5)

    assert unauthorized[0].error.startswith("request_failed: HTTP 401") and "Bearer ***" in unauthorized[0].error
    assert exhausted[0].error == "request_failed: HTTP 429 (after 11 attempts)"
    captured = capfd.readouterr()
    haystacks = {
        "logs": caplog.text,
        "stdout/stderr": captured.out + captured.err,
        "results": repr(ok + unauthorized + exhausted),
        "config": repr(config) + str(config) + repr(client),
        "stats": repr(client.stats),
    }
    assert any("retrying" in record.getMessage() for record in caplog.records)  # DEBUG logs were captured
    for where, text in haystacks.items():
        assert secret not in text, f"API key leaked into {where}"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 30
    for path in files:
        assert secret.encode() not in path.read_bytes(), f"API key leaked into {path}"


def test_a_judge_down_asked_doc_by_doc_warns_once_per_client(tmp_path, caplog):
    """Tasks ask the judge per doc in process_results: a judge that is down must not log one warning per doc."""
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = JudgeClient(make_config(f"http://127.0.0.1:{port}/v1", tmp_path, max_retries=0))
    caplog.set_level(logging.DEBUG, logger="hanyi.judge")
    results = [client.judge_many([f"doc {i}"], score_1_to_5)[0] for i in range(15)]
    assert all(r.request_failed for r in results)
    warnings = [r.getMessage() for r in caplog.records if r.name == "hanyi.judge" and r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "further request failures are logged at debug level" in warnings[0]
    debug = [
        r
        for r in caplog.records
        if r.name == "hanyi.judge" and r.levelno == logging.DEBUG and "first error" in r.getMessage()
    ]
    assert len(debug) == 14  # every later failure is still on record


def test_judge_api_down_gives_request_failed_and_one_warning_without_credentials(tmp_path, caplog):
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://judgeuser:hunter2@127.0.0.1:{port}/v1"
    # the retry policy on its own: no circuit breaker (tests/metrics/test_judge_breaker.py has it)
    client = JudgeClient(make_config(base_url, tmp_path, max_retries=2, cooldown_s=0))
    caplog.set_level(logging.INFO, logger="hanyi.judge")

    results = client.judge_many([f"down {i}" for i in range(20)], score_1_to_5)

    assert all(r.value is None and r.error.startswith("request_failed: ConnectError") for r in results)
    assert all(r.error.endswith("(after 3 attempts)") for r in results)
    warnings = [r for r in caplog.records if r.name == "hanyi.judge" and r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "20 request failures" in message and f"http://127.0.0.1:{port}/v1/chat/completions" in message
    assert "hunter2" not in caplog.text and "hunter2" not in repr(results) and "judgeuser" not in message
    assert client.stats["failures"] == 20 and client.stats["calls_made"] == 60
    assert cache_files(tmp_path) == []  # failures are not cached
    assert summarize_judgements(results)["n_request_failures"] == 20


def test_client_error_status_is_not_retried(fake_judge, tmp_path):
    fake_judge.configure(failure_rate=1.0, failure_statuses=(400,))
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path))
    results = client.judge_many(["bad request"], score_1_to_5)
    assert results[0].error.startswith("request_failed: HTTP 400")
    assert fake_judge.total_requests == 1 and client.stats["retries"] == 0


def test_parse_failures_are_counted_never_raised_never_zero(fake_judge, tmp_path):
    def answer(messages):
        content = messages[-1]["content"]
        return judge_server.GARBAGE_ANSWER if "garbage" in content else ("BOOM" if "boom" in content else "Score: 3")

    def fragile_parse(text):
        if text == "BOOM":
            raise RuntimeError("parser bug")
        return score_1_to_5(text)

    fake_judge.configure(answer=answer)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path))
    prompts = ["fine 1", "garbage 1", "fine 2", "boom 1", "garbage 2", "fine 3"]

    results = client.judge_many(prompts, fragile_parse)

    assert [r.value for r in results] == [3, None, 3, None, None, 3]
    assert [r.error for r in results] == [None, "parse_failure", None, "parse_failure", "parse_failure", None]
    assert results[1].raw == judge_server.GARBAGE_ANSWER  # the evidence is kept
    assert client.stats["parse_failures"] == 3
    summary = summarize_judgements(results)
    assert summary == {"mean": 3.0, "n": 6, "n_scored": 3, "n_parse_failures": 3, "n_request_failures": 0}


def test_results_keep_input_order_and_duplicates_share_one_call(fake_judge, tmp_path):
    fake_judge.configure(delay_s=0.01)
    prompts = [f"order {i % 7}" for i in range(21)]
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, concurrency=8))
    results = client.judge_many(prompts, score_1_to_5)
    assert [r.value for r in results] == [expected_score(p) for p in prompts]
    assert fake_judge.total_requests == 7
    assert len({r.prompt_hash for r in results}) == 7


def test_message_list_prompts_and_system_prompt_are_sent(fake_judge, tmp_path):
    seen = []

    def answer(messages):
        seen.append(messages)
        return "yes"

    fake_judge.configure(answer=answer)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path))
    conversation = [{"role": "user", "content": "Same pun?"}]
    results = client.judge_many([conversation], parse_yes_no, system="Answer yes or no.")
    assert results[0].value is True
    assert seen == [[{"role": "system", "content": "Answer yes or no."}, {"role": "user", "content": "Same pun?"}]]
    assert conversation == [{"role": "user", "content": "Same pun?"}]  # the caller's list is not modified
    with pytest.raises(TypeError):
        client.judge_many([42], parse_yes_no)


def test_empty_batch_returns_empty_list_without_requests(fake_judge, tmp_path):
    assert JudgeClient(make_config(fake_judge.base_url, tmp_path)).judge_many([], score_1_to_5) == []
    assert fake_judge.total_requests == 0


def test_importing_judge_uses_standard_library_only():
    code = (
        "import sys, hanyi.metrics.judge\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('httpx', 'lmms_eval', 'openai', 'aiohttp'))\n"
        "assert not bad, bad\n"
        "assert not any(m.startswith('hanyi.tasks') for m in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --- configuration -----------------------------------------------------------------------------------------------


def test_from_env_returns_none_when_unconfigured(monkeypatch):
    assert JudgeConfig.from_env() is None
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://127.0.0.1:8000/v1")
    assert JudgeConfig.from_env() is None  # a model is needed too
    assert JudgeConfig.from_env({"judge_model": None, "version": 2}) is None


def test_from_env_reads_env_and_overrides_win(monkeypatch):
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "qwen2.5-72b")
    monkeypatch.setenv("HANYI_JUDGE_CONCURRENCY", "32")
    monkeypatch.setenv("HANYI_JUDGE_TIMEOUT", "90")
    config = JudgeConfig.from_env({"judge_model": "gpt-4o", "judge_max_tokens": 16, "dataset_path": "ignored"})
    assert (config.base_url, config.model, config.concurrency, config.timeout_s, config.max_tokens) == (
        "http://127.0.0.1:8000/v1",
        "gpt-4o",
        32,
        90.0,
        16,
    )
    assert config.api_key_env == "OPENAI_API_KEY" and config.temperature == 0.0


def test_from_env_rejects_malformed_numbers_naming_the_variable(monkeypatch):
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://x/v1")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "m")
    monkeypatch.setenv("HANYI_JUDGE_CONCURRENCY", "eight")
    with pytest.raises(ValueError, match="HANYI_JUDGE_CONCURRENCY"):
        JudgeConfig.from_env()


def test_cache_dir_defaults_under_hanyi_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("HANYI_CACHE_DIR", str(tmp_path))
    assert JudgeConfig(base_url="http://x/v1", model="m").resolved_cache_dir == str(tmp_path / "judge")
    monkeypatch.delenv("HANYI_CACHE_DIR")
    assert JudgeConfig(base_url="http://x/v1", model="m").resolved_cache_dir.endswith(
        os.path.join(".cache", "hanyi", "judge")
    )


def test_get_judge_client_returns_one_client_per_config(tmp_path):
    a = JudgeConfig(base_url="http://127.0.0.1:1/v1", model="m", cache_dir=str(tmp_path))
    b = JudgeConfig(base_url="http://127.0.0.1:1/v1", model="m", cache_dir=str(tmp_path))
    c = JudgeConfig(base_url="http://127.0.0.1:1/v1", model="m2", cache_dir=str(tmp_path))
    assert get_judge_client(a) is get_judge_client(b)
    assert get_judge_client(a) is not get_judge_client(c)


def test_warn_judge_disabled_logs_once_per_metric_set(caplog):
    caplog.set_level(logging.WARNING, logger="hanyi.judge")
    warn_judge_disabled(["test_metric_b", "test_metric_a"])
    warn_judge_disabled(["test_metric_a", "test_metric_b"])
    warn_judge_disabled(["test_metric_c"])
    messages = [r.getMessage() for r in caplog.records if r.name == "hanyi.judge"]
    assert len(messages) == 2
    assert "test_metric_a, test_metric_b" in messages[0] and "HANYI_JUDGE_BASE_URL" in messages[0]


def test_summarize_judgements_counts_and_nan_mean():
    failed = JudgeResult("h", None, None, "request_failed: HTTP 503", False)
    summary = summarize_judgements([failed, failed])
    assert math.isnan(summary["mean"]) and summary["n_request_failures"] == 2 and summary["n_scored"] == 0
    yes_no = [JudgeResult("h", "yes", True, None, False), JudgeResult("h", "no", False, None, False)]
    assert summarize_judgements(yes_no)["mean"] == 0.5
    with pytest.raises(TypeError):
        summarize_judgements([JudgeResult("h", "{}", {"a": 1}, None, False)])


# --- parsers -----------------------------------------------------------------------------------------------------

SCORE_CASES = [
    ("4", 4),
    ("Score: 4/5", 4),
    ("**Score:** 5", 5),
    ("Rating: [[2]]", 2),
    ("I would rate this 3 out of 5.", 3),
    ("Score (1-5): 4", 4),
    ("On a scale from 1 to 5, the painting deserves a 2.", 2),
    ("评分：４", 4),
    ("得分为四。", 4),
    ("在5分制下，我给4分", 4),
    ("Score: 4.0", 4),
    ("Score: 4.5", None),
    ("Score: 6", None),
    ("Score: 0", None),
    ("3/10", None),
    ("Score: 3 ... final score: 4", None),
    ("Items 1, 2 and 4 are correct.", None),
    ("", None),
    ("No score given.", None),
    ("1" * 40, None),
]


@pytest.mark.parametrize(("text", "expected"), SCORE_CASES)
def test_parse_integer_score_table(text, expected):
    assert parse_integer_score(text, 1, 5) == expected


YES_NO_CASES = [
    ("Yes", True),
    ("yes.", True),
    ("**No**, the puns rely on different homophones.", False),
    ("Answer: YES", True),
    ("是的，两者是同一个双关。", True),
    ("否", False),
    ("不是同一个双关", False),
    ("对于这个问题，答案：否", False),
    ("After comparing both readings, my verdict: no", False),
    ("The readings match, so yes.", True),
    ("Yesterday: no. Today: yes.", None),
    ("I cannot tell.", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), YES_NO_CASES)
def test_parse_yes_no_table(text, expected):
    assert parse_yes_no(text) is expected


NOISY_ALPHABET = st.sampled_from(
    list(
        "0123456789０１２３４５６７８９/：:.-*#_`[]()（）【】 \n\tscoreratingyesnoanswer是否不对评分得分一二三四五十分制"
    )
)
NOISY_TEXT = st.one_of(
    st.text(), st.text(alphabet=NOISY_ALPHABET), st.text(alphabet=NOISY_ALPHABET).map(lambda s: s * 500)
)
SCALES = st.tuples(st.integers(-10, 10), st.integers(0, 10)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(text=NOISY_TEXT, scale=SCALES)
def test_parse_integer_score_never_raises_and_stays_in_range(text, scale):
    low, high = scale
    value = parse_integer_score(text, low, high)
    assert value is None or (type(value) is int and low <= value <= high)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    scale=SCALES,
    template=st.sampled_from(
        ["Score: {n}", "**Score:** {n}", "评分：{n}", "Rating: [[{n}]]", "{n}/{high}", "Explanation first.\nScore: {n}"]
    ),
    fullwidth=st.booleans(),
)
def test_parse_integer_score_reads_every_in_range_score_in_every_format(data, scale, template, fullwidth):
    low, high = scale
    n = data.draw(st.integers(low, high))
    text = template.format(n=n, high=high)
    if fullwidth:
        text = text.translate({ord(d): 0xFF10 + int(d) for d in "0123456789"})
    assert parse_integer_score(text, low, high) == n


@settings(max_examples=300, deadline=None)
@given(text=NOISY_TEXT)
def test_parse_yes_no_never_raises(text):
    assert parse_yes_no(text) in (True, False, None)


def test_parsers_reject_non_text_input():
    assert parse_integer_score(None, 1, 5) is None
    assert parse_integer_score("Score: 3", 5, 1) is None
    assert parse_yes_no(None) is None


def test_top_p_is_sent_and_keyed_only_when_set():
    from hanyi.metrics.judge.cache import request_fingerprint, request_key

    msgs = [{"role": "user", "content": "score?"}]
    unset = request_fingerprint("m", msgs, 0.0, 16)
    assert "top_p" not in unset  # caches written before top_p existed keep their keys
    assert request_key(request_fingerprint("m", msgs, 0.0, 16, 0.95)) != request_key(unset)
    cfg = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", top_p=0.95)
    client = JudgeClient(cfg)
    assert client._payload(request_fingerprint("m", msgs, 0.0, 16, 0.95))["top_p"] == 0.95
    assert "top_p" not in JudgeClient(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m"))._payload(unset)


# --- empty answers and slow-dripping servers --------------------------------------------------------


@pytest.mark.parametrize("content", [None, "", "   "])
def test_a_200_with_null_or_empty_content_is_retried_and_never_cached(fake_judge, tmp_path, content):
    fake_judge.configure(answer=lambda messages: content)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, max_retries=2))
    results = client.judge_many(["empty please"], score_1_to_5)
    assert results[0].error.startswith("request_failed: empty answer") and results[0].raw is None
    assert fake_judge.total_requests == 3 and client.stats["retries"] == 2
    assert cache_files(tmp_path) == []

    fake_judge.configure(answer=judge_server.default_answer)  # the server recovers: the next run asks again
    again = JudgeClient(make_config(fake_judge.base_url, tmp_path)).judge_many(["empty please"], score_1_to_5)
    assert again[0].error is None and not again[0].cached


def test_a_slow_dripping_server_hits_the_total_deadline(fake_judge, tmp_path):
    fake_judge.configure(drip_s=0.05)  # ~150 bytes: about 8 s per answer, each byte well inside the read timeout
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, timeout_s=0.5, max_retries=1))
    started = time.monotonic()
    results = client.judge_many(["drip"], score_1_to_5)
    elapsed = time.monotonic() - started
    assert results[0].error.startswith("request_failed: no complete answer within 0.5s")
    assert elapsed < 3.0, elapsed  # two attempts of 0.5 s (plus backoff), not two of ~8 s
    client.close()


def test_httpx_request_log_never_shows_the_judge_url_credentials(fake_judge, tmp_path, caplog):
    url = fake_judge.base_url.replace("http://", "http://bob:pw-LEAK@") + "?key=key-LEAK"
    config = JudgeConfig(base_url=url, model="fake-judge", cache_dir=str(tmp_path), max_retries=0)
    with caplog.at_level(logging.DEBUG):
        JudgeClient(config).judge_many(["hello"], score_1_to_5)
    assert "pw-LEAK" not in caplog.text and "key-LEAK" not in caplog.text


def test_an_echoed_basic_credential_from_url_userinfo_never_reaches_a_log_line(fake_judge, tmp_path, caplog, capfd):
    """a server echoing ``Authorization: Basic base64(user:pass)`` leaked it into a WARNING; a
    password holding ``@`` left its tail in the URL."""
    import base64

    password = "p@ss-" + secrets.token_hex(6)
    basic = base64.b64encode(f"judgeuser:{password}".encode()).decode()
    netloc = fake_judge.base_url.split("://", 1)[1]
    base_url = f"http://judgeuser:{password.replace('@', '%40')}@{netloc}"
    caplog.set_level(logging.DEBUG)
    client = JudgeClient(make_config(base_url, tmp_path, max_retries=0))
    fake_judge.configure(failure_rate=1.0, failure_statuses=(401,), echo_auth_in_errors=True)
    results = client.judge_many(["x 1", "x 2"], score_1_to_5)
    assert fake_judge.last_authorization == f"Basic {basic}"  # the URL's credentials really were sent
    text = caplog.text + capfd.readouterr().err + repr(results)
    assert "Basic ***" in repr(results)
    for form in (basic, password, password.split("@")[1], password.replace("@", "%40")):
        assert form not in text, f"{form!r} leaked"


def test_with_url_userinfo_and_an_api_key_the_bearer_key_not_sent_is_said_once(
    fake_judge, tmp_path, monkeypatch, caplog
):
    monkeypatch.setenv("HANYI_TEST_JUDGE_KEY", "sk-not-sent")
    netloc = fake_judge.base_url.split("://", 1)[1]
    caplog.set_level(logging.WARNING)
    client = JudgeClient(make_config(f"http://u:pw@{netloc}", tmp_path, api_key_env="HANYI_TEST_JUDGE_KEY"))
    client.judge_many(["y 1", "y 2"], score_1_to_5)
    said = [r.getMessage() for r in caplog.records if "Bearer key is not" in r.getMessage()]
    assert len(said) == 1 and "$HANYI_TEST_JUDGE_KEY" in said[0] and "pw" not in said[0].replace("Bearer", "")
    assert fake_judge.last_authorization.startswith("Basic ")


def test_a_judge_batch_shows_a_tqdm_bar_of_its_requests(fake_judge, tmp_path, capsys):
    """a judge batch of hundreds of requests ran without any progress shown."""
    JudgeClient(make_config(fake_judge.base_url, tmp_path)).judge_many([f"p{i}" for i in range(5)], score_1_to_5)
    err = capsys.readouterr().err
    assert "hanyi judge (fake-judge)" in err and "5/5" in err and "request" in err
    JudgeClient(make_config(fake_judge.base_url, tmp_path)).judge_many([f"p{i}" for i in range(5)], score_1_to_5)
    assert "hanyi judge (fake-judge)" not in capsys.readouterr().err  # all cached: nothing sent, no bar
