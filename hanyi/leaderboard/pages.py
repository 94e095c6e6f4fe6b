"""The bodies of the board's pages (:mod:`hanyi.leaderboard.site` writes them): what a visitor reads.

* **Index**: per benchmark its top rows (rank, name, headline value [interval], tier) and a link to the full table;
  the overall mean rank or why there is none; the accepted / pending / duplicate / rejected counts; how to read the
  board.
* **Benchmark page**, per section: a rank-interval chart, a compact main table (rank [interval], tier, name with
  organisation, size and openness, the ranking column and the paper's other headline columns), every other column
  (categories) in a second table, and the papers' rows, one per paper model with all its tables' columns, apart and
  collapsed. Values are in the paper's unit (``54.1`` in a column the paper prints in percent), headers as the paper
  names them (the metric key in the header's title). A section of more than :data:`PAGE_ROWS` rows shows its top rows
  and links the rest, :data:`PAGE_ROWS` a page.
* **Model page**, per display name: every benchmark and section it has a row in, its categories with intervals and a
  bar chart, its neighbours (the paired test's adjusted p and the flip count), provenance, and a predictions viewer
  (plain pages of :data:`PRED_ROWS` docs, no script needed).
* **Status page**: every submission file read, with its sha256, date and state (ranked, apart, duplicate, pending,
  rejected) and the reasons.

Every table has a ``<caption>``, ``scope`` on its headers, the model name as the row header, and sortable headers are
buttons (``aria-sort`` says the order); the first click sorts best first. Every submitter string is escaped by
:func:`esc` (credentials masked, absolute paths of the submitter's machine cut to their last part).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import math
import os
import re
import time
from dataclasses import dataclass

from hanyi import BENCHMARKS, __version__
from hanyi.leaderboard import charts
from hanyi.leaderboard.entries import Board, Cell, Entry, Row, Section
from hanyi.pagestyle import slug
from hanyi.redact import redact_text
from hanyi.submit.model_card import size_label

#: Rows of a section's table per page (the rest on further pages): keeps a page of 1,000 submissions under 1 MB.
PAGE_ROWS = 100
#: Docs per page of the predictions viewer.
PRED_ROWS = 50
#: Rows per benchmark on the index.
INDEX_ROWS = 5
#: Headline columns of the main table besides the ranking column.
HEADLINE = 4

#: An absolute path (POSIX home or temp folders, any ``/x/y/...`` of 2+ parts, a Windows drive): the submitter's
#: machine; the site keeps only the last part.
_ABS_PATH = re.compile(r"(?<![\w.:/-])(?:[A-Za-z]:\\|/)(?:[^\s/\\\"'<>,;=]+[/\\])+([^\s/\\\"'<>,;=]*)")


def scrub_paths(text: str) -> str:
    """Absolute file paths cut to ``…/<last part>``; URLs stay.

    >>> scrub_paths("path=/home/alice/runs/replay.jsonl,dtype=f16"), scrub_paths("https://x.org/a/b")
    ('path=…/replay.jsonl,dtype=f16', 'https://x.org/a/b')
    >>> scrub_paths(r"C:\\Users\\bob\\m.json or /srv/x.json")
    '…/m.json or …/x.json'
    """
    return _ABS_PATH.sub(lambda m: "\u2026/" + m.group(1), text)


def esc(text) -> str:
    """A submitter's text for HTML: credentials masked, machine paths cut, every ``& < > " '`` escaped.

    >>> esc('<img src=x onerror=alert(1)>'), esc("a\\"b'c")
    ('&lt;img src=x onerror=alert(1)&gt;', 'a&quot;b&#x27;c')
    """
    return html.escape(scrub_paths(redact_text(str(text))), quote=True)


def esc_board_path(path) -> str:
    """A file path of the board's own machine (the files it was given): credentials masked, escaped, kept whole so
    that a maintainer finds the file."""
    return html.escape(redact_text(str(path)), quote=True)


# ---- columns: the paper's names and units ------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnInfo:
    key: str  # "task/metric"
    header: str  # as the paper names it, else the metric
    title: str  # the key and the paper's table
    scale: float  # our value x scale = the shown value
    unit: str  # "%" or ""
    decimals: int
    better: str  # "high" | "low"
    table: str | None  # the paper's table id (the headline columns share the ranking column's)

    @property
    def label(self) -> str:
        """The header with its unit, once: ``Overall (%)``; a paper name that says its unit keeps it."""
        return self.header + (f" ({self.unit})" if self.unit and self.unit not in self.header else "")


_SIBLING = re.compile(r"_(robust|strict|chrf|bertscore)$")


def column_info(bench: str, col: str, lower: bool = False, values: tuple = ()) -> ColumnInfo:
    """How to show one column: the paper's name and unit from the anchors (:func:`hanyi.results.anchors.links_for`);
    a robust sibling (``acc_robust``) takes its paper metric's unit and is named after it with its suffix."""
    from hanyi.results import anchors

    task, _, metric = col.partition("/")
    if task == "overall" or "/" not in col or col.endswith("/rank") or col == "mean_rank":
        name = "mean rank" if col == "mean_rank" else col.replace("/rank", " rank")
        return ColumnInfo(col, name, col, 1.0, "", 2, "low", None)
    links = anchors.links_for(bench, task, [metric])
    suffix = ""
    if not links and _SIBLING.search(metric):
        base = _SIBLING.sub("", metric)
        links, suffix = anchors.links_for(bench, task, [base]), " (" + _SIBLING.search(metric).group(1) + ")"
    if links:
        link = links[0]
        unit_text = str(link.table.get("unit", ""))
        if link.scale == "auto":
            fraction = all(abs(v) <= 1 for v in values) if values else "percent" in unit_text
            scale = 100.0 if fraction else 1.0
        else:
            scale = float(link.scale)
        unit = "%" if "percent" in unit_text else ""
        shown = [abs(v * scale) for v in values if v is not None]
        decimals = 1 if unit else (4 if shown and max(shown) <= 1 else 2)
        header = link.column + suffix
        title = f"{col}: {link.cite}, column {link.column}" + (f" ({unit_text})" if unit_text else "")
        return ColumnInfo(col, header, title, scale, unit, decimals, "low" if lower else "high", link.table["id"])
    shown = [abs(v) for v in values if v is not None]
    decimals = 4 if not shown or max(shown) <= 1 else 2
    return ColumnInfo(col, metric.replace("_", " "), col, 1.0, "", decimals, "low" if lower else "high", None)


#: Each section's column infos while one site is written (:func:`forget_columns` clears it): a model page reads its
#: section's again, and a section of 1,000 rows is not re-read 1,000 times.
_COLUMNS: dict[int, tuple[Section, dict]] = {}


def forget_columns() -> None:
    _COLUMNS.clear()


def section_columns(section: Section) -> dict[str, ColumnInfo]:
    hit = _COLUMNS.get(id(section))
    if hit is not None and hit[0] is section:
        return hit[1]
    _COLUMNS[id(section)] = (section, _section_columns(section))
    return _COLUMNS[id(section)][1]


def _section_columns(section: Section) -> dict[str, ColumnInfo]:
    out = {}
    for col in section.columns:
        values = tuple(c.value for r in section.rows if (c := r.cells.get(col)) is not None and c.value is not None)
        out[col] = column_info(section.benchmark, col, col in section.lower_is_better, values)
    seen: dict[str, list[str]] = {}
    for col, info in out.items():
        seen.setdefault(info.header, []).append(col)
    for header, cols in seen.items():  # one paper column filled by several tasks: the task tells them apart
        if len(cols) > 1:
            for col in cols:
                out[col] = dataclasses.replace(out[col], header=f"{header} · {col.partition('/')[0]}")
    return out


def headline_columns(section: Section, info: dict[str, ColumnInfo]) -> list[str]:
    """The ranking column and up to :data:`HEADLINE` more: the paper's other columns of the ranking column's table
    (in the paper's order, e.g. Overall then the domains), then the first paper column of each other task, then our
    robust siblings."""
    key = section.ranking_column
    table = info[key].table if key in info else None
    paper = [c for c in section.columns if c in info and not _SIBLING.search(c)]
    same = [c for c in paper if c != key and table is not None and info[c].table == table]
    firsts: dict[str, str] = {}
    for c in paper:
        firsts.setdefault(c.partition("/")[0], c)
    siblings = [c for c in section.columns if c in info and _SIBLING.search(c)]
    picked = [key] if key in info else []
    for c in [*same, *firsts.values(), *siblings]:
        if c not in picked and len(picked) < 1 + HEADLINE:
            picked.append(c)
    return picked


def shown(value: float | None, info: ColumnInfo) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value * info.scale:.{info.decimals}f}"


