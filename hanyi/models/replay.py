"""``--model replay``: answer every request from a recorded JSONL file.

Use it to re-score released model outputs with hanyi's metrics, and as a zero-cost model for overhead benchmarks::

    lmms-eval --model replay --model_args path=responses.jsonl --tasks punrebus_matching

Each line of the file is one record, matched to a doc either by position or by the doc's own fields:

* ``{"task": "punrebus_matching", "doc_id": 0, "response": "B"}``
* ``{"task": "punrebus_matching", "key": {"image_id": "mashangfenghou_1.jpg"}, "response": "C"}``

Key values are compared as strings, so ``{"question_id": 12}`` matches a doc whose ``question_id`` is ``"12"``.

lmms-eval's own response cache replays too (``--use_cache DIR``): ``path=DIR`` reads the responses it logged, one by
one and fsynced, as they were generated, so a run that died while scoring (or writing its sample logs) is re-scored
with no generation repeated. A cache holding several models' responses needs ``model_fingerprint=<hash>``.

lmms-eval's own sample logs replay too: ``path=`` may name a ``<date>_samples_<task>.jsonl`` file or the folder that
holds them. A line there has ``doc_id`` and ``filtered_resps`` (``resps`` when present) and no ``task``: the task
comes from the file name. The response is the one the run scored (hanyi's tasks use no response filter), so a run
whose scoring failed is re-scored without the model::

    lmms-eval --model replay --model_args path=out/my_model --tasks punrebus_textonly --log_samples --output_path out2
For ``loglikelihood`` / ``multiple_choice`` requests a record carries ``"loglikelihoods": [[logprob, is_greedy], ...]``
(one entry per choice, in choice order; a bare number means ``is_greedy = false``) instead of ``"response"``.

``touch_visuals=true`` makes the model call the task's ``doc_to_visual`` for every request, as a real model would
(so a broken image fails here too, and overhead benchmarks include image loading).

A request with no record raises :class:`ReplayRecordMissing` naming the task and the doc, unless
``on_missing=empty`` is given, which answers ``""`` (the task then counts it as an unparsed answer).

Input checks (each a :class:`ReplayFileError` naming the file and line): the line is UTF-8 JSON; ``doc_id`` is a
JSON integer (not ``1.9``, ``true``, ``"3"`` or ``1e400``); ``response`` is a string or ``null`` (``null`` answers
``""``), never an object, list, number or bool; ``loglikelihoods`` is a list of finite numbers or
``[number, bool]`` pairs. Warnings, with counts, on the ``hanyi.replay`` logger: duplicate records for one doc (the
last line wins), and records whose task is not being evaluated or whose ``doc_id``/``key`` matches no doc.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections import defaultdict

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms
from tqdm import tqdm

log = logging.getLogger("hanyi.replay")


class ReplayRecordMissing(LookupError):
    """No record in the replay file answers this request."""


class ReplayFileError(ValueError):
    """The replay file has a malformed line."""


def _norm(value) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def _type_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return {dict: "an object", list: "a list", bool: "a bool", str: "a string"}.get(type(value), type(value).__name__)


def _check_record(rec: dict, where: str) -> None:
    """Raise :class:`ReplayFileError` (``where`` = ``file:line``) unless the record's values have usable types."""
    if "doc_id" in rec and (isinstance(rec["doc_id"], bool) or not isinstance(rec["doc_id"], int)):
        raise ReplayFileError(f"{where}: doc_id must be an integer, got {rec['doc_id']!r}")
    if "response" in rec and rec["response"] is not None and not isinstance(rec["response"], str):
        raise ReplayFileError(f"{where}: response must be a string (or null), got {_type_name(rec['response'])}")
    if "loglikelihoods" in rec:
        values = rec["loglikelihoods"]

        def number(v):  # finite: json reads 1e400 and Infinity as inf
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

        if not isinstance(values, list) or not all(
            number(v) or (isinstance(v, list) and len(v) == 2 and number(v[0]) and isinstance(v[1], bool))
            for v in values
        ):
            raise ReplayFileError(
                f"{where}: loglikelihoods must be a list of finite numbers or [number, is_greedy] pairs "
                "(no NaN, no Infinity, no overflowing literal such as 1e400)"
            )


_SAMPLES_FILE = re.compile(r"_samples_(.+)\.jsonl$")


def _from_sample_log(rec: dict, task: str) -> dict:
    """An lmms-eval sample-log line as a replay record of ``task`` (the response of a ``generate_until`` doc)."""
    resps = rec.get("resps", rec.get("filtered_resps"))  # 0.7.3 writes only filtered_resps to disk
    while isinstance(resps, list) and len(resps) == 1:
        resps = resps[0]
    out = {"task": task, "doc_id": rec.get("doc_id")}
    if isinstance(resps, str):
        out["response"] = resps
    return out


