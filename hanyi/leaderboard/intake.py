"""The board's intake: read ``hanyi-submission`` files, take nothing on trust, re-score them with the installed
scorers, and hand one :class:`~hanyi.leaderboard.entries.Entry` per accepted file, one
:class:`~hanyi.leaderboard.entries.Rejected` per refused file, whose ``state`` is ``rejected`` (the file fails a
check), ``duplicate`` (the same predictions as an earlier arrival) or ``pending`` (the board failed, not the file).

Per file, every problem is one line (a reason), never a traceback, cheap checks first:

* the file (:func:`read_submission`): a regular file only, never read through a symbolic link (a link out of the
  folder, a device, a FIFO is refused and nothing of it shown); the size cap (:data:`MAX_BYTES`, ``--max-bytes``)
  checked before reading;
* one validation pass over the whole document (:mod:`hanyi.leaderboard.submission_schema`: a declared pydantic schema
  of format versions 1 and 2, then the installed tasks, the split's doc ids each once in linear time, a verdict only
  under a key the task declares as judged, the model name (:mod:`hanyi.leaderboard.names`)); every problem found,
  not the first; a version-1 file is refused (no doc hashes or data fingerprint);
* the split, against the installed task: a ``--limit`` run, a doc missing, a doc id the task does not have, a doc
  whose content hash differs from the installed data's, another data fingerprint or data source kind;
* the protocol: a task version other than the installed one, another lmms-eval minor version, scorer backends other
  than the board's, a judge in the provenance other than the one the logged verdicts name;
* the numbers: every claimed metric is compared with the board's re-score by the float rule
  (:func:`hanyi.floats.same_value`: exactly, or within 1e-6 for a backbone value); a difference names the task,
  metric, claimed and re-scored values.

Re-scoring goes through the same code as ``--model replay``: the predictions are written as a replay file and the
installed task runs through lmms-eval's own evaluator (its ``process_results`` and aggregations); the re-scored run
is read back by :mod:`hanyi.results.perdoc`, the per-doc layer the report reads too. A judged metric is re-aggregated
from the logged verdicts with the task's own aggregation function; without a judge on the board that is only the
submitter's claim, and the entry says so (``Entry.unverified``: shown, marked, never ranked). With a judge configured
on the board (``HANYI_JUDGE_BASE_URL`` + ``HANYI_JUDGE_MODEL``) the re-score judges again and its values are the ones
kept (``Entry.judged`` says which). A re-score that fails after every check passed is the board's failure: the file
is pending, not cached, and the next build retries it; so is any error the checks did not foresee.

A benchmark whose headline is a group's number (:data:`SCORED_GROUPS`: VULCA-Bench's all-sample DCR over its eight
cultures) has that group re-scored too when the submission holds every task of it: lmms-eval computes the group's
aggregate, and the entry keeps it as a task of its own (its docs keyed by their place in the group,
:func:`hanyi.results.perdoc.doc_keys`). A submission claims only its tasks, so the group's values are the board's.

Across files (:func:`intake`), in the order they arrived (recorded in the cache, never the folder's alphabetical
order): an accepted file whose predictions of a task are those of an earlier accepted file (:func:`content_hashes`:
identity by content, whatever the bytes, key order or model name) is a duplicate of it; a model name that looks like
another's (TR39 skeleton) is refused; one name borne by two entries of a benchmark is flagged (``Entry.flags``).

``intake(paths, cache_dir=...)`` keeps one JSON file per submission under ``cache_dir`` keyed by its sha256 (and the
board's versions and judge): a file seen before is not re-scored.
"""

from __future__ import annotations

import collections
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

from hanyi.leaderboard.entries import DUPLICATE, PENDING, REJECTED, Entry, Rejected
from hanyi.leaderboard.submission_schema import show
from hanyi.leaderboard.tasks_index import task_manager

