"""Write the report: ``report.md`` (plots as ``plots/*.png``), a self-contained ``report.html`` (plots inlined as
data URIs, no external CSS/JS) and ``report.json`` (the same tables, for scripts)."""

from __future__ import annotations

import base64
import html
import json
import os
import re
from dataclasses import asdict

from hanyi import __version__
from hanyi.outputs import OutDirError, open_output  # noqa: F401  (raised by claim_out_dir; importable here)
from hanyi.pagestyle import CSS, slug
from hanyi.redact import redact_text, redact_tree
from hanyi.report.tables import Section, Table
from hanyi.results.provenance import installed_lmms_eval, lmms_eval_version
from hanyi.results.runs import Run

#: Table kinds shown collapsed (``<details>``): the breakdowns.
COLLAPSED = ("comparison", "category", "paper_more")


#: Markdown's inline syntax characters: each is backslash-escaped in text the report quotes (CommonMark allows a
#: backslash before any ASCII punctuation), so a model name or ``model_args`` can never become a link, an image, code,
#: emphasis or a table cell in report.md.
_MD_SYNTAX = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def _md_text(text) -> str:
    """Plain text for Markdown: ``<``, ``>``, ``&`` as entities (never raw HTML) and Markdown syntax escaped (never
    a link, an image or emphasis), for every string of report.md, user-controlled ones (model, ``model_args``, task
    and file names) included.

    >>> _md_text("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert\\\\(1\\\\)&gt;'
    >>> _md_text("[x](javascript:alert(1)) ![](http://evil/p.png)")
    '\\\\[x\\\\]\\\\(javascript:alert\\\\(1\\\\)\\\\) \\\\!\\\\[\\\\]\\\\(http://evil/p.png\\\\)'
    """
    # secrets masked first: once escaped, ``api\\_key=`` would no longer look like a key to hanyi.redact
    return _MD_SYNTAX.sub(r"\\\1", html.escape(redact_text(str(text)), quote=False))


def _md_cell(text: str) -> str:
    return _md_text(text).replace("\n", " ")


def md_table(table: Table, heading: bool = True) -> str:
    lines = [f"### {_md_text(table.title)}", ""] if heading else []
    lines.append("| " + " | ".join(_md_cell(h) for h in table.header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(table.header) - 1)) + "|")
    for i, row in enumerate(table.rows):
        cells = [_md_cell(c) for c in row]
        if i in table.ours:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    if table.caption:
        lines += ["", f"*{_md_text(table.caption)}*"]
    return "\n".join(lines) + "\n"


_NUMERIC = re.compile(r"^[+-]?\d+(\.\d+)?( ± \d+(\.\d+)?)?$|^-$|^\d+(/\d+)*$")


def _align(cell) -> str:
    return "" if _NUMERIC.match(str(cell)) else ' class="txt"'


