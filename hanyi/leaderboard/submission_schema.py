"""The declared schema of a ``hanyi-submission`` file as the board reads it, and the one validation pass over a whole
document that runs before anything else uses it.

The format is what ``hanyi submit`` writes (:mod:`hanyi.submit.hanyi_format`; ``docs/reading-results.md``). It is
declared here as pydantic 2 models rather than a JSON Schema because pydantic is already a runtime dependency (through
lmms-eval) while ``jsonschema`` is only in the test extra, and because its Rust core parses and validates a 60 MB
file in about a second, where a pure-Python validator takes minutes: the board must stay linear and fast on hostile
input. Validation is strict (no ``"1"`` for ``1``, no ``true`` for a number, no NaN or infinity) and reports every
error, never the first one only.

:func:`validate` returns ``(document, problems)``: every problem one line, grouped when many predictions share it
(``tasks.cii_none.predictions[*].doc_id: ... (450,000 places; first: ...)``), in the order cheap checks first: the
JSON itself, the shape (the models below), then what needs the installed tasks (a task name that is no task, a task
of another benchmark, a verdict under a key the task does not declare as judged), the split's doc ids (each once, in
linear time) and the names (:mod:`hanyi.leaderboard.names`). The re-score (:mod:`hanyi.leaderboard.intake`) runs only
on a document with no problem.
"""

from __future__ import annotations

import collections
import re
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from hanyi import BENCHMARKS

FORMAT_NAME = "hanyi-submission"
#: The most lines one document's problems take; the rest are counted on the last line.
MAX_LINES = 40
#: The most tasks one document may hold (the largest benchmark has under 100).
MAX_TASKS = 200
#: Longest model name or key the board shows (longer is oversized, not a name).
MAX_NAME = 200

_STRICT = ConfigDict(strict=True, extra="allow", allow_inf_nan=False, hide_input_in_errors=True)

Number = Union[StrictInt, StrictFloat]
#: One choice's ``[log-likelihood, is_greedy]`` (a JSON array: a tuple in lax mode, its items strict).
Choice = Annotated[tuple[Number, StrictBool], Strict(False)]


class Provenance(BaseModel):
    """The fields of a task's ``provenance`` the board reads (the rest is kept as shown)."""

    model_config = _STRICT
    limit: Union[StrictInt, StrictStr, None] = None
    data_source: dict[str, Any] | None = None
    scorer_backends: dict[str, Any] | None = None
    judge_model: StrictStr | None = None


class Prediction(BaseModel):
    """One doc's answer: text (or null) or the choices' log-likelihoods, and the judged fields' logged items."""

    model_config = _STRICT
    doc_id: StrictInt = Field(ge=0)
    doc_hash: StrictStr | None = None  # required from version 2 (checked in PredictionV2)
    response: StrictStr | None
    loglikelihoods: list[Choice] | None = Field(default=None, min_length=1)
    verdicts: dict[StrictStr, dict[StrictStr, Any]] | None = None


class PredictionV2(Prediction):
    doc_hash: StrictStr = Field(min_length=1, max_length=MAX_NAME)


class Task(BaseModel):
    """One task of a version-1 file: claimed metrics and per-doc predictions."""

    model_config = _STRICT
    version: Union[StrictStr, Number, None] = None
    metrics: dict[StrictStr, Number]
    predictions: list[Prediction] = Field(min_length=1)
    provenance: Provenance = Field(default_factory=Provenance)


class TaskV2(Task):
    predictions: list[PredictionV2] = Field(min_length=1)
    data_fingerprint: StrictStr = Field(min_length=1, max_length=MAX_NAME)
    prompt_variant: StrictStr | None = None


class Header(BaseModel):
    """What says which schema a document follows."""

    model_config = _STRICT
    format: Literal["hanyi-submission"]
    version: Literal[1, 2]


class SubmissionV1(Header):
    benchmark: Literal[BENCHMARKS]  # type: ignore[valid-type]
    model: StrictStr = Field(min_length=1, max_length=MAX_NAME)
    model_args: StrictStr | None = None
    date: StrictStr | None = None
    tasks: dict[StrictStr, Task] = Field(min_length=1, max_length=MAX_TASKS)
    model_card: dict[str, Any] | None = None


class SubmissionV2(SubmissionV1):
    """Version 2 (what the board checks): doc hashes, data fingerprints and the versions the run used."""

    hanyi_version: StrictStr = Field(min_length=1, max_length=MAX_NAME)
    lmms_eval_version: StrictStr = Field(min_length=1, max_length=MAX_NAME)
    tasks: dict[StrictStr, TaskV2] = Field(min_length=1, max_length=MAX_TASKS)


