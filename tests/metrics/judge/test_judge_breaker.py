"""the judge's unclear cases: a judge found down is not asked again doc after doc (a circuit breaker with a
cool-down and a probe), and ``timeout_s`` bounds a whole attempt, a server that drips its headers included."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from hanyi.metrics.judge import JudgeClient

from .helpers import judge_server, make_config, score_1_to_5


def _closed_port() -> int:
    """A port with nobody listening (bound, never listened on, closed: nothing of it lingers in TIME_WAIT)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def connects(monkeypatch):
    """Every TCP connection attempt the judge client makes (httpx connects through ``socket.create_connection``)."""
    made, connect = [], socket.create_connection
    monkeypatch.setattr(
        socket, "create_connection", lambda address, *a, **k: made.append(address) or connect(address, *a, **k)
    )
    return made


def test_a_judge_found_down_is_not_asked_again_doc_after_doc(tmp_path, connects, caplog):
    """Before: every doc made all its attempts (with backoff sleeps) against a judge the client knew was down."""
    client = JudgeClient(make_config(f"http://127.0.0.1:{_closed_port()}/v1", tmp_path, max_retries=2, cooldown_s=600))
    caplog.set_level(logging.WARNING, logger="hanyi.judge")
    first = client.judge_many(["doc 0"], score_1_to_5)[0]
    assert first.request_failed and len(connects) == 3  # the first doc: all its attempts, then the circuit opens
    later = [client.judge_many([f"doc {i}"], score_1_to_5)[0] for i in range(1, 21)]
    assert len(connects) == 3, "20 docs after the circuit opened made connection attempts"
    assert all(r.request_failed and r.value is None and "not sent" in r.error for r in later)
    assert client.stats["calls_made"] == 3 and client.stats["failures"] == 21
    assert len([r for r in caplog.records if r.name == "hanyi.judge"]) == 1  # one warning, not one per doc


def test_after_the_cool_down_one_request_probes_and_a_judge_back_up_is_used_again(tmp_path, connects):
    port = _closed_port()
    client = JudgeClient(make_config(f"http://127.0.0.1:{port}/v1", tmp_path, max_retries=2, cooldown_s=0.3))
    assert client.judge_many(["a"], score_1_to_5)[0].request_failed and len(connects) == 3
    time.sleep(0.35)
    assert client.judge_many(["b"], score_1_to_5)[0].request_failed  # the probe: one attempt, no retries
    assert len(connects) == 4
    assert client.judge_many(["c"], score_1_to_5)[0].request_failed and len(connects) == 4  # open again
    with judge_server.serve_fake_judge(port) as server:
        time.sleep(0.35)
        results = [client.judge_many([f"doc {i}"], score_1_to_5)[0] for i in range(5)]
        assert [r.error for r in results] == [None] * 5 and server.total_requests == 5
    client.close()


@pytest.mark.parametrize(
    ("options", "said"),
    [({"failure_rate": 1.0, "failure_statuses": (503,)}, "HTTP 503"), ({"truncate_json": True}, "malformed")],
    ids=["5xx", "truncated-json-200"],
)
def test_a_judge_answering_only_5xx_or_truncated_json_is_taken_as_down(fake_judge, tmp_path, options, said):
    """Before: an HTTP status counted as the judge being up, so a judge answering 503 (or 200 with half a JSON body)
    to everything was asked every attempt of every doc: 12 docs x 6 attempts. Now ``trip_after`` such answers in a
    row open the circuit as a judge that does not answer does."""
    fake_judge.configure(**options)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, max_retries=5, trip_after=4, cooldown_s=600))
    first = client.judge_many(["doc 0"], score_1_to_5)[0]
    assert first.request_failed and said in first.error and "4 unusable answers in a row" in first.error
    assert "taken as down" in first.error and fake_judge.total_requests == 4
    later = [client.judge_many([f"doc {i}"], score_1_to_5)[0] for i in range(1, 12)]
    assert all(r.request_failed and "not sent" in r.error for r in later)
    assert fake_judge.total_requests == 4 and client.stats["failures"] == 12
    client.close()


