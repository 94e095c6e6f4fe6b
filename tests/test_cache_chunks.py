"""under ``hanyi eval --use_cache`` a run killed mid-generation keeps every answer made so far (at
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


class LlavaLikeModel(Model):
    """Edits each request's ``gen_kwargs`` in place as lmms-eval's ``llava_hf`` does (pops ``until``, fills in
    ``top_p``, ``num_beams``): the cache's store key then differed from its lookup key."""

    def generate_until(self, requests):
        for r in requests:
            kwargs = r.args[1]
            kwargs.pop("until", None)
            kwargs.setdefault("top_p", None)
            kwargs.setdefault("num_beams", 1)
            kwargs["image_sizes"] = [(4, 4)]
        return super().generate_until(requests)


def _cache(root):
    from lmms_eval.caching.response_cache import ResponseCache

    return ResponseCache.create(str(root), model="scripted", model_args="x=1")


@pytest.fixture
def chunked(monkeypatch):
    from lmms_eval.caching.response_cache import ResponseCache

    from hanyi.host import cache_chunks

    monkeypatch.setattr(ResponseCache, "execute", ResponseCache.execute)  # restored after the test
    monkeypatch.setattr(ResponseCache, "create", ResponseCache.__dict__["create"])
    import lmms_eval.utils

    monkeypatch.setattr(lmms_eval.utils, "get_lmms_eval_cache_version", lmms_eval.utils.get_lmms_eval_cache_version)
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


def test_a_model_that_edits_gen_kwargs_resumes_from_the_answers_it_made(tmp_path, chunked):
    """Killed after 6 of 12, the same command asks the model for the other 6 only; a finished run asked again asks
    nothing. The answers and the requests' settings as the model sees them are unchanged."""
    cache = _cache(tmp_path / "cache")
    with pytest.raises(Killed):
        cache.execute(LlavaLikeModel(die_after=6), "generate_until", _requests())
    model, requests, resumed = LlavaLikeModel(), _requests(), _cache(tmp_path / "cache")
    assert resumed.execute(model, "generate_until", requests) == [f"answer {i}" for i in range(12)]
    assert model.asked == list(range(6, 12))
    assert all(r.args[1] == {"temperature": 0, "max_new_tokens": 8, "until": ["\n\n"]} for r in requests)
    resumed.finalize(success=True)  # a run that ends well: lmms-eval merges its answers into cache.db
    model = LlavaLikeModel()
    assert _cache(tmp_path / "cache").execute(model, "generate_until", _requests()) == [
        f"answer {i}" for i in range(12)
    ]
    assert model.asked == []


def test_the_model_still_sees_and_edits_its_own_gen_kwargs(chunked):
    """The fix leaves the model's view alone (its answers cannot move): it receives the very dicts the task built."""
    from hanyi.host.cache_chunks import _ValidUtf8Model

    seen = []

    class Spy(LlavaLikeModel):
        def generate_until(self, requests):
            seen.extend(id(r.args[1]) for r in requests)
            out = super().generate_until(requests)
            assert all("until" not in r.args[1] and r.args[1]["num_beams"] == 1 for r in requests)
            return out

    requests = _requests(3)
    assert _ValidUtf8Model(Spy()).generate_until(requests) == ["answer 0", "answer 1", "answer 2"]
    assert seen == [id(r.args[1]) for r in requests]
    assert all(r.args[1]["until"] == ["\n\n"] and "num_beams" not in r.args[1] for r in requests)


def test_the_cache_keys_name_the_lmms_eval_release_not_the_project_commit(chunked, tmp_path, monkeypatch):
    """lmms-eval keys its cache on ``git describe`` run above its package: inside a project's ``.venv`` that is the
    project's commit, so committing between a kill and its resume lost every cached answer. Under ``hanyi eval`` the
    key names the installed release (a checkout of lmms-eval itself keeps its commit)."""
    import importlib.metadata
    import pathlib
    import subprocess

    import lmms_eval
    import lmms_eval.utils

    site = pathlib.Path(lmms_eval.__file__).resolve().parents[1]
    assert lmms_eval.utils.get_lmms_eval_cache_version() == importlib.metadata.version("lmms-eval")
    inside = subprocess.run(["git", "-C", str(site), "rev-parse"], capture_output=True).returncode == 0
    if inside and not (site / ".git").exists():  # this checkout's venv: the stock version would be our commit
        assert lmms_eval.utils.get_lmms_eval_cache_version.__wrapped__() != importlib.metadata.version("lmms-eval")


def test_an_api_clients_failure_text_is_scored_as_before_but_never_cached(tmp_path, chunked):
    """lmms-eval's ``openai`` / ``async_openai`` answer a request whose retries all failed with a failure text, which
    its cache stored as the model's answer: the same command never asked again. The task still receives that text;
    the cache keeps it out, and the next run asks for those requests only."""
    from lmms_eval.api.instance import GenerationResult

    failed = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 503"

    def flaky(r):
        return GenerationResult(text=failed) if r.doc_id in (2, 5) else f"answer {r.doc_id}"

    cache = _cache(tmp_path / "cache")
    answers = cache.execute(Model(answer=flaky), "generate_until", _requests(8))
    assert [a.text if isinstance(a, GenerationResult) else a for a in answers][2] == failed  # scored as before
    assert [(t, d) for t, d, _ in chunked.unanswered()] == [("punrebus_textonly", 2), ("punrebus_textonly", 5)]
    cache.close()  # killed here: the next run merges this one's shard (and replays its audit log)
    model = Model()
    assert _cache(tmp_path / "cache").execute(model, "generate_until", _requests(8)) == [
        f"answer {i}" for i in range(8)
    ]
    assert model.asked == [2, 5]