_CACHE_AUDIT = "cache.audit.jsonl"


def cache_audit_files(path: str) -> list[str]:
    """The JSONL logs of an lmms-eval response cache (``--use_cache DIR``) under ``path``: ``DIR/cache.audit.jsonl``
    (the runs merged at the end of a finished run) and ``DIR/runs/<run>/rank_<r>.audit.jsonl`` of every run not
    merged (a run that died: its responses were appended and fsynced one by one). ``[]`` when ``path`` is no cache."""
    import glob

    if not os.path.isdir(path):
        return []
    files = [os.path.join(path, _CACHE_AUDIT)] if os.path.isfile(os.path.join(path, _CACHE_AUDIT)) else []
    for run in sorted(glob.glob(os.path.join(glob.escape(path), "runs", "*"))):
        if not os.path.exists(os.path.join(run, ".merged")):
            files += sorted(glob.glob(os.path.join(glob.escape(run), "rank_*.audit.jsonl")))
    return files


def replay_files(path: str) -> list[str]:
    """``[path]`` for a file; for a folder, every lmms-eval ``*_samples_<task>.jsonl`` in it (sorted), or the logs of
    an lmms-eval response cache (:func:`cache_audit_files`)."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, n) for n in os.listdir(path) if _SAMPLES_FILE.search(n))
        files = files or cache_audit_files(path)
        if not files:
            raise ReplayFileError(
                f"{path}: a folder given as path= must hold lmms-eval *_samples_<task>.jsonl files or be an lmms-eval "
                "response cache (--use_cache DIR, with cache.audit.jsonl or runs/*/rank_*.audit.jsonl)"
            )
        return files
    return [path]


def _audit_records(path: str, model: str | None = None) -> list[dict]:
    """Replay records from a response-cache log: one per doc, ``response`` for ``generate_until``, the choices'
    ``loglikelihoods`` in ``idx`` order otherwise. Entries of another model fingerprint than ``model`` are skipped;
    a log holding several models' responses with no ``model`` chosen is an error naming them."""
    merged: dict[tuple[str, int], dict] = {}
    models: set[str] = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=0)
    for lineno, line in enumerate(lines, 1):
        if line.strip():
            try:
                entry = json.loads(line)
                value = json.loads(entry["response"])
                task, doc_id, idx = str(entry["task_name"]), int(entry["doc_id"]), int(entry.get("idx", 0))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                if lineno == last and not line.endswith("}"):  # torn by a kill mid-write: that answer only is lost
                    log.warning("hanyi replay: %s:%d: torn last line skipped (a run killed mid-write)", path, lineno)
                    continue
                raise ReplayFileError(f"{path}:{lineno}: not an lmms-eval response-cache entry") from None
            fingerprint = entry.get("model_fingerprint_hash", "")
            if model and fingerprint != model:
                continue
            models.add(fingerprint)
            rec = merged.setdefault((task, doc_id), {"task": task, "doc_id": doc_id, "_audit_line": lineno})
            if entry.get("request_type") == "generate_until":
                rec["response"] = (
                    value if isinstance(value, str) else (value or [""])[0] if isinstance(value, list) else ""
                )
            else:
                rec.setdefault("_choices", {})[idx] = value
    if len(models) > 1:
        raise ReplayFileError(
            f"{path}: responses of {len(models)} models ({', '.join(sorted(models))}); choose one with "
            "--model_args path=...,model_fingerprint=<hash>"
        )
    out = []
    for rec in merged.values():
        choices = rec.pop("_choices", None)
        if choices is not None and "response" not in rec:
            rec["loglikelihoods"] = [choices[i] for i in sorted(choices)]
        out.append(rec)
    return out


