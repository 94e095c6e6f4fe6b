"""Issue 40 item 1: under ``hanyi eval --use_cache`` a run killed mid-generation keeps every answer made so far (at
most one chunk lost) and the same command resumes from them; a lone surrogate never costs the cache. lmms-eval's
own ``ResponseCache`` is driven here with a scripted model that is "killed" after 6 of 12 answers."""

from __future__ import annotations

import pytest

pytest.importorskip("lmms_eval")


def _requests(n=12):
    from lmms_eval.api.instance import Instance

    kwargs = {"temperature": 0, "max_new_tokens": 8, "until": ["\n\n"]}
    return [
        Instance(
            "generate_until",
            (f"question {i}", dict(kwargs), None, i, "punrebus_textonly", "test"),
            0,
            {"task": "punrebus_textonly", "doc_id": i, "repeats": 1},
        )
        for i in range(n)
    ]


class Killed(KeyboardInterrupt):
    pass


class Model:
    """Answers ``answer <doc_id>`` per request, recording what it was asked; interrupted after ``die_after`` answers
    (the SIGINT of the red team's run)."""

    def __init__(self, die_after=None, answer=lambda r: f"answer {r.doc_id}"):
        self.asked, self.die_after, self.answer = [], die_after, answer

    def generate_until(self, requests):
        out = []
        for r in requests:
            if self.die_after is not None and len(self.asked) >= self.die_after:
                raise Killed
            self.asked.append(r.doc_id)
            out.append(self.answer(r))
        return out


def _cache(root):
    from lmms_eval.caching.response_cache import ResponseCache

    return ResponseCache.create(str(root), model="scripted", model_args="x=1")


@pytest.fixture
def chunked(monkeypatch):
    from lmms_eval.caching.response_cache import ResponseCache

    from hanyi.host import cache_chunks

    monkeypatch.setattr(ResponseCache, "execute", ResponseCache.execute)  # restored after the test
    monkeypatch.setattr(ResponseCache, "create", ResponseCache.__dict__["create"])
    monkeypatch.setenv("HANYI_EVAL_CACHE_EVERY", "2")
    assert cache_chunks.install()
    return cache_chunks


def test_a_run_killed_after_6_of_12_answers_keeps_them_and_resumes(tmp_path, chunked):
    cache = _cache(tmp_path / "cache")
    with pytest.raises(Killed):
        cache.execute(Model(die_after=6), "generate_until", _requests())
    again, model = _cache(tmp_path / "cache"), Model()
    answers = again.execute(model, "generate_until", _requests())
    assert answers == [f"answer {i}" for i in range(12)]
    assert model.asked == list(range(6, 12))  # the first 6 came from the cache


def test_without_hanyi_eval_lmms_eval_keeps_nothing_of_a_killed_run(tmp_path):
    """What the chunking is for: the stock execute asks the model for all 12 at once and writes after."""
    cache = _cache(tmp_path / "cache")
    with pytest.raises(Killed):
        cache.execute(Model(die_after=6), "generate_until", _requests())
    model = Model()
    _cache(tmp_path / "cache").execute(model, "generate_until", _requests())
    assert model.asked == list(range(12))


def test_an_answer_killed_between_its_audit_line_and_its_sqlite_commit_is_kept(tmp_path, chunked):
    """lmms-eval fsyncs an answer's audit line, then commits it to SQLite: a SIGKILL between the two (CI hit it) left
    the answer only in the audit log, which a new run never read. The resume replays it."""
    import sqlite3

    cache = _cache(tmp_path / "cache")
    with pytest.raises(Killed):
        cache.execute(Model(die_after=6), "generate_until", _requests())
    cache.close()
    (shard,) = (tmp_path / "cache" / "runs").glob("*/rank_0.db")
    with sqlite3.connect(shard) as db:  # answers 4 and 5: in the audit log only
        db.execute("DELETE FROM responses WHERE doc_id IN (4, 5)")
    again, model = _cache(tmp_path / "cache"), Model()
    assert again.execute(model, "generate_until", _requests()) == [f"answer {i}" for i in range(12)]
    assert model.asked == list(range(6, 12))


def test_a_lone_surrogate_never_costs_the_cache(tmp_path, chunked):
    cache = _cache(tmp_path / "cache")
    answers = cache.execute(Model(answer=lambda r: f"A\ud800{r.doc_id}"), "generate_until", _requests(4))
    assert answers == [f"A\ufffd{i}" for i in range(4)]
    model = Model()
    assert _cache(tmp_path / "cache").execute(model, "generate_until", _requests(4)) == answers and model.asked == []


@pytest.mark.slow
def test_hanyi_eval_killed_mid_generation_resumes_from_its_answers(tmp_path, tiny_llava):
    """The red team's case end to end: the tiny LLaVA under ``hanyi eval --use_cache``, SIGKILLed once answers are
    cached, then the same command again: it resumes from them and finishes."""
    import glob
    import os
    import signal
    import subprocess
    import sys
    import time

    cache, out, limit = tmp_path / "cache", tmp_path / "out", 8
    hanyi = os.path.join(os.path.dirname(sys.executable), "hanyi")
    cmd = [
        hanyi,
        "eval",
        "--model",
        "llava_hf",
        "--model_args",
        f"pretrained={tiny_llava},device_map=cpu,dtype=float32",
    ]
    cmd += [
        "--device",
        "cpu",
        "--tasks",
        "punrebus_expression",
        "--limit",
        str(limit),
        "--gen_kwargs",
        "max_new_tokens=48",
    ]
    cmd += ["--use_cache", str(cache), "--output_path", str(out), "--log_samples"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_JUDGE")} | {"HANYI_EVAL_CACHE_EVERY": "1"}
    first_err = tmp_path / "first.stderr"  # a file, not a pipe nobody reads (a full pipe would stall the run)
    with open(first_err, "wb") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 400
        while not any(os.path.getsize(p) for p in glob.glob(str(cache / "runs" / "*" / "rank_0.audit.jsonl"))):
            assert proc.poll() is None, first_err.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "no answer was cached"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not list(out.rglob("*_results.json"))  # killed during generation
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "hanyi: resuming from" in done.stderr
    (log,) = out.rglob("*_samples_punrebus_expression.jsonl")
    assert len(log.read_text(encoding="utf-8").splitlines()) == limit