def test_failure_texts_cached_by_an_earlier_run_are_dropped(tmp_path, chunked):
    from lmms_eval.caching.response_cache import ResponseCache

    stock = ResponseCache.execute.__wrapped__
    cache = _cache(tmp_path / "cache")
    stock(cache, Model(answer=lambda r: "[LMMS_EVAL_REQUEST_FAILED after 5 retries] x"), "generate_until", _requests(2))
    cache.finalize(success=True)  # lmms-eval 0.7.3 alone: the failure texts are in cache.db
    model = Model()
    assert _cache(tmp_path / "cache").execute(model, "generate_until", _requests(2)) == ["answer 0", "answer 1"]
    assert model.asked == [0, 1]


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


_COUNT_GENERATE = """
import os

if os.environ.get("HANYI_TEST_GENERATE_LOG"):  # one line per call of the model's generate, in this test only
    from transformers.generation.utils import GenerationMixin

    _generate = GenerationMixin.generate

    def generate(self, *args, **kwargs):
        with open(os.environ["HANYI_TEST_GENERATE_LOG"], "a", encoding="utf-8") as log:
            log.write("generate\\n")
        return _generate(self, *args, **kwargs)

    GenerationMixin.generate = generate
"""


def _lines(path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.mark.slow
def test_hanyi_eval_killed_mid_generation_resumes_from_its_answers(tmp_path, tiny_llava):
    """The red team's case end to end: the tiny LLaVA (lmms-eval's ``llava_hf``, which edits ``gen_kwargs`` in place)
    under ``hanyi eval --use_cache``, SIGKILLed once answers are cached, then the same command again: the model
    generates only the answers that were not saved, and a third, identical command generates nothing. The model's
    ``generate`` calls are counted in the subprocess (a ``sitecustomize`` on ``PYTHONPATH``)."""
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
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_COUNT_GENERATE, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if p)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_JUDGE")}
    env |= {"HANYI_EVAL_CACHE_EVERY": "1", "PYTHONPATH": path}
    calls = [tmp_path / f"generate-{n}.log" for n in range(3)]
    first_err = tmp_path / "first.stderr"  # a file, not a pipe nobody reads (a full pipe would stall the run)
    with open(first_err, "wb") as err:
        first = env | {"HANYI_TEST_GENERATE_LOG": str(calls[0])}
        proc = subprocess.Popen(cmd, env=first, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
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
    (audit,) = (cache / "runs").glob("*/rank_0.audit.jsonl")
    saved = _lines(audit)
    assert 1 <= saved < limit and _lines(calls[0]) >= saved

    done = subprocess.run(cmd, env=env | {"HANYI_TEST_GENERATE_LOG": str(calls[1])}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "hanyi: resuming from" in done.stderr
    assert _lines(calls[1]) == limit - saved, done.stderr[-3000:]  # only the answers that were not saved
    (log,) = out.rglob("*_samples_punrebus_expression.jsonl")
    assert len(log.read_text(encoding="utf-8").splitlines()) == limit

    again = subprocess.run(cmd, env=env | {"HANYI_TEST_GENERATE_LOG": str(calls[2])}, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _lines(calls[2]) == 0, again.stderr[-3000:]  # a finished run asked again generates nothing


def _patched_copy(tmp_path, patch_name: str, relpath: str, name: str):
    """``relpath`` of the installed lmms-eval copied under ``tmp_path`` with docs/upstream/``patch_name`` applied,
    loaded as module ``name`` (its own imports still read the installed lmms-eval)."""
    import importlib.util
    import os
    import shutil
    import subprocess

    import lmms_eval

    target = tmp_path / "lmms_eval" / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(os.path.join(os.path.dirname(lmms_eval.__file__), relpath), target)
    patch = os.path.join(os.path.dirname(__file__), "..", "docs", "upstream", patch_name)
    subprocess.run(["patch", "-p1", "-s", "-i", os.path.abspath(patch)], cwd=tmp_path, check=True)
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_upstream_patch_0009_applies_and_a_finished_run_asked_again_generates_nothing(tmp_path):
    """The upstream fix alone (no hanyi wrapper): lmms-eval's cache stores each answer under its lookup key."""
    rc = _patched_copy(tmp_path / "src", "0009-response-cache-store-under-the-lookup-key.patch",
                       "caching/response_cache.py", "patched_response_cache")  # fmt: skip
    first = rc.ResponseCache.create(str(tmp_path / "cache"), model="scripted", model_args="x=1")
    model = LlavaLikeModel()
    assert first.execute(model, "generate_until", _requests(4)) == [f"answer {i}" for i in range(4)]
    first.finalize(success=True)
    model = LlavaLikeModel()
    again = rc.ResponseCache.create(str(tmp_path / "cache"), model="scripted", model_args="x=1")
    assert again.execute(model, "generate_until", _requests(4)) == [f"answer {i}" for i in range(4)]
    assert model.asked == []


def test_upstream_patch_0010_keys_on_the_release_inside_a_projects_repository(tmp_path):
    """An lmms-eval installed inside another project's git repository: the stock version is that project's commit,
    the patched one the release's."""
    import importlib.metadata
    import subprocess

    project = tmp_path / "project"
    site = project / ".venv" / "site"
    patched = _patched_copy(site, "0010-cache-version-only-from-a-checkout-of-lmms-eval.patch", "utils.py", "p_utils")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(project)]
    subprocess.run([*git, "init", "-q"], check=True)
    (project / "README").write_text("x\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    commit = subprocess.run([*git, "describe", "--always"], capture_output=True, text=True).stdout.strip()
    assert patched.get_git_commit_hash() == commit  # what the stock version would key every answer on
    assert patched.get_lmms_eval_cache_version() == importlib.metadata.version("lmms-eval")
