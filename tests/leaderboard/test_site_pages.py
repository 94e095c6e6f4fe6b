"""What a visitor reads (``hanyi.leaderboard.pages``): the index's top rows, the compact benchmark table in the
paper's unit with one row per paper model, the charts' text alternatives, a page per model with its neighbours and
a paged predictions viewer, and the status page with every file's state."""

from __future__ import annotations

import hashlib
import json
import re

from hanyi.leaderboard import pages
from hanyi.leaderboard.entries import Cell, Rejected, Row
from hanyi.leaderboard.site import write_site
from tests.leaderboard.test_site import XSS, hand_board


def build(tmp_path, board=None):
    board = board or hand_board()
    write_site(board, str(tmp_path))
    return board


def test_the_index_names_each_benchmark_s_top_models_with_value_interval_and_tier(tmp_path):
    board = hand_board()
    board.sections[0].rows[1].entry.card = {"name": "Model B 7B", "organisation": "Lab B", "parameters": 7 * 10**9}
    build(tmp_path, board)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    top = index[index.index("<table") : index.index("</table>")]
    assert [m for m in re.findall(r'<th scope="row" class="name"[^>]*><a href="[^"]+">([^<]+)</a>', top)] == [
        "&lt;img src=x onerror=alert(1)&gt;", "Model B 7B", "model-c"]  # fmt: skip
    assert "Lab B · 7B" in top and '75.0&nbsp;% <span class="ci">[65.0, 85.0]</span>' in top
    assert 'href="cii.html">The full cii table</a>' in index
    assert "4 accepted, 2 rejected, 0 pending" in index and "How to read this board" in index
    assert "No overall score: only one benchmark has submissions." in index


def test_paper_rows_are_one_per_paper_model_apart_and_folded(tmp_path):
    board = hand_board()
    main = board.sections[0]
    main.rows.append(Row("GPT-4o (paper)", {"cii_none/judge_acc": Cell(0.6)}, reference=True, comparable=True))
    build(tmp_path, board)
    text = (tmp_path / "cii.html").read_text(encoding="utf-8")
    papers = text[text.index('<details class="papers">') :]
    papers = papers[: papers.index("</details>")]
    assert papers.count('<tr class="reference">') == 1  # the model's two tables' rows merged
    assert "1 paper models (0 comparable" in papers  # comparable only when each merged row is
    assert "50.0&nbsp;%" in papers and 'data-v="0.6"' in papers
    main_table = text[text.index("<table") : text.index("</table>")]
    assert "paper" not in main_table.replace("papers'", "")


def test_the_rank_interval_chart_is_inline_svg_with_a_text_alternative(tmp_path):
    build(tmp_path)
    text = (tmp_path / "cii.html").read_text(encoding="utf-8")
    svg = text[text.index("<svg") : text.index("</svg>")]
    assert 'role="img"' in svg and "<title" in svg
    desc = re.search(r"<desc [^>]*>([^<]*)</desc>", svg).group(1)
    assert desc == (
        "&lt;img src=x onerror=alert(1)&gt;: rank 1, 95 % interval 1 to 2; model-b: rank 2, 95 % interval 1 to 3; "
        "model-c: rank 3, 95 % interval 3 to 3"
    )
    assert "<img" not in text and "<script src" not in text


def test_a_model_page_shows_its_card_neighbours_categories_and_provenance(tmp_path):
    board = hand_board()
    board.sections[0].rows[1].entry.card = {"name": "Model B", "link": "https://example.org/b", "open_weights": False}
    build(tmp_path, board)
    page = (tmp_path / pages.model_page("Model B")).read_text(encoding="utf-8")
    assert '<a href="https://example.org/b" rel="nofollow noopener noreferrer">' in page and "closed" in page
    neighbours = page[page.index("against its neighbours") :]
    neighbours = neighbours[: neighbours.index("</table>")]
    assert "above" in neighbours and "&lt;img src=x" in neighbours and "<td>0.431</td>" in neighbours
    assert "below" in neighbours and "model-c" in neighbours and '<td data-v="9">9</td>' in neighbours
    assert "Rank 2 (95 % interval 1 to 3); tier 1" in page
    assert "pretrained=org/m,api_key=***" in page and "judge-a@1" in page