def cell_html(cell: Cell | None, info: ColumnInfo, judged: str | None = None, claim: str | None = None) -> str:
    """``<td data-v=value>54.1 % [50.6, 57.6]</td>`` in the paper's unit (the sort reads ``data-v``); ``claim``:
    why the board did not verify the value (then marked as the submitter's claim)."""
    if cell is None or cell.value is None or not math.isfinite(cell.value):
        note = f'<div class="cellnote">{esc(cell.note)}</div>' if cell is not None and cell.note else ""
        return f'<td class="txt">-{note}</td>'
    text = shown(cell.value, info) + (f"&nbsp;{info.unit}" if info.unit else "")
    if cell.low is not None and cell.high is not None:
        text += f' <span class="ci">[{shown(cell.low, info)}, {shown(cell.high, info)}]</span>'
    notes = [n for n in (cell.note, f"judged: {judged}" if judged else "") if n]
    if claim:
        notes.insert(0, f"the submitter's claim, not verified: {claim}")
        text = f'<span class="claim">{text}</span>'

    note = "".join(f'<div class="cellnote">{esc(n)}</div>' for n in notes)
    title = f' title="{esc(cell.method)}"' if cell.method else ""
    return f'<td data-v="{cell.value!r}"{title}>{text}{note}</td>'


