"""The board's rows as **Every Eval Ever** records (evaleval/every_eval_ever, ``eval.schema.json`` v0.2.2, the
newest tagged schema), and their check against the vendored schema (``schema/eval.schema.json``, MIT, with its
``LICENSE``) by the reference validator, ``jsonschema`` (:func:`check`; a test dependency, imported on use), or by
the small draft-07 validator below (:func:`validate`, no dependency).

The records also meet main's 0.3.0 (``schema/eval.schema.0.3.0.json``) where the board knows what it requires:
``model_info.additional_details`` carries ``deployment_type`` and ``model_availability`` (from the model card's
``open_weights``; ``unknown`` otherwise), each judge's ``model_info`` too, and the judge's version where the protocol
records one. One record is valid against both schemas: 0.2.2 takes every field 0.3.0 asks for.

Layout (:func:`datastore_paths`): the Every Eval Ever repository's own,
``data/<benchmark>/<developer>/<model>/<uuid>.json`` with the per-doc results beside it as ``<uuid>_samples.jsonl``;
the site writes both under ``eee/`` so that ``eee/data/`` can be copied into that repository as it is. The developer
folder is the Hugging Face id's owner (``pretrained=org/name``), else the model card's organisation, else
``unknown-developer`` (that repository's validator warns about a record whose identity names no folder); the uuid
is derived from the benchmark and the submission's sha256 (a version-4 uuid, the same on every rebuild).
``detailed_evaluation_results`` names the jsonl by that repository-relative path (0.3.0's pattern), with its sha256
and line count.

The jsonl (:func:`samples`): one line per doc of the submission's predictions, valid against the instance-level
schema (``schema/instance_level_eval.schema.json``, 0.3.0; the same as 0.2.2's but for its version label), linked
to one ``evaluation_results`` item by ``evaluation_result_id`` (the column): the first column of the doc's task, the
ranking column first, that has a per-doc score for the doc. Every Eval Ever asks for one line per (doc, metric); the
board writes one per doc, with the doc's scores on the task's other columns in ``metadata`` (``score.<metric>``), so
that a record's file stays near the size of the predictions it comes from (times the task's columns otherwise: 37
for CII-Bench with its categories). ``input.raw`` names the doc (task, doc id), not the question: the board does not
re-host the benchmarks' questions and images; ``metadata.doc_hash`` is the doc's content hash, the submission's own.
``evaluation.score`` is the per-doc score the column averages (0-1 for a share, the judge's 1-5 or 1-10),
``is_correct`` whether it is the metric's best per-doc value. A doc with no per-doc score in any column of the
section (no line) is counted in ``detailed_evaluation_results.additional_details``.

Values: :func:`metric_config` gives each metric its direction (``lower_is_better`` for miss, blank and failure rates,
failure and missing counts and CVLUE's mean rank) and its range (1-5 for CII-Bench's CTC judge scores, 1-10 for Pun
Rebus' expression judge, 0-100 for BLEU and METEOR x 100, 0 to the docs scored for a count). ``evaluation_timestamp``
is ISO 8601 (lmms-eval's ``20261120_100000`` date is rewritten); ``retrieved_timestamp`` Unix seconds, as the schema
says; ``eval_library.version`` a plain release (``0.7.3``), never a branch or a path.

One record per ranked submission row of a section: every column with a value is one ``evaluation_results`` item
carrying its 95 % interval (``score_details.uncertainty.confidence_interval``), its standard error
(``uncertainty.standard_error``, where the ranking computed one) and, for a judged metric, the judge
(``metric_config.llm_scoring.judges``). Reference rows (the papers' own numbers) are not evaluation runs of this board
and get no record.

Schema v0.2.1 has no ``dedupe_identity`` object, and its top level takes no other key (``additionalProperties:
false``): the submission's content hash is written where v0.2.1 takes free strings, as
``source_metadata.additional_details["dedupe_identity.content_hash"] = "sha256:<hex>"``, and is also the last part
of ``evaluation_id`` (one submission, one record).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import uuid

from hanyi import __version__
from hanyi.leaderboard.entries import Row, Section
from hanyi.redact import redact_text, redact_tree

SCHEMA_VERSION = "0.2.2"
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schema", "eval.schema.json")
#: main's schema, for the fields a 0.3.0 reader requires (see the module docstring).
SCHEMA_0_3_0_PATH = os.path.join(os.path.dirname(__file__), "schema", "eval.schema.0.3.0.json")
#: the schema of each line of a record's ``<uuid>_samples.jsonl`` (0.3.0; 0.2.2's differs only in its version label)
INSTANCE_SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schema", "instance_level_eval.schema.json")


def load_schema(path: str = SCHEMA_PATH) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check(record: dict, path: str = SCHEMA_PATH) -> list[str]:
    """The reference validator's (``jsonschema``, draft-07) objections to ``record``, one line each."""
    import jsonschema

    schema = load_schema(path)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(record), key=lambda e: list(e.absolute_path))
    return [f"$.{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors]


#: Metrics where less is better: the failure, miss and blank rates and counts, CVLUE VD's mean rank of the gold.
_LOWER = re.compile(r"(^|_)(miss_rate|blank_rate|failure_rate|failures|missing|unresolved|mean_rank)(_|$)")
#: Counts of docs (no share): 0 up to the docs scored.
_COUNT = re.compile(r"(^|_)(failures|missing|unresolved|docs)$")


def lower_is_better(metric: str) -> bool:
    """Whether a smaller value of ``metric`` is better.

    >>> [lower_is_better(m) for m in ("acc", "miss_rate", "ctc_blank_rate", "ctc_judge_failures", "mean_rank",
    ...                               "answer_rate", "parse_failure_rate", "caption_missing", "json_valid_rate")]
    [False, True, True, True, True, False, True, True, False]
    """
    return bool(_LOWER.search(metric))


def plain_version(text: str | None) -> str:
    """A release number out of what a run recorded (``0.7.3``, ``v0.7.3``, ``lmms-eval 0.7.3``); ``unknown`` for a
    branch, a commit or a path.

    >>> plain_version("0.7.3"), plain_version("v0.7.3"), plain_version("main@1a2b3c"), plain_version("/home/a/lmms")
    ('0.7.3', '0.7.3', 'unknown', 'unknown')
    """
    found = re.fullmatch(r"\s*(?:[A-Za-z_-]+\s+)?v?(\d+(?:\.\d+)+(?:[.-]?(?:a|b|rc|post|dev)\d*)?)\s*", str(text or ""))
    return found.group(1) if found else "unknown"


def iso_timestamp(text: str | None) -> str | None:
    """A run's date as ISO 8601: lmms-eval's ``YYYYMMDD_HHMMSS`` rewritten, an ISO date kept, else ``None``.

    >>> iso_timestamp("20261120_100000"), iso_timestamp("2026-11-20T10:00:00"), iso_timestamp("yesterday")
    ('2026-11-20T10:00:00', '2026-11-20T10:00:00', None)
    """
    import datetime

    text = str(text or "").strip()
    found = re.fullmatch(r"(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})(?:\.\d+)?", text)
    if found:
        y, mo, d, h, mi, sec = found.groups()
        text = f"{y}-{mo}-{d}T{h}:{mi}:{sec}"
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        return None


def score_range(metric: str, n: int | None = None) -> tuple[float, float]:
    """The range of a metric's value in the unit lmms-eval prints it (``metric_config.min_score``/``max_score``);
    ``n``: the docs scored, the top of a count.

    >>> score_range("acc"), score_range("bleu4_robust"), score_range("judge_score"), score_range("mean_rank")
    ((0.0, 1.0), (0.0, 100.0), (1.0, 10.0), (1.0, 100.0))
    >>> score_range("ctc_score"), score_range("ctc_score_emotion_negative"), score_range("ctc_judge_failures", 40)
    ((1.0, 5.0), (1.0, 5.0), (0.0, 40.0))
    """
    if _COUNT.search(metric):
        return 0.0, float(max(n or 0, 1))
    if metric == "ctc_score" or metric.startswith("ctc_score_"):  # CII-Bench CTC: the judge's 1-5 (docs/cii.md)
        return 1.0, 5.0
    if metric == "layer_score" or metric.startswith("layer_score_"):  # VULCA-Bench L1-L5 layer score, 1-5
        return 1.0, 5.0
    if metric.startswith("bleu4") or metric.startswith("meteor"):  # BLEU and METEOR x 100 (docs/unpie.md)
        return 0.0, 100.0
    if metric.startswith("judge_score"):  # Pun Rebus expression: the judge's 1-10 verdicts (docs/punrebus.md)
        return 1.0, 10.0
    if metric == "mean_rank":  # CVLUE VD: the gold's rank among 100 candidates (docs/cvlue.md)
        return 1.0, 100.0
    return 0.0, 1.0  # every other column: a share or a mean of per-doc scores in [0, 1]


def _strings(mapping: dict) -> dict[str, str]:
    """``additional_details`` of v0.2.1 takes strings only; ``None`` values are left out."""
    return {
        str(k): v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in mapping.items() if v is not None
    }


def _model_id(model: str, model_args: str) -> str:
    """The model's id as Every Eval Ever asks (the Hugging Face id): ``pretrained=`` of ``model_args``, else the model.

    >>> _model_id("llava_hf", "pretrained=llava-hf/llava-1.5-7b-hf,dtype=float16"), _model_id("replay", "")
    ('llava-hf/llava-1.5-7b-hf', 'replay')
    """
    found = re.search(r"(?:^|,)\s*(?:pretrained|model|model_name)=([^,]+)", model_args or "")
    if not found:
        return model
    ident = found.group(1).strip()
    # a local checkpoint folder names the submitter's machine: its last part is the id
    return os.path.basename(ident.rstrip("/\\")) if ident.startswith(("/", "~", "\\")) or ":\\" in ident else ident


def _source_data(task: str, provenance: dict, n: int | None) -> dict:
    source = provenance.get("data_source") if isinstance(provenance.get("data_source"), dict) else {}
    details = _strings({k: v for k, v in source.items() if k not in ("hub_id",)})
    if source.get("kind") == "hub" and source.get("hub_id"):
        out = {"dataset_name": task, "source_type": "hf_dataset", "hf_repo": str(source["hub_id"])}
        if n is not None:
            out["samples_number"] = int(n)
    else:  # the bundled sample or a folder written by hanyi prepare
        out = {"dataset_name": task, "source_type": "other"}
    if details:
        out["additional_details"] = details
    return out


def _result(section: Section, row: Row, column: str, retrieved: str) -> dict | None:
    cell, entry = row.cells.get(column), row.entry
    if cell is None or cell.value is None or not math.isfinite(cell.value):
        return None
    task, _, metric = column.partition("/")
    protocol = entry.protocol.get(task) or {}
    provenance = entry.provenance.get(task) or {}
    low, high = score_range(metric, cell.n)
    config = {
        "evaluation_description": f"hanyi task {task}, metric {metric}, re-scored by the board",
        "metric_id": f"hanyi.{task}.{metric}",
        "metric_name": metric,
        "lower_is_better": column in section.lower_is_better or lower_is_better(metric),
        "score_type": "continuous",
        "min_score": low,
        "max_score": high,
    }
    if protocol:
        config["additional_details"] = _strings({f"protocol.{k}": v for k, v in protocol.items()})
    if column in entry.judged:
        judge = protocol.get("judge_model") or provenance.get("judge_model") or "unknown"
        judge_info = {
            "name": str(judge),
            "id": str(judge),
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        }
        if protocol.get("judge_version"):
            judge_info["additional_details"]["judge_version"] = str(protocol["judge_version"])
        config["llm_scoring"] = {
            "judges": [{"model_info": judge_info}],
            "input_prompt": f"hanyi {entry.hanyi_version} judge prompt of {task} (logged per doc as 'prompt')",
            "additional_details": {"verdicts": entry.judged[column]},
        }
    uncertainty: dict = {}
    if cell.stderr is not None and math.isfinite(cell.stderr):
        uncertainty["standard_error"] = {"value": cell.stderr, "method": cell.method or "unstated"}
    if cell.low is not None and cell.high is not None:
        uncertainty["confidence_interval"] = {"lower": cell.low, "upper": cell.high, "confidence_level": 0.95}
        if cell.method:
            uncertainty["confidence_interval"]["method"] = cell.method
    if cell.n is not None:
        uncertainty["num_samples"] = int(cell.n)
    score = {"score": cell.value}
    claim = (getattr(entry, "unverified", None) or {}).get(column)
    details = {"note": cell.note or None, "unverified": f"the submitter's claim: {claim}" if claim else None}
    if column == section.ranking_column:
        details.update(rank=row.rank, rank_low=row.rank_low, rank_high=row.rank_high, tier=row.tier, flip=row.flip)
    if any(v is not None for v in details.values()):
        score["details"] = _strings(details)
    if uncertainty:
        score["uncertainty"] = uncertainty
    return {
        "evaluation_result_id": column,  # the join key of the jsonl's lines
        "evaluation_name": column,
        "source_data": _source_data(task, provenance, cell.n),
        **({"evaluation_timestamp": when} if (when := iso_timestamp(entry.date)) else {}),
        "metric_config": config,
        "score_details": score,
    }


def record(section: Section, row: Row, retrieved: str) -> dict | None:
    """The Every Eval Ever record of one submission row (``None`` for a reference row or a row with no value), its
    credentials masked and no path of the submitter's machine in it; ``retrieved``: when the board built it, Unix
    seconds as a string (the schema's convention). Without ``detailed_evaluation_results``: :func:`attach_samples`
    adds it once the jsonl is written."""
    entry = row.entry
    if row.reference or entry is None:
        return None
    results = [r for c in section.columns if (r := _result(section, row, c, retrieved)) is not None]
    if not results:
        return None
    apart = "; ".join(section.apart) if section.apart else None
    card = getattr(entry, "card", None) or {}
    availability = {True: "open_weights", False: "closed_weights"}.get(card.get("open_weights"), "unknown")
    model_details = {
        "lmms_eval_model": entry.model,
        "model_args": entry.model_args,
        "deployment_type": deployment_type(entry.model),
        "model_availability": availability,
        **{f"card.{k}": v for k, v in card.items() if k not in ("name", "organisation")},
    }
    out = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"hanyi_{section.benchmark}/{_model_id(entry.model, entry.model_args)}/{entry.submission_hash}",
        **({"evaluation_timestamp": when} if (when := iso_timestamp(entry.date)) else {}),
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "hanyi leaderboard",
            "source_type": "evaluation_run",
            "source_organization_name": "hanyi leaderboard maintainers",
            "evaluator_relationship": "third_party",
            "additional_details": _strings(
                {
                    "dedupe_identity.content_hash": f"sha256:{entry.submission_hash}",
                    "benchmark": section.benchmark,
                    "section": "ranked apart: " + apart if apart else "main",
                    "board_hanyi_version": __version__,
                }
            ),
        },
        "model_info": {
            "name": getattr(entry, "display_name", None) or row.label,
            "id": _model_id(entry.model, entry.model_args),
            **({"developer": card["organisation"]} if card.get("organisation") else {}),
            "additional_details": _strings(model_details),
        },
        "eval_library": {
            "name": "lmms-eval",
            "version": plain_version(entry.lmms_eval_version),
            "additional_details": {"task_plugin": "hanyi", "hanyi_version": plain_version(entry.hanyi_version)},
        },
        "evaluation_results": results,
    }
    return redact_tree(_no_paths(out))