def test_the_predictions_viewer_pages_every_doc_without_script(tmp_path):
    board = hand_board()
    row = board.sections[0].rows[2]  # model-c
    preds = [{"doc_id": i, "doc_hash": "h", "target": "A", "response": f"answer {i} <b>", "evidence": {"domain": "life"}}
             for i in range(120)]  # fmt: skip
    sub = tmp_path / "c_submission.json"
    sub.write_text(json.dumps({"format": "hanyi-submission", "tasks": {"cii_none": {"predictions": preds}}}))
    row.entry.source_path, row.entry.predictions_file = str(sub), None
    row.entry.submission_hash = hashlib.sha256(sub.read_bytes()).hexdigest()
    row.entry.per_doc = {"cii_none": {"acc": {i: float(i % 2) for i in range(120)}}}
    build(tmp_path / "site", board)
    base = f"pred-{row.entry.submission_hash[:16]}"
    files = sorted(p.name for p in (tmp_path / "site").glob(base + "*.html"))
    assert files == [f"{base}-p2.html", f"{base}-p3.html", f"{base}.html"]  # 50 a page
    first = (tmp_path / "site" / f"{base}.html").read_text(encoding="utf-8")
    assert first.count('<th scope="row">') == pages.PRED_ROWS and "answer 0 &lt;b&gt;" in first
    assert "domain: life" in first and ">wrong</td>" in first and ">correct</td>" in first
    assert f'href="{base}-p3.html"' in first
    model = (tmp_path / "site" / pages.model_page("model-c")).read_text(encoding="utf-8")
    assert f'href="{base}.html"' in model


def test_the_status_page_lists_every_file_with_its_sha256_and_state(tmp_path):
    board = hand_board()
    board.rejected.append(Rejected("subs/copy.json", "9" * 64, "m", ["same predictions"], state="duplicate",
                                   duplicate_of="subs/first.json"))  # fmt: skip
    board.rejected.append(Rejected("subs/wait.json", "8" * 64, "m", ["the board's data is missing"], state="pending"))
    for row in board.sections[0].rows[:3]:
        row.entry.source_path = f"subs/{row.entry.model}.json"
    build(tmp_path, board)
    status = (tmp_path / "status.html").read_text(encoding="utf-8")
    for digest, state in (("a" * 64, "ranked"), ("d" * 64, "ranked apart"), ("e" * 64, "rejected"),
                          ("9" * 64, "duplicate"), ("8" * 64, "pending")):  # fmt: skip
        row = status[status.index(digest) :]
        assert f'<td class="txt state">{state}</td>' in row[: row.index("</tr>")], state
    assert "the same predictions as first.json" in status and "the board&#x27;s data is missing" in status
    assert "subs/model-b.json" in status
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "4 accepted, 2 rejected, 1 duplicate, 1 pending" in index


def test_a_column_the_board_did_not_verify_is_marked_as_the_submitter_s_claim(tmp_path):
    board = hand_board()
    entry = board.sections[0].rows[0].entry
    entry.unverified = {"cii_none/judge_acc": "judged by the submitter's judge; the board has none"}
    entry.flags = ["a name another ranked submission also uses"]
    build(tmp_path, board)
    text = (tmp_path / "cii.html").read_text(encoding="utf-8")
    assert "the submitter&#x27;s claim, not verified: judged by the submitter&#x27;s judge" in text
    assert '<span class="flag">flag: a name another ranked submission also uses</span>' in text
    assert XSS not in text


def test_the_overall_mean_rank_names_and_links_each_model_and_sorts_lowest_first(tmp_path):
    from hanyi.leaderboard.entries import Section

    board = hand_board()
    cols = ["cii/rank", "punrebus/rank", "mean_rank"]
    rows = [Row("model-b", {"cii/rank": Cell(2.0, 1, 3), "punrebus/rank": Cell(1.0, 1, 2), "mean_rank": Cell(1.5, 1.0, 2.5)},
                rank=1, rank_low=1, rank_high=2)]  # fmt: skip
    board.overall = Section("overall", {}, cols, "mean_rank", rows, lower_is_better=list(cols))
    build(tmp_path, board)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    overall = index[index.index('id="overall"') :]
    assert f'<a href="{pages.model_page("model-b")}">model-b</a>' in overall
    assert '<button type="button" data-better="low">mean rank</button>' in overall
