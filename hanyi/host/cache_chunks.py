"""``hanyi eval --use_cache``: every answer kept as it is made, and resumed from.

lmms-eval 0.7.3's response cache (``--use_cache DIR``, ``lmms_eval.caching.response_cache.ResponseCache.execute``)
hands the model *every* uncached request of a request type in one call and writes the answers (an fsynced JSONL
line, then SQLite) only when that call returns: a run killed after 6 of 12 answers kept none. It also writes a
response holding a lone surrogate (half a UTF-16 pair) as UTF-8 before any task filter repairs it, and the
``UnicodeEncodeError`` lost the whole run.

:func:`install` (``hanyi eval`` only, as its other run-time extras; a plain lmms-eval run is untouched) wraps
``execute`` so that it runs the same requests in chunks of :data:`CHUNK` (``HANYI_EVAL_CACHE_EVERY``), each chunk's
answers written to the cache before the next chunk is asked: a kill loses at most one chunk, and the same command
resumes from the cache (its keys do not depend on the chunking). Each text answer's lone surrogates become U+FFFD
before the cache sees them, as the tasks' ``ValidUtf8Responses`` filter does anyway; a non-finite log-likelihood is
kept as it is (the cache writes ``NaN``; replay reads it, docs/when-things-go-wrong.md). Answers, their order and
every score are unchanged: the model receives the same requests, fewer at a time (a batching model batches within a
chunk). When the cache is opened, the answers of earlier runs that never finished (:func:`merge_unfinished_runs`) are
merged into it first: lmms-eval merges a run's answers only when it ends well, so a killed run's were never read;
an answer whose audit line was written but whose SQLite row was not (a kill between the two) is recovered from the
audit line, by lmms-eval's own replay. The cache keys an answer on the generation settings the task asked for, not
on the ones a model left behind after editing them in place (``llava_hf`` does: :func:`_kwargs_as_asked`), and on the
installed lmms-eval release, not on the commit of a project whose ``.venv`` holds it
(:func:`_release_cache_version`): either made every resume generate everything again.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import re

log = logging.getLogger(__name__)
_MARKER = "_hanyi_chunked"
_SURROGATE = re.compile("[\ud800-\udfff]")


def chunk_size() -> int:
    """Requests per model call under ``--use_cache``: ``HANYI_EVAL_CACHE_EVERY`` (validated: an integer >= 1), 8."""
    from hanyi import settings

    return int(settings.value("HANYI_EVAL_CACHE_EVERY", 8))


def _valid_text(value):
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if hasattr(value, "text") and isinstance(getattr(value, "text", None), str):  # lmms-eval's GenerationResult
        value.text = _SURROGATE.sub("\ufffd", value.text)
    return value


def _gen_kwargs(request) -> dict | None:
    """The request's generation settings: the one ``dict`` in its ``args`` (as lmms-eval's cache reads them)."""
    return next((a for a in getattr(request, "args", ()) if isinstance(a, dict)), None)


@contextlib.contextmanager
def _kwargs_as_asked(requests):
    """Put each request's generation settings back as they were asked once the model is done with them.

    lmms-eval's cache computes a request's key from its ``gen_kwargs`` when it looks the answer up (before the model
    runs) and again when it stores the answer (after). ``llava_hf`` edits that dict in place (pops ``until``, adds
    ``top_p: None``, ``num_beams: 1``...), so the stored key was never the key a later run looks up: every resume
    and every repeat of a finished run generated everything again. The model still sees, and edits, the very dicts
    it always did (its answers cannot change); the cache then keys the answer on the settings the task asked for.
    """
    saved = []
    for request in requests:
        kwargs = _gen_kwargs(request)
        if kwargs is not None:
            try:
                saved.append((kwargs, copy.deepcopy(kwargs)))
            except Exception:  # an uncopyable value: keep the top level at least
                saved.append((kwargs, dict(kwargs)))
    try:
        yield
    finally:
        for kwargs, asked in saved:
            kwargs.clear()
            kwargs.update(asked)


#: How lmms-eval's API clients (``openai``, ``async_openai``, ``gemini``) answer a request they could not get an answer
#: for (every retry failed: 5xx, timeouts, a dropped connection) or did not send (the token budget): a text that the
#: task then scores as the model's answer, and that lmms-eval's cache stored as one, so a resume never asked again.
UNANSWERED_PREFIXES = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED")
#: ``(task, doc_id, first 200 characters)`` of each request of this process that got no answer (see :func:`unanswered`).
_UNANSWERED: list[tuple[str, object, str]] = []


class _Unanswered(str):
    """The empty stand-in the cache sees for a request that got no answer: lmms-eval's cache stores no empty answer.
    The task still receives the client's own failure text (``original``), as it would without the cache."""

    original: object = None