def load_records(path: str, duplicates: list | None = None, model_fingerprint: str | None = None):
    """Parse a replay file into ``(by_doc_id, by_key)`` lookup tables. Raises :class:`ReplayFileError` on bad lines.

    A later record for the same doc replaces an earlier one; each replaced record's ``(task, doc, line)`` is
    appended to ``duplicates`` when given (a response cache's merged log and its runs' logs repeat the same
    responses: those are not counted).
    """
    by_doc_id: dict[tuple[str, int], dict] = {}
    by_key: dict[str, dict[tuple[str, ...], dict[tuple[str, ...], dict]]] = defaultdict(dict)
    for file in replay_files(path):
        if file.endswith(".audit.jsonl"):
            for rec in _audit_records(file, model_fingerprint):
                where = f"{file}:{rec.pop('_audit_line')}"
                _check_record(rec, where)
                old = by_doc_id.get((rec["task"], rec["doc_id"]))
                if old is not None and duplicates is not None and old.get("response") != rec.get("response"):
                    duplicates.append((rec["task"], f"doc_id {rec['doc_id']}", old["_line"], 0))
                if isinstance(rec.get("response"), str):
                    rec["response"] = _SURROGATE.sub("\ufffd", rec["response"])
                by_doc_id[rec["task"], rec["doc_id"]] = {**rec, "_line": 0}
            continue
        _load_file(file, by_doc_id, by_key, duplicates)
    return by_doc_id, dict(by_key)


#: Half of a UTF-16 surrogate pair: JSON can spell one (``"\ud800"``), UTF-8 cannot hold it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _load_file(path: str, by_doc_id: dict, by_key: dict, duplicates: list | None) -> None:
    sample_log = _SAMPLES_FILE.search(os.path.basename(path))
    repaired: list[str] = []
    try:
        _read_lines(path, sample_log, by_doc_id, by_key, duplicates, repaired)
    finally:
        if repaired:
            log.warning(
                "replay: %d response(s) with a lone surrogate (half a UTF-16 pair, e.g. a reply cut at max_tokens) "
                "repaired to U+FFFD; first: %s",
                len(repaired),
                repaired[0],
            )


def _read_lines(path, sample_log, by_doc_id, by_key, duplicates, repaired) -> None:
    from hanyi.jsonl import json_lines

    for lineno, rec in json_lines(path, ReplayFileError):
        where = f"{path}:{lineno}"
        if sample_log and isinstance(rec, dict) and "task" not in rec:
            rec = _from_sample_log(rec, sample_log.group(1))
        if not isinstance(rec, dict) or "task" not in rec:
            raise ReplayFileError(f"{where}: a record needs a 'task' field")
        if "response" not in rec and "loglikelihoods" not in rec:
            raise ReplayFileError(f"{where}: a record needs 'response' or 'loglikelihoods'")
        _check_record(rec, where)
        if isinstance(rec.get("response"), str) and _SURROGATE.search(rec["response"]):
            rec["response"] = _SURROGATE.sub("\ufffd", rec["response"])  # U+FFFD, as a UTF-8 decoder would
            repaired.append(where)
        rec = {**rec, "_line": lineno}
        task = str(rec["task"])
        if "doc_id" in rec:
            key, table, doc = (task, rec["doc_id"]), by_doc_id, f"doc_id {rec['doc_id']}"
        elif isinstance(rec.get("key"), dict) and rec["key"]:
            fields = tuple(sorted(rec["key"]))
            table = by_key[task].setdefault(fields, {})
            key, doc = tuple(_norm(rec["key"][k]) for k in fields), f"key {_norm(rec['key'])}"
        else:
            raise ReplayFileError(f"{where}: a record needs 'doc_id' or a non-empty 'key' object")
        if key in table and duplicates is not None:
            duplicates.append((task, doc, table[key]["_line"], lineno))
        table[key] = rec


