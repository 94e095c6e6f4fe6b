"""``--model replay``: answer every request from a recorded JSONL file.

Use it to re-score released model outputs with hanyi's metrics, and as a zero-cost model for overhead benchmarks::

    lmms-eval --model replay --model_args path=responses.jsonl --tasks punrebus_matching

Each line of the file is one record, matched to a doc either by position or by the doc's own fields:

* ``{"task": "punrebus_matching", "doc_id": 0, "response": "B"}``
* ``{"task": "punrebus_matching", "key": {"image_id": "mashangfenghou_1.jpg"}, "response": "C"}``

Key values are compared as strings, so ``{"question_id": 12}`` matches a doc whose ``question_id`` is ``"12"``.
For ``loglikelihood`` / ``multiple_choice`` requests a record carries ``"loglikelihoods": [[logprob, is_greedy], ...]``
(one entry per choice, in choice order; a bare number means ``is_greedy = false``) instead of ``"response"``.

``touch_visuals=true`` makes the model call the task's ``doc_to_visual`` for every request, as a real model would
(so a broken image fails here too, and overhead benchmarks include image loading).

A request with no record raises :class:`ReplayRecordMissing` naming the task and the doc, unless
``on_missing=empty`` is given, which answers ``""`` (the task then counts it as an unparsed answer).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms
from tqdm import tqdm


class ReplayRecordMissing(LookupError):
    """No record in the replay file answers this request."""


class ReplayFileError(ValueError):
    """The replay file has a malformed line."""


def _norm(value) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def load_records(path: str):
    """Parse a replay file into ``(by_doc_id, by_key)`` lookup tables. Raises :class:`ReplayFileError` on bad lines."""
    by_doc_id: dict[tuple[str, int], dict] = {}
    by_key: dict[str, dict[tuple[str, ...], dict[tuple[str, ...], dict]]] = defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReplayFileError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict) or "task" not in rec:
                raise ReplayFileError(f"{path}:{lineno}: a record needs a 'task' field")
            if "response" not in rec and "loglikelihoods" not in rec:
                raise ReplayFileError(f"{path}:{lineno}: a record needs 'response' or 'loglikelihoods'")
            task = str(rec["task"])
            if "doc_id" in rec:
                by_doc_id[(task, int(rec["doc_id"]))] = rec
            elif isinstance(rec.get("key"), dict) and rec["key"]:
                fields = tuple(sorted(rec["key"]))
                by_key[task].setdefault(fields, {})[tuple(_norm(rec["key"][k]) for k in fields)] = rec
            else:
                raise ReplayFileError(f"{path}:{lineno}: a record needs 'doc_id' or a non-empty 'key' object")
    return by_doc_id, dict(by_key)


class ReplayModel(lmms):
    """Simple lmms-eval model that looks each request up in a JSONL file (see the module docstring)."""

    is_simple = True

    def __init__(self, path: str = "", on_missing: str = "error", touch_visuals: bool = False, **kwargs) -> None:
        super().__init__()
        if not path:
            raise ValueError("replay needs --model_args path=<responses.jsonl>")
        if on_missing not in ("error", "empty"):
            raise ValueError("replay: on_missing must be 'error' or 'empty'")
        self.path = path
        self.on_missing = on_missing
        self.touch_visuals = str(touch_visuals).lower() in ("1", "true", "yes")
        self._by_doc_id, self._by_key = load_records(path)
        self._key_index: dict[tuple[str, str, tuple[str, ...]], list[tuple[str, ...]]] = {}
        self.missing: list[tuple[str, int]] = []

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
