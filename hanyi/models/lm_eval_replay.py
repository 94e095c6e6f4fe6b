"""``lm_eval --model replay``: the replay model (:mod:`hanyi.models.replay`) for lm-evaluation-harness.

Same record format, same file, so one replay file serves both harnesses::

    lm_eval --model replay --model_args path=responses.jsonl --tasks punrebus_textonly

* ``{"task": "punrebus_textonly", "doc_id": 0, "response": "B"}`` (doc_id: position in the task's docs, the same
  in both harnesses because the docs come from the same data and the same ``process_docs``), or
* ``{"task": "punrebus_textonly", "key": {"story_pinyin": "anjutu"}, "response": "B"}`` (matched by doc fields,
  compared as strings).

``multiple_choice`` / ``loglikelihood`` requests read ``"loglikelihoods": [[logprob, is_greedy], ...]`` (one per
choice, in choice order). A request with no record raises :class:`hanyi.models.replay.ReplayRecordMissing` naming
the task and the doc, unless ``on_missing=empty`` (answers ``""``, or ``-inf`` for a likelihood).

Registered by hanyi's start-up hook when lm-eval's task module loads (``hanyi.host.discovery``), or through the
``lm_eval.models`` entry point once lm-eval reads one (``docs/upstream/0004-*.patch``).
"""

from __future__ import annotations

from hanyi.models.replay import ReplayRecordMissing, _norm, load_records

try:
    from lm_eval.api.model import LM
except ImportError:  # the lm-eval extra is not installed: importable (docs, doctests), not usable
    LM = object


class ReplayLM(LM):
    """lm-eval model that looks each request up in a replay JSONL file (see the module docstring)."""

    def __init__(self, path: str = "", on_missing: str = "error", **_ignored) -> None:
        if LM is object:
            raise ImportError("lm_eval is not installed: pip install 'hanyi[lm-eval]'")
        super().__init__()
        if not path:
            raise ValueError("replay needs --model_args path=<responses.jsonl>")
        if on_missing not in ("error", "empty"):
            raise ValueError("replay: on_missing must be 'error' or 'empty'")
        self.path, self.on_missing = str(path), on_missing
        self._by_doc_id, self._by_key = load_records(self.path)
        self.missing: list[tuple[str, int]] = []

    def _record(self, req) -> dict | None:
        task, doc_id, doc = req.task_name, req.doc_id, req.doc
        rec = self._by_doc_id.get((task, int(doc_id)))
        if rec is not None:
            return rec
        for fields, table in self._by_key.get(task, {}).items():
            absent = [f for f in fields if f not in doc]
            if absent:
                raise ReplayRecordMissing(
                    f"replay: task {task!r} docs have no field(s) {absent} used as record keys in {self.path}"
                )
            rec = table.get(tuple(_norm(doc[f]) for f in fields))
            if rec is not None:
                return rec
        return None

    def _missing(self, req, what: str) -> None:
        self.missing.append((req.task_name, req.doc_id))
        if self.on_missing == "error":
            raise ReplayRecordMissing(
                f"replay: no recorded {what} for task {req.task_name!r}, doc_id {req.doc_id} in {self.path}. "
                "Add a record with this doc_id or a 'key' of the doc's fields, or pass on_missing=empty."
            )

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in requests:
            rec = self._record(req)
            if rec is None or "response" not in rec:
                self._missing(req, "response")
                out.append("")
                continue
            out.append("" if rec["response"] is None else str(rec["response"]))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        out = []
        for req in requests:
            rec = self._record(req)
            values, idx = (None if rec is None else rec.get("loglikelihoods")), req.idx or 0
            if not values or idx >= len(values):
                self._missing(req, f"loglikelihood for choice {idx}")
                out.append((float("-inf"), False))
                continue
            item = values[idx]
            out.append((float(item[0]), bool(item[1])) if isinstance(item, (list, tuple)) else (float(item), False))
        return out

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("replay: no hanyi task uses loglikelihood_rolling")