def _text_of(value):
    return value if isinstance(value, str) else getattr(value, "text", None)


def _hide_unanswered(request, value):
    text = _text_of(value)
    if not isinstance(text, str) or not text.startswith(UNANSWERED_PREFIXES):
        return value
    _UNANSWERED.append((getattr(request, "task_name", "?"), getattr(request, "doc_id", None), text[:200]))
    stand_in = _Unanswered("")
    stand_in.original = value
    if isinstance(value, str):
        return stand_in
    hidden = copy.copy(value)  # lmms-eval's GenerationResult: same token counts, empty text
    hidden.text = stand_in
    return hidden


def _shown(value):
    """The client's own answer back in place of :class:`_Unanswered` once the cache is done with it."""
    text = _text_of(value)
    return text.original if isinstance(text, _Unanswered) else value


def unanswered() -> list[tuple[str, object, str]]:
    """The requests of this process's ``hanyi eval --use_cache`` run that got no answer from an API model (each
    scored as the client's failure text, as lmms-eval does, and kept out of the cache so that the same command asks
    for them again); ``hanyi eval`` exits 3 when there are any."""
    return list(_UNANSWERED)


class _ValidUtf8Model:
    """``lm`` whose request methods return text answers without lone surrogates and leave each request's generation
    settings as they were asked (:func:`_kwargs_as_asked`); an API client's "no answer" text reaches the cache as an
    empty answer, which it does not store (:func:`_hide_unanswered`); everything else passes through."""

    def __init__(self, lm) -> None:
        self._lm = lm

    def __getattr__(self, name):
        attr = getattr(self._lm, name)
        if name not in ("generate_until", "generate_until_multi_round", "loglikelihood"):
            return attr

        def call(requests, *a, **k):
            with _kwargs_as_asked(requests):
                answers = attr(requests, *a, **k)
            return [_hide_unanswered(q, _valid_text(r)) for q, r in zip(requests, answers)]

        return call


def chunked_execute(execute, size: int | None = None):
    """``ResponseCache.execute`` run on ``size`` requests at a time (each chunk cached before the next)."""

    def wrapper(self, lm, reqtype, requests):
        n = size or chunk_size()
        model, out = _ValidUtf8Model(lm), []
        for start in range(0, len(requests), n):
            out += [_shown(r) for r in execute(self, model, reqtype, requests[start : start + n])]
        return out

    setattr(wrapper, _MARKER, True)
    wrapper.__wrapped__ = execute
    return wrapper


def merge_unfinished_runs(cache_root: str) -> int:
    """Merge the answers of earlier runs that never finished (killed: lmms-eval merges a run's ``runs/<id>/rank_*``
    shards into ``cache.db`` only when it ends well) into ``cache.db``, so that the same command resumes from them;
    returns the answers merged. Each merged run is marked as lmms-eval marks its own (``.merged``)."""
    from glob import glob

    from lmms_eval.caching import response_cache as rc

    root = os.path.abspath(os.path.dirname(cache_root) if cache_root.endswith(".db") else cache_root)
    runs = os.path.join(root, rc._LAYERED_RUNS_DIRNAME)
    pending = sorted(
        d.path
        for d in (os.scandir(runs) if os.path.isdir(runs) else ())
        if d.is_dir()
        and not d.name.startswith(".")
        and not os.path.exists(os.path.join(d.path, rc._LAYERED_MERGED_MARKER))
    )
    merged = 0
    root_db = os.path.join(root, "cache.db")
    if os.path.exists(root_db):
        import sqlite3

        with rc._merge_lock(os.path.join(runs, rc._LAYERED_LOCK_DIRNAME), timeout_seconds=60):
            db = sqlite3.connect(root_db, timeout=30)
            try:
                if dropped := _drop_unanswered(db):
                    log.warning("hanyi: %d cached failure text(s) of an API model dropped from %s", dropped, root_db)
                db.commit()
            finally:
                db.close()
    if pending:
        with rc._merge_lock(os.path.join(runs, rc._LAYERED_LOCK_DIRNAME), timeout_seconds=60):
            for run in pending:
                for audit in glob(os.path.join(run, "rank_*.audit.jsonl")):
                    _replay_audit(rc, audit, audit[: -len(".audit.jsonl")] + ".db")
                merged += rc.ResponseCache.merge_shards(
                    sorted(glob(os.path.join(run, "rank_*.db"))), os.path.join(root, "cache.db")
                )
                audits = sorted(glob(os.path.join(run, "rank_*.audit.jsonl")))
                if audits:
                    rc.ResponseCache.merge_audit_logs(audits, os.path.join(root, "cache.audit.jsonl"))
                rc._touch_text(os.path.join(run, rc._LAYERED_MERGED_MARKER), "hanyi: an unfinished run, merged\n")
    if merged:
        log.warning("hanyi: resuming from %d answer(s) of %d unfinished run(s) in %s", merged, len(pending), root)
    return merged