#: The largest submission file read (bytes): a full-size run of the largest benchmark is a few MB.
MAX_BYTES = 64 * 1024 * 1024
#: Format of the cache files (bump when Entry or the checks change).
CACHE_VERSION = 3
#: Per benchmark, the groups the board re-scores as a whole when a submission holds every one of their tasks: the
#: group whose aggregate is the paper's headline (hanyi.leaderboard.ranking.RANKING_COLUMNS ranks by it).
SCORED_GROUPS = {"vulca_bench": ("vulca_bench",)}
#: The file in the cache folder that records the order submissions arrived in (``{"<sha256> <path>": number}``).
ARRIVALS = "arrivals.json"
#: What ``check`` says (and the exit code it uses) when the board, not the file, failed.
PENDING_NOTE = "pending: the board's own data, scorer or judge failed; nothing is decided and the next build retries"


@dataclass
class Intake:
    """What :func:`intake` read: accepted entries, refused files (``Rejected``, whose ``state`` says rejected,
    duplicate or pending), and the files it re-scored (not from the cache)."""

    entries: list[Entry] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    rescored: list[str] = field(default_factory=list)

    def count(self, state: str) -> int:
        return sum(r.state == state for r in self.rejected)


def submission_files(paths: list[str]) -> list[str]:
    """The files to read: a file as given; a folder, every ``*_submission.json`` below it (sorted; links to folders
    are not followed, links to files are listed and refused by :func:`read_submission`)."""
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
    """Read, check and re-score every submission under ``paths`` (see the module docstring). Never raises for what
    a file holds: a failure the checks did not foresee leaves that file pending."""
    result = Intake()
    stamp = board_stamp()
    read = [(path, *_safe_read(path, max_bytes)) for path in submission_files(paths)]
    order = _arrivals(cache_dir, read)
    seen: dict[str, str] = {}
    done: list[tuple[int, Entry | Rejected]] = []
    for arrival, (path, digest, doc, reasons) in sorted(enumerate(read), key=lambda it: order[it[0]]):
        if isinstance(reasons, _Pending):
            done.append((arrival, _refused(path, digest, None, reasons, PENDING)))
            continue
        if digest is not None and digest in seen:
            why = f"a duplicate submission: the same bytes (sha256 {digest[:12]}) as {seen[digest]}"
            done.append((arrival, _refused(path, digest, doc, [why], DUPLICATE, seen[digest])))
            continue
        if digest is not None:
            seen[digest] = path
        cached = _cache_read(cache_dir, digest, stamp) if digest and not reasons else None
        if cached is None:
            cached = _safe_check(path, digest, doc, reasons)
            if digest is not None and not reasons:
                result.rescored.append(path)
                if not (isinstance(cached, Rejected) and cached.state == PENDING):  # a board failure: retried
                    _cache_write(cache_dir, digest, stamp, cached)
        if isinstance(cached, Rejected):
            done.append((arrival, dataclasses.replace(cached, path=path)))
        else:
            done.append((arrival, dataclasses.replace(cached, source_path=path)))
    _record_arrivals(cache_dir, read, order)
    for value in _by_content_and_name([v for _, v in done]):
        (result.rejected if isinstance(value, Rejected) else result.entries).append(value)
    return result


def check_file(path: str, max_bytes: int = MAX_BYTES) -> Entry | Rejected:
    """One file through the whole check (``hanyi leaderboard check``): what :func:`intake` decides for it alone."""
    digest, doc, reasons = _safe_read(path, max_bytes)
    if isinstance(reasons, _Pending):
        return _refused(path, digest, None, reasons, PENDING)
    return _safe_check(path, digest, doc, reasons)


class _Pending(list):
    """Reasons that are the board's failure, not the file's."""


def _safe_read(path: str, max_bytes: int):
    """:func:`read_submission`, with an error it did not foresee the board's (pending), never a traceback."""
    try:
        return read_submission(path, max_bytes)
    except Exception as exc:  # the last resort: the board's own reading or validation code failed on this file
        from hanyi.results.runs import one_line

        return None, None, _Pending([one_line(f"{PENDING_NOTE} (internal error: {type(exc).__name__}: {exc})")[:500]])