def html_table(table: Table, anchor: str = "", heading: bool = True) -> str:
    esc = html.escape
    ident = f' id="{esc(anchor)}"' if anchor else ""
    out = [
        f"<h3{ident}>{esc(table.title)}</h3>" if heading else "",
        "<table>",
        "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in table.header) + "</tr></thead>",
        "<tbody>",
    ]
    for i, row in enumerate(table.rows):
        cls = ' class="ours"' if i in table.ours else ""
        out.append(f"<tr{cls}>" + "".join(f"<td{_align(c)}>{esc(str(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    if table.caption:
        out.append(f'<p class="caption">{esc(table.caption)}</p>')
    return "\n".join(out)


def run_folder_git(recorded: str) -> str:
    """The Runs table's "run folder (git)" cell: a recorded ``lmms_eval_version`` that is no release number.

    >>> run_folder_git("main@8c4e3881"), run_folder_git("0.7.3"), run_folder_git("")
    ('main@8c4e3881', '-', '-')
    """
    return "-" if not recorded or re.fullmatch(r"v?\d+(\.\d+)+\S*", recorded) else recorded


#: Why the Runs table has a "run folder (git)" column.
RUN_FOLDER_GIT = (
    "lmms-eval: the release recorded in the results file, else the installed one. run folder (git): what lmms-eval "
    "0.7.3 records as lmms_eval_version when it is no release number: the git branch@commit of the folder the run "
    "started in (often your own repository), not lmms-eval's version."
)


def _runs_table(runs: list[Run]) -> Table:
    installed = installed_lmms_eval()
    rows = [
        [
            r.label,
            r.model,
            r.model_args,
            r.date,
            lmms_eval_version(r.lmms_eval_version, installed),
            run_folder_git(r.lmms_eval_version),
            str(len(r.tasks)),
            ", ".join(r.files),
        ]
        for r in runs
    ]
    header = ["label", "model", "model_args", "date", "lmms-eval", "run folder (git)", "tasks", "results files"]
    return Table("Runs", header, rows, caption=RUN_FOLDER_GIT)


#: The files a report writes at the top of its folder; anything else there is the user's.
REPORT_FILES = ("report.md", "report.html", "report.json")


def claim_out_dir(out_dir: str) -> list[str]:
    """Check that ``out_dir`` may hold a report; returns the PNGs of an earlier report there (safe to replace).

    A missing or empty folder is fine. A folder holding an earlier report (its ``report.json`` written by hanyi) is
    fine, and only the plots that report lists are replaced; other files stay. Any other non-empty folder, or a
    path that is a file, raises :class:`OutDirError`: the report never deletes or overwrites files it did not write.
    """
    if not os.path.exists(out_dir):
        return []
    if not os.path.isdir(out_dir):
        raise OutDirError(f"--out {out_dir}: exists and is not a folder")
    if not os.listdir(out_dir):
        return []
    previous = os.path.join(out_dir, "report.json")
    try:
        with open(previous, encoding="utf-8") as f:
            data = json.load(f)
        assert isinstance(data, dict) and "hanyi_version" in data and isinstance(data.get("sections"), list)
    except (OSError, ValueError, AssertionError):
        raise OutDirError(
            f"--out {out_dir}: not empty and not an earlier hanyi report; choose a new or empty folder"
        ) from None
    plots_dir = os.path.realpath(os.path.join(out_dir, "plots"))
    owned = []
    for section in data["sections"]:
        for rel in section.get("plots", []) if isinstance(section, dict) else []:
            path = os.path.realpath(os.path.join(out_dir, str(rel)))
            if os.path.dirname(path) == plots_dir and path.endswith(".png") and os.path.isfile(path):
                owned.append(path)
    return sorted(set(owned))


def write_report(
    out_dir: str, runs: list[Run], sections: list[Section], pngs: dict[str, bytes], missing: list[str]
) -> dict:
    """Write every file; returns ``{"markdown", "html", "json", "plots"}`` paths.

    ``out_dir`` must be new, empty or an earlier report (:func:`claim_out_dir`); credentials in any text are
    redacted (:mod:`hanyi.redact`).
    """
    for stale in claim_out_dir(out_dir):  # plots an earlier report in the same dir wrote, and only those
        os.remove(stale)
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    plot_files = {}
    for name, data in pngs.items():
        path = os.path.join(out_dir, "plots", slug(name) + ".png")
        with open_output(out_dir, path, "wb") as f:  # never through a symlink out of the folder
            f.write(data)
        plot_files[name] = path

    title = "hanyi report: " + ", ".join(r.label for r in runs)
    md = [f"# {_md_text(title)}", "", f"Generated by hanyi {__version__} from {len(runs)} run(s).", ""]
    md.append(md_table(_runs_table(runs)))
    if missing:
        md.append(f"> Not in these results: {_md_text(', '.join(missing))}.\n")
    page = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{CSS}</style></head><body>'
    ]
    page.append(f"<h1>{html.escape(title)}</h1><p>Generated by hanyi {__version__} from {len(runs)} run(s).</p>")
    page.append(html_table(_runs_table(runs)))
    if missing:
        page.append(f'<p class="note">Not in these results: {html.escape(", ".join(missing))}.</p>')
    esc = html.escape
    anchors = {}  # (section index, table index) -> unique HTML id
    toc_html, toc_md = ['<nav id="contents"><h2>Contents</h2><ul>'], ["## Contents", ""]
    for si, section in enumerate(sections):
        sid = slug(section.benchmark)
        links = []
        for ti, table in enumerate(section.tables):
            anchors[(si, ti)] = f"{sid}-{ti}-{slug(table.title)[:60]}"
            links.append(f'<a href="#{anchors[(si, ti)]}">{esc(table.title)}</a>')
        toc_html.append(
            f'<li><a href="#{sid}"><b>{esc(section.benchmark)}</b></a>: '
            + (
                " · ".join(links[:3])
                + (
                    f" · <details><summary>{len(links) - 3} breakdowns</summary>" + " · ".join(links[3:]) + "</details>"
                    if len(links) > 3
                    else ""
                )
            )
            + "</li>"
        )
        toc_md.append(f"- [{_md_text(section.benchmark)}](#{sid})")
    toc_html.append("</ul></nav>")
    page.append("\n".join(toc_html))
    md += [*toc_md, ""]
    for si, section in enumerate(sections):
        md += [f"## {_md_text(section.benchmark)}", ""]
        page.append(f'<section id="{slug(section.benchmark)}"><h2>{esc(section.benchmark)}</h2>')
        if section.paper:
            md += [f"Paper: {_md_text(section.paper)}", ""]
            page.append(f"<p>Paper: {esc(section.paper)}</p>")
        for note in section.notes:
            md += [f"> {_md_text(note)}", ""]
            page.append(f'<p class="note">{esc(note)}</p>')
        by_name = {p.name: p for p in section.plots}
        breakdowns = [t for t in section.tables if t.kind in COLLAPSED]
        if breakdowns:
            md += [
                f"*{len(breakdowns)} breakdown(s) below, collapsed: open them for the per-column and per-category tables.*",
                "",
            ]
        for ti, table in enumerate(section.tables):
            plot = by_name.get(table.plot) if table.plot else None
            collapsed = table.kind in COLLAPSED
            anchor = anchors[(si, ti)]
            img_md, img_html = [], ""
            if plot is not None and plot.name in pngs:
                rel = os.path.relpath(plot_files[plot.name], out_dir)
                img_md = [f"![{_md_text(plot.title)}]({rel})", ""]
                b64 = base64.b64encode(pngs[plot.name]).decode("ascii")
                img_html = f'<img alt="{esc(plot.title)}" src="data:image/png;base64,{b64}">'
            if collapsed:
                md += [f'<details id="{anchor}"><summary>{esc(table.title)}</summary>', ""]
                md += [md_table(table, heading=False), *img_md, "</details>", ""]
                page.append(
                    f'<details id="{anchor}"><summary>{esc(table.title)}</summary>'
                    + html_table(table, heading=False)
                    + img_html
                    + "</details>"
                )
            else:
                md.append(md_table(table))
                md += img_md
                page.append(html_table(table, anchor))
                if img_html:
                    page.append(img_html)
        page.append("</section>")
    page.append("</body></html>")

    paths = {
        "markdown": os.path.join(out_dir, "report.md"),
        "html": os.path.join(out_dir, "report.html"),
        "json": os.path.join(out_dir, "report.json"),
    }
    with open_output(out_dir, paths["markdown"]) as f:
        f.write(redact_text("\n".join(md)))
    with open_output(out_dir, paths["html"]) as f:
        # not the inlined PNGs: base64 text must never be touched
        f.write("\n".join(p if p.startswith("<img ") else redact_text(p) for p in page))
    summary = {
        "hanyi_version": __version__,
        "runs": [
            {
                "label": r.label,
                "model": r.model,
                "model_args": r.model_args,
                "files": r.files,
                "provenance": {name: t.provenance for name, t in r.tasks.items() if t.provenance},
            }
            for r in runs
        ],
        "missing_benchmarks": missing,
        "sections": [
            {
                "benchmark": s.benchmark,
                "paper": s.paper,
                "notes": s.notes,
                "tables": [asdict(t) for t in s.tables],
                "comparisons": s.comparisons,
                "intervals": s.intervals,
                "paired": s.paired,
                "plots": [os.path.relpath(plot_files[p.name], out_dir) for p in s.plots if p.name in plot_files],
            }
            for s in sections
        ],
    }
    with open_output(out_dir, paths["json"]) as f:
        json.dump(redact_tree(summary), f, ensure_ascii=False, indent=1)
    paths["plots"] = sorted(plot_files.values())
    return paths
