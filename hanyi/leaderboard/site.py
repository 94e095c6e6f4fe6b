"""Write the board as a static site: ``index.html``, one page per benchmark, ``rejected.html``, ``leaderboard.json``,
``leaderboard.csv`` and one Every Eval Ever record per ranked submission row under ``eee/data/`` (that repository's
layout, with each row's per-doc results as its ``<uuid>_samples.jsonl``: :mod:`hanyi.leaderboard.eee`).

The pages work from ``file://`` with no network: no external CSS, font, image or script; the one script (column
sorting) is small, inline and optional (the tables read the same without it), and a Content-Security-Policy ``meta``
allows nothing else (``default-src 'none'``, the script by its sha256). Every string a submitter wrote (model,
``model_args``, task and file names, reasons) is redacted (:mod:`hanyi.redact`) and HTML-escaped, attributes
included; a CSV cell of such text that starts with ``= + - @`` (or a tab / carriage return) gets a leading ``'`` so
that no spreadsheet runs it as a formula.
"""

from __future__ import annotations

import base64
import csv
import errno
import hashlib
import io
import json
import os
import time

from hanyi import __version__
from hanyi.leaderboard import eee, pages
from hanyi.leaderboard.entries import Board, Cell, Entry, Section
from hanyi.leaderboard.pages import esc, scrub_paths
from hanyi.outputs import OutDirError, UnsafeOutputError, open_output
from hanyi.pagestyle import CSS, slug
from hanyi.redact import redact_text, redact_tree

FORMAT = "hanyi-leaderboard"
FORMAT_VERSION = 1

#: Sorts a table by the clicked header button: numbers by ``data-v`` (rows without one last), text otherwise. The
#: first click sorts best first (``data-better``: ``high`` -> descending, ``low`` or ``text`` -> ascending), a second
#: click reverses; ``aria-sort`` says the order. Without it the rows stay in rank order.
SCRIPT = (
    "document.querySelectorAll('table.sortable th button').forEach(function(b){b.addEventListener('click',function(){"
    "var th=b.parentNode,t=th.closest('table'),bd=t.tBodies[0],i=th.cellIndex,"
    "best=b.dataset.better==='high'?'descending':'ascending',"
    "dir=th.getAttribute('aria-sort')===best?(best==='ascending'?'descending':'ascending'):best,"
    "d=dir==='ascending'?1:-1;"
    "t.querySelectorAll('th[aria-sort]').forEach(function(h){h.removeAttribute('aria-sort')});"
    "th.setAttribute('aria-sort',dir);"
    "var r=Array.prototype.slice.call(bd.rows);r.sort(function(x,y){var p=x.cells[i],q=y.cells[i],"
    "u=parseFloat(p&&p.dataset.v),w=parseFloat(q&&q.dataset.v);if(isNaN(u)!==isNaN(w))return isNaN(u)?1:-1;"
    "return d*(isNaN(u)?p.textContent.localeCompare(q.textContent):u-w)});"
    "r.forEach(function(x){bd.appendChild(x)})})})"
)
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
#: Text of at least 14 px, colours of at least 4.5:1 against their background (WCAG AA), tables that scroll inside
#: their box with the header row and the name column in view.
BOARD_CSS = (
    CSS + "body{font-size:16px;line-height:1.45}table{font-size:.875rem}"
    "th button{font:inherit;font-weight:600;color:#1a1a1a;background:none;border:0;padding:0;cursor:pointer;"
    "text-align:inherit;text-decoration:underline dotted}th button:focus-visible,a:focus-visible,summary:focus-visible,"
    ".scroll:focus-visible{outline:3px solid #1f4e79;outline-offset:2px}"
    "th[aria-sort=ascending] button::after{content:' \\25B2'}th[aria-sort=descending] button::after{content:' \\25BC'}"
    ".hint{display:block;font-weight:400;font-size:.875rem;color:#4a4a4a}"
    ".ci{color:#4a4a4a;white-space:nowrap}.ref{background:#dbe9f6;color:#1a1a1a;padding:0 .3em;border-radius:3px}"
    "tr.reference td,tr.reference th{background:#f4f8fc}.why,.cellnote{color:#6b4f00;font-size:.875rem}"
    ".card{display:block;font-weight:400;color:#4a4a4a;font-size:.875rem}.flag{display:block;color:#8a1c1c;"
    "font-size:.875rem}.claim{font-style:italic;text-decoration:underline wavy #8a1c1c}"
    "dl{margin:.2em 0;font-size:.875rem}dt{font-weight:600;float:left;clear:left;margin-right:.4em}"
    "dd{margin:0 0 .1em 0;overflow-wrap:anywhere}nav.top a{margin-right:1em;display:inline-block;padding:.2em 0}"
    ".scroll{overflow:auto;max-height:85vh;max-width:100%;width:fit-content;border:1px solid #ddd}th.txt{text-align:left}"
    ".scroll table{margin:0}thead th{position:sticky;top:0;z-index:2;background:#f3f3f3}"
    "th.name{position:sticky;left:0;z-index:1;background:#fff;text-align:left;min-width:9em;max-width:16em;"
    "overflow-wrap:anywhere}thead th:first-child{left:0;z-index:3}"
    "caption{text-align:left;font-weight:600;padding:.3em 0;caption-side:top}.caption{font-size:.875rem;color:#4a4a4a}"
    "td[data-v]{white-space:nowrap}code{overflow-wrap:anywhere}td.hash{font-family:monospace;overflow-wrap:anywhere;min-width:12em}td.resp{max-width:30em;white-space:pre-wrap}"
    "figure.chart{margin:1em 0}figure.chart .svg{overflow-x:auto}figure.chart figcaption{font-size:.875rem;color:#4a4a4a}"
    "details.papers{margin:1em 0}.pager a{margin:0 .3em}.pager a[aria-current]{font-weight:700}"
    "@media (max-width:600px){body{margin:.5em auto;padding:0 .5em}h1{font-size:1.3em}}"
)