# ---- names -------------------------------------------------------------------------------------------------------
def model_page(name: str) -> str:
    """The file of a display name's page: a slug and a hash (two names never share a file)."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"model-{slug(name)[:40] or 'model'}-{digest}.html"


def row_name(row: Row) -> str:
    return row.entry.display_name if row.entry is not None else row.label


def card_badges(entry: Entry | None) -> str:
    """Organisation, size and openness of a row's model card, as small text (never colour alone)."""
    if entry is None:
        return ""
    card = entry.card or {}
    parts = [card.get("organisation") or "", size_label(card.get("parameters"))]
    if card.get("open_weights") is not None:
        parts.append("open weights" if card["open_weights"] else "closed weights")
    parts = [p for p in parts if p]
    out = f'<span class="card">{esc(" · ".join(parts))}</span>' if parts else ""
    for flag in getattr(entry, "flags", None) or ():
        out += f'<span class="flag">flag: {esc(flag)}</span>'
    return out


def name_cell(row: Row) -> str:
    """The row header: the display name, linked to the model's page, with its card's badges."""
    name = row_name(row)
    if row.entry is None and not row.reference:  # the overall mean rank's row: the model's display name
        return f'<th scope="row" class="name" data-v=""><a href="{model_page(name)}">{esc(name)}</a></th>'
    if row.entry is None:
        return f'<th scope="row" class="name">{esc(name)}</th>'
    link = f'<a href="{model_page(name)}">{esc(name)}</a>'
    return f'<th scope="row" class="name" data-v="">{link}{card_badges(row.entry)}</th>'


# ---- tables ------------------------------------------------------------------------------------------------------
def _th(label: str, better: str, hint: str = "", title: str = "", sort: str = "") -> str:
    """A sortable header: a button (keyboard reachable); ``better``: ``high`` / ``low`` / ``text`` (first click
    sorts best first)."""
    title = f' title="{esc(title)}"' if title else ""
    aria = f' aria-sort="{sort}"' if sort else ""
    hint = f'<span class="hint">{esc(hint)}</span>' if hint else ""
    cls = ' class="txt"' if better == "text" else ""
    return (
        f'<th scope="col"{cls}{aria}{title}><button type="button" data-better="{better}">{esc(label)}</button>{hint}'
        "</th>"
    )


def _rank_td(row: Row) -> str:
    if row.rank is None:
        return '<td class="txt">-</td>'
    interval = f' <span class="ci">[{row.rank_low}&ndash;{row.rank_high}]</span>' if row.rank_low is not None else ""
    return f'<td data-v="{row.rank}">{row.rank}{interval}</td>'


def _int_td(value: int | None, title: str = "") -> str:
    title = f' title="{esc(title)}"' if title else ""
    return '<td class="txt">-</td>' if value is None else f'<td data-v="{value}"{title}>{value}</td>'


def _tier_td(row: Row) -> str:
    if row.tier is None:
        return '<td class="txt">-</td>'
    p = "" if row.p_above is None else f"against the tier's top row: Holm-adjusted p = {row.p_above:.3g}"
    return _int_td(row.tier, p)


def _marks(row: Row) -> tuple[dict, dict]:
    """The row's judged columns (how) and unverified columns (why): the submitter's claims."""
    if row.entry is None:
        return {}, {}
    return row.entry.judged or {}, getattr(row.entry, "unverified", None) or {}


def main_table(section: Section, rows: list[Row], info: dict[str, ColumnInfo], caption: str) -> str:
    """Rank [interval], tier, name, the ranking column and the headline columns of ranked rows."""
    cols = headline_columns(section, info)
    head = [
        _th("rank", "low", "[95 % interval]", "point rank and its 95 % bootstrap interval", "ascending"),
        _th(
            "tier",
            "low",
            "same tier: not told apart",
            "rows not significantly below the tier's top row share its tier",
        ),  # fmt: skip
        _th("model", "text"),
        *[
            _th(
                info[c].label,
                info[c].better,
                "[95 % interval]" if i == 0 else "",
                info[c].title,
            )
            for i, c in enumerate(cols)
        ],  # fmt: skip
        _th("flip", "high", "docs to swap", "fewest docs whose change would swap this row with the one above"),
    ]
    body = []
    for row in rows:
        judged, claims = _marks(row)
        cells = [_rank_td(row), _tier_td(row), name_cell(row)]
        cells += [cell_html(row.cells.get(c), info[c], judged.get(c), claims.get(c)) for c in cols]
        cells.append(_int_td(row.flip))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _table(caption, head, body)


def _table(caption: str, head: list[str], body: list[str], cls: str = "sortable") -> str:
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="{esc(caption)}"><table class="{cls}">'
        f"<caption>{esc(caption)}</caption><thead><tr>{''.join(head)}</tr></thead><tbody>"
        + "\n".join(body)
        + "</tbody></table></div>"
    )


