"""Served models: every benchmark group through lmms-eval's own OpenAI-compatible clients (``openai``,
``async_openai``), the way a vLLM or SGLang server is used at scale, against a chat-completions server this module
starts on 127.0.0.1 (docs/run-at-scale.md).

Checked per request: it carries every image the task's ``doc_to_visual`` (or ``doc_to_messages``) gives, pixel for
pixel (lmms-eval encodes PNG, lossless, and never resizes a still image on this path), the prompt text is the task's
own (``doc_to_text``), and the task's generation settings reach it (``max_tokens``, ``temperature``); the scores equal
a replay of the same answers. Then a server that fails mid-run (5xx, a dropped connection, no answer in time) under
``hanyi eval --use_cache``: the failed requests are not cached as answers, the exit status says so (3), and the same
command asks the server for those requests only.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("lmms_eval")
pytest.importorskip("openai")

GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")
LIMIT = 2
#: Answers of the fake model, picked from the prompt: a letter, a box, Chinese and English text (every parser sees
#: something it reads and something it does not).
ANSWERS = ("A", "B", "[0.1, 0.2, 0.6, 0.7]", "马上封侯：马与猴，寓意加官进爵。", "The pun is on 'bank'.", "D. 年年有余")


def _texts(messages) -> list[str]:
    out = []
    for m in messages:
        content = m["content"]
        parts = [content] if isinstance(content, str) else content
        out += [p if isinstance(p, str) else p["text"] for p in parts if isinstance(p, str) or p.get("type") == "text"]
    return out


def _answer(body: dict) -> str:
    digest = hashlib.sha256("\0".join(_texts(body["messages"])).encode("utf-8")).digest()
    return ANSWERS[digest[0] % len(ANSWERS)]


class ChatServer(ThreadingHTTPServer):
    """``POST /v1/chat/completions``: records each request body; ``fail(body)`` may say ``"500"``, ``"drop"`` (the
    connection is closed with no answer) or ``"slow"`` (the answer comes after ``slow_s``)."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        self.fail = None
        self.slow_s = 3.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def take(self) -> list[dict]:
        with self.lock:
            bodies, self.bodies = self.bodies, []
        return bodies


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ChatServer

    def log_message(self, format, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with self.server.lock:
            self.server.bodies.append(body)
        action = self.server.fail(body) if self.server.fail else None
        if action == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if action == "slow":
            time.sleep(self.server.slow_s)
        status = 500 if action == "500" else 200
        answer = {"error": {"message": "injected", "type": "server_error"}} if status == 500 else {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": _answer(body)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip
        data = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up on a slow answer
            self.close_connection = True


@contextmanager
def serve_chat():
    server = ChatServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def chat_server():
    with serve_chat() as server:
        yield server


def _model_args(name: str, server: ChatServer) -> str:
    args = f"model=served-model,base_url={server.base_url},api_key=test-key,max_retries=1"
    return args + (",num_concurrent=4" if name == "openai" else ",num_cpus=4,timeout=30")


@pytest.fixture(scope="module")
def served_runs(evaluate, chat_server):
    """One run of the five groups per client (``--limit 2`` per task), and the requests each sent."""
    runs = {}
    for name in ("openai", "async_openai"):
        chat_server.take()
        res = evaluate(GROUPS, name, model_args=_model_args(name, chat_server), limit=LIMIT)
        runs[name] = (res, chat_server.take())
    return runs


def _leaves(tree) -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out |= _leaves(value)
        else:
            out[key if isinstance(key, str) else getattr(key, "task_name", key)] = value
    return out


def _pixels(image) -> str:
    from PIL import Image

    if not isinstance(image, Image.Image):
        image = Image.open(image)
    image = image.convert("RGB")
    return hashlib.sha256(repr(image.size).encode() + image.tobytes()).hexdigest()


def _decoded(url: str) -> str:
    from PIL import Image

    header, _, data = url.partition(",")
    assert header == "data:image/png;base64", header  # lmms-eval's default encoding: lossless
    return _pixels(Image.open(io.BytesIO(base64.b64decode(data))))


def _sent(body: dict) -> tuple:
    """What a request carried: its text parts and the decoded pixels of its images, in order."""
    texts, images = [], []
    for m in body["messages"]:
        for part in [m["content"]] if isinstance(m["content"], str) else m["content"]:
            if isinstance(part, str) or part.get("type") == "text":
                texts.append(part if isinstance(part, str) else part["text"])
            elif part.get("type") == "image_url":
                images.append(_decoded(part["image_url"]["url"]))
    return tuple(texts), tuple(images)


def _expected(task, doc) -> tuple:
    """What the task asks for this doc: its own messages, else ``doc_to_visual`` + ``doc_to_text``."""
    if callable(task.config.doc_to_messages):
        texts, images = [], []
        fn = task.config.doc_to_messages
        for m in fn(doc, lmms_eval_specific_kwargs=getattr(task, "lmms_eval_specific_kwargs", None)):
            for part in [m["content"]] if isinstance(m["content"], str) else m["content"]:
                if isinstance(part, str) or part.get("type") == "text":
                    texts.append(part if isinstance(part, str) else part["text"])
                elif part.get("type") == "image":
                    images.append(_pixels(part["url"]))
        return tuple(texts), tuple(images)
    return (task.doc_to_text(doc),), tuple(_pixels(v) for v in task.doc_to_visual(doc) or [])


@pytest.fixture(scope="module")
def tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    return _leaves(get_task_dict(list(GROUPS), task_manager))


@pytest.mark.slow
@pytest.mark.parametrize("client", ["openai", "async_openai"])
def test_each_request_carries_the_tasks_images_prompt_and_settings(served_runs, tasks, client):
    res, bodies = served_runs[client]
    sent = [_sent(b) for b in bodies]
    assert len(bodies) == sum(len(s) for s in res["samples"].values())  # one request per doc, no retry
    assert set(res["samples"]) == set(tasks), "every task of the five groups ran"
    for name, samples in res["samples"].items():
        task = tasks[name]
        docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
        kwargs = task.config.generation_kwargs or {}
        for s in samples:
            texts, images = _expected(task, docs[s["doc_id"]])
            assert images or not task.config.doc_to_visual, f"{name} doc {s['doc_id']}: a VLM doc with no image"
            matching = [b for b, got in zip(bodies, sent) if got == (texts, images)]
            assert matching, f"{name} doc {s['doc_id']}: no request carried its prompt and {len(images)} image(s)"
            body = matching[0]
            assert body["max_tokens"] == kwargs.get("max_new_tokens", 1024), name
            assert body["temperature"] == kwargs.get("temperature", 0), name
            assert "stop" not in body  # neither client sends the task's `until` (docs/run-at-scale.md)
            if client == "openai" and kwargs.get("top_p") is not None:
                assert body["top_p"] == kwargs["top_p"], name


def _numbers(results: dict) -> dict:
    return {
        (task, key): value
        for task, row in results.items()
        for key, value in row.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and "stderr" not in key
    }


@pytest.mark.slow
def test_scores_equal_a_replay_of_the_same_answers(served_runs, replay):
    runs = {name: res for name, (res, _) in served_runs.items()}
    records = [
        {"task": task, "doc_id": s["doc_id"], "response": s["resps"][0][0] if s["resps"] else ""}
        for task, samples in runs["openai"]["samples"].items()
        for s in samples
    ]
    assert all(r["response"] in ANSWERS for r in records)  # every answer is the server's
    replayed = _numbers(replay(records, list(GROUPS), limit=LIMIT)["results"])
    assert replayed
    from hanyi.results.provenance import task_provenance

    for name, res in runs.items():  # the provenance says the answers came from a served model, and which
        backend = task_provenance(res, "cvlue_vqa", None)["model_backend"]
        assert backend["engine"] == "openai-compatible server" and backend["served_model"] == "served-model", name
    for name, res in runs.items():
        got = _numbers(res["results"])
        assert got.keys() == replayed.keys(), name
        differ = {
            k: (got[k], v) for k, v in replayed.items() if not (got[k] == v or (math.isnan(got[k]) and math.isnan(v)))
        }
        assert not differ, f"{name}: {differ}"


# --- a server that fails mid-run ------------------------------------------------------------------------------------

FAIL_TASKS = "cvlue_vqa,punrebus_matching"
FAIL_LIMIT = 4


def _request_key(body: dict) -> str:
    """A request's identity: its messages, images included (Pun Rebus matching asks the same text of every image)."""
    return hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode("utf-8")).hexdigest()


def _hanyi_eval(server: ChatServer, cache, out, tmp_path, label: str) -> subprocess.CompletedProcess:
    hanyi = os.path.join(os.path.dirname(sys.executable), "hanyi")
    args = f"model=served-model,base_url={server.base_url},api_key=test-key,max_retries=2,retry_backoff_s=0"
    cmd = [hanyi, "eval", "--model", "async_openai", "--model_args", args + ",num_cpus=4,timeout=1"]
    cmd += ["--tasks", FAIL_TASKS, "--limit", str(FAIL_LIMIT), "--use_cache", str(cache)]
    cmd += ["--output_path", str(out / label), "--log_samples"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_JUDGE")}
    return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=500)


@pytest.mark.slow
def test_a_server_failing_mid_run_loses_no_answer_and_the_exit_status_says_so(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    with serve_chat() as server:
        doomed: dict[str, str] = {}  # prompt -> how the server fails it, every time it is asked

        def fail(body):
            key = _request_key(body)
            with server.lock:
                if key not in doomed and len(doomed) < 3 and len(server.bodies) > 2:  # mid-run: after 2 answers
                    doomed[key] = ("500", "drop", "slow")[len(doomed)]
            return doomed.get(key)

        server.fail = fail
        first = _hanyi_eval(server, cache, out, tmp_path, "first")
        assert first.returncode == 3, first.stderr[-3000:]
        assert "3 request(s) got no answer from the model" in first.stderr, first.stderr[-3000:]
        assert "exit status 3" in first.stderr.splitlines()[-1]
        asked_first = len(server.take())

        server.fail = None  # the server is back
        second = _hanyi_eval(server, cache, out, tmp_path, "second")
        assert second.returncode == 0, second.stderr[-3000:]
        asked = server.take()
        assert {_request_key(b) for b in asked} == set(doomed), "only the 3 unanswered were asked"
        assert len(asked) == 3 and asked_first > 2 * FAIL_LIMIT
    samples = {p.name.split("_samples_")[1]: p for p in (out / "second").rglob("*_samples_*.jsonl")}
    assert sorted(samples) == sorted(f"{t}.jsonl" for t in FAIL_TASKS.split(","))
    for path in samples.values():
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        assert len(lines) == FAIL_LIMIT
        assert not [s for s in lines if str(s["filtered_resps"][0]).startswith("[LMMS_EVAL")]
