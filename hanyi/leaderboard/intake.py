"""The board's intake: read ``hanyi-submission`` files, take nothing on trust, re-score them with the installed
scorers, and hand one :class:`~hanyi.leaderboard.entries.Entry` per accepted file, one
:class:`~hanyi.leaderboard.entries.Rejected` per refused file (issue 38).

Per file, every problem is one line (a reason), never a traceback:

* the file: larger than the size cap (:data:`MAX_BYTES`, ``--max-bytes``), not UTF-8 JSON, not a ``hanyi-submission``
  object, the same bytes as a file already read (a duplicate: same sha256); a format-1 file lacks the doc hashes and
  data fingerprint the checks below need (re-submit it with ``hanyi submit`` of this release). A model name is kept
  as text, whatever it holds (the site escapes it);
* the split: a ``--limit`` run, a doc missing, a doc twice, a doc id the installed task does not have, a doc whose
  content hash differs from the installed data's, a data fingerprint other than the installed data's, another data
  source kind;
* the protocol: a task the installed hanyi does not have or of another benchmark, a task version other than the
  installed one, another lmms-eval minor version, no hanyi version, scorer backends other than the board's, a judge in
  the provenance other than the one the logged verdicts name;
* the numbers: every claimed metric is compared with the board's re-score by the float rule
  (:func:`hanyi.floats.same_value`: exactly, or within 1e-6 for a backbone value); a difference names the task,
  metric, claimed and re-scored values.

Re-scoring goes through the same code as ``--model replay``: the predictions are written as a replay file and the
installed task runs through lmms-eval's own evaluator (its ``process_results`` and aggregations); the re-scored run
is read back by :mod:`hanyi.report.perdoc`, the per-doc layer the report reads too. A judged metric (its logged item
holds the judge's verdict) is re-aggregated from the logged verdicts with the task's own aggregation function; with a
judge configured on the board (``HANYI_JUDGE_BASE_URL`` + ``HANYI_JUDGE_MODEL``) the re-score judges again and its
values are the ones kept (``Entry.judged`` says which).

``intake(paths, cache_dir=...)`` keeps one JSON file per submission under ``cache_dir`` keyed by its sha256 (and the
board's versions and judge): a file seen before is not re-scored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import logging
import math
import os
import tempfile
from dataclasses import dataclass, field

from hanyi.leaderboard.entries import Entry, Rejected

#: The largest submission file read (bytes): a full-size run of the largest benchmark is a few MB.
MAX_BYTES = 64 * 1024 * 1024
#: Format of the cache files (bump when Entry or the checks change).
CACHE_VERSION = 1


@dataclass
class Intake:
    """What :func:`intake` read: accepted entries, rejected files, and the files it re-scored (not from the cache)."""

    entries: list[Entry] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    rescored: list[str] = field(default_factory=list)


def submission_files(paths: list[str]) -> list[str]:
    """The files to read: a file as given; a folder, every ``*_submission.json`` below it (sorted)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                out += [os.path.join(root, f) for f in sorted(files) if f.endswith("_submission.json")]
        else:
            out.append(path)
    return out


def intake(paths: list[str], cache_dir: str | None = None, max_bytes: int = MAX_BYTES) -> Intake:
    """Read, check and re-score every submission under ``paths`` (see the module docstring)."""
    result = Intake()
    seen: dict[str, str] = {}
    stamp = board_stamp()
    for path in submission_files(paths):
        digest, doc, reasons = read_submission(path, max_bytes)
        if digest is not None and digest in seen:
            model = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
            why = f"a duplicate submission: the same bytes (sha256 {digest[:12]}) as {seen[digest]}"
            result.rejected.append(Rejected(path, digest, model, [why]))
            continue
        if digest is not None:
            seen[digest] = path
        cached = _cache_read(cache_dir, digest, stamp) if digest and not reasons else None
        if cached is None:
            cached = check_document(path, digest, doc, reasons)
            if digest is not None and not reasons:
                result.rescored.append(path)
                _cache_write(cache_dir, digest, stamp, cached)
        if isinstance(cached, Rejected):
            result.rejected.append(dataclasses.replace(cached, path=path))
        else:
            result.entries.append(dataclasses.replace(cached, source_path=path))
    return result