def other_table(section: Section, rows: list[Row], info: dict[str, ColumnInfo], caption: str) -> str:
    """Every column not in the main table (the categories), per ranked row."""
    cols = [c for c in section.columns if c not in headline_columns(section, info)]
    if not cols:
        return ""
    head = [_th("rank", "low", sort="ascending"), _th("model", "text")]
    head += [_th(info[c].label, info[c].better, title=info[c].title) for c in cols]  # fmt: skip
    body = []
    for row in rows:
        judged, claims = _marks(row)
        tds = [_rank_td(row), name_cell(row)]
        tds += [cell_html(row.cells.get(c), info[c], judged.get(c), claims.get(c)) for c in cols]
        body.append("<tr>" + "".join(tds) + "</tr>")
    return _table(caption, head, body)


def merge_references(rows: list[Row]) -> list[Row]:
    """One row per paper model: the rows of one model (its tables) merged, their reasons joined, comparable only when
    every merged row is."""
    merged: dict[str, Row] = {}
    for row in rows:
        if row.label not in merged:
            merged[row.label] = Row(row.label, dict(row.cells), reference=True, comparable=row.comparable,
                                    reasons=list(row.reasons))  # fmt: skip
            continue
        into = merged[row.label]
        for col, c in row.cells.items():
            into.cells.setdefault(col, c)
        into.reasons += [r for r in row.reasons if r not in into.reasons]
        into.comparable = bool(into.comparable and row.comparable)
    return list(merged.values())


def paper_table(section: Section, info: dict[str, ColumnInfo], caption: str) -> str:
    refs = merge_references([r for r in section.rows if r.reference])
    if not refs:
        return ""
    cols = [c for c in section.columns if any(c in r.cells for r in refs)]
    head = [_th("paper model", "text"), _th("comparable", "text")]
    head += [_th(info[c].label, info[c].better, title=info[c].title) for c in cols]  # fmt: skip
    body = []
    for row in refs:
        mark = "yes" if row.comparable else "no: " + "; ".join(row.reasons)
        tds = [f'<th scope="row" class="name"><span class="ref">paper</span> {esc(row.label)}</th>',
               f'<td class="txt why">{esc(mark)}</td>']  # fmt: skip
        tds += [cell_html(row.cells.get(c), info[c]) for c in cols]
        body.append('<tr class="reference">' + "".join(tds) + "</tr>")
    n_ok = sum(1 for r in refs if r.comparable)
    return (
        f'<details class="papers"><summary>The papers\' numbers: {len(refs)} paper models ({n_ok} comparable with '
        "this section), never ranked</summary>" + _table(caption, head, body) + "</details>"
    )


def section_title(section: Section) -> str:
    return f"{section.benchmark}: {'ranked apart' if section.apart else 'ranked together'}"


def section_html(section: Section, ident: str, pager: str = "", rows: list[Row] | None = None) -> str:
    """One section: heading, why apart, protocol, method, chart, main table, categories, paper rows."""
    ranked = [r for r in section.rows if not r.reference] if rows is None else rows
    info = section_columns(section)
    out = [f'<section id="{esc(ident)}"><h2>{esc(section_title(section))}</h2>']
    if section.apart:
        out.append('<p class="note">Apart from the main table because: ' + esc("; ".join(section.apart)) + "</p>")
    key = info.get(section.ranking_column)
    out.append(
        f"<p>Ranked by <strong>{esc(key.header if key else section.ranking_column)}</strong> "
        f"(<code>{esc(section.ranking_column)}</code>). {len([r for r in section.rows if not r.reference])} ranked "
        f"row(s).</p>"
    )
    chart_rows = [(row_name(r), r.rank, r.rank_low, r.rank_high) for r in ranked[:30]]
    out.append(charts.rank_interval_chart(f"{ident}-ranks", f"Rank intervals, {section_title(section)}", chart_rows))
    out.append(main_table(section, ranked, info, f"{section_title(section)}: rank, tier and headline columns"))
    out.append(pager)
    other = other_table(section, ranked, info, f"{section_title(section)}: every other column")
    if other:
        out.append(f"<details><summary>Categories and every other column</summary>{other}</details>")
    out.append(paper_table(section, info, f"{section_title(section)}: the papers' rows"))
    protocol = "; ".join(f"{k}={v}" for k, v in sorted(section.protocol.items()))
    out.append(
        f'<details><summary>Protocol and method</summary><p class="caption">Protocol shared by these rows: '
        f'{esc(protocol or "-")}.</p><p class="caption">{esc(section.method or "not stated by the ranking")}</p>'
        "</details></section>"
    )
    return "\n".join(out)


HOW_TO_READ = (
    '<details open><summary>How to read this board</summary><dl class="how">'
    "<dt>re-scored</dt><dd>every number is the board's own re-score of the submitted per-doc predictions, never the "
    "submitter's claim (a judged column without a board judge is marked as the submitter's).</dd>"
    "<dt>[interval]</dt><dd>the 95 % interval of the value, or of the rank (bootstrap over the docs).</dd>"
    "<dt>tier</dt><dd>a row joins a tier when it is not significantly below the tier's top row (a paired test "
    "against that row, Holm-corrected over the tests made): the data does not tell it apart from the tier's best.</dd>"
    "<dt>flip</dt><dd>the fewest docs whose scores would have to change to swap a row with the one above.</dd>"
    "<dt>ranked apart</dt><dd>rows run under another protocol (judge, prompt, data, tasks) are ranked in a section of "
    "their own, with the reasons.</dd>"
    "<dt>paper rows</dt><dd>the papers' own numbers, in the paper's unit, never ranked; marked comparable only where "
    "the protocol matches.</dd></dl></details>"
)


