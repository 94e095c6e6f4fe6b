"""The look shared by hanyi's static pages (the report's HTML and the leaderboard's site): one style sheet, one way to
turn a title into a file or anchor name. Kept apart from both so that neither imports the other.
"""

from __future__ import annotations

import re

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:2px solid #d1495b;padding-bottom:.2em;margin-top:2em}h3{font-size:1.02em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child,td.txt{text-align:left}tr.ours td{background:#fdecef;font-weight:600}
details{margin:.3em 0;border-left:3px solid #eee;padding-left:.6em}summary{cursor:pointer;font-weight:600}
nav ul{margin:.2em 0}nav li{margin:.1em 0}.caption{color:#555;font-size:.8em;max-width:60em}.note{background:#fff8e1;border-left:4px solid #edae49;padding:.4em .8em}
img{max-width:100%;border:1px solid #eee;margin:.3em 0}code{background:#f5f5f5;padding:0 .2em}
"""


def slug(text: str) -> str:
    """A file-name-safe slug.

    >>> slug("cii_bench · acc by domain / Table 1")
    'cii_bench_acc_by_domain_Table_1'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]