def csv_text(value):
    """A CSV cell: numbers as they are; text redacted, with a leading ``'`` where a spreadsheet would read a formula.

    >>> csv_text("=HYPERLINK(\\"http://x\\")"), csv_text("-1+2"), csv_text("@SUM(A1)"), csv_text(-0.5), csv_text("m")
    ('\\'=HYPERLINK("http://x")', "'-1+2", "'@SUM(A1)", -0.5, 'm')
    """
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return value
    text = scrub_paths(redact_text(str(value)))
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def page_name(benchmark: str) -> str:
    return slug(benchmark) + ".html"


def page(title: str, body: str, benchmarks: list[str]) -> str:
    nav = ['<a href="index.html">index</a>']
    nav += [f'<a href="{esc(page_name(b))}">{esc(b)}</a>' for b in benchmarks]
    nav += ['<a href="status.html">status</a>', '<a href="rejected.html">rejected</a>']
    nav += ['<a href="leaderboard.json">JSON</a>', '<a href="leaderboard.csv">CSV</a>']
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{BOARD_CSS}</style></head><body>"
        f'<nav class="top" aria-label="board">{"".join(nav)}</nav><main><h1>{esc(title)}</h1>\n{body}\n</main>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def html_pages(board: Board, benchmarks: list[str], built: str) -> dict[str, str]:
    """``{file: HTML}`` of every page: index, benchmark pages (paged), model pages, predictions viewers, status and
    rejected."""
    pages.forget_columns()
    files = {"index.html": page("hanyi leaderboard", pages.index_body(board, benchmarks, built, page_name), benchmarks)}
    for bench in benchmarks:
        for name, body in pages.benchmark_pages(board, bench, page_name(bench)).items():
            files[name] = page(f"hanyi leaderboard: {bench}", body, benchmarks)
    for name, places in pages.model_places(board).items():
        model_file = pages.model_page(name)
        viewers = {}
        for section, row in places:
            e = row.entry
            base = f"pred-{slug(e.submission_hash)[:16]}.html"
            if e.submission_hash in viewers or not e.source_path:
                continue
            found = pages.prediction_pages(e, section, base, model_file)
            for file, body in found.items():
                files[file] = page(f"Predictions: {name}, {e.benchmark}", body, benchmarks)
            if found:
                viewers[e.submission_hash] = base
        files[model_file] = page(f"Model: {name}", pages.model_body(name, places, viewers), benchmarks)
    for name, body in pages.status_pages(board).items():
        files[name] = page("hanyi leaderboard: submission status", body, benchmarks)
    for name, body in pages.rejected_pages(board).items():
        files[name] = page("hanyi leaderboard: rejected submissions", body, benchmarks)
    return files