def _replay_audit(rc, audit: str, db_path: str) -> None:
    """Put into a killed run's shard the answers its audit log holds and its SQLite does not: lmms-eval fsyncs each
    answer's audit line *before* its SQLite commit, so a kill between the two kept the answer only there. This is
    lmms-eval's own crash recovery (``ResponseCache._replay_audit_log``: deterministic entries with a cache key), run
    on the shard of that run rather than on a new run's (which never reads an old run's log)."""
    import sqlite3
    from types import SimpleNamespace

    db = sqlite3.connect(db_path, timeout=30)
    try:
        db.executescript(rc._SCHEMA_SQL)
        rc.ResponseCache._replay_audit_log(SimpleNamespace(audit_path=audit, db=db))
        _drop_unanswered(db)
        db.commit()
    finally:
        db.close()


def _drop_unanswered(db) -> int:
    """Delete the cached "answers" that are none: empty ones (lmms-eval's replay of an audit log inserts what its
    store refuses) and an API client's failure text (cached as an answer before :func:`_hide_unanswered`)."""
    like = " OR ".join("response LIKE ?" for _ in UNANSWERED_PREFIXES)
    args = [f'"{p}%' for p in UNANSWERED_PREFIXES]
    return db.execute(f"DELETE FROM responses WHERE response IN ('', '\"\"') OR {like}", args).rowcount


def _resuming_create(create):
    def wrapper(cls, cache_root, **kwargs):
        try:
            merge_unfinished_runs(cache_root)
        except Exception as exc:  # the run goes on, without the unfinished runs' answers
            log.warning("hanyi: could not merge unfinished runs into the response cache (%r)", exc)
        return create.__func__(cls, cache_root, **kwargs)

    setattr(wrapper, _MARKER, True)
    return classmethod(wrapper)


def _release_cache_version(version):
    """lmms-eval 0.7.3 puts "its" version in every cache key: ``git describe`` run in the folder *above* its package,
    meant for a checkout of lmms-eval. Installed into a virtual environment that lives inside a project's own git
    repository (``<project>/.venv``: common), that is the *project's* commit, so a commit between a killed run and its
    resume made every cached answer unreachable. The release's version is used unless lmms-eval is a checkout of its
    own (a ``.git`` beside its package), where the commit is what lmms-eval means."""

    def wrapper():
        import importlib.metadata
        import pathlib

        import lmms_eval

        if (pathlib.Path(lmms_eval.__file__).resolve().parents[1] / ".git").exists():
            return version()
        try:
            return importlib.metadata.version("lmms-eval")
        except Exception:
            return version()

    setattr(wrapper, _MARKER, True)
    wrapper.__wrapped__ = version
    return wrapper


def install() -> bool:
    """Wrap lmms-eval's ``ResponseCache.execute`` and ``create`` (once); never raises (a failure is logged, the run
    goes on)."""
    _UNANSWERED.clear()  # counted per run
    try:
        from lmms_eval.caching.response_cache import ResponseCache

        if not getattr(ResponseCache.execute, _MARKER, False):
            ResponseCache.execute = chunked_execute(ResponseCache.execute)
        if not getattr(ResponseCache.create, _MARKER, False):
            ResponseCache.create = _resuming_create(ResponseCache.__dict__["create"])
        import lmms_eval.utils as lmms_utils  # ResponseCache.create imports the function from here at each call

        if not getattr(lmms_utils.get_lmms_eval_cache_version, _MARKER, False):
            lmms_utils.get_lmms_eval_cache_version = _release_cache_version(lmms_utils.get_lmms_eval_cache_version)
        return True
    except Exception as exc:  # never break lmms-eval because of us
        log.warning("hanyi: --use_cache will write answers only at the end of each task (%r)", exc)
        return False