def _safe_check(path, digest, doc, reasons) -> Entry | Rejected:
    """:func:`check_document`, with anything it did not foresee a pending state (one line), never a traceback."""
    try:
        return check_document(path, digest, doc, reasons)
    except Exception as exc:  # the last resort: the board's own code failed on this file
        from hanyi.results.runs import one_line

        why = one_line(f"{PENDING_NOTE} (internal error: {type(exc).__name__}: {exc})")[:500]
        return _refused(path, digest, None, [why], PENDING)


def _refused(path, digest, doc, reasons, state=REJECTED, duplicate_of=None) -> Rejected:
    return Rejected(path, digest, _shown_model(doc), list(reasons), state=state, duplicate_of=duplicate_of)


def _shown_model(doc) -> str | None:
    """The model name a refused file may show: only a name that reads as what it is (else nothing of it)."""
    from hanyi.leaderboard.names import name_problems, normal

    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, str) or len(model) > 200 or name_problems(model):
        return None
    return normal(model)


# ---- arrival order, identity by content, names -----------------------------------------------------------------------
def _arrivals(cache_dir: str | None, read: list) -> list[tuple]:
    """A sort key per file read: files the cache saw before in the order they arrived, then new files by
    modification time (then path), so a copy never wins over the file it copies by its name's place in the folder."""
    known = _load_arrivals(cache_dir)
    keys = []
    for path, digest, _doc, _reasons in read:
        try:
            mtime = os.lstat(path).st_mtime_ns
        except OSError:
            mtime = 0
        first = known.get(f"{digest} {path}") if digest else None
        keys.append((0, first, 0, path) if isinstance(first, int) else (1, 0, mtime, path))
    return keys


def _load_arrivals(cache_dir: str | None) -> dict:
    if not cache_dir:
        return {}
    try:
        with open(os.path.join(cache_dir, ARRIVALS), encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _record_arrivals(cache_dir: str | None, read: list, order: list) -> None:
    if not cache_dir:
        return
    known = _load_arrivals(cache_dir)
    nxt = max([v for v in known.values() if isinstance(v, int)], default=-1) + 1
    for i in sorted(range(len(read)), key=lambda i: order[i]):
        key = f"{read[i][1]} {read[i][0]}"
        if read[i][1] and key not in known:
            known[key], nxt = nxt, nxt + 1
    _atomic_json(cache_dir, os.path.join(cache_dir, ARRIVALS), known)


def content_hashes(doc: dict) -> dict[str, str]:
    """``{task: sha256 of its sorted (doc content hash, answer) pairs}``: the identity of a submission's predictions,
    whatever its bytes, key order, whitespace, model name or claims."""
    out = {}
    for name, task in sorted(doc["tasks"].items()):
        pairs = sorted(
            (p["doc_hash"], json.dumps(p.get("loglikelihoods") or p["response"], ensure_ascii=True))
            for p in task["predictions"]
        )
        out[name] = hashlib.sha256(json.dumps(pairs, ensure_ascii=True).encode()).hexdigest()
    return out


def _by_content_and_name(values: list) -> list:
    """Accepted entries in arrival order: one whose predictions of a task are those of an earlier accepted entry is a
    duplicate of it; one whose name looks like an earlier entry's other name (TR39 skeleton) is refused; entries of
    one benchmark that bear the same name are flagged."""
    from hanyi.leaderboard.names import same_name, skeleton

    owners: dict[tuple[str, str], Entry] = {}
    names: dict[str, tuple[str, Entry]] = {}  # skeleton -> (the name as shown, its first entry)
    out = []
    for value in values:
        if isinstance(value, Rejected):
            out.append(value)
            continue
        copied = [(t, owners[(t, h)]) for t, h in sorted(value.content.items()) if (t, h) in owners]
        if copied:
            task, first = copied[0]
            why = (f"a duplicate submission: the same predictions of {task} as {first.source_path} (identity by "
                   "content: the doc hashes and answers, whatever the file's bytes or model name)")  # fmt: skip
            out.append(Rejected(value.source_path, value.submission_hash, value.model, [why], DUPLICATE,
                                first.source_path))  # fmt: skip
            continue
        confused = []
        for shown in dict.fromkeys([value.model, value.display_name]):
            found = names.get(skeleton(shown))
            if found and same_name(found[0]) != same_name(shown):
                confused.append(f"model name {show(shown)!r} looks like {show(found[0])!r} of {found[1].source_path}"
                                " (Unicode TR39 confusable skeleton): refused, a name must not pass for another")  # fmt: skip
        if confused:
            out.append(Rejected(value.source_path, value.submission_hash, None, confused))
            continue
        for shown in dict.fromkeys([value.model, value.display_name]):
            names.setdefault(skeleton(shown), (shown, value))
        for t, h in value.content.items():
            owners.setdefault((t, h), value)
        out.append(value)
    by_name: dict[tuple[str, str], list[Entry]] = {}
    for value in out:
        if isinstance(value, Entry):
            by_name.setdefault((value.benchmark, same_name(value.display_name)), []).append(value)
    for group in by_name.values():
        if len(group) > 1:
            for value in group:
                others = ", ".join(e.source_path for e in group if e is not value)
                value.flags = [*value.flags, f"the name {show(value.display_name)!r} is also borne by {others}"]
    return out


# ---- reading ---------------------------------------------------------------------------------------------------------
def read_submission(path: str, max_bytes: int = MAX_BYTES) -> tuple[str | None, dict | None, list[str]]:
    """``(sha256 of the bytes, document, reasons)``; a reason here means the file cannot be re-scored at all.

    Only a regular file is read, never through a symbolic link (a link out of the submissions folder, a device, a
    FIFO or ``/dev/stdin`` is one line, and nothing of it is shown); its size is checked before reading, and at most
    ``max_bytes + 1`` bytes are read. The bytes then go through the one validation pass
    (:func:`hanyi.leaderboard.submission_schema.validate`).
    """
    import stat

    from hanyi.leaderboard.submission_schema import validate

    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return None, None, ["a symbolic link: the board reads regular files inside the submissions folder only"]
        if not stat.S_ISREG(st.st_mode):
            return None, None, ["not a regular file (a device, FIFO or folder): the board reads regular files only"]
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):  # replaced between the two looks
                return None, None, ["not a regular file: the board reads regular files only"]
            if st.st_size > max_bytes:
                return None, None, [f"file too large: {st.st_size:,} bytes (the board reads at most {max_bytes:,})"]
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        return None, None, [f"cannot be read ({exc.strerror or type(exc).__name__})"]
    if len(raw) > max_bytes:
        return None, None, [f"file too large: over {max_bytes:,} bytes (the board reads at most {max_bytes:,})"]
    digest = hashlib.sha256(raw).hexdigest()
    doc, reasons = validate(raw)
    if not reasons:
        reasons = _answer_reasons(doc)
    return digest, doc, reasons