SCHEMAS = {1: SubmissionV1, 2: SubmissionV2}


def parse(raw: bytes) -> tuple[Any, list[str]]:
    """``(the JSON value, problems)`` of a file's bytes: UTF-8 JSON, no NaN or infinity, no lone surrogate (text
    that cannot be written back out), at most the parser's nesting depth."""
    from pydantic_core import from_json

    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [f"not UTF-8 (byte {exc.start})"]
    try:
        return from_json(raw, allow_inf_nan=False), []
    except ValueError as exc:
        hint = " (a lone UTF-16 surrogate escape is no text)" if "escape" in str(exc) else ""
        return None, [f"malformed JSON: {str(exc)[:200]}{hint}"]


def validate(raw: bytes, *, known_tasks=None) -> tuple[Any, list[str]]:
    """The one validation pass (module docstring) over a file's bytes: ``(document or None, problems)``.

    ``known_tasks(benchmark) -> {task: judged metric keys}`` gives the installed tasks (default:
    :func:`installed_tasks`); tests pass a table to fuzz the pass without lmms-eval.
    """
    import gc

    # A large document allocates millions of objects at once: the cyclic collector would walk the whole heap (the
    # loaded lmms-eval and torch included) again and again while they are made; none of them forms a cycle.
    enabled = gc.isenabled()
    gc.disable()
    try:
        doc, problems = parse(raw)
        if problems:
            return None, problems
        return doc, check_document(doc, known_tasks=known_tasks)
    finally:
        if enabled:
            gc.enable()


def check_document(doc, *, known_tasks=None) -> list[str]:
    """Every problem of a parsed document, one line each (``[]``: nothing the board can see before re-scoring)."""
    if not isinstance(doc, dict):
        return ["not a hanyi-submission: the JSON is not an object"]
    try:
        head = Header.model_validate(doc)
    except ValidationError as exc:
        return [f"not a {FORMAT_NAME}: format/version must be {FORMAT_NAME!r}/1 or 2 ({lines(exc, limit=1)[0]})"]
    problems: list[str] = []
    try:
        SCHEMAS[head.version].model_validate(doc)
    except ValidationError as exc:
        problems += lines(exc)
    if head.version == 1:
        problems.append(
            f"{FORMAT_NAME} version 1 has no per-doc content hashes, data fingerprint or judge verdicts, which the "
            "board checks: re-write it with `hanyi submit` of hanyi >= 0.6 (version 2)"
        )
        return problems
    problems += _task_problems(doc, known_tasks or installed_tasks, explain=known_tasks is None)
    problems += _name_problems(doc)
    return problems


def _task_problems(doc: dict, known_tasks, explain: bool) -> list[str]:
    """Tasks that are no task of this benchmark, doc ids twice, verdicts under undeclared keys: linear in the size."""
    tasks = doc.get("tasks")
    benchmark = doc.get("benchmark")
    if not isinstance(tasks, dict) or benchmark not in BENCHMARKS:
        return []
    installed = known_tasks(benchmark)
    out = []
    for name, task in tasks.items():
        if name not in installed:
            why = _why_not_a_task(name, benchmark) if explain else f"no such task of {benchmark}"
            out.append(f"{show(name)}: {why}")
            continue
        if not isinstance(task, dict) or not isinstance(task.get("predictions"), list):
            continue
        preds = [p for p in task["predictions"] if isinstance(p, dict)]
        ids = collections.Counter(p["doc_id"] for p in preds if type(p.get("doc_id")) is int)
        twice = sorted(i for i, n in ids.items() if n > 1)
        if twice:
            out.append(f"{show(name)}: {len(twice)} doc id(s) predicted twice (first: doc {twice[0]})")
        judged = installed[name]
        keys = collections.Counter(
            k for p in preds if isinstance(p.get("verdicts"), dict) for k in p["verdicts"] if k not in judged
        )
        for key, n in sorted(keys.items(), key=lambda kv: str(kv[0]))[:MAX_LINES]:
            declared = ", ".join(sorted(judged)) or "none"
            out.append(
                f"{show(name)}: a verdict under {show(key)} in {n} prediction(s), which the task does not declare as "
                f"a judged metric (its judged metrics: {declared}); a submitter's verdict never replaces the board's "
                "re-score"
            )
    return out


