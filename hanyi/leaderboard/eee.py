"""The board's rows as **Every Eval Ever** records (evaleval/every_eval_ever, ``eval.schema.json`` v0.2.2, the
newest tagged schema), and their check against the vendored schema (``schema/eval.schema.json``, MIT, with its
``LICENSE``) by the reference validator, ``jsonschema`` (:func:`check`; a test dependency, imported on use), or by
the small draft-07 validator below (:func:`validate`, no dependency).

The records also meet what main's 0.3.0 (``schema/eval.schema.0.3.0.json``) requires where the board knows it:
``model_info.additional_details`` carries ``deployment_type`` and ``model_availability`` (from the model card's
``open_weights``; ``unknown`` otherwise), each judge's ``model_info`` too, and the judge's version where the protocol
records one. 0.3.0 also wants the detailed results as ``jsonl`` under the Every Eval Ever repository's own
``data/...`` layout: the board links its per-doc predictions file (the submission itself, ``json``), which 0.2.2
accepts; that one field is left to an upload into that repository.

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

import json
import math
import os
import re

from hanyi import __version__
from hanyi.leaderboard.entries import Row, Section

SCHEMA_VERSION = "0.2.2"
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schema", "eval.schema.json")
#: main's schema, for the fields a 0.3.0 reader requires (see the module docstring).
SCHEMA_0_3_0_PATH = os.path.join(os.path.dirname(__file__), "schema", "eval.schema.0.3.0.json")


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
        "evaluation_name": column,
        "source_data": _source_data(task, provenance, cell.n),
        **({"evaluation_timestamp": when} if (when := iso_timestamp(entry.date)) else {}),
        "metric_config": config,
        "score_details": score,
    }


def record(section: Section, row: Row, retrieved: str, predictions_sha256: str | None = None) -> dict | None:
    """The Every Eval Ever record of one submission row (``None`` for a reference row or a row with no value);
    ``retrieved``: when the board built it, Unix seconds as a string (the schema's convention);
    ``predictions_sha256``: the checksum of the per-doc predictions file the site wrote, where it wrote one."""
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
        **({"detailed_evaluation_results": _detailed(entry, predictions_sha256)} if entry.predictions_file else {}),
    }
    return _no_paths(out)


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


def _detailed(entry, sha256: str | None) -> dict:
    out = {"format": "json", "file_path": entry.predictions_file}
    return {**out, "hash_algorithm": "sha256", "checksum": sha256} if sha256 else out


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
    enum, const, items, minItems, minimum, maximum, local $ref, oneOf, anyOf, allOf, if/then/else), one line each.

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
    "$ref", "type", "enum", "const", "minimum", "maximum", "required", "properties", "additionalProperties",
    "minItems", "items", "allOf", "anyOf", "oneOf", "if", "then", "else",
}  # fmt: skip