def _entry_json(entry: Entry | None) -> dict | None:
    if entry is None:
        return None
    return {k: v for k, v in vars(entry).items() if k not in ("per_doc", "clusters")}  # per-doc: the predictions


def _section_json(section: Section) -> dict:
    out = {k: v for k, v in vars(section).items() if k != "rows"}
    out["rows"] = [
        {
            **{k: v for k, v in vars(r).items() if k not in ("cells", "entry")},
            "cells": {c: vars(x) for c, x in r.cells.items()},
            "entry": _entry_json(r.entry),
        }
        for r in section.rows
    ]
    return out


CSV_HEADER = (
    "benchmark", "section", "model", "reference", "comparable", "rank", "rank_low", "rank_high", "tier", "flip",
    "column", "value", "low", "high", "n", "stderr", "note", "submission_hash", "model_args", "date", "hanyi_version",
    "lmms_eval_version", "predictions_file",
)  # fmt: skip


def csv_rows(board: Board) -> list[list]:
    """One line per (section row, column), long format."""
    out = []
    for section in [*board.sections, *([board.overall] if board.overall is not None else [])]:
        where = "ranked apart: " + "; ".join(section.apart) if section.apart else "main"
        for row in section.rows:
            e = row.entry
            for column in section.columns:
                c = row.cells.get(column) or Cell(None)
                out.append(
                    [
                        csv_text(v)
                        for v in (
                            section.benchmark,
                            where,
                            row.label,
                            row.reference,
                            row.comparable,
                            row.rank,
                            row.rank_low,
                            row.rank_high,
                            row.tier,
                            row.flip,
                            column,
                            c.value,
                            c.low,
                            c.high,
                            c.n,
                            c.stderr,
                            c.note,
                            e and e.submission_hash,
                            e and e.model_args,
                            e and e.date,
                            e and e.hanyi_version,
                            e and e.lmms_eval_version,
                            e and e.predictions_file,
                        )
                    ]  # fmt: skip
                )
    return out


#: The site's own record of the files it wrote, with their sha256, inside its cache: the only list a rebuild
#: replaces or deletes files by. The public ``leaderboard.json`` is for readers: editing its ``files`` list moves
#: nothing.
MANIFEST = os.path.join(".cache", "site-files.manifest")
MANIFEST_FORMAT = "hanyi-leaderboard-manifest"


def _previous_files(out_dir: str) -> tuple[dict[str, str | None], bool]:
    """``({path: sha256 as written}, owned)``: the files an earlier build wrote in ``out_dir``, from the site's
    manifest (``owned``: the build may delete one that still has the sha256 it was written with). A site written
    before the manifest existed: the names its ``leaderboard.json`` lists, which may be replaced, never deleted."""
    try:
        with open(os.path.join(out_dir, MANIFEST), encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT and isinstance(data.get("files"), dict):
            return {str(k): str(v) for k, v in data["files"].items()}, True
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(out_dir, "leaderboard.json"), encoding="utf-8") as f:
            data = json.load(f)
        assert isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("files"), list)
    except (OSError, ValueError, AssertionError):
        return {}, False
    return {str(p): None for p in data["files"]}, False


def _inside(out_dir: str, name: str) -> str | None:
    """The path of ``name`` in the site when it is a plain file there (not a symlink, not outside), else None."""
    path = os.path.join(out_dir, name)
    real = os.path.realpath(path)
    if os.path.islink(path) or not real.startswith(os.path.realpath(out_dir) + os.sep) or not os.path.isfile(path):
        return None
    return path