#: lmms-eval model classes that call a hosted API (the rest run where the submitter ran them; ``replay`` reads a file).
_API_MODELS = re.compile(r"(?i)^(openai|gpt4v|gpt4o|batch_gpt4|claude|gemini_api|reka|openai_compatible|srt_api|"
                         r"vllm_api|api|.*_api)$")  # fmt: skip


def deployment_type(model: str) -> str:
    """Every Eval Ever 0.3.0's ``deployment_type`` from the lmms-eval model class.

    >>> deployment_type("llava_hf"), deployment_type("openai_compatible"), deployment_type("replay")
    ('self_deployed', 'externally_managed', 'unknown')
    """
    if model in ("replay", "", None):
        return "unknown"
    return "externally_managed" if _API_MODELS.match(model) else "self_deployed"


def _no_paths(value):
    """Every string of a record with the absolute paths of the submitter's machine cut to their last part."""
    from hanyi.leaderboard.pages import scrub_paths

    if isinstance(value, str):
        return scrub_paths(value)
    if isinstance(value, dict):
        return {k: _no_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_paths(v) for v in value]
    return value


# ---- the Every Eval Ever repository's layout and the per-doc jsonl ---------------------------------------------------

#: What no folder name of that repository may hold (its validator's rule), plus ``/`` and DEL.
_UNSAFE_PATH = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
#: a folder name of the layout stays this short (the filesystems' 255 bytes, with room for UTF-8)
_COMPONENT_MAX = 80