def pager_html(base: str, page_no: int, pages: int) -> str:
    """Links to every page of a paged table (``base``, ``base-p2.html``...)."""
    if pages <= 1:
        return ""
    links = []
    for k in range(1, pages + 1):
        name = paged_name(base, k)
        links.append(f'<a href="{name}" aria-current="page">{k}</a>' if k == page_no else f'<a href="{name}">{k}</a>')
    return f'<nav class="pager" aria-label="pages">Pages: {" ".join(links)}</nav>'


def paged_name(base: str, k: int) -> str:
    """``cii.html`` -> ``cii-p2.html`` for page 2; page 1 is ``base``."""
    return base if k == 1 else base[: -len(".html")] + f"-p{k}.html"


def benchmark_pages(board: Board, bench: str, base: str) -> dict[str, str]:
    """``{file: body}`` of one benchmark: ``base`` with every section's first :data:`PAGE_ROWS` ranked rows, and
    ``base-pK.html`` with the K-th :data:`PAGE_ROWS` rows of each section that has that many."""
    sections = [s for s in board.sections if s.benchmark == bench]
    ranked = [[r for r in s.rows if not r.reference] for s in sections]
    pages = max([1, *(math.ceil(len(r) / PAGE_ROWS) for r in ranked)])
    out = {}
    for k in range(1, pages + 1):
        parts = (
            [HOW_TO_READ.replace("<details open>", "<details>")]
            if k == 1
            else [f"<p>Rows {(k - 1) * PAGE_ROWS + 1} onwards of each section.</p>"]
        )
        for i, (s, rows) in enumerate(zip(sections, ranked)):
            chunk = rows[(k - 1) * PAGE_ROWS : k * PAGE_ROWS]
            if k > 1 and not chunk:
                continue
            parts.append(section_html(s, f"{slug(bench)}-{i}", pager_html(base, k, pages), chunk))
        out[paged_name(base, k)] = "\n".join(parts)
    return out


# ---- index -------------------------------------------------------------------------------------------------------
def states(board: Board) -> dict[str, int]:
    """Files per state: ranked and apart (accepted), and the intake's states of the others (rejected by default)."""
    out = {"accepted": sum(1 for s in board.sections for r in s.rows if not r.reference)}
    for rej in board.rejected:
        state = str(getattr(rej, "state", "") or "rejected")
        out[state] = out.get(state, 0) + 1
    out.setdefault("pending", 0)
    out.setdefault("rejected", 0)
    return out


def index_body(board: Board, benchmarks: list[str], built: str, page_of) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(built)))
    counts = states(board)
    out = [
        f"<p>Built by hanyi {esc(__version__)} at {esc(when)}. Submissions: "
        + ", ".join(f"{n} {esc(k)}" for k, n in counts.items())
        + ' (<a href="status.html">every file and its state</a>).</p>',
        HOW_TO_READ,
    ]
    for bench in [*benchmarks, *[b for b in BENCHMARKS if b not in benchmarks]]:
        sections = [s for s in board.sections if s.benchmark == bench]
        if not sections:
            out.append(f"<h2>{esc(bench)}</h2><p>No submission yet.</p>")
            continue
        main = sections[0]
        info = section_columns(main)
        key = info[main.ranking_column]
        rows = [r for r in main.rows if not r.reference][:INDEX_ROWS]
        head = [
            _th("rank", "low", "[95 % interval]", sort="ascending"),
            _th("tier", "low"),
            _th("model", "text"),
            _th(key.label, key.better, "[95 % interval]", key.title),
        ]
        body = [
            "<tr>"
            + _rank_td(r)
            + _tier_td(r)
            + name_cell(r)
            + cell_html(r.cells.get(main.ranking_column), key)
            + "</tr>"
            for r in rows
        ]
        total = sum(1 for s in sections for r in s.rows if not r.reference)
        apart = len(sections) - 1
        out.append(f'<h2><a href="{page_of(bench)}">{esc(bench)}</a></h2>')
        out.append(_table(f"{bench}: the top {len(rows)} of the main section", head, body))
        out.append(
            f'<p><a href="{page_of(bench)}">The full {esc(bench)} table</a>: {total} ranked row(s)'
            + (f", {apart} section(s) ranked apart" if apart else "")
            + ".</p>"
        )
    out.append("<h2>Overall</h2>")
    if board.overall is not None:
        out.append(section_html(board.overall, "overall"))
    else:
        why = board.overall_absent or "not every row has every benchmark comparable"
        out.append(f'<p class="note">No overall score: {esc(why)}.</p>')
    return "\n".join(out)