def _sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def predictions_to_copy(board: Board) -> dict[str, str]:
    """``{site path: submission file}`` of the per-doc predictions: each ranked entry without a ``predictions_file``
    whose submission file (``Entry.source_path``) still holds the bytes the board scored (same sha256) is copied to
    ``predictions/<sha256>.json``, and its ``predictions_file`` set to that path."""
    out = {}
    for section in board.sections:
        for row in section.rows:
            e = row.entry
            if e is None or e.predictions_file or not e.source_path or _sha256(e.source_path) != e.submission_hash:
                continue
            e.predictions_file = f"predictions/{slug(e.submission_hash)}.json"
            out[e.predictions_file] = e.source_path
    return out


def _copy_redacted(source: str, out_dir: str, path: str) -> tuple[str, object]:
    """Copy a submission file into the site, credentials masked in every string of the JSON document, keys included
    (:func:`hanyi.redact.redact_tree`; byte for byte when there is none, else the document written again; a file
    that is not JSON: :func:`hanyi.redact.redact_text` on its text); returns the sha256 of what was written and the
    document as written (``None`` for a file that is not JSON)."""
    with open(source, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = clean = None
        redacted = scrub_paths(redact_text(text))  # nor a path of the submitter's machine
        if redacted != text:
            data = redacted.encode("utf-8", errors="replace")
    else:
        clean = eee._no_paths(redact_tree(doc))  # nor a path of the submitter's machine
        if clean != doc:
            data = (json.dumps(clean, ensure_ascii=False, indent=1) + "\n").encode("utf-8", errors="replace")
    with open_output(out_dir, path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest(), clean


def _make_folder(out_dir: str, name: str) -> None:
    """Create the folder ``name`` (relative) inside the site, one part at a time, never through a symlink (a
    symlinked ``eee`` would otherwise have its ``data/...`` folders made where it leads)."""
    os.makedirs(out_dir, exist_ok=True)
    path = out_dir
    for part in name.split("/"):
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise UnsafeOutputError(errno.ELOOP, "refusing to write through a symlink; remove it", path)
        if not os.path.isdir(path):
            os.mkdir(path)


def _prune(out_dir: str, folder: str) -> None:
    """Remove ``folder`` (relative) and its parents up to ``eee/data`` while they are empty real folders: a model
    whose last record went leaves no empty folder behind in the layout a maintainer copies."""
    while folder.startswith("eee/data/"):
        path = os.path.join(out_dir, folder)
        if os.path.islink(path) or not os.path.isdir(path) or os.listdir(path):
            return
        os.rmdir(path)
        folder = os.path.dirname(folder)


def write_site(board: Board, out_dir: str) -> list[str]:
    """Write the site into ``out_dir``; returns the paths written.

    The folder may be new, or hold other files (the intake's cache): the board never replaces a file it did not
    write. A file of an earlier board there (listed in its ``leaderboard.json``) is replaced, and one it no longer
    writes is removed. Raises :class:`hanyi.outputs.OutDirError` when a file the board would write exists and
    is not an earlier board's; writes never follow a symlink out of the folder (:func:`hanyi.outputs.open_output`).
    ``SOURCE_DATE_EPOCH`` fixes the build time (the records' ``retrieved_timestamp``), for byte-identical rebuilds.
    """
    built = os.environ.get("SOURCE_DATE_EPOCH") or repr(round(time.time(), 3))
    copies = predictions_to_copy(board)
    benchmarks = list(dict.fromkeys(s.benchmark for s in board.sections))
    # Every Eval Ever's repository layout under eee/: data/<benchmark>/<developer>/<model>/<uuid>.json, and the
    # jsonl of a row whose predictions the site copies beside it (eee.datastore_paths)
    records, samples_of = {}, {}
    for s in board.sections:
        for r in s.rows:
            rec = None if r.entry is None or r.reference else eee.record(s, r, built)
            if rec is None:
                continue
            k = 0
            while True:  # the same submission twice in a benchmark: the next uuid
                ident = eee.file_uuid(s.benchmark, r.entry.submission_hash, k)
                name, samples = eee.datastore_paths(s.benchmark, rec, ident)
                if f"eee/{name}" not in records:
                    break
                k += 1
            records[f"eee/{name}"] = rec
            if r.entry.predictions_file in copies:
                samples_of.setdefault(r.entry.predictions_file, []).append((f"eee/{name}", f"eee/{samples}", s, r))
    html_files = html_pages(board, benchmarks, built)
    jsonl = [n for rows in samples_of.values() for _, n, _, _ in rows]
    names = [*html_files, *records, *jsonl, *copies, "leaderboard.csv", "leaderboard.json"]
    previous, owned = _previous_files(out_dir)
    clash = sorted(n for n in names if n not in previous and os.path.lexists(os.path.join(out_dir, n)))
    if clash:
        raise OutDirError(
            f"--out {out_dir}: {clash[0]} exists and is not an earlier hanyi board's; choose a new folder"
        )
    for folder in sorted({"eee", "predictions", *(os.path.dirname(n) for n in records)}):
        _make_folder(out_dir, folder)
    written, checksums = [], {}
    for name, source in copies.items():
        written.append(os.path.join(out_dir, name))
        checksums[name], doc = _copy_redacted(source, out_dir, written[-1])
        for rec_name, samples, section, row in samples_of.get(name, ()):
            lines, left_out = eee.samples(records[rec_name], section, row, doc)
            if not lines:  # that repository refuses an empty jsonl: no file, no reference
                continue
            data = "".join(line + "\n" for line in lines).encode("utf-8", errors="replace")
            written.append(os.path.join(out_dir, samples))
            with open_output(out_dir, written[-1], "wb") as f:
                f.write(data)
            checksums[samples] = hashlib.sha256(data).hexdigest()
            records[rec_name] = eee.attach_samples(
                records[rec_name], samples[len("eee/") :], data, len(lines), left_out
            )
        del doc  # one submission's document in memory at a time

    files: dict[str, str] = dict(html_files)
    for name, rec in records.items():  # masked by eee.record; the jsonl's path and checksum are the board's own
        files[name] = json.dumps(rec, ensure_ascii=False, indent=1) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    writer.writerows(csv_rows(board))
    files["leaderboard.csv"] = buffer.getvalue()
    summary = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "hanyi_version": __version__,
        "built": built,
        "files": sorted([*files, *copies, *(n for n in checksums if n.endswith(".jsonl")), "leaderboard.json"]),
        "sections": [eee._no_paths(_section_json(s)) for s in board.sections],
        "overall": None if board.overall is None else eee._no_paths(_section_json(board.overall)),
        "overall_absent": board.overall_absent,
        "rejected": [vars(r) for r in board.rejected],
        "every_eval_ever": {
            "schema": "eval.schema.json",
            "version": eee.SCHEMA_VERSION,
            "also_valid": "0.3.0",
            "instance_schema": "instance_level_eval.schema.json",
            "layout": "eee/data/<benchmark>/<developer>/<model>/<uuid>.json, <uuid>_samples.jsonl",
        },
    }
    files["leaderboard.json"] = json.dumps(redact_tree(summary), ensure_ascii=False, indent=1, default=str) + "\n"
    for name, text in files.items():
        written.append(os.path.join(out_dir, name))
        data = text.encode("utf-8", errors="replace")  # a lone surrogate in a name is a "?", never a crash
        checksums[name] = hashlib.sha256(data).hexdigest()
        with open_output(out_dir, written[-1], "wb") as f:
            f.write(data)
    manifest = {"format": MANIFEST_FORMAT, "files": {n: checksums[n] for n in sorted(checksums)}}
    os.makedirs(os.path.dirname(os.path.join(out_dir, MANIFEST)), exist_ok=True)
    with open_output(out_dir, os.path.join(out_dir, MANIFEST)) as f:
        json.dump(manifest, f, indent=1)
    for stale in sorted(set(previous) - set(checksums)) if owned else ():
        # only a file this board wrote, still as it wrote it: never one the folder's owner put there since
        path = _inside(out_dir, stale)
        if path is not None and previous[stale] and _sha256(path) == previous[stale]:
            os.remove(path)
            _prune(out_dir, os.path.dirname(stale))
    return written