def path_component(text) -> str | None:
    """One folder name of the layout from an identity part: as Every Eval Ever's publisher files it where it would
    (``:`` becomes ``_``), made safe where it would refuse (any character no filesystem takes, or unprintable,
    becomes ``_``; a trailing dot or space goes; a Windows device name gets a leading ``_``); ``None`` for a part
    that names nothing (empty, ``unknown``, ``.``, ``..``, ``data``).

    >>> path_component("Qwen2.5-VL-7B"), path_component("gpt-4o:2024"), path_component("Lab 3."), path_component("..")
    ('Qwen2.5-VL-7B', 'gpt-4o_2024', 'Lab 3', None)
    >>> path_component("con"), path_component("a*b\\u202ec"), path_component("unknown")
    ('_con', 'a_b_c', None)
    """
    text = _UNSAFE_PATH.sub("_", str(text or "").strip())
    text = "".join(c if c.isprintable() else "_" for c in text)[:_COMPONENT_MAX].rstrip(". ")
    if not text or text.lower() in ("unknown", "data") or text in (".", ".."):
        return None
    return "_" + text if text.split(".", 1)[0].upper() in _WINDOWS_RESERVED else text


def file_uuid(benchmark: str, submission_hash: str, k: int = 0) -> str:
    """The record's file name: a version-4 uuid (the layout's rule) drawn from the benchmark and the submission's
    sha256, so that a rebuild names it the same (``k``: the next one, should two rows share both).

    >>> u = file_uuid("cii", "c" * 64); u == file_uuid("cii", "c" * 64), u[14], u != file_uuid("cvlue", "c" * 64)
    (True, '4', True)
    """
    digest = hashlib.sha256(f"hanyi-eee\0{benchmark}\0{submission_hash}\0{k}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def datastore_paths(benchmark: str, rec: dict, file_id: str) -> tuple[str, str]:
    """``(record, samples)``: the repository-relative paths of a record and its jsonl in the Every Eval Ever
    layout, ``data/<benchmark>/<developer>/<model>/<uuid>.json`` and ``<uuid>_samples.jsonl``. The developer is
    the owner part of ``model_info.id`` (further parts join the model's name with ``_``), else
    ``model_info.developer``, else ``unknown-developer``.

    >>> rec = {"model_info": {"id": "Qwen/Qwen2.5-VL-7B-Instruct", "developer": "Alibaba"}}
    >>> datastore_paths("cii", rec, "u")[0]
    'data/cii/Qwen/Qwen2.5-VL-7B-Instruct/u.json'
    >>> datastore_paths("cii", {"model_info": {"id": "qwen7b", "developer": "Alibaba"}}, "u")[1]
    'data/cii/Alibaba/qwen7b/u_samples.jsonl'
    >>> datastore_paths("cii", {"model_info": {"id": "../../etc/passwd"}}, "u")[0]
    'data/cii/unknown-developer/etc_passwd/u.json'
    >>> datastore_paths("cii", {"model_info": {"id": "m", "developer": "Basic AI"}}, "u")[0]
    'data/cii/Basic_AI/m/u.json'
    """
    info = rec.get("model_info") or {}
    parts = [p for p in str(info.get("id") or "").split("/") if p.strip()]
    developer = None
    if len(parts) >= 2:
        developer, parts = path_component(parts[0]), parts[1:]
        if developer is None:  # an owner part that names nothing: the rest is still the model
            developer = path_component(info.get("developer"))
    else:
        developer = path_component(info.get("developer"))
    model = "_".join(c for c in map(path_component, parts) if c)[:_COMPONENT_MAX].rstrip(". ") or "unknown-model"
    parts = ["data", path_component(benchmark) or "benchmark", developer or "unknown-developer", model]
    folder = "/".join(parts)
    if redact_text(folder) != folder:  # a name the site's masks would cut ("Basic AI"): plain characters only
        folder = "/".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", p) for p in parts)
    return f"{folder}/{file_id}.json", f"{folder}/{file_id}_samples.jsonl"


def _masked(text: str) -> str:
    """A string the jsonl composes out of the copy's (a JSON text of a target, ``key: value`` of a verdict):
    masked again, since joining a clean key to a clean value can make a ``token: ...`` the masks cut."""
    from hanyi.leaderboard.pages import scrub_paths

    return scrub_paths(redact_text(text))


def _strs(value) -> list[str]:
    """A target or a response as the jsonl's list of strings."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [v if isinstance(v, str) else _masked(json.dumps(v, ensure_ascii=False, sort_keys=True)) for v in items]


def _extracted(pred: dict) -> tuple[list[str], str]:
    """``(output.raw, extracted value)`` of one prediction: its response, or the chosen choice of a
    multiple-choice doc; the value the scorer parsed where the evidence keeps it (``pred``), else the response."""
    response = pred.get("response")
    if response is None and isinstance(pred.get("loglikelihoods"), list):
        lls = [c[0] for c in pred["loglikelihoods"] if isinstance(c, list) and c and isinstance(c[0], (int, float))]
        response = f"choice {lls.index(max(lls))} of {len(lls)} (log-likelihoods)" if lls else None
    raw = _strs(response)
    ev = pred.get("evidence") if isinstance(pred.get("evidence"), dict) else {}
    parsed = ev.get("pred")
    if isinstance(parsed, (str, int, float)) and not isinstance(parsed, bool):
        return raw, str(parsed)
    return raw, raw[0] if len(raw) == 1 else _masked(" ".join(raw))


def _best_per_doc(section: Section, entry, task: str, metric: str) -> float:
    """The best value one doc can score on ``task/metric`` (per-doc unit): the top of the metric's range, or its
    bottom where lower is better."""
    low, high = score_range(metric, 1)
    scale = (entry.scales.get(task) or {}).get(metric) or 1.0
    lower = f"{task}/{metric}" in section.lower_is_better or lower_is_better(metric)
    return (low if lower else high) / scale


def samples(rec: dict, section: Section, row: Row, doc) -> tuple[list[str], int]:
    """``(lines, docs left out)``: the jsonl of one record, one JSON line per doc of ``doc`` (the submission file as
    the site copied it: credentials masked, no path of the submitter's machine) in the tasks of the section's
    columns, each valid against the instance-level schema. A doc with no per-doc score in any column of its task is
    left out (counted)."""
    from hanyi.leaderboard.pages import _category, _verdict

    entry = row.entry
    tasks = doc.get("tasks") if isinstance(doc, dict) and isinstance(doc.get("tasks"), dict) else {}
    in_record = {r["evaluation_result_id"] for r in rec["evaluation_results"]}
    by_task: dict[str, list[str]] = {}
    for column in sorted(section.columns, key=lambda c: c != section.ranking_column):  # the ranking column first
        task, _, metric = column.partition("/")
        if column in in_record:
            by_task.setdefault(task, []).append(metric)
    lines, left_out = [], 0
    for task in sorted(t for t in tasks if t in by_task):
        preds = tasks[task].get("predictions") if isinstance(tasks[task], dict) else None
        per_doc = entry.per_doc.get(task) or {}
        for pred in preds if isinstance(preds, list) else ():
            d = pred.get("doc_id") if isinstance(pred, dict) else None
            if not isinstance(d, int) or isinstance(d, bool):
                continue
            scored = [(m, per_doc[m][d]) for m in by_task[task] if d in (per_doc.get(m) or {})]
            scored = [(m, v) for m, v in scored if isinstance(v, (int, float)) and math.isfinite(v)]
            if not scored:
                left_out += 1
                continue
            metric, score = scored[0]
            raw, extracted = _extracted(pred)
            reference = _strs(pred.get("target"))
            ident = f"hanyi {task} doc {d}"
            key = json.dumps({"raw": ident, "reference": reference}, sort_keys=True, separators=(",", ":"))
            metadata = {"task": task, "doc_id": str(d), "doc_hash": pred.get("doc_hash"),
                        "category": _masked(_category(pred)), "verdict": _masked(_verdict(None, pred.get("verdicts"))),
                        **{f"score.{m}": repr(float(v)) for m, v in scored[1:]}}  # fmt: skip
            column = f"{task}/{metric}"
            line = {
                "schema_version": rec["schema_version"],
                "evaluation_id": rec["evaluation_id"],
                "model_id": rec["model_info"]["id"],
                "evaluation_name": column,
                "evaluation_result_id": column,
                "sample_id": f"{task}/{d}",
                "sample_hash": hashlib.sha256(key.encode("utf-8")).hexdigest(),
                "interaction_type": "single_turn",
                "input": {"raw": ident, "reference": reference},
                "output": {"raw": raw},
                "answer_attribution": [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": extracted,
                        "extraction_method": "llm_judge" if column in entry.judged else f"hanyi {task} scorer",
                        "is_terminal": True,
                    }
                ],
                "evaluation": {
                    "score": float(score),
                    "is_correct": abs(float(score) - _best_per_doc(section, entry, task, metric)) < 1e-9,
                },
                "metadata": {k: str(v) for k, v in metadata.items() if v not in (None, "", "-")},
            }
            # No second pass of the masks over the whole line (three quarters of the time on CVLUE's 27,000 docs):
            # every string is the copy's or the record's (both masked), a column the record kept as it is, a number,
            # or composed here and masked (_masked)
            lines.append(json.dumps(line, ensure_ascii=False))
    return lines, left_out


def attach_samples(rec: dict, path: str, data: bytes, rows: int, left_out: int) -> dict:
    """``rec`` with ``detailed_evaluation_results`` naming its jsonl (``path``, repository-relative) as 0.3.0 asks:
    ``jsonl``, the sha256 of ``data`` (the bytes written), the line count."""
    details = {"lines": "one per doc, linked to the first column of its task with a per-doc score (ranking first)"}
    if left_out:
        details["docs_without_a_per_doc_score"] = str(left_out)
    detailed = {"format": "jsonl", "file_path": path, "hash_algorithm": "sha256"}
    detailed |= {"checksum": hashlib.sha256(data).hexdigest(), "total_rows": rows, "additional_details": details}
    return {**rec, "detailed_evaluation_results": detailed}


# A validator of the draft-07 keywords the vendored schema uses (jsonschema is no dependency of hanyi). A keyword it
# does not know raises: it never passes a record by ignoring part of the schema.
_ANNOTATIONS = {"description", "$schema", "version", "default", "title", "$defs", "definitions", "$id", "$comment"}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(instance, schema: dict, root: dict | None = None, where: str = "$") -> list[str]:
    """The ways ``instance`` breaks ``schema`` (a draft-07 subset: type, required, properties, additionalProperties,
    enum, const, pattern, items, minItems, minimum, maximum, local $ref, oneOf, anyOf, allOf, not, if/then/else),
    one line each.

    >>> validate({"a": 1}, {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}}})
    ["$: 'b' is required", '$.a: 1 is not of type string']
    """
    root = schema if root is None else root
    errors: list[str] = []
    unknown = set(schema) - _ANNOTATIONS - _KEYWORDS
    if unknown:
        raise ValueError(f"{where}: schema keyword(s) {sorted(unknown)} not supported by this validator")
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"{where}: only local $ref supported, not {ref}")
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        errors += validate(instance, target, root, where)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            return errors + [f"{where}: {instance!r:.60} is not of type {'/'.join(types)}"]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{where}: {instance!r:.60} is not one of {schema['enum']}")
    if "const" in schema and instance != schema["const"]:
        errors.append(f"{where}: {instance!r:.60} is not {schema['const']!r}")
    if "pattern" in schema and isinstance(instance, str) and not re.search(schema["pattern"], instance):
        errors.append(f"{where}: {instance!r:.60} does not match {schema['pattern']!r}")
    if "not" in schema and not validate(instance, schema["not"], root, where):
        errors.append(f"{where}: {instance!r:.60} should not be valid under {schema['not']!r}")
    if _TYPES["number"](instance):
        if "minimum" in schema and instance < schema["minimum"]:
            errors.append(f"{where}: {instance} < minimum {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            errors.append(f"{where}: {instance} > maximum {schema['maximum']}")
    if isinstance(instance, dict):
        errors += [f"{where}: {k!r} is required" for k in schema.get("required", ()) if k not in instance]
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if key in props:
                errors += validate(value, props[key], root, f"{where}.{key}")
            elif extra is False:
                errors.append(f"{where}: additional property {key!r} not allowed")
            elif isinstance(extra, dict):
                errors += validate(value, extra, root, f"{where}.{key}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, value in enumerate(instance):
                errors += validate(value, schema["items"], root, f"{where}[{i}]")
    for sub in schema.get("allOf", ()):
        errors += validate(instance, sub, root, where)
    if "anyOf" in schema and all(validate(instance, s, root, where) for s in schema["anyOf"]):
        errors.append(f"{where}: matches none of anyOf")
    if "oneOf" in schema:
        matched = sum(not validate(instance, s, root, where) for s in schema["oneOf"])
        if matched != 1:
            errors.append(f"{where}: matches {matched} of oneOf's {len(schema['oneOf'])} schemas, not exactly one")
    if "if" in schema:
        branch = "then" if not validate(instance, schema["if"], root, where) else "else"
        if branch in schema:
            errors += validate(instance, schema[branch], root, where)
    return errors


_KEYWORDS = {
    "$ref", "type", "enum", "const", "pattern", "not", "minimum", "maximum", "required", "properties",
    "additionalProperties",
    "minItems", "items", "allOf", "anyOf", "oneOf", "if", "then", "else",
}  # fmt: skip