def check_file(path: str, max_bytes: int = MAX_BYTES) -> Entry | Rejected:
    """One file through the whole check (``hanyi leaderboard check``)."""
    digest, doc, reasons = read_submission(path, max_bytes)
    return check_document(path, digest, doc, reasons)


# ---- reading ---------------------------------------------------------------------------------------------------------
def read_submission(path: str, max_bytes: int = MAX_BYTES) -> tuple[str | None, dict | None, list[str]]:
    """``(sha256 of the bytes, document, reasons)``; a reason here means the file cannot be re-scored at all."""
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            return None, None, [f"file too large: {size:,} bytes (the board reads at most {max_bytes:,})"]
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        return None, None, [f"cannot be read ({exc.strerror or exc})"]
    digest = hashlib.sha256(raw).hexdigest()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return digest, None, [f"not UTF-8 (byte {exc.start})"]
    except json.JSONDecodeError as exc:
        return digest, None, [f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    except (RecursionError, ValueError) as exc:
        return digest, None, [f"malformed JSON: {str(exc)[:100] or 'nested too deeply'}"]
    return digest, doc, _format_reasons(doc)


def _format_reasons(doc) -> list[str]:
    from hanyi.submit.hanyi_format import FORMAT_VERSION, validate_hanyi_submission
    from hanyi.submit.samples import SubmissionError

    if not isinstance(doc, dict):
        return ["not a hanyi-submission: the JSON is not an object"]
    try:
        validate_hanyi_submission(doc)
    except SubmissionError as exc:
        if "twice" not in str(exc):  # a doc twice is reported with the split's other problems
            return [str(exc)]
    if doc["version"] != FORMAT_VERSION:
        return [
            f"hanyi-submission version {doc['version']} has no per-doc content hashes, data fingerprint or judge "
            f"verdicts, which the board checks: re-write it with `hanyi submit` of hanyi >= 0.6 (version "
            f"{FORMAT_VERSION})"
        ]
    reasons = []
    for key in ("hanyi_version", "lmms_eval_version"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            reasons.append(f"no {key} recorded")
    for name, task in doc["tasks"].items():
        preds = task.get("predictions") or []
        if not preds:
            reasons.append(f"{name}: no per-doc predictions")
        if not isinstance(task.get("data_fingerprint"), str):
            reasons.append(f"{name}: no data_fingerprint")
        bad = [p["doc_id"] for p in preds if not isinstance(p.get("doc_hash"), str)]
        if bad:
            reasons.append(f"{name}: {len(bad)} prediction(s) without a doc_hash (first: doc {bad[0]})")
        text = [p["doc_id"] for p in preds if not _answer(p)]
        if text:
            reasons.append(
                f"{name}: {len(text)} answer(s) neither text nor choice log-likelihoods (first: doc {text[0]}); not "
                "re-scorable"
            )
    return reasons


def _answer(pred: dict) -> bool:
    """Whether a prediction holds what the replay model can answer with: text (or null), or choice scores."""
    from hanyi.models.replay import ReplayFileError, _check_record

    if "loglikelihoods" in pred:
        try:
            _check_record({"loglikelihoods": pred["loglikelihoods"]}, "")
        except ReplayFileError:
            return False
        return True
    return pred["response"] is None or isinstance(pred["response"], str)


# ---- checking --------------------------------------------------------------------------------------------------------
def check_document(path: str, digest: str | None, doc, reasons: list[str]) -> Entry | Rejected:
    """The Entry of a read submission, or its Rejected with every reason found."""
    model = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
    if reasons:
        return Rejected(path, digest, model, list(reasons))
    tasks = sorted(doc["tasks"])
    reasons = _task_reasons(doc, tasks)
    if reasons:
        return Rejected(path, digest, model, reasons)
    with tempfile.TemporaryDirectory(prefix="hanyi-board-") as work:
        try:
            run = rescore(doc, tasks, work)
        except Exception as exc:  # the task or the evaluator refused the predictions: one line, never a traceback
            from hanyi.report.results import one_line

            return Rejected(path, digest, model, [one_line(f"the re-score failed: {type(exc).__name__}: {exc}")[:500]])
        entry, reasons = _compare(path, digest, doc, tasks, run)
    return Rejected(path, digest, model, reasons) if reasons else entry


def _task_reasons(doc: dict, tasks: list[str]) -> list[str]:
    """Tasks unknown to the installed hanyi or of another benchmark (nothing can be re-scored then)."""
    from hanyi.report.results import benchmark_of

    known = task_manager().all_tasks
    out = []
    for name in tasks:
        if name not in known:
            out.append(f"{name}: no such task in the installed hanyi")
        elif benchmark_of(name) != doc["benchmark"]:
            out.append(f"{name}: not a task of {doc['benchmark']}")
    return out


def _compare(path, digest, doc, tasks, run) -> tuple[Entry | None, list[str]]:
    from hanyi import __version__
    from hanyi.floats import same_value
    from hanyi.redact import redact_text
    from hanyi.report import perdoc

    reasons = []
    from hanyi.report.render import installed_lmms_eval
    from hanyi.submit.model_card import clean_card

    lmms = installed_lmms_eval() or ""
    if _minor(doc["lmms_eval_version"]) != _minor(lmms):
        reasons.append(f"lmms-eval {doc['lmms_eval_version']}: the board runs {lmms} (another minor version)")
    entry = Entry(
        submission_hash=digest,
        benchmark=doc["benchmark"],
        model=doc["model"],
        model_args=redact_text(str(doc.get("model_args") or "")),
        date=str(doc.get("date") or ""),
        hanyi_version=doc["hanyi_version"],
        lmms_eval_version=doc["lmms_eval_version"],
        card=clean_card(doc.get("model_card")),
    )
    board_judge = _board_judge()
    for name in tasks:
        sub, t = doc["tasks"][name], run.tasks[name]
        layer = perdoc.task_layer(run, name)
        prov = sub.get("provenance") if isinstance(sub.get("provenance"), dict) else {}
        split = _split_reasons(sub, prov, layer, t)
        reasons += [f"{name}: {r}" for r in split]
        if str(sub.get("version")) != str(t.version):
            reasons.append(f"{name}: task version {sub.get('version')}, the installed task is version {t.version}")
        judged, judge, why = _judged(name, sub, prov)
        reasons += [f"{name}: {r}" for r in why]
        backends = prov.get("scorer_backends") or {}
        if backends != layer["provenance"].get("scorer_backends"):
            ours = layer["provenance"].get("scorer_backends")
            reasons.append(f"{name}: scorer backends {backends or 'none'}, the board's {ours or 'none'}")
        values = {m: v for m, v in layer["values"].items() if math.isfinite(v)}  # NaN: no value
        for metric, claimed in sorted(sub["metrics"].items()) if not split else ():  # other docs: no comparison
            if metric in judged:
                value = judged[metric]["value"]
            elif metric in values:
                value = values[metric]
            else:
                reasons.append(f"{name}/{metric}: claimed {claimed!r}, but the installed task does not produce it")
                continue
            if value is None or not same_value(metric, claimed, value):
                reasons.append(f"{name}/{metric}: claimed {claimed!r}, re-scored {value!r}")
        for metric, rec in judged.items():
            rejudged = board_judge is not None and metric in layer["metrics"]
            entry.judged[f"{name}/{metric}"] = "re-judged" if rejudged else "re-aggregated"
            if not rejudged and rec["value"] is not None and math.isfinite(rec["value"]):
                values[metric] = rec["value"]
                if rec["per_doc"]:
                    layer["metrics"][metric], layer["scales"][metric] = rec["per_doc"], rec["scale"]
        entry.values[name] = values
        entry.per_doc[name] = layer["metrics"]
        entry.scales[name] = layer["scales"]
        entry.clusters[name] = layer["clusters"] or _verdict_clusters(run, name, sub)
        judge = board_judge if board_judge and judged else judge
        entry.protocol[name] = protocol(layer["provenance"], t, judge, sub.get("data_fingerprint"))
        entry.provenance[name] = {
            **{k: v for k, v in prov.items() if k not in ("limit",)},
            "judge_model": judge,
            "board": {
                "hanyi_version": __version__,
                "lmms_eval_version": lmms,
                "data": layer["provenance"].get("data_source"),
            },
        }
    return (None if reasons else entry), reasons


def _minor(version: str) -> str | None:
    """``0.7`` of ``0.7.3`` (or of ``0.7.3 (installed)``); ``None`` for what is no release number."""
    import re

    found = re.match(r"v?(\d+\.\d+)", str(version))
    return found.group(1) if found else None


def _split_reasons(sub: dict, prov: dict, layer: dict, t) -> list[str]:
    """The full split, every doc once, the docs' content and the data's fingerprint against the installed task; one
    line per problem (a ``--limit`` run's missing docs are said on its line)."""
    from hanyi.report.perdoc import data_fingerprint

    out = []
    ids = [p["doc_id"] for p in sub["predictions"]]
    installed = layer["hashes"]
    expected = t.n_original if t.n_original is not None else len(installed)
    missing = sorted(set(range(expected)) - set(ids))
    limit = prov.get("limit")
    if limit not in (None, -1, "None"):
        out.append(f"run with --limit {limit}: {len(set(ids))} of the {expected} docs, not the full split")
    elif missing:
        first = ", ".join(map(str, missing[:5]))
        out.append(f"missing {len(missing)} of the installed task's {expected} docs (first: {first})")
    dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dupes:
        out.append(f"{len(dupes)} doc id(s) predicted twice (first: doc {dupes[0]})")
    extra = sorted(set(ids) - set(range(expected)))
    if extra:
        out.append(f"{len(extra)} doc id(s) the installed task does not have (first: doc {extra[0]})")
    preds = sub["predictions"]
    differ = [p["doc_id"] for p in preds if p["doc_id"] in installed and p["doc_hash"] != installed[p["doc_id"]]]
    ours = data_fingerprint(installed)
    if differ:
        out.append(
            f"{len(differ)} doc(s) hold other content than the installed data (content hash differs; first: doc "
            f"{differ[0]})"
        )
    elif not out and sub["data_fingerprint"] != ours:
        out.append(f"unknown data fingerprint {sub['data_fingerprint']} (the installed data's is {ours})")
    kind = (prov.get("data_source") or {}).get("kind")
    board_kind = (layer["provenance"].get("data_source") or {}).get("kind")
    if kind != board_kind:
        out.append(f"data source {kind or 'not recorded'}, the board's is {board_kind}")
    return out


def _judged(name: str, sub: dict, prov: dict) -> tuple[dict, str | None, list[str]]:
    """``({metric: {value, per_doc, scale}}, judge model, reasons)``: each judged metric re-aggregated from the logged
    verdicts with the installed task's own aggregation function."""
    from hanyi.report.perdoc import per_doc_scores

    lines = {}
    for p in sorted(sub["predictions"], key=lambda p: p["doc_id"]):
        if isinstance(p.get("verdicts"), dict):
            lines.setdefault(p["doc_id"], {"doc_id": p["doc_id"]}).update(p["verdicts"])
    metrics = sorted({m for line in lines.values() for m in line if m != "doc_id"})
    if not metrics:
        return {}, prov.get("judge_model"), []
    reasons, out = [], {}
    judges = sorted({str(it.get("judge_model")) for line in lines.values() for m, it in line.items()
                     if m != "doc_id" and isinstance(it, dict) and it.get("judge_model")})  # fmt: skip
    judge = prov.get("judge_model")
    if len(judges) > 1:
        reasons.append(f"the logged verdicts name {len(judges)} judges ({', '.join(judges)})")
    if judges and judge and judges[0] != judge:
        reasons.append(f"the provenance names judge {judge}, the logged verdicts {judges[0]}")
    if not judge and not judges:
        reasons.append("judged metrics without a judge model in the provenance or the verdicts")
    aggregations = _aggregations(name)
    for metric in metrics:
        items = [line[metric] for line in lines.values() if metric in line]
        fn = aggregations.get(metric.split(",")[0])
        if fn is None:
            continue  # a field a breakdown reads (below), not an aggregated metric
        if len(items) != len(sub["predictions"]):
            reasons.append(f"{metric}: verdicts logged for {len(items)} of {len(sub['predictions'])} docs")
            continue
        try:
            value = fn(items, args=None) if "args" in inspect.signature(fn).parameters else fn(items)
        except Exception as exc:  # a verdict the aggregation cannot read: one line, never a traceback
            reasons.append(f"{metric}: the logged verdicts cannot be aggregated ({type(exc).__name__}: {exc})"[:300])
            continue
        value = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        vals, scale = per_doc_scores(list(lines.values()), metric, value)
        out[metric] = {"value": value, "per_doc": vals, "scale": scale}
    from hanyi.metrics.from_samples import derive  # the report's breakdowns of the judged fields (VULCA rubric_*)

    for metric, (value, _higher) in derive(name, list(lines.values()), emitted=set(out)).items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        out[metric] = {"value": float(value) if number else None, "per_doc": {}, "scale": 1.0}
    return out, judge or (judges[0] if judges else None), reasons


def _verdict_clusters(run, name: str, sub: dict) -> dict:
    from hanyi.report.perdoc import cluster_key, cluster_labels

    lines = [{"doc_id": p["doc_id"], **(p.get("verdicts") or {})} for p in sub["predictions"]]
    labels = cluster_labels(lines, cluster_key(run, name)) or []
    return {line["doc_id"]: label for line, label in zip(lines, labels) if label is not None}


def protocol(prov: dict, task, judge: str | None, fingerprint: str | None) -> dict[str, str | None]:
    """The fields rows must share to be ranked together, from the board's re-scored provenance
    (:func:`hanyi.report.provenance.task_provenance`) and the judge the verdicts name."""
    return {
        "task_version": None if task.version is None else str(task.version),
        "prompt_variant": prov.get("prompt_variant") or "default",
        "judge_model": judge or "none",
        "judge_version": None,  # no judge API reports one; the model id is what is recorded
        "backbones": json.dumps(prov.get("scorer_backends") or {}, sort_keys=True),
        "full_split": "yes",
        "data_fingerprint": fingerprint,
    }


# ---- re-scoring through the replay model -----------------------------------------------------------------------------
_TASK_MANAGER = None


def task_manager():
    """One lmms-eval TaskManager over hanyi's tasks only (the board's installed tasks)."""
    global _TASK_MANAGER
    if _TASK_MANAGER is None:
        from lmms_eval.tasks import TaskManager

        import hanyi

        _TASK_MANAGER = TaskManager("ERROR", include_path=hanyi.TASKS_DIR, include_defaults=False)
    return _TASK_MANAGER


def _aggregations(task: str) -> dict:
    """``{metric: aggregation function}`` of the installed task's ``metric_list`` (as lmms-eval resolves it)."""
    from lmms_eval.api.registry import get_aggregation

    out = {}
    for entry in task_manager()._get_config(task).get("metric_list") or []:
        agg = entry.get("aggregation")
        out[entry.get("metric")] = get_aggregation(agg) if isinstance(agg, str) else agg
    return {k: v for k, v in out.items() if callable(v)}


def rescore(doc: dict, tasks: list[str], work: str):
    """The board's run of ``tasks`` on the submission's predictions: a replay file, lmms-eval's evaluator, the
    results and sample logs written as the CLI writes them, read back as a :class:`hanyi.report.results.Run`."""
    from lmms_eval import evaluator

    from hanyi.models.replay import ReplayModel
    from hanyi.report.lmms_output import save_like_cli
    from hanyi.report.results import load_runs

    path = os.path.join(work, "predictions.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for name in tasks:
            for p in doc["tasks"][name]["predictions"]:
                answer = (
                    {"loglikelihoods": p["loglikelihoods"]} if "loglikelihoods" in p else {"response": p["response"]}
                )
                f.write(json.dumps({"task": name, "doc_id": p["doc_id"], **answer}) + "\n")
    with _quiet():
        results = evaluator.simple_evaluate(
            model=ReplayModel(path=path, on_missing="empty"),
            tasks=tasks,
            task_manager=task_manager(),
            log_samples=True,
            bootstrap_iters=0,
            verbosity="ERROR",
        )
        save_like_cli(results, os.path.join(work, "out"), model_args="path=predictions.jsonl")
    return load_runs([os.path.join(work, "out")])[0]


@contextlib.contextmanager
def _quiet():
    """No progress bars or warnings of the re-score on stderr (``check`` prints one line per problem there); an
    exception still propagates."""
    import io

    logging.disable(logging.WARNING)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(logging.NOTSET)


def _board_judge() -> str | None:
    from hanyi.metrics.judge import JudgeConfig

    config = JudgeConfig.from_env()
    return None if config is None else config.model


# ---- the cache -------------------------------------------------------------------------------------------------------
def board_stamp() -> dict:
    """What a cached check depends on besides the file: the board's hanyi, lmms-eval, data root and judge."""
    from importlib.metadata import version

    from hanyi import __version__

    return {
        "cache": CACHE_VERSION,
        "hanyi": __version__,
        "scorers": scorer_code_hash(),
        "lmms_eval": version("lmms_eval"),
        "data_root": os.environ.get("HANYI_DATA_ROOT", ""),
        "judge": _board_judge(),
    }


@functools.lru_cache(maxsize=1)
def scorer_code_hash() -> str:
    """sha256 over the installed task folders and metric code (paths and bytes): a changed prompt, parser, scorer or
    task version between two builds re-scores every file, whatever the hanyi version says."""
    import hanyi

    root = os.path.dirname(hanyi.__file__)
    digest = hashlib.sha256()
    for sub in ("tasks", "metrics"):
        for folder, dirs, files in os.walk(os.path.join(root, sub)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".yaml", "_yaml", ".jinja", ".md", ".json")):
                    full = os.path.join(folder, name)
                    digest.update(os.path.relpath(full, root).encode() + b"\0")
                    with open(full, "rb") as f:
                        digest.update(f.read())
    return digest.hexdigest()


def _cache_path(cache_dir: str, digest: str) -> str:
    return os.path.join(cache_dir, f"{digest}.json")


def _cache_read(cache_dir: str | None, digest: str, stamp: dict) -> Entry | Rejected | None:
    if not cache_dir:
        return None
    try:
        with open(_cache_path(cache_dir, digest), encoding="utf-8") as f:
            record = json.load(f)
        if record.get("stamp") != stamp:
            return None
        return from_json(record)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # a missing or unreadable cache file is a miss


def _cache_write(cache_dir: str | None, digest: str, stamp: dict, value: Entry | Rejected) -> None:
    if not cache_dir:
        return
    os.makedirs(cache_dir, exist_ok=True)
    record = {"stamp": stamp, **to_json(value)}
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=cache_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f, ensure_ascii=False)
    os.replace(tmp, _cache_path(cache_dir, digest))


def to_json(value: Entry | Rejected) -> dict:
    """An Entry or Rejected as JSON (doc ids become strings; :func:`from_json` turns them back)."""
    return {"kind": type(value).__name__, "record": dataclasses.asdict(value)}


def from_json(data: dict) -> Entry | Rejected:
    rec = data["record"]
    if data["kind"] == "Rejected":
        return Rejected(**rec)
    rec["per_doc"] = {
        t: {m: {int(d): v for d, v in docs.items()} for m, docs in ms.items()} for t, ms in rec["per_doc"].items()
    }
    rec["clusters"] = {t: {int(d): c for d, c in docs.items()} for t, docs in rec["clusters"].items()}
    return Entry(**rec)
