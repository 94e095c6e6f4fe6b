"""Write the board as a static site: ``index.html``, one page per benchmark, ``rejected.html``, ``leaderboard.json``,
``leaderboard.csv`` and one Every Eval Ever record per ranked submission row under ``eee/`` (issue 38, items 4 and 5).

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
import hashlib
import html
import io
import json
import math
import os
import re
import time

from hanyi import BENCHMARKS, __version__
from hanyi.leaderboard import eee
from hanyi.leaderboard.entries import Board, Cell, Entry, Row, Section
from hanyi.outputs import open_output
from hanyi.redact import redact_text, redact_tree
from hanyi.report.build import fmt
from hanyi.report.render import CSS, OutDirError, slug

FORMAT = "hanyi-leaderboard"
FORMAT_VERSION = 1

#: Sorts a table by the clicked header: numbers by ``data-v`` (rows without one last), text otherwise; a second click
#: reverses. Without it the rows stay in rank order.
SCRIPT = (
    "document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){"
    "var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,d=th.getAttribute('aria-sort')==='ascending'?-1:1;"
    "t.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort')});"
    "th.setAttribute('aria-sort',d>0?'ascending':'descending');"
    "var r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){var p=x.cells[i],q=y.cells[i],"
    "u=parseFloat(p&&p.dataset.v),w=parseFloat(q&&q.dataset.v);if(isNaN(u)!==isNaN(w))return isNaN(u)?1:-1;"
    "return d*(isNaN(u)?p.textContent.localeCompare(q.textContent):u-w)});"
    "r.forEach(function(x){b.appendChild(x)})})})"
)
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
BOARD_CSS = (
    CSS
    + "th{cursor:pointer}th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    ".ci{color:#555;white-space:nowrap}.ref{background:#e8f1fa;font-size:.75em;padding:0 .3em;border-radius:3px}"
    "tr.reference td{background:#f7fbff}.why,.cellnote{color:#7a5b00;font-size:.8em}dl{margin:.2em 0;font-size:.85em}"
    "dt{font-weight:600;float:left;clear:left;margin-right:.4em}dd{margin:0 0 .1em 0;word-break:break-all}"
    "nav.top a{margin-right:1em}.scroll{overflow-x:auto}td.label{min-width:12em}"
)


def esc(text) -> str:
    """A submitter's text for HTML: credentials masked, then every ``& < > " '`` escaped.

    >>> esc('<img src=x onerror=alert(1)>'), esc("a\\"b'c")
    ('&lt;img src=x onerror=alert(1)&gt;', 'a&quot;b&#x27;c')
    """
    return html.escape(redact_text(str(text)), quote=True)


def csv_text(value):
    """A CSV cell: numbers as they are; text redacted, with a leading ``'`` where a spreadsheet would read a formula.

    >>> csv_text("=HYPERLINK(\\"http://x\\")"), csv_text("-1+2"), csv_text("@SUM(A1)"), csv_text(-0.5), csv_text("m")
    ('\\'=HYPERLINK("http://x")', "'-1+2", "'@SUM(A1)", -0.5, 'm')
    """
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return value
    text = redact_text(str(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def page_name(benchmark: str) -> str:
    return slug(benchmark) + ".html"


def _decimals(value: float) -> int:
    return 4 if abs(value) <= 1 else 2


def cell_html(cell: Cell | None, judged: str | None = None) -> str:
    """``<td data-v=value>value [low, high]</td>`` (the sort reads ``data-v``); ``-`` without a value."""
    if cell is None or cell.value is None or not math.isfinite(cell.value):
        note = f'<div class="cellnote">{esc(cell.note)}</div>' if cell is not None and cell.note else ""
        return f'<td class="txt">-{note}</td>'
    d = _decimals(cell.value)
    text = fmt(cell.value, d)
    if cell.low is not None and cell.high is not None:
        text += f' <span class="ci">[{fmt(cell.low, d)}, {fmt(cell.high, d)}]</span>'
    notes = [n for n in (cell.note, f"judged: {judged}" if judged else "") if n]
    note = "".join(f'<div class="cellnote">{esc(n)}</div>' for n in notes)
    title = f' title="{esc(cell.method)}"' if cell.method else ""
    return f'<td data-v="{cell.value!r}"{title}>{text}{note}</td>'


def _rank_html(row: Row) -> str:
    if row.rank is None:
        return '<td class="txt">-</td>'
    interval = f" [{row.rank_low}&ndash;{row.rank_high}]" if row.rank_low is not None else ""
    return f'<td data-v="{row.rank}">{row.rank}{interval}</td>'


def _int_html(value: int | None, title: str = "") -> str:
    title = f' title="{esc(title)}"' if title else ""
    return '<td class="txt">-</td>' if value is None else f'<td data-v="{value}"{title}>{value}</td>'


#: A predictions link is a path inside the site: no scheme (``javascript:``, ``http:``), no ``..``, not absolute.
_SAFE_LINK = re.compile(r"^(?![A-Za-z][A-Za-z0-9+.-]*:)(?!/)(?!.*(?:^|/)\.\.(?:/|$))[^\\]+$")


def _compact(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _find(entry: Entry, words: tuple[str, ...]) -> list[str]:
    """Values of the protocol and provenance keys holding one of ``words``, per task (``task: value``)."""
    found = []
    for task in sorted(set(entry.protocol) | set(entry.provenance)):
        seen = []
        for source in (entry.protocol.get(task) or {}, entry.provenance.get(task) or {}):
            for key, value in source.items():
                if value not in (None, "", {}, []) and any(w in key for w in words) and _compact(value) not in seen:
                    seen.append(_compact(value))
        found += [f"{task}: {v}" for v in seen]
    return found


def provenance_html(entry: Entry | None) -> str:
    """The row's provenance: model, redacted ``model_args``, date, versions, judge, backbones, data fingerprint,
    submission hash, which judged metrics were re-aggregated or re-judged, every protocol field, and the link to the
    per-doc predictions."""
    if entry is None:
        return '<td class="txt">-</td>'
    items = [
        ("model", entry.model),
        ("model_args", entry.model_args or "-"),
        ("date", entry.date or "-"),
        ("hanyi", entry.hanyi_version or "-"),
        ("lmms-eval", entry.lmms_eval_version or "-"),
        ("judge", "; ".join(_find(entry, ("judge",))) or "none"),
        ("backbones", "; ".join(_find(entry, ("backbone", "scorer_backend"))) or "none"),
        ("data", "; ".join(_find(entry, ("fingerprint", "data_source"))) or "-"),
        ("submission sha256", entry.submission_hash),
    ]
    items += [(f"{col}", how) for col, how in sorted(entry.judged.items())]
    for task in sorted(entry.protocol):
        fields = entry.protocol[task] or {}
        items.append((f"protocol {task}", "; ".join(f"{k}={_compact(v)}" for k, v in sorted(fields.items()))))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    link = entry.predictions_file
    if link and _SAFE_LINK.match(link):
        body += f'<dt>predictions</dt><dd><a href="{esc(link)}">per-doc predictions</a></dd>'
    elif link:
        body += f"<dt>predictions</dt><dd>{esc(link)} (not a path inside the site: not linked)</dd>"
    summary = f"{esc(entry.submission_hash[:12])} &middot; {esc(entry.date or '')}"
    return f'<td class="txt"><details><summary>{summary}</summary><dl>{body}</dl></details></td>'


def _label_html(row: Row) -> str:
    label = esc(row.label)
    if not row.reference:
        return f'<td class="txt label">{label}</td>'
    mark = "comparable" if row.comparable else "not comparable"
    why = f": {'; '.join(row.reasons)}" if row.reasons else ""
    return f'<td class="txt label"><span class="ref">paper</span> {label}<div class="why">{esc(mark + why)}</div></td>'


def section_html(section: Section, ident: str) -> str:
    """One section: its heading (ranked together, or apart with the reasons), protocol, method and sortable table."""
    out = [f'<section id="{esc(ident)}">']
    if section.apart:
        out.append(f"<h2>{esc(section.benchmark)}: ranked apart</h2>")
        out.append('<p class="note">Apart from the main table because: ' + esc("; ".join(section.apart)) + "</p>")
    else:
        out.append(f"<h2>{esc(section.benchmark)}: ranked together</h2>")
    protocol = "; ".join(f"{k}={v}" for k, v in sorted(section.protocol.items()))
    out.append(f'<p class="caption">Protocol shared by these rows: {esc(protocol or "-")}.</p>')
    out.append(
        f"<p>Ranked by <code>{esc(section.ranking_column)}</code>. Test and intervals: "
        f"{esc(section.method or 'not stated by the ranking')}.</p>"
    )
    header = ["rank [95 % interval]", "tier", "flip", "model", *section.columns, "provenance"]
    out.append('<div class="scroll"><table class="sortable"><thead><tr>')
    out.append("".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for row in section.rows:
        judged = row.entry.judged if row.entry is not None else {}
        p = "" if row.p_above is None else f"paired test against the row above: Holm-adjusted p = {row.p_above:.3g}"
        cells = [_rank_html(row), _int_html(row.tier, p), _int_html(row.flip), _label_html(row)]
        cells += [cell_html(row.cells.get(c), judged.get(c)) for c in section.columns]
        cells.append(provenance_html(row.entry))
        tr = '<tr class="reference">' if row.reference else "<tr>"
        out.append(tr + "".join(cells) + "</tr>")
    out.append("</tbody></table></div></section>")
    return "\n".join(out)


def page(title: str, body: str, benchmarks: list[str]) -> str:
    nav = ['<a href="index.html">index</a>']
    nav += [f'<a href="{esc(page_name(b))}">{esc(b)}</a>' for b in benchmarks]
    nav += ['<a href="rejected.html">rejected</a>', '<a href="leaderboard.json">JSON</a>']
    nav.append('<a href="leaderboard.csv">CSV</a>')
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{BOARD_CSS}</style></head><body>"
        f'<nav class="top">{"".join(nav)}</nav><h1>{esc(title)}</h1>\n{body}\n'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def _index_body(board: Board, benchmarks: list[str], built: str) -> str:
    out = [
        f"<p>Built by hanyi {esc(__version__)} at {esc(time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(float(built))))}. "
        "Every number is the board's own re-score of the submitted per-doc predictions, never a claim; "
        "each cell is the value and its 95 % interval.</p>",
        "<table><thead><tr><th>benchmark</th><th>sections</th><th>ranked rows</th></tr></thead><tbody>",
    ]
    for bench in [*benchmarks, *[b for b in BENCHMARKS if b not in benchmarks]]:
        sections = [s for s in board.sections if s.benchmark == bench]
        rows = sum(1 for s in sections for r in s.rows if not r.reference)
        name = f'<a href="{esc(page_name(bench))}">{esc(bench)}</a>' if sections else esc(bench)
        out.append(f'<tr><td class="txt">{name}</td><td>{len(sections)}</td><td>{rows}</td></tr>')
    out.append("</tbody></table>")
    out.append(f'<p><a href="rejected.html">Rejected submissions</a>: {len(board.rejected)}.</p>')
    if board.overall is not None:
        out.append(section_html(board.overall, "overall"))
    else:
        out.append(
            f'<p class="note">No overall score: {esc(board.overall_absent or "not every row has every benchmark comparable")}.</p>'
        )
    return "\n".join(out)


def _rejected_body(board: Board) -> str:
    if not board.rejected:
        return "<p>No submission was rejected.</p>"
    out = [
        "<p>Files refused on arrival, with every reason. Nothing of them enters a table.</p>",
        '<table class="sortable"><thead><tr><th>file</th><th>model</th><th>submission sha256</th><th>reasons</th>'
        "</tr></thead><tbody>",
    ]
    for rej in board.rejected:
        reasons = "".join(f"<li>{esc(r)}</li>" for r in rej.reasons)
        out.append(
            f'<tr><td class="txt">{esc(rej.path)}</td><td class="txt">{esc(rej.model or "-")}</td>'
            f'<td class="txt">{esc(rej.submission_hash or "-")}</td><td class="txt"><ul>{reasons}</ul></td></tr>'
        )
    out.append("</tbody></table>")
    return "\n".join(out)


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


def _previous_files(out_dir: str) -> list[str] | None:
    """The files an earlier board wrote in ``out_dir`` (its ``leaderboard.json``), or ``None`` when there is none."""
    try:
        with open(os.path.join(out_dir, "leaderboard.json"), encoding="utf-8") as f:
            data = json.load(f)
        assert isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("files"), list)
    except (OSError, ValueError, AssertionError):
        return None
    return [str(p) for p in data["files"]]


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


def _copy_redacted(source: str, out_dir: str, path: str) -> str:
    """Copy a submission file into the site, credentials masked (:func:`hanyi.redact.redact_text`: byte for byte
    when there is none); returns the sha256 of what was written."""
    with open(source, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="replace")
    redacted = redact_text(text)
    if redacted != text:
        data = redacted.encode("utf-8")
    with open_output(out_dir, path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def write_site(board: Board, out_dir: str) -> list[str]:
    """Write the site into ``out_dir``; returns the paths written.

    The folder may be new, or hold other files (the intake's cache): the board never replaces a file it did not
    write. A file of an earlier board there (listed in its ``leaderboard.json``) is replaced, and one it no longer
    writes is removed. Raises :class:`hanyi.report.render.OutDirError` when a file the board would write exists and
    is not an earlier board's; writes never follow a symlink out of the folder (:func:`hanyi.outputs.open_output`).
    ``SOURCE_DATE_EPOCH`` fixes the build time (the records' ``retrieved_timestamp``), for byte-identical rebuilds.
    """
    built = os.environ.get("SOURCE_DATE_EPOCH") or repr(round(time.time(), 3))
    copies = predictions_to_copy(board)
    benchmarks = list(dict.fromkeys(s.benchmark for s in board.sections))
    records = [
        (f"eee/{slug(s.benchmark)}-{slug(r.entry.submission_hash)}.json", s, r)
        for s in board.sections
        for r in s.rows
        if r.entry is not None and not r.reference
    ]
    pages = ["index.html", *[page_name(b) for b in benchmarks], "rejected.html"]
    names = [*pages, *[n for n, _, _ in records], *copies, "leaderboard.csv", "leaderboard.json"]
    previous = _previous_files(out_dir)
    clash = sorted(n for n in names if n not in (previous or ()) and os.path.lexists(os.path.join(out_dir, n)))
    if clash:
        raise OutDirError(
            f"--out {out_dir}: {clash[0]} exists and is not an earlier hanyi board's; choose a new folder"
        )
    for folder in ("eee", "predictions"):
        os.makedirs(os.path.join(out_dir, folder), exist_ok=True)
    written, checksums = [], {}
    for name, source in copies.items():
        written.append(os.path.join(out_dir, name))
        checksums[name] = _copy_redacted(source, out_dir, written[-1])

    files: dict[str, str] = {"index.html": page("hanyi leaderboard", _index_body(board, benchmarks, built), benchmarks)}
    for bench in benchmarks:
        sections = [s for s in board.sections if s.benchmark == bench]
        body = "\n".join(section_html(s, f"{slug(bench)}-{i}") for i, s in enumerate(sections))
        files[page_name(bench)] = page(f"hanyi leaderboard: {bench}", body, benchmarks)
    files["rejected.html"] = page("hanyi leaderboard: rejected submissions", _rejected_body(board), benchmarks)
    for name, section, row in records:
        rec = eee.record(section, row, built, checksums.get(row.entry.predictions_file))
        if rec is not None:
            files[name] = json.dumps(redact_tree(rec), ensure_ascii=False, indent=1) + "\n"
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
        "files": sorted([*files, *copies, "leaderboard.json"]),
        "sections": [_section_json(s) for s in board.sections],
        "overall": None if board.overall is None else _section_json(board.overall),
        "overall_absent": board.overall_absent,
        "rejected": [vars(r) for r in board.rejected],
        "every_eval_ever": {"schema": "eval.schema.json", "version": eee.SCHEMA_VERSION},
    }
    files["leaderboard.json"] = json.dumps(redact_tree(summary), ensure_ascii=False, indent=1, default=str) + "\n"
    for name, text in files.items():
        written.append(os.path.join(out_dir, name))
        with open_output(out_dir, written[-1]) as f:
            f.write(text)
    for stale in set(previous or ()) - set(files) - set(copies):
        path = os.path.realpath(os.path.join(out_dir, stale))
        if path.startswith(os.path.realpath(out_dir) + os.sep) and os.path.isfile(path):
            os.remove(path)
    return written