# ---- status ------------------------------------------------------------------------------------------------------
def _file_date(path: str) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(path)))
    except (OSError, ValueError, OverflowError):
        return "-"


def status_pages(board: Board, base: str = "status.html") -> dict[str, str]:
    """Every file: its name, sha256, date, state and reasons; ranked and apart rows link their model; paged,
    :data:`FILE_ROWS` files a page."""
    lines = []
    for s in board.sections:
        for r in s.rows:
            if r.reference or r.entry is None:
                continue
            e = r.entry
            state = "ranked apart" if s.apart else "ranked"
            where = f'<a href="{model_page(e.display_name)}">{esc(e.display_name)}</a>, {esc(s.benchmark)}'
            if r.rank is not None:
                where += f", rank {r.rank}"
            lines.append((e.source_path or "-", e.submission_hash, e.date, state, where))
    for rej in board.rejected:
        state = str(getattr(rej, "state", "") or "rejected")
        reasons = "".join(f"<li>{esc(x)}</li>" for x in rej.reasons)
        if getattr(rej, "duplicate_of", None):
            reasons = f"<p>the same predictions as {esc(os.path.basename(rej.duplicate_of))}</p>" + reasons
        lines.append((rej.path, rej.submission_hash or "-", _file_date(rej.path), state, f"<ul>{reasons}</ul>"))
    if not lines:
        return {base: "<p>No submission file was read.</p>"}
    head = [_th("file", "text"), _th("sha256", "text"), _th("date", "text"), _th("state", "text"), _th("where / reasons", "text")]  # fmt: skip
    body = [
        f'<tr><th scope="row" class="name">{esc_board_path(path)}</th><td class="txt hash">{esc(digest)}</td>'
        f'<td class="txt">{esc(date or "-")}</td><td class="txt state">{esc(state)}</td><td class="txt">{where}</td></tr>'
        for path, digest, date, state, where in lines
    ]
    intro = (
        "<p>Every submission file the board read, with the sha256 of its bytes (<code>sha256sum FILE</code> finds "
        "yours), its date and its state: ranked, ranked apart (another protocol), duplicate (the same predictions as "
        "an earlier file), pending (with the reason), or rejected (with every reason).</p>"
    )
    return _paged(base, intro, "Every submission file and its state", head, body)


#: Files per page of the status and rejected pages.
FILE_ROWS = 500


def _paged(base: str, intro: str, caption: str, head: list[str], body: list[str]) -> dict[str, str]:
    pages = max(1, math.ceil(len(body) / FILE_ROWS))
    out = {}
    for k in range(1, pages + 1):
        pager = pager_html(base, k, pages)
        where = f", page {k} of {pages}" if pages > 1 else ""
        chunk = body[(k - 1) * FILE_ROWS : k * FILE_ROWS]
        out[paged_name(base, k)] = intro + pager + _table(caption + where, head, chunk) + pager
    return out


def rejected_pages(board: Board, base: str = "rejected.html") -> dict[str, str]:
    if not board.rejected:
        return {base: "<p>No submission was rejected.</p>"}
    head = [_th("file", "text"), _th("model", "text"), _th("submission sha256", "text"), _th("reasons", "text")]
    body = []
    for rej in board.rejected:
        reasons = "".join(f"<li>{esc(r)}</li>" for r in rej.reasons)
        body.append(
            f'<tr><th scope="row" class="name">{esc_board_path(rej.path)}</th><td class="txt">{esc(rej.model or "-")}</td>'
            f'<td class="txt hash">{esc(rej.submission_hash or "-")}</td><td class="txt"><ul>{reasons}</ul></td></tr>'
        )
    intro = "<p>Files refused on arrival, with every reason. Nothing of them enters a table.</p>"
    return _paged(base, intro, "Rejected submission files", head, body)