def _answer_reasons(doc: dict) -> list[str]:
    """Choice log-likelihoods the replay model would refuse (the schema said their shape already)."""
    from hanyi.models.replay import ReplayFileError, _check_record

    out = []
    for name, task in doc["tasks"].items():
        bad = []
        for p in task["predictions"]:
            if p.get("loglikelihoods") is not None:
                try:
                    _check_record({"loglikelihoods": p["loglikelihoods"]}, "")
                except ReplayFileError:
                    bad.append(p["doc_id"])
        if bad:
            out.append(f"{name}: {len(bad)} answer(s) with unusable choice log-likelihoods (first: doc {bad[0]})")
    return out


# ---- checking --------------------------------------------------------------------------------------------------------
def check_document(path: str, digest: str | None, doc, reasons: list[str]) -> Entry | Rejected:
    """The Entry of a read submission, or its Rejected with every reason found (state pending when the board's own
    re-score failed)."""
    if reasons:
        return _refused(path, digest, doc, reasons)
    tasks = sorted(doc["tasks"])
    groups = scored_groups(doc["benchmark"], tasks)
    with tempfile.TemporaryDirectory(prefix="hanyi-board-") as work:
        try:
            run = rescore(doc, tasks, work)
        except Exception as exc:  # the input passed every check: the board's data, scorer or judge failed
            from hanyi.results.runs import one_line

            why = one_line(f"{PENDING_NOTE} (the re-score failed: {type(exc).__name__}: {exc})")[:500]
            return _refused(path, digest, doc, [why], PENDING)
        entry, reasons = _compare(path, digest, doc, tasks, run)
        if entry is not None:
            reasons = _add_groups(entry, run, groups)
    if reasons:
        return _refused(path, digest, doc, reasons)
    entry.content = content_hashes(doc)
    return entry