def _why_not_a_task(name: str, benchmark: str) -> str:
    tm = _task_manager()
    if tm._name_is_group(name) or tm._name_is_tag(name):
        return "a group or tag, not a task: submit its tasks one by one (as `hanyi submit` writes them)"
    if name in tm.all_subtasks:
        return f"not a task of {benchmark}"
    return f"no such task of {benchmark} in the installed hanyi"


def _name_problems(doc: dict) -> list[str]:
    from hanyi.leaderboard.names import name_problems
    from hanyi.submit.model_card import card_problems

    out = []
    if isinstance(doc.get("model"), str):
        out += [f"model: {p}" for p in name_problems(doc["model"])]
    card = doc.get("model_card")
    if isinstance(card, dict):
        try:
            out += [f"model_card: {p}" for p in card_problems(card)]
        except Exception as exc:  # a card the card check cannot read is the submitter's problem, one line
            out.append(f"model_card: unreadable ({type(exc).__name__})")
    return out


def lines(exc: ValidationError, limit: int = MAX_LINES) -> list[str]:
    """One line per kind of error: the location with every list index as ``[*]``, the message, how many places and
    the first; at most ``limit`` lines, the rest counted on the last."""
    groups: dict[tuple, list] = {}
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = err.get("loc") or ()
        msg = re.sub(r"a valid dictionary or instance of \w+", "a JSON object", err.get("msg", "invalid"))
        key = (tuple("[*]" if isinstance(p, int) else p for p in loc), msg)
        groups.setdefault(key, [0, loc])[0] += 1
    out = []
    for (pattern, msg), (count, first) in groups.items():
        if len(out) == limit - 1 and len(groups) > limit:
            out.append(f"... and {len(groups) - len(out)} more kinds of problem")
            break
        where = _loc(pattern if count > 1 else first) or "the document"
        more = f" ({count:,} places; first: {_loc(first)})" if count > 1 else ""
        out.append(f"{where}: {msg}{more}")
    return out


def _loc(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[*]":
            out += part
        else:
            out += ("." if out else "") + show(str(part), 60)
    return out


def show(text, limit: int = 80) -> str:
    """A submitted key or name as a reason quotes it: control, format (bidi) and surrogate characters as ``\\uXXXX``,
    at most ``limit`` characters, so a reason never renders as something it is not."""
    import unicodedata

    text = str(text)
    cut = text[:limit]
    out = "".join(
        c if unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") else f"\\u{ord(c):04x}"
        for c in cut
    )
    return out + ("..." if len(text) > limit else "")


# ---- the installed tasks ---------------------------------------------------------------------------------------------
def _task_manager():
    from hanyi.leaderboard.tasks_index import task_manager

    return task_manager()


def installed_tasks(benchmark: str) -> dict[str, frozenset]:
    """``{task: the metric keys it declares as judged}`` of the installed tasks of ``benchmark`` (tasks only: a group
    or tag such as ``cii`` is no task)."""
    from hanyi.results.runs import benchmark_of

    tm = _task_manager()
    return {
        t: judged_metrics(t)
        for t in tm.all_subtasks
        if not tm._name_is_group(t) and not tm._name_is_tag(t) and benchmark_of(t) == benchmark
    }


def judged_metrics(task: str) -> frozenset:
    """The keys under which ``task`` logs a judge's verdict: the only keys a ``verdicts`` object may hold. Declared
    by each benchmark's constants (the metric its judge scores), never read from a submission."""
    if task == "cii_ctc":
        from hanyi.metrics.cii_aggregations import CTC_METRICS
        from hanyi.tasks.cii.ctc import CTC_FAILURES

        return frozenset([*CTC_METRICS, CTC_FAILURES])
    if task == "punrebus_expression":
        from hanyi.tasks.punrebus.constants import JUDGE_METRIC

        return frozenset([JUDGE_METRIC])
    if task.startswith("unpie_reconstruction"):
        from hanyi.tasks.unpie.constants import JUDGE_METRIC

        return frozenset([JUDGE_METRIC])
    if task.startswith("vulca_bench_"):  # VULCA-Bench, another benchmark than VULCA (whose prefix it shares)
        from hanyi.tasks.vulca_bench.constants import JUDGE_METRIC

        return frozenset([JUDGE_METRIC])
    if task.startswith("vulca_"):
        from hanyi.submit.hanyi_format import JUDGED_FIELDS

        return frozenset(JUDGED_FIELDS)
    return frozenset()