# ---- model pages -------------------------------------------------------------------------------------------------
def _compact(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _find(entry: Entry, words: tuple[str, ...]) -> list[str]:
    found = []
    for task in sorted(set(entry.protocol) | set(entry.provenance)):
        seen = []
        for source in (entry.protocol.get(task) or {}, entry.provenance.get(task) or {}):
            for key, value in source.items():
                if value not in (None, "", {}, []) and any(w in key for w in words) and _compact(value) not in seen:
                    seen.append(_compact(value))
        found += [f"{task}: {v}" for v in seen]
    return found


#: A predictions link is a path inside the site: no scheme (``javascript:``, ``http:``), no ``..``, not absolute.
SAFE_LINK = re.compile(r"^(?![A-Za-z][A-Za-z0-9+.-]*:)(?!/)(?!.*(?:^|/)\.\.(?:/|$))[^\\]+$")


def provenance_html(entry: Entry) -> str:
    items = [
        ("lmms-eval model", entry.model),
        ("model_args", entry.model_args or "-"),
        ("date", entry.date or "-"),
        ("hanyi", entry.hanyi_version or "-"),
        ("lmms-eval", entry.lmms_eval_version or "-"),
        ("judge", "; ".join(_find(entry, ("judge",))) or "none"),
        ("backbones", "; ".join(_find(entry, ("backbone", "scorer_backend"))) or "none"),
        ("data", "; ".join(_find(entry, ("fingerprint", "data_source"))) or "-"),
        ("submission sha256", entry.submission_hash),
    ]
    items += [(col, how) for col, how in sorted(entry.judged.items())]
    for task in sorted(entry.protocol):
        fields = entry.protocol[task] or {}
        items.append((f"protocol {task}", "; ".join(f"{k}={_compact(v)}" for k, v in sorted(fields.items()))))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    link = entry.predictions_file
    if link and SAFE_LINK.match(link):
        body += f'<dt>predictions</dt><dd><a href="{esc(link)}">per-doc predictions (JSON)</a></dd>'
    elif link:
        body += f"<dt>predictions</dt><dd>{esc(link)} (not a path inside the site: not linked)</dd>"
    return f'<details><summary>Provenance</summary><dl class="prov">{body}</dl></details>'


def card_html(entry: Entry) -> str:
    card = entry.card or {}
    items = [("name", entry.display_name)]
    items += [(k, card[k]) for k in ("organisation",) if card.get(k)]
    if card.get("parameters"):
        items.append(("parameters", size_label(card["parameters"])))
    if card.get("open_weights") is not None:
        items.append(("weights", "open" if card["open_weights"] else "closed"))
    items += [(k.replace("_", " "), card[k]) for k in ("release_date", "training_data") if card.get(k)]
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    link = card.get("link")
    if isinstance(link, str) and re.match(r"^https?://[^\s<>\"']+$", link):
        body += f'<dt>link</dt><dd><a href="{esc(link)}" rel="nofollow noopener noreferrer">{esc(link)}</a></dd>'
    return f'<dl class="card">{body}</dl>'


def _neighbours(section: Section, row: Row) -> str:
    ranked = [r for r in section.rows if not r.reference]
    j = next(i for i, r in enumerate(ranked) if r is row)
    lines = []
    if j > 0:
        above = ranked[j - 1]
        p = "-" if row.p_above is None else f"{row.p_above:.3g}"
        lines.append(("above", above, p, row.flip))
    if j + 1 < len(ranked):
        below = ranked[j + 1]
        p = "-" if below.p_above is None else f"{below.p_above:.3g}"
        lines.append(("below", below, p, below.flip))
    if not lines:
        return ""
    head = [_th("neighbour", "text"), _th("model", "text"), _th("Holm-adjusted p", "low"), _th("flip", "high")]
    body = [
        f'<tr><td class="txt">{where}</td>{name_cell(other)}<td>{p}</td>{_int_td(flip)}</tr>'
        for where, other, p, flip in lines
    ]
    return _table(f"{row_name(row)} against its neighbours in {section_title(section)}", head, body)


def _categories(section: Section, row: Row, info: dict[str, ColumnInfo], ident: str) -> str:
    cols = [c for c in section.columns if c in row.cells and row.cells[c].value is not None]
    if not cols:
        return ""
    head = [_th("column", "text"), _th("value", "high", "[95 % interval]"), _th("n", "high")]
    body = []
    for c in cols:
        cell = row.cells[c]
        body.append(
            f'<tr><th scope="row" class="name" title="{esc(info[c].title)}">{esc(info[c].label)}</th>'
            f"{cell_html(cell, info[c])}{_int_td(cell.n)}</tr>"
        )
    percent = [c for c in cols if info[c].unit == "%" and c != section.ranking_column]
    bars = []
    for c in percent:
        cell = row.cells[c]
        lo = None if cell.low is None else cell.low * info[c].scale
        hi = None if cell.high is None else cell.high * info[c].scale
        bars.append((info[c].header, cell.value * info[c].scale, lo, hi))
    chart = charts.bar_chart(ident, f"{row_name(row)}, {section.benchmark}: categories (%)", bars, 100.0)
    return chart + _table(f"{row_name(row)}, {section_title(section)}: every column", head, body, cls="sortable")


def model_body(name: str, places: list[tuple[Section, Row]], predictions: dict[str, str]) -> str:
    """Every row of one display name: card, per section rank, tier, columns, categories chart, neighbours,
    provenance and the predictions viewer's link."""
    out = [card_html(places[0][1].entry)]
    for k, (section, row) in enumerate(places):
        info = section_columns(section)
        e = row.entry
        out.append(f"<h2>{esc(section_title(section))}</h2>")
        if section.apart:
            out.append('<p class="note">Ranked apart because: ' + esc("; ".join(section.apart)) + "</p>")
        rank = (
            "-"
            if row.rank is None
            else f"{row.rank}"
            + (f" (95 % interval {row.rank_low} to {row.rank_high})" if row.rank_low is not None else "")
        )
        out.append(
            f"<p>Rank {rank}; tier {row.tier if row.tier is not None else '-'}; ranked by "
            f"{esc(info[section.ranking_column].header)}. Submission sha256 <code>{esc(e.submission_hash)}</code>.</p>"
        )
        out.append(_categories(section, row, info, f"cat-{k}"))
        out.append(_neighbours(section, row))
        out.append(provenance_html(e))
        viewer = predictions.get(e.submission_hash)
        if viewer:
            out.append(f'<p><a href="{viewer}">Predictions: doc by doc</a> (response, target, score, verdict).</p>')
    return "\n".join(x for x in out if x)


def model_places(board: Board) -> dict[str, list[tuple[Section, Row]]]:
    out: dict[str, list[tuple[Section, Row]]] = {}
    for s in board.sections:
        for r in s.rows:
            if not r.reference and r.entry is not None:
                out.setdefault(r.entry.display_name, []).append((s, r))
    return out


# ---- predictions viewer ------------------------------------------------------------------------------------------
_CATEGORY_KEYS = ("category", "domain", "type", "emotion", "difficulty", "language", "split", "kind")


def _category(pred: dict) -> str:
    ev = pred.get("evidence") if isinstance(pred.get("evidence"), dict) else {}
    found = [f"{k}: {ev[k]}" for k in _CATEGORY_KEYS if isinstance(ev.get(k), (str, int)) and ev.get(k) != ""]
    return ", ".join(found[:2]) or "-"


def _short(value, limit: int = 400) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "\u2026"


def _verdict(score, verdicts) -> str:
    if isinstance(verdicts, dict) and verdicts:
        parts = []
        for field, item in sorted(verdicts.items()):
            if isinstance(item, dict):
                got = item.get("score", item.get("correct", item.get("verdict")))
                if got is not None:
                    parts.append(f"{field}: {_short(got, 40)}")
        if parts:
            return "; ".join(parts)
    if score is None:
        return "-"
    return "correct" if score == 1 else "wrong" if score == 0 else "partial"


def prediction_pages(entry: Entry, section: Section, base: str, back: str) -> dict[str, str]:
    """``{file: body}`` of the predictions viewer of one entry: :data:`PRED_ROWS` docs a page, each with doc id,
    category, response, target, score (of the section's ranking column where the doc's task has it) and verdict.
    Reads the submission file only while it still holds the bytes the board scored; ``{}`` otherwise."""
    try:
        with open(entry.source_path, "rb") as f:
            raw = f.read()
        if hashlib.sha256(raw).hexdigest() != entry.submission_hash:
            return {}
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, TypeError):
        return {}
    rows = []
    tasks = doc.get("tasks") if isinstance(doc, dict) and isinstance(doc.get("tasks"), dict) else {}
    key_task, _, key_metric = section.ranking_column.partition("/")
    for task in sorted(tasks):
        preds = tasks[task].get("predictions") if isinstance(tasks[task], dict) else None
        per_doc = entry.per_doc.get(task) or {}
        own = [c.partition("/")[2] for c in section.columns if c.partition("/")[0] == task]  # the headline order
        metric = (
            key_metric if task == key_task and key_metric in per_doc else next((m for m in own if m in per_doc), None)
        )
        scores = per_doc.get(metric) or {} if metric else {}
        for pred in preds if isinstance(preds, list) else ():
            if not isinstance(pred, dict):
                continue
            d = pred.get("doc_id")
            score = scores.get(d) if isinstance(d, int) else None
            response = pred.get("response")
            if response is None and isinstance(pred.get("loglikelihoods"), list):  # a multiple-choice doc
                lls = [c[0] for c in pred["loglikelihoods"] if isinstance(c, list) and c]
                response = f"choice {lls.index(max(lls))} of {len(lls)} (log-likelihoods)" if lls else None
            rows.append((task, d, _category(pred), response, pred.get("target"), metric, score,
                         _verdict(score, pred.get("verdicts"))))  # fmt: skip
    if not rows:
        return {}
    pages = math.ceil(len(rows) / PRED_ROWS)
    out = {}
    head = [_th(h, "text") for h in ("task", "doc id", "category", "response", "target")]
    head += [_th("score", "high"), _th("verdict", "text")]
    for k in range(1, pages + 1):
        body = []
        for task, d, cat, resp, target, metric, score, verdict in rows[(k - 1) * PRED_ROWS : k * PRED_ROWS]:
            s = "-" if score is None else f"{score:.4g}"
            body.append(
                f'<tr><td class="txt">{esc(task)}</td><th scope="row">{esc(d)}</th><td class="txt">{esc(cat)}</td>'
                f'<td class="txt resp">{esc(_short(resp))}</td><td class="txt">{esc(_short(target, 120))}</td>'
                f'<td data-v="{"" if score is None else score}" title="{esc(metric or "")}">{s}</td>'
                f'<td class="txt">{esc(verdict)}</td></tr>'
            )
        pager = pager_html(base, k, pages)
        out[paged_name(base, k)] = (
            f'<p><a href="{back}">Back to {esc(entry.display_name)}</a>. Docs {(k - 1) * PRED_ROWS + 1} to '
            f"{min(k * PRED_ROWS, len(rows))} of {len(rows)}; score: the per-doc score of the column named in its "
            "title.</p>"
            + pager
            + _table(f"Predictions of {entry.display_name}, {entry.benchmark}, page {k} of {pages}", head, body)
            + pager
        )
    return out