def _compare(path, digest, doc, tasks, run) -> tuple[Entry | None, list[str]]:
    from hanyi import __version__
    from hanyi.floats import same_value
    from hanyi.redact import redact_text
    from hanyi.results import perdoc

    reasons = []
    from hanyi.leaderboard.names import normal
    from hanyi.results.provenance import installed_lmms_eval
    from hanyi.submit.model_card import clean_card

    lmms = installed_lmms_eval() or ""
    if _minor(doc["lmms_eval_version"]) != _minor(lmms):
        reasons.append(f"lmms-eval {doc['lmms_eval_version']}: the board runs {lmms} (another minor version)")
    entry = Entry(
        submission_hash=digest,
        benchmark=doc["benchmark"],
        model=normal(doc["model"]),
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
            if not rejudged:  # the submitter's judge, the submitter's verdicts: shown, marked, never ranked
                entry.unverified[f"{name}/{metric}"] = (
                    f"the submitter's claim: re-aggregated from the verdicts their judge ({judge or 'unnamed'}) "
                    "logged; the board has no judge to verify them"
                )
            if not rejudged and rec["value"] is not None and math.isfinite(rec["value"]):
                values[metric] = rec["value"]
                if rec["per_doc"]:
                    layer["metrics"][metric], layer["scales"][metric] = rec["per_doc"], rec["scale"]
        entry.values[name] = values
        entry.per_doc[name] = layer["metrics"]
        entry.scales[name] = layer["scales"]
        entry.clusters[name] = layer["clusters"] or _verdict_clusters(run, name, sub)
        judge = board_judge if board_judge and judged else judge
        backend = prov.get("model_backend") if isinstance(prov.get("model_backend"), dict) else None
        entry.protocol[name] = protocol(layer["provenance"], t, judge, sub.get("data_fingerprint"), backend)
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


def scored_groups(benchmark: str, tasks: list[str]) -> dict[str, list[str]]:
    """``{group: its tasks}`` of the :data:`SCORED_GROUPS` of ``benchmark`` whose every task ``tasks`` holds."""
    out = {}
    for group in SCORED_GROUPS.get(benchmark, ()):
        tm = task_manager()
        members = (tm._get_config(group).get("task") or []) if group in tm.all_tasks else []
        if members and all(isinstance(m, str) and m in tasks for m in members):
            out[group] = list(members)
    return out


def _add_groups(entry: Entry, run, groups: dict[str, list[str]]) -> list[str]:
    """The re-scored groups as tasks of ``entry``: values, per-doc scores (keyed by the doc's place in the group),
    clusters, and the protocol its tasks share (the data's fingerprint: the group's own docs); a reason when the
    re-score has no such group or its tasks' protocols differ."""
    from hanyi.leaderboard.submission_schema import judged_metrics
    from hanyi.results import perdoc

    reasons = []
    for group, members in groups.items():
        t = run.tasks.get(group)
        if t is None or not t.is_group:
            reasons.append(f"{group}: the board's re-score has no value for the group")
            continue
        # the group aggregates no judged metric: a judge of its tasks' own judged columns is no part of its protocol
        skip = ("data_fingerprint", "judge_model", "judge_version")
        protocols = [{k: v for k, v in entry.protocol[m].items() if k not in skip} for m in members]
        if any(p != protocols[0] for p in protocols):
            reasons.append(f"{group}: its tasks were not run under one protocol (version, prompt, backbones)")
            continue
        judged = {m for member in members for m in judged_metrics(member)}
        layer = perdoc.task_layer(run, group)
        entry.values[group] = {m: v for m, v in layer["values"].items() if math.isfinite(v) and m not in judged}
        entry.per_doc[group] = {m: v for m, v in layer["metrics"].items() if m not in judged}
        entry.scales[group] = {m: v for m, v in layer["scales"].items() if m not in judged}
        entry.clusters[group] = layer["clusters"]
        fingerprint = perdoc.data_fingerprint(layer["hashes"])
        entry.protocol[group] = {**entry.protocol[members[0]], "judge_model": "none", "data_fingerprint": fingerprint}
        entry.provenance[group] = {**entry.provenance[members[0]], "judge_model": None, "tasks": list(members)}
    return reasons


def _minor(version: str) -> str | None:
    """``0.7`` of ``0.7.3`` (or of ``0.7.3 (installed)``); ``None`` for what is no release number."""
    import re

    found = re.match(r"v?(\d+\.\d+)", str(version))
    return found.group(1) if found else None


def _split_reasons(sub: dict, prov: dict, layer: dict, t) -> list[str]:
    """The full split, every doc once, the docs' content and the data's fingerprint against the installed task; one
    line per problem (a ``--limit`` run's missing docs are said on its line)."""
    from hanyi.results.perdoc import data_fingerprint

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
    dupes = sorted(i for i, n in collections.Counter(ids).items() if n > 1)  # linear: hostile files are large
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
    from hanyi.leaderboard.submission_schema import judged_metrics
    from hanyi.results.perdoc import per_doc_scores

    lines = {}
    for p in sorted(sub["predictions"], key=lambda p: p["doc_id"]):
        if isinstance(p.get("verdicts"), dict):
            lines.setdefault(p["doc_id"], {"doc_id": p["doc_id"]}).update(p["verdicts"])
    declared = judged_metrics(name)  # the validation refused any other key; never read one here either
    metrics = sorted({m for line in lines.values() for m in line if m in declared})
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
    from hanyi.results.perdoc import cluster_key, cluster_labels

    lines = [{"doc_id": p["doc_id"], **(p.get("verdicts") or {})} for p in sub["predictions"]]
    labels = cluster_labels(lines, cluster_key(run, name)) or []
    return {line["doc_id"]: label for line, label in zip(lines, labels) if label is not None}


def protocol(
    prov: dict, task, judge: str | None, fingerprint: str | None, backend: dict | None = None
) -> dict[str, str | None]:
    """The fields rows must share to be ranked together, from the board's re-scored provenance
    (:func:`hanyi.results.provenance.task_provenance`) and the judge the verdicts name; and, named beside them, the
    engine that produced the submitter's answers (``model_backend`` of the submitter's provenance: the board's own
    re-score is always the replay model). The engine is part of the system under test, as the model is, so it never
    splits a ranking (:data:`hanyi.leaderboard.ranking.SYSTEM_FIELDS`); the section's protocol line says which engines
    its rows ran on, since numbers can move between backends (docs/run-at-scale.md)."""
    return {
        "model_backend": str((backend or {}).get("engine") or "unrecorded"),
        "task_version": None if task.version is None else str(task.version),
        "prompt_variant": prov.get("prompt_variant") or "default",
        "judge_model": judge or "none",
        "judge_version": None,  # no judge API reports one; the model id is what is recorded
        "backbones": json.dumps(prov.get("scorer_backends") or {}, sort_keys=True),
        "full_split": "yes",
        "data_fingerprint": fingerprint,
    }


# ---- re-scoring through the replay model -----------------------------------------------------------------------------
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
    results and sample logs written as the CLI writes them, read back as a :class:`hanyi.results.runs.Run`. The
    benchmark's :func:`scored_groups` are evaluated as groups, so the run holds their aggregates too."""
    from lmms_eval import evaluator

    from hanyi.models.replay import ReplayModel
    from hanyi.results.lmms_output import save_like_cli
    from hanyi.results.runs import load_runs

    groups = scored_groups(doc["benchmark"], tasks)
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
            tasks=[*groups, *(t for t in tasks if not any(t in m for m in groups.values()))],
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
    if cache_dir:
        _atomic_json(cache_dir, _cache_path(cache_dir, digest), {"stamp": stamp, **to_json(value)})


def _atomic_json(folder: str, path: str, data) -> None:
    """``data`` as ASCII JSON (any text, a lone surrogate included, can be written), through a temporary file that
    never stays behind."""
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            json.dump(data, f, ensure_ascii=True)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


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
