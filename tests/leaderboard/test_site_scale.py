"""A board of 1,000 submissions (benchmarks/leaderboard_scale.py's synthetic board of CII-Bench): the site
is written, no HTML page is over 1 MB, and a section's table shows its top rows with the rest on further pages."""

from __future__ import annotations

import os
import re

import pytest

from hanyi.leaderboard import pages
from hanyi.leaderboard.site import write_site


@pytest.fixture(scope="module")
def big_site(tmp_path_factory, bench_script):
    board = bench_script("leaderboard_scale").synthetic_board(1000, benchmarks=("cii",))
    out = tmp_path_factory.mktemp("big")
    written = write_site(board, str(out))
    return out, [p for p in written if p.endswith(".html")]


def test_no_page_of_a_board_of_1000_submissions_is_over_1_mb(big_site):
    out, written = big_site
    assert len(written) > 1000  # a page per model, paged benchmark, status and rejected pages
    sizes = {os.path.basename(p): os.path.getsize(p) for p in written}
    assert max(sizes.values()) <= 1_000_000, max(sizes.items(), key=lambda kv: kv[1])


def test_the_main_table_shows_the_top_rows_and_pages_the_rest(big_site):
    out, _ = big_site
    first = (out / "cii.html").read_text(encoding="utf-8")
    main = first[first.index("<table") : first.index("</table>")]
    assert main.count('<th scope="row"') == pages.PAGE_ROWS
    assert "Model 0000" in main and "Model 0100" not in main
    links = sorted(set(re.findall(r'href="(cii-p\d+\.html)"', first)), key=lambda n: int(n[5:-5]))
    assert links == [f"cii-p{k}.html" for k in range(2, 11)]
    last = (out / "cii-p10.html").read_text(encoding="utf-8")
    assert "Model 0999" in last and "Model 0000" not in last
    assert (out / "status.html").exists() and (out / "status-p2.html").exists()  # 1,000 files: 500 a page