def test_the_probe_after_the_cool_down_reopens_on_a_5xx_and_closes_on_a_good_answer(fake_judge, tmp_path):
    fake_judge.configure(failure_rate=1.0, failure_statuses=(500,))
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, max_retries=5, trip_after=2, cooldown_s=0.3))
    assert client.judge_many(["a"], score_1_to_5)[0].request_failed and fake_judge.total_requests == 2
    time.sleep(0.35)
    assert "taken as down" in client.judge_many(["b"], score_1_to_5)[0].error  # the probe: one 500, open again
    assert fake_judge.total_requests == 3
    assert client.judge_many(["c"], score_1_to_5)[0].request_failed and fake_judge.total_requests == 3
    fake_judge.configure(failure_rate=0.0)
    time.sleep(0.35)
    assert [client.judge_many([f"doc {i}"], score_1_to_5)[0].error for i in range(4)] == [None] * 4
    assert fake_judge.total_requests == 3 + 4
    client.close()


def test_a_working_judge_that_fails_now_and_then_is_never_taken_as_down(fake_judge, tmp_path):
    """A good answer restarts the count: 500s spread among good answers (never ``trip_after`` in a row) are retried
    as before, and every judgement completes."""
    fake_judge.configure(failure_rate=0.3, failure_statuses=(500,), seed=5)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, concurrency=1, trip_after=4, cooldown_s=600))
    results = client.judge_many([f"item {i}" for i in range(60)], score_1_to_5)
    assert [r.error for r in results] == [None] * 60 and fake_judge.status_counts[500] > 10
    client.close()


def test_trip_after_is_a_setting_validated_like_the_others(monkeypatch):
    from hanyi import settings
    from hanyi.metrics.judge import JudgeConfig

    monkeypatch.setenv("HANYI_JUDGE_TRIP_AFTER", "3")
    config = JudgeConfig.from_env({"judge_base_url": "http://127.0.0.1:1/v1", "judge_model": "m"})
    assert config.trip_after == 3 and JudgeConfig(base_url="u", model="m").trip_after == 6
    assert settings.problems({"HANYI_JUDGE_TRIP_AFTER": "0"}) == [
        "HANYI_JUDGE_TRIP_AFTER='0': expected an integer >= 1"
    ]
    with pytest.raises(ValueError, match="trip_after must be >= 1"):
        JudgeConfig(base_url="u", model="m", trip_after=0)


def test_cool_down_zero_turns_the_breaker_off(tmp_path, connects):
    client = JudgeClient(make_config(f"http://127.0.0.1:{_closed_port()}/v1", tmp_path, max_retries=1, cooldown_s=0))
    for i in range(3):
        client.judge_many([f"doc {i}"], score_1_to_5)
    assert len(connects) == 6


def test_a_judge_that_drips_its_headers_is_cut_off_at_the_total_deadline(fake_judge, tmp_path):
    """Before: the deadline started once the headers had arrived, so 80 header bytes at 0.5 s each held a request
    for 40 s against a 1 s timeout. Now the attempt ends at the deadline and its connection is closed."""
    fake_judge.configure(drip_headers_s=0.5)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, timeout_s=1.0, max_retries=0))
    started = time.monotonic()
    result = client.judge_many(["drip"], score_1_to_5)[0]
    elapsed = time.monotonic() - started
    assert result.error.startswith("request_failed: no complete answer within 1s"), result.error
    assert elapsed < 1.0 + 0.75, elapsed
    give_up = time.monotonic() + 3
    while fake_judge.cut_off < 1 and time.monotonic() < give_up:  # the server's next bytes hit a closed connection
        time.sleep(0.05)
    assert fake_judge.cut_off == 1
    client.close()


def test_an_answer_within_the_deadline_is_read_when_headers_drip_a_little(fake_judge, tmp_path):
    fake_judge.configure(drip_headers_s=0.002)
    client = JudgeClient(make_config(fake_judge.base_url, tmp_path, timeout_s=5.0, max_retries=0))
    assert client.judge_many(["quick"], score_1_to_5)[0].error is None
    client.close()