class ReplayModel(lmms):
    """Simple lmms-eval model that looks each request up in a JSONL file (see the module docstring)."""

    is_simple = True

    def __init__(
        self,
        path: str = "",
        on_missing: str = "error",
        touch_visuals: bool = False,
        model_fingerprint: str = "",
        **kwargs,
    ) -> None:
        super().__init__()
        if not path:
            raise ValueError("replay needs --model_args path=<responses.jsonl>")
        if on_missing not in ("error", "empty"):
            raise ValueError("replay: on_missing must be 'error' or 'empty'")
        self.path = path
        self.on_missing = on_missing
        self.touch_visuals = str(touch_visuals).lower() in ("1", "true", "yes")
        duplicates: list = []
        self._by_doc_id, self._by_key = load_records(path, duplicates, model_fingerprint or None)
        if duplicates:
            task, doc, old, new = duplicates[0]
            log.warning(
                "replay: %d duplicate record(s) in %s; the last line wins (first: task %r %s, line %d replaced by "
                "line %d)",
                len(duplicates),
                path,
                task,
                doc,
                old,
                new,
            )
        self._key_index: dict[tuple[str, str, tuple[str, ...]], list[tuple[str, ...]]] = {}
        self.missing: list[tuple[str, int]] = []
        self.unmatched: dict[str, int] = {}
        self._checked_unmatched = False

    def _warn_unmatched(self, requests) -> None:
        """Once: count records whose task is not evaluated, or whose doc_id / key matches no doc, and warn."""
        if self._checked_unmatched:
            return
        self._checked_unmatched = True
        task_dict = getattr(self, "task_dict", None) or {}
        splits = {req.args[4]: req.args[5] for req in requests if len(req.args) >= 6}
        no_task, no_doc = 0, 0
        for (task, doc_id), _rec in self._by_doc_id.items():
            if task not in task_dict:
                no_task += 1
            elif task in splits and not 0 <= doc_id < len(task_dict[task][splits[task]]):
                no_doc += 1
        for task, tables in self._by_key.items():
            if task not in task_dict:
                no_task += sum(len(t) for t in tables.values())
            elif task in splits:
                split = splits[task]
                for fields, table in tables.items():
                    try:
                        known = {self._doc_key(task, split, i, fields) for i in range(len(task_dict[task][split]))}
                    except ReplayRecordMissing:
                        continue  # reported when a request looks it up
                    no_doc += sum(1 for k in table if k not in known)
        self.unmatched = {"no_task": no_task, "no_doc": no_doc}
        if no_task or no_doc:
            log.warning(
                "replay: %d record(s) in %s name a task not being evaluated (tasks: %s) and %d match no doc of "
                "their task; they are ignored",
                no_task,
                self.path,
                ", ".join(sorted(task_dict)) or "none",
                no_doc,
            )

    @property
    def device(self):
        """Where the evaluator puts the tensors it gathers across ranks (replay itself computes nothing).

        Under ``accelerate launch`` the evaluator gives every model an ``accelerator``: its device. Under ``torchrun``
        the collectives use the process group's backend: NCCL needs this rank's GPU, gloo the CPU.
        """
        import torch

        accelerator = getattr(self, "accelerator", None)
        if accelerator is not None:
            return accelerator.device
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized() and dist.get_backend() == "nccl":
            return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        return torch.device("cpu")

    def _doc_key(self, task: str, split: str, doc_id: int, fields: tuple[str, ...]) -> tuple[str, ...]:
        cache_key = (task, split, fields)
        if cache_key not in self._key_index:
            docs = self.task_dict[task][split]
            absent = [f for f in fields if f not in docs.column_names]
            if absent:
                raise ReplayRecordMissing(
                    f"replay: task {task!r} docs have no field(s) {absent} used as record keys in {self.path}"
                )
            columns = docs.select_columns(list(fields))[:]
            self._key_index[cache_key] = [tuple(_norm(v) for v in row) for row in zip(*(columns[f] for f in fields))]
        return self._key_index[cache_key][doc_id]

    def _record(self, task: str, split: str, doc_id: int) -> dict | None:
        rec = self._by_doc_id.get((task, doc_id))
        if rec is not None:
            return rec
        for fields, table in self._by_key.get(task, {}).items():
            rec = table.get(self._doc_key(task, split, doc_id, fields))
            if rec is not None:
                return rec
        return None

    def _missing(self, task: str, split: str, doc_id: int, what: str):
        self.missing.append((task, doc_id))
        if self.on_missing == "error":
            raise ReplayRecordMissing(
                f"replay: no recorded {what} for task {task!r}, doc_id {doc_id} (split {split!r}) in {self.path}. "
                "Add a record with this doc_id or a 'key' of the doc's fields, or pass on_missing=empty."
            )

    def generate_until(self, requests: list[Instance]) -> list[str]:
        self._warn_unmatched(requests)
        out = []
        for req in tqdm(requests, desc="Replaying", disable=len(requests) < 50):
            _ctx, _gen_kwargs, doc_to_visual, doc_id, task, split = req.args[:6]
            if self.touch_visuals and callable(doc_to_visual):
                doc_to_visual(self.task_dict[task][split][doc_id])
            rec = self._record(task, split, doc_id)
            if rec is None or "response" not in rec:
                self._missing(task, split, doc_id, "response")
                out.append("")
                continue
            resp = rec["response"]
            out.append("" if resp is None else str(resp))
        return out

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        self._warn_unmatched(requests)
        out = []
        for req in requests:
            _ctx, _target, _visual, doc_id, task, split = req.args[:6]
            rec = self._record(task, split, doc_id)
            values = None if rec is None else rec.get("loglikelihoods")
            idx = getattr(req, "idx", 0) or 0
            if not values or idx >= len(values):
                self._missing(task, split, doc_id, f"loglikelihood for choice {idx}")
                out.append((float("-inf"), False))
                continue
            item = values[idx]
            out.append((float(item[0]), bool(item[1])) if isinstance(item, (list, tuple)) else (float(item), False))
        return out

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)
