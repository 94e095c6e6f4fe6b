"""A fake OpenAI-compatible judge for tests and benchmarks: ``POST /v1/chat/completions`` on 127.0.0.1 only.

Behaviour is set at start-up or at any time with :meth:`FakeJudgeServer.configure`:

* ``failure_rate``: fraction of requests answered with an error status drawn from ``failure_statuses``
  (default 429 and 500), decided by a ``random.Random(seed)``;
* ``delay_s``: seconds each request takes before it is answered (counted as in flight);
* ``garbage_rate``: fraction of successful answers replaced by text with no score or verdict in it;
* ``answer``: ``callable(messages) -> str`` giving the judge's answer (default: ``"Score: N"`` with N in 1..5
  derived from the last message);
* ``echo_auth_in_errors``: error bodies quote the ``Authorization`` header (to test key scrubbing);
* ``drip_s``: a 200 answer's body is sent one byte every ``drip_s`` seconds (a slow-dripping server);
* ``drip_headers_s``: the status line and headers are sent one byte every ``drip_headers_s`` seconds;
* ``truncate_json``: a 200 answer's body is cut to its first half (a truncated JSON body with a correct length).

Counters: ``total_requests``, ``max_in_flight``, ``last_authorization``, ``status_counts``, ``cut_off`` (drips
the client hung up on).

    with serve_fake_judge(delay_s=0.05, failure_rate=0.3) as judge:
        config = JudgeConfig(base_url=judge.base_url, model="fake")
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GARBAGE_ANSWER = "I am unable to decide about this one."


def default_answer(messages: list[dict]) -> str:
    """``"Score: N"`` with N in 1..5, a deterministic function of the last message's content."""
    content = json.dumps(messages[-1].get("content", ""), ensure_ascii=False) if messages else ""
    return f"Score: {int(hashlib.sha256(content.encode()).hexdigest(), 16) % 5 + 1}"


class FakeJudgeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = False

    def __init__(self, port: int = 0, **options: Any):  # port 0: a free one
        super().__init__(("127.0.0.1", port), _Handler)
        self.lock = threading.Lock()
        self.failure_rate = 0.0
        self.failure_statuses: tuple[int, ...] = (429, 500)
        self.delay_s = 0.0
        self.garbage_rate = 0.0
        self.answer: Callable[[list[dict]], str] = default_answer
        self.echo_auth_in_errors = False
        self.drip_s = 0.0
        self.drip_headers_s = 0.0
        self.truncate_json = False
        self.seed = 0
        self.configure(**options)
        self.reset_counters()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def configure(self, **options: Any) -> None:
        with self.lock:
            for name, value in options.items():
                if name not in {"failure_rate", "failure_statuses", "delay_s", "garbage_rate", "answer",
                                "echo_auth_in_errors", "seed", "drip_s", "drip_headers_s", "truncate_json"}:  # fmt: skip
                    raise TypeError(f"unknown fake judge option {name!r}")
                setattr(self, name, value)
            if "seed" in options or not hasattr(self, "rng"):
                self.rng = random.Random(self.seed)

    def reset_counters(self) -> None:
        with self.lock:
            self.total_requests = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.last_authorization: str | None = None
            self.status_counts: Counter[int] = Counter()
            self.cut_off = 0

    def _admit(self, authorization: str | None) -> tuple[int | None, bool]:
        """Count one request in; return (error status or None, garbage?)."""
        with self.lock:
            self.total_requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.last_authorization = authorization
            fail = self.rng.random() < self.failure_rate
            status = self.rng.choice(self.failure_statuses) if fail else None
            garbage = self.rng.random() < self.garbage_rate
            return status, garbage

    def _release(self, status: int) -> None:
        with self.lock:
            self.in_flight -= 1
            self.status_counts[status] += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; avoid the 40 ms delayed-ACK stall
    server: FakeJudgeServer

    def log_message(self, format: str, *args: Any) -> None:  # silence the per-request stderr lines
        pass

    def _send(self, status: int, body: dict) -> None:
        self._out_of_flight(status)  # before the answer goes out: its client may send the next request at once
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        if status == 200 and self.server.truncate_json:
            data = data[: len(data) // 2]
        if self.server.drip_headers_s:  # status line and headers one byte at a time, then the body at once
            head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            self._drip(head.encode() + data, self.server.drip_headers_s, len(head))
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if status == 200 and self.server.drip_s:
            self._drip(data, self.server.drip_s, len(data))
            return
        self.wfile.write(data)

    def _drip(self, data: bytes, every_s: float, slow: int) -> None:
        """Send the first ``slow`` bytes of ``data`` one every ``every_s`` seconds, then the rest."""
        try:
            for i in range(slow):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(every_s)
            self.wfile.write(data[slow:])
        except OSError:  # the client gave up: expected
            self.close_connection = True
            with self.server.lock:
                self.server.cut_off += 1

    def _out_of_flight(self, status: int) -> None:
        """Count this request out once (each request has its own connection and thread when the client keeps none
        alive: counted out after the answer was written, a finished request overlapped its client's next one)."""
        if getattr(self, "_admitted", False):
            self._admitted = False
            self.server._release(status)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        authorization = self.headers.get("Authorization")
        status, garbage = self.server._admit(authorization)
        self._admitted, sent = True, 500
        try:
            time.sleep(self.server.delay_s)
            if status is not None:
                quoted = f" (you sent {authorization})" if self.server.echo_auth_in_errors else ""
                sent = status
                self._send(status, {"error": {"message": f"injected failure{quoted}", "code": status}})
                return
            try:
                request = json.loads(body)
                content = GARBAGE_ANSWER if garbage else self.server.answer(request["messages"])
            except Exception as exc:  # a broken request or answer function: answer 500, do not hang the client
                self._send(500, {"error": {"message": f"fake judge error: {type(exc).__name__}"}})
                return
            sent = 200
            self._send(200, {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": request.get("model", "fake"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            })  # fmt: skip
        finally:
            self._out_of_flight(sent)


@contextmanager
def serve_fake_judge(port: int = 0, **options: Any) -> Iterator[FakeJudgeServer]:
    """Run a :class:`FakeJudgeServer` on 127.0.0.1 (``port``, default a random free one) for the ``with`` block."""
    server = FakeJudgeServer(port, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
