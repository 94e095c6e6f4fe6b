"""The HTTP side of the judge: :class:`JudgeClient` batches prompts to an OpenAI-compatible chat endpoint.

Requests run on a thread pool of ``config.concurrency`` workers, and every HTTP attempt also holds one of
``config.concurrency`` slots of the client, so the bound holds even when several threads share one client.
Retryable failures (429, 408, 409, 425, 5xx, timeouts, connection errors, malformed 200 bodies, and 200 answers whose
content is ``null`` or empty) are retried ``config.max_retries`` times with exponential backoff and jitter; other 4xx
answers fail at once. ``config.timeout_s`` bounds each attempt in total (connect, headers and the whole body), not
only each read, so a server that drips its headers or answer cannot stall a worker. A judge found down is not asked
for ``config.cooldown_s``, then one request probes it (:meth:`JudgeClient._circuit`); a judge that answers, but
``config.trip_after`` times in a row with a 5xx status or a 200 body that is not a chat completion (truncated JSON),
is taken as down the same way (:meth:`JudgeClient._unusable`). Each finished, non-empty answer
is written to the cache as soon as it arrives; an empty one is never cached. ``httpx`` is imported on first
use only; its per-request INFO log line (which quotes the URL) is silenced.
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hanyi.logs import get_logger

from .cache import JudgeCache, request_fingerprint, request_key
from .config import ENV_VARS, JudgeConfig, redact_url
from .results import PARSE_FAILURE, REQUEST_FAILED, JudgeResult

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

logger = get_logger("hanyi.judge")

STAT_KEYS = ("calls_made", "cache_hits", "retries", "failures", "parse_failures")
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
_BODY_SNIPPET_CHARS = 300
#: httpx logs every request at INFO with its full URL (user-info and ``?key=`` included); keep it at WARNING.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)


class _DeadlineExceeded(Exception):
    """The attempt ran past ``config.timeout_s`` in total."""


Prompt = str | list[dict]


class _Attempt:
    """Outcome of one request after all its attempts: ``raw`` or ``error``, and how many HTTP calls it took."""

    __slots__ = ("calls", "error", "raw")

    def __init__(self, raw: str | None, error: str | None, calls: int):
        self.raw, self.error, self.calls = raw, error, calls


def _messages_for(prompt: Prompt, system: str | None) -> list[dict]:
    if isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in prompt):
        messages = [dict(m) for m in prompt]
    else:
        raise TypeError("each judge prompt must be a str or a list of {'role', 'content'} dicts")
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    return messages


def _retry_after_seconds(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


class JudgeClient:
    """Batch client for one :class:`JudgeConfig`; see :func:`get_judge_client` for the per-process instance.

    ``stats`` counts, over the client's lifetime: ``calls_made`` (HTTP requests sent, retries included),
    ``cache_hits``, ``retries``, ``failures`` (judgements whose request failed for good) and ``parse_failures``.
    """

    def __init__(self, config: JudgeConfig):
        self.config = config
        self.cache = JudgeCache(config.resolved_cache_dir)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._stats = dict.fromkeys(STAT_KEYS, 0)
        self._http: Any = None
        self._http_pid: int | None = None
        self._rng = random.Random()
        self._ahead: dict[str, list] = {}  # key -> [fingerprint, done event, raw, error, cached]: expect()'s requests
        self._queued: list[str] = []  # announced by expect(), not sent yet
        self._down: float | None = None  # the circuit: open (the judge found down) until this time.monotonic()
        self._unusable_run = 0  # consecutive 5xx / unreadable answers, over every thread of the client

    def __repr__(self) -> str:
        return f"JudgeClient({self.config!r})"

    @property
    def stats(self) -> dict:
        with self._lock:
            return dict(self._stats)

    def close(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    # --- judging -------------------------------------------------------------------------------------------------

    def _fingerprints(self, prompts: Sequence[Prompt], system: str | None) -> list[dict]:
        c = self.config
        return [
            request_fingerprint(c.model, _messages_for(p, system), c.temperature, c.max_tokens, c.top_p)
            for p in prompts
        ]

    def expect(self, prompts: Sequence[Prompt], *, system: str | None = None) -> None:
        """Announce requests that :meth:`judge_many` will be asked for, one doc at a time (a task's filter sees every
        response of the task at once; ``process_results`` asks per doc). Nothing is sent now: the first
        :meth:`judge_many` that asks for one of them sends them all in the background, ``config.concurrency`` in
        flight (cache first), and each :meth:`judge_many` waits for its own. So the judge runs at its concurrency
        whatever lmms-eval's ``--process_docs_parallel``, and requests announced for the wrong docs are never sent."""
        with self._lock:
            for fp in self._fingerprints(prompts, system):
                key = request_key(fp)
                if key not in self._ahead:
                    self._ahead[key] = [fp, threading.Event(), None, None, False]
                    self._queued.append(key)

    def _planned(self, key: str) -> list | None:
        """The announced request ``key`` once answered (``[fp, event, raw, error, cached]``), starting the queue."""
        with self._lock:
            entry, todo = self._ahead.get(key), []
            if entry is not None and self._queued:
                todo, self._queued = self._queued, []
        if todo:
            threading.Thread(target=self._send_planned, args=(todo,), name="judge-ahead", daemon=True).start()
        if entry is not None:
            entry[1].wait()
        return entry

    def _send_planned(self, keys: list[str]) -> None:
        def one(key):
            entry = self._ahead[key]
            try:
                raw = self.cache.get(key)
                if raw is not None and raw.strip():
                    entry[2], entry[4] = raw, True
                else:
                    attempt = self._request_and_store(key, entry[0], threading.Event())
                    entry[2], entry[3] = attempt.raw, attempt.error
            finally:
                entry[3] = entry[3] if entry[2] is not None or entry[3] else f"{REQUEST_FAILED}: not sent"
                entry[1].set()

        logger.info("hanyi judge: %d announced requests sent, %d in flight", len(keys), self.config.concurrency)
        with ThreadPoolExecutor(
            max_workers=min(self.config.concurrency, len(keys)), thread_name_prefix="judge"
        ) as pool:
            list(pool.map(one, keys))

    def judge_many(
        self, prompts: Sequence[Prompt], parse: Callable[[str], Any | None], *, system: str | None = None
    ) -> list[JudgeResult]:
        """Judge every prompt (cache first, then the endpoint) and return one result per prompt, in input order.

        Per-item problems never raise: a request that fails for good gives ``error="request_failed: <reason>"``,
        an answer that ``parse`` maps to ``None`` (or on which it raises) gives ``error="parse_failure"``.
        Prompts of the wrong type raise ``TypeError`` before anything is sent.
        """
        fingerprints = self._fingerprints(prompts, system)
        keys = [request_key(fp) for fp in fingerprints]
        results: list[JudgeResult | None] = [None] * len(keys)
        pending: dict[str, list[int]] = {}
        parse_errors, failures = [], []
        for i, key in enumerate(keys):
            if key in pending:
                pending[key].append(i)
                continue
            planned = self._planned(key) if self._ahead else None
            if planned is not None and planned[2] is None:  # failed for good: said once, asked again next time
                self._ahead.pop(key, None)
                failures.append(planned[3])
                self._bump("failures")
                results[i] = JudgeResult(key, None, None, planned[3], False)
                continue
            raw, cached = (planned[2], planned[4]) if planned is not None else (self.cache.get(key), True)
            if raw is None or not raw.strip():  # an empty answer (older caches) is not a judgement
                pending[key] = [i]
            else:
                self._bump("cache_hits") if cached else None
                results[i] = self._finish(key, raw, parse, cached, parse_errors)
        calls, failed = self._fetch(pending, fingerprints, parse, results, parse_errors) if pending else (0, [])
        self._log_batch(results, calls, failures + failed, parse_errors)
        return results  # type: ignore[return-value]

    def _fetch(self, pending, fingerprints, parse, results, parse_errors) -> tuple[int, list[str]]:
        """Send the uncached requests (``concurrency`` at a time), with a tqdm bar as lmms-eval shows for generation."""
        from tqdm import tqdm

        calls, failures = 0, []
        cancel = threading.Event()
        workers = min(self.config.concurrency, len(pending))
        with (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge") as pool,
            tqdm(
                total=len(pending), desc=f"hanyi judge ({self.config.model})", unit="request", disable=len(pending) < 2
            ) as bar,
        ):
            futures = {
                pool.submit(self._request_and_store, key, fingerprints[idx[0]], cancel): key
                for key, idx in pending.items()
            }
            try:
                for future in as_completed(futures):
                    bar.update(1)
                    key, attempt = futures[future], future.result()
                    calls += attempt.calls
                    if attempt.raw is None:
                        failures.append(attempt.error)
                    for i in pending[key]:
                        if attempt.raw is None:
                            self._bump("failures")
                            results[i] = JudgeResult(key, None, None, attempt.error, False)
                        else:
                            results[i] = self._finish(key, attempt.raw, parse, False, parse_errors)
            except BaseException:
                cancel.set()
                for future in futures:
                    future.cancel()
                raise
        return calls, failures

    def _finish(self, key: str, raw: str, parse, cached: bool, parse_errors: list[str]) -> JudgeResult:
        try:
            value = parse(raw)
        except Exception as exc:  # noqa: BLE001 - a buggy parser must not lose the batch; reported in the batch log
            parse_errors.append(f"{type(exc).__name__}: {exc}")
            value = None
        if value is None:
            self._bump("parse_failures")
            return JudgeResult(key, raw, None, PARSE_FAILURE, cached)
        return JudgeResult(key, raw, value, None, cached)

    def _request_and_store(self, key: str, fingerprint: dict, cancel: threading.Event) -> _Attempt:
        """Runs on a worker: the answer is on disk before the worker takes the next request."""
        attempt = self._request(self._payload(fingerprint), cancel)
        if attempt.raw is not None:
            try:
                self.cache.put(key, fingerprint, attempt.raw)
            except OSError as exc:
                logger.warning("hanyi judge: could not write cache entry in %s: %s", self.cache.root, exc)
        return attempt

    # --- HTTP ----------------------------------------------------------------------------------------------------

    def _payload(self, fingerprint: dict) -> dict:
        payload = {
            "model": self.config.model,
            "messages": fingerprint["messages"],
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.top_p is not None:
            payload["top_p"] = self.config.top_p
        return payload

    def _userinfo(self) -> bool:
        """Whether the URL carries user-info. With an API key set too, only one can be the Authorization header:
        the URL's HTTP Basic credentials are sent, the Bearer key is not, and a warning says so once."""
        try:
            has = urlsplit(self.config.base_url).username is not None
        except ValueError:
            return False
        if has and os.environ.get(self.config.api_key_env) and not getattr(self, "_said_userinfo", False):
            self._said_userinfo = True
            logger.warning(
                "hanyi judge: %s carries user:password and $%s is set; HTTP allows one Authorization header, so the "
                "URL's Basic credentials are sent and the Bearer key is not. Remove one of them to choose.",
                redact_url(self.config.base_url),
                self.config.api_key_env,
            )
        return has

    def _http_client(self):
        import httpx

        with self._lock:
            if self._http is None or self._http_pid != os.getpid():
                n = self.config.concurrency
                self._http = httpx.Client(
                    timeout=httpx.Timeout(self.config.timeout_s),
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=0),  # _post: a socket per attempt
                )
                self._http_pid = os.getpid()
            return self._http

    def _secrets(self) -> list[str]:
        """Every form a secret may come back in: the API key, the URL's password, base64 ``user:password`` (what
        HTTP Basic auth sends and an echoing server returns), URL-encoded forms (hanyi.redact.derived_forms)."""
        from hanyi.redact import derived_forms

        secrets = derived_forms(os.environ.get(self.config.api_key_env, ""))
        try:
            parts = urlsplit(self.config.base_url)
            secrets += derived_forms(parts.password or "", parts.username or "")
        except ValueError:
            pass
        return sorted(set(secrets), key=lambda f: (-len(f), f))

    def _scrub(self, text: str) -> str:
        from hanyi.redact import redact_secrets

        text = text.replace(self.config.base_url, redact_url(self.config.base_url))
        return redact_secrets(text, self._secrets())

    def _post(self, payload: dict, headers: dict):
        """POST once and read the whole answer within ``config.timeout_s`` in total, else :class:`_DeadlineExceeded`:
        httpx's timeouts are per phase and per read (dripped headers held 40 s against 3 s), so a watchdog
        shuts the attempt's socket down at the deadline (its own connection: no keep-alive; httpx's ``trace`` names it)."""
        import httpx

        sockets, fired = [], threading.Event()

        def cut() -> None:
            fired.set()
            for sock in sockets[-1:]:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def trace(event: str, info: dict) -> None:
            if event.endswith(("connect_tcp.complete", "start_tls.complete")):
                sockets.append(info["return_value"].get_extra_info("socket"))
                cut() if fired.is_set() else None

        (watchdog := threading.Timer(self.config.timeout_s, cut)).start()
        try:
            response = self._http_client().post(
                self.config.endpoint, json=payload, headers=headers, extensions={"trace": trace}
            )
            return response, response.content
        except httpx.TransportError:
            if fired.is_set():
                raise _DeadlineExceeded from None
            raise
        finally:
            watchdog.cancel()

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (attempt - 1))
        delay = cap / 2 + self._rng.uniform(0, cap / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.backoff_max_s))
        return delay

    def _request(self, payload: dict, cancel: threading.Event) -> _Attempt:
        """Send one request with retries; never raises. The API key is read from the environment here."""
        import httpx

        key = os.environ.get(self.config.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if key and self._userinfo():
            headers = {}  # one Authorization header: the URL's Basic credentials win (said once, see _userinfo)
        attempts, reason, retry_after, answered = self.config.max_retries + 1, "not attempted", None, False
        for attempt in range(attempts):
            if attempt:
                delay = self._backoff(attempt, retry_after)
                logger.debug(
                    "hanyi judge: attempt %d/%d failed (%s); retrying in %.2fs", attempt, attempts, reason, delay
                )
                self._bump("retries")
                if cancel.wait(delay):
                    return _Attempt(None, f"{REQUEST_FAILED}: cancelled", attempt)
            probe, shut = self._circuit()
            if shut:
                return _Attempt(None, shut, attempt)
            retry_after = None
            try:
                with self._slots:
                    self._bump("calls_made")
                    response, body = self._post(payload, headers)
            except (_DeadlineExceeded, httpx.TransportError) as exc:  # no answer: the judge is down, or too slow
                reason = (
                    self._scrub(f"{type(exc).__name__}: {exc}")
                    if str(exc)
                    else f"no complete answer within {self.config.timeout_s:g}s"
                )
                if probe or (attempt + 1 == attempts and not answered):
                    return self._trip(reason, attempt + 1)
                continue
            except Exception as exc:  # noqa: BLE001 - invalid URL and the like: this doc's request fails, not the run
                reason = self._scrub(f"{type(exc).__name__}: {exc}")
                return _Attempt(None, f"{REQUEST_FAILED}: {reason}", attempt + 1)
            answered = True
            if response.status_code == 200:
                try:
                    content = json.loads(body)["choices"][0]["message"]["content"]
                except (ValueError, KeyError, IndexError, TypeError, RecursionError):
                    reason = "malformed response body"
                    if self._unusable(probe):
                        return self._trip(f"{reason} ({self._tripped_by()})", attempt + 1)
                    continue
                self._usable()
                if not isinstance(content, str) or not content.strip():
                    reason = "empty answer (content null or empty)"
                    continue
                return _Attempt(content, None, attempt + 1)
            if response.status_code >= 500:
                reason = f"HTTP {response.status_code}"
                if self._unusable(probe):
                    return self._trip(f"{reason} ({self._tripped_by()})", attempt + 1)
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
                continue
            self._usable()  # 4xx: the judge is up and read the request; the circuit closes
            if response.status_code in _RETRYABLE_STATUS:
                reason = f"HTTP {response.status_code}"
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
                continue
            snippet = body[:_BODY_SNIPPET_CHARS].decode("utf-8", "replace").replace("\n", " ")
            return _Attempt(None, f"{REQUEST_FAILED}: HTTP {response.status_code}: {self._scrub(snippet)}", attempt + 1)
        return _Attempt(None, f"{REQUEST_FAILED}: {reason} (after {attempts} attempts)", attempts)

    def _circuit(self) -> tuple[bool, str | None]:
        """``(probe, refusal)``: refused while the judge is down (:meth:`_trip`), then one request a cool-down probes."""
        with self._lock:
            if self._down is None:
                return False, None
            if time.monotonic() < self._down:
                return False, f"{REQUEST_FAILED}: not sent: judge down (probed every {self.config.cooldown_s:g}s)"
            self._down = time.monotonic() + self.config.cooldown_s
            return True, None

    def _usable(self) -> None:
        """An answer that shows the judge working (a readable 200, a 4xx): the circuit closes, the run count restarts."""
        with self._lock:
            self._down, self._unusable_run = None, 0

    def _unusable(self, probe: bool) -> bool:
        """Count a 5xx status or an unreadable 200 body; True when the judge is now taken as down: the probe after a
        cool-down got one, or ``config.trip_after`` answers in a row (over all threads) were such. An HTTP status is
        an answer, so before this a judge answering 500 to everything was asked every attempt of every doc (12 docs:
        72 requests, 51 s); a working judge that fails now and then resets the count with its next good answer."""
        with self._lock:
            self._unusable_run += 1
            return probe or self._unusable_run >= self.config.trip_after

    def _tripped_by(self) -> str:
        return f"{self._unusable_run} unusable answers in a row"

    def _trip(self, reason: str, calls: int) -> _Attempt:
        """No attempt of a request (or a probe) was answered, or too many answers in a row were unusable
        (:meth:`_unusable`): the judge is down for ``cooldown_s`` (0: never)."""
        reason = f"{REQUEST_FAILED}: {reason} (after {calls} attempts)"
        if self.config.cooldown_s > 0:
            self._down = time.monotonic() + self.config.cooldown_s  # one assignment: no lock needed
            reason += f"; taken as down: not asked for {self.config.cooldown_s:g}s, then one request probes"
        return _Attempt(None, reason, calls)

    # --- bookkeeping ---------------------------------------------------------------------------------------------

    def _bump(self, stat: str) -> None:
        with self._lock:
            self._stats[stat] += 1

    def _log_batch(self, results, calls: int, failures: list[str], parse_errors: list[str]) -> None:
        if not results:
            return
        n_cached = sum(r.cached for r in results)
        n_failed = sum(r.request_failed for r in results)
        n_unparsed = sum(r.error == PARSE_FAILURE for r in results)
        summary = (
            f"hanyi judge: {len(results)} judgements by model {self.config.model!r} at "
            f"{redact_url(self.config.endpoint)}: {n_cached} from cache, {calls} HTTP calls, "
            f"{n_failed} request failures, {n_unparsed} parse failures"
        )
        if failures:  # asked per doc, a judge that is down fails every doc: warned once per client, then at debug level
            said, self._said_failure = getattr(self, "_said_failure", False), True
            note = "%s; first error: %s (this judge's further request failures are logged at debug level)"
            (logger.debug if said else logger.warning)(note, summary, failures[0])
        else:
            logger.info("%s", summary)
        if parse_errors:
            logger.warning(
                "hanyi judge: the parse function raised on %d answers (first: %s); counted as parse failures",
                len(parse_errors),
                self._scrub(parse_errors[0]),
            )


_CLIENTS: dict[JudgeConfig, JudgeClient] = {}
_CLIENTS_LOCK = threading.Lock()
_WARNED_DISABLED: set[frozenset[str]] = set()


def get_judge_client(config: JudgeConfig) -> JudgeClient:
    """The process-wide :class:`JudgeClient` for ``config`` (equal configs share one client, pool and stats)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(config)
        if client is None:
            client = _CLIENTS[config] = JudgeClient(config)
        return client


def warn_judge_disabled(metric_names: Sequence[str]) -> None:
    """Log once per process (per set of metric names) that these judge metrics are skipped and how to enable them."""
    names = frozenset(metric_names)
    with _CLIENTS_LOCK:
        if names in _WARNED_DISABLED:
            return
        _WARNED_DISABLED.add(names)
    logger.warning(
        "hanyi judge: LLM-judge metrics %s are not computed because no judge is configured. Set %s and %s "
        "(the API key is read from $OPENAI_API_KEY, or from the variable named by %s), or pass judge_base_url and "
        "judge_model in the task's metadata.",
        ", ".join(sorted(names)),
        ENV_VARS["base_url"][0],
        ENV_VARS["model"][0],
        ENV_VARS["api_key_env"][0],
    )
