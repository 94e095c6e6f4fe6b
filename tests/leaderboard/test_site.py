"""The board's static site (``hanyi.leaderboard.site``) and its Every Eval Ever records (``hanyi.leaderboard.eee``),
from a :class:`Board` built by hand."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import re
from html.parser import HTMLParser

import pytest

from hanyi.leaderboard import eee
from hanyi.leaderboard.entries import Board, Cell, Entry, Rejected, Row, Section
from hanyi.leaderboard.pages import model_page
from hanyi.leaderboard.site import write_site
from hanyi.outputs import OutDirError

XSS = "<img src=x onerror=alert(1)>"
FORMULA = '=HYPERLINK("http://evil","x")'


def entry(model: str, digest: str, judge: str = "judge-a@1", **kw) -> Entry:
    return Entry(
        submission_hash=digest * 64 if len(digest) == 1 else digest,
        benchmark="cii",
        model=model,
        model_args=kw.pop("model_args", "pretrained=org/m,api_key=***"),
        date="2026-11-20T10:00:00",
        hanyi_version="0.9.0",
        lmms_eval_version="0.7.3",
        protocol={"cii_none": {"task_version": "1.2", "judge_model": judge, "data_fingerprint": "sha256:feed"}},
        provenance={"cii_none": {"judge_model": judge, "scorer_backends": {"embedder": ["all-MiniLM-L6-v2"]}}},
        judged={"cii_none/judge_acc": "re-aggregated"},
        predictions_file=kw.pop("predictions_file", f"predictions/{digest}.json"),
        **kw,
    )


def cells(acc: float, judged: float) -> dict[str, Cell]:
    return {
        "cii_none/acc": Cell(acc, acc - 0.1, acc + 0.1, 40, stderr=0.05, method="exact (Clopper-Pearson)"),
        "cii_none/judge_acc": Cell(judged, judged - 0.2, judged + 0.2, 40, note="judge re-aggregated", stderr=0.1),
    }


def hand_board(top: str = XSS) -> Board:
    """cii ranked together (three submissions and a paper row), one submission of another judge ranked apart, and
    two rejected files."""
    columns = ["cii_none/acc", "cii_none/judge_acc"]
    main = Section(
        benchmark="cii",
        protocol={"task_version": "1.2", "judge_model": "judge-a@1"},
        columns=columns,
        ranking_column="cii_none/acc",
        method="paired bootstrap (2000) rank intervals; adjacent rows: paired exact McNemar, Holm-corrected",
        rows=[
            Row(top, cells(0.8, 0.7), entry(top, "a"), rank=1, rank_low=1, rank_high=2, tier=1, flip=None),
            Row(
                "model-b",
                cells(0.75, 0.9),
                entry("model-b", "b"),
                rank=2,
                rank_low=1,
                rank_high=3,
                tier=1,
                flip=2,
                p_above=0.4312,
            ),
            Row("model-c", cells(0.3, 0.1), entry("model-c", "c"), rank=3, rank_low=3, rank_high=3, tier=2, flip=9),
            Row(
                "GPT-4o (paper)",
                {"cii_none/acc": Cell(0.5)},
                reference=True,
                comparable=False,
                reasons=["prompt variant differs: <cot>"],
            ),
        ],
    )
    apart = Section(
        benchmark="cii",
        protocol={"task_version": "1.2", "judge_model": "judge-b@2"},
        columns=columns,
        ranking_column="cii_none/acc",
        rows=[
            Row(
                "model-d",
                cells(0.6, 0.5),
                entry("model-d", "d", judge="judge-b@2"),
                rank=1,
                rank_low=1,
                rank_high=1,
                tier=1,
            )
        ],
        apart=["judge model differs: judge-b@2, not judge-a@1"],
        method="single row: nothing to test",
    )
    rejected = [
        Rejected("subs/tampered.json", "e" * 64, "model-e", ["cii_none/acc: claimed 0.9000, re-scored 0.4000"]),
        Rejected("subs/limit<b>.json", "f" * 64, FORMULA, ["--limit 5: 5 of 40 docs, not the full split"]),
    ]
    return Board(sections=[main, apart], rejected=rejected, overall_absent="only one benchmark has submissions")


@pytest.fixture
def site(tmp_path):
    out = tmp_path / "site"
    written = write_site(hand_board(), str(out))
    return out, written


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.scripts, self._in_script = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data

    def handle_endtag(self, tag):
        self._in_script = False


def parse(path) -> Tags:
    parsed = Tags()
    parsed.feed(open(path, encoding="utf-8").read())
    return parsed


def test_the_site_has_an_index_a_page_per_benchmark_the_rejected_page_json_csv_and_a_record_per_ranked_row(site):
    out, written = site
    names = sorted(os.path.relpath(p, out) for p in written)
    assert {"index.html", "cii.html", "rejected.html", "leaderboard.json", "leaderboard.csv"} <= set(names)
    assert len([n for n in names if n.startswith("eee/")]) == 4  # four submission rows; the paper row has none
    assert all(os.path.isfile(p) for p in written)
    index = (out / "index.html").read_text()
    assert 'href="cii.html"' in index and 'href="rejected.html"' in index
    assert "No overall score: only one benchmark has submissions" in index


def test_a_submitter_s_html_stays_text_on_every_page_and_file(site):
    out, _ = site
    for name in ("index.html", "cii.html", "rejected.html"):
        text = (out / name).read_text()
        assert XSS not in text and "<b>" not in text
        parsed = parse(out / name)
        assert "img" not in parsed.tags and parsed.tags.count("script") == 1
        assert not [a for a in parsed.attrs if a[1].startswith("on")]  # no event handler attribute at all
    assert "&lt;img src=x onerror=alert(1)&gt;" in (out / "cii.html").read_text()
    assert "subs/limit&lt;b&gt;.json" in (out / "rejected.html").read_text()
    assert "prompt variant differs: &lt;cot&gt;" in (out / "cii.html").read_text()


def test_an_attribute_value_cannot_be_closed_by_a_submitter(tmp_path):
    board = hand_board(top='x" autofocus onfocus="alert(1)')
    board.sections[0].rows[0].entry.predictions_file = 'p.json" onclick="alert(1)'
    write_site(board, str(tmp_path))
    for name in ("cii.html", model_page('x" autofocus onfocus="alert(1)')):
        parsed = parse(tmp_path / name)
        assert not [a for a in parsed.attrs if a[1].startswith("on") or a[1] == "autofocus"]
    assert ("a", "href", 'p.json" onclick="alert(1)') in parsed.attrs  # the whole value stays inside href


def test_the_csp_allows_only_the_inline_script_by_its_hash_and_nothing_leaves(site):
    out, _ = site
    for name in ("index.html", "cii.html", "rejected.html"):
        parsed = parse(out / name)
        csp = [v for tag, k, v in parsed.attrs if tag == "meta" and k == "content" and "default-src" in v]
        assert len(csp) == 1 and "default-src 'none'" in csp[0] and "img-src data:" in csp[0]
        script = parsed.scripts[0]
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"script-src 'sha256-{digest}'" in csp[0]
        for tag, key, value in parsed.attrs:  # every link and source is a file of the site
            if key in ("href", "src"):
                assert not re.match(r"^[a-z][a-z0-9+.-]*:|^/", value, re.I), (tag, key, value)


def test_each_cell_shows_value_and_interval_and_each_row_rank_interval_tier_and_flip(site):
    out, _ = site
    text = (out / "cii.html").read_text()
    # in the paper's unit (Table 1 prints percent, one decimal); the sort still reads the value
    assert (
        '<td data-v="0.75" title="exact (Clopper-Pearson)">75.0&nbsp;% <span class="ci">[65.0, 85.0]</span></td>'
        in text
    )
    assert (
        '<td data-v="2">2 <span class="ci">[1&ndash;3]</span></td><td data-v="1" title="against the tier&#x27;s top row: '
        'Holm-adjusted p = 0.431">1</td>' in text
    )
    assert '<td data-v="2">2</td></tr>' in text  # the flip, last
    assert "paired exact McNemar, Holm-corrected" in text
    assert "judged: re-aggregated" in text and "judge re-aggregated" in text


def test_each_row_links_its_model_page_with_its_provenance_and_predictions(site):
    out, _ = site
    assert f'<a href="{model_page("model-b")}">model-b</a>' in (out / "cii.html").read_text()
    row = (out / model_page("model-b")).read_text()
    for expected in ("pretrained=org/m,api_key=***", "2026-11-20T10:00:00", "0.9.0", "0.7.3", "judge-a@1",
                     "all-MiniLM-L6-v2", "sha256:feed", "b" * 64, 'href="predictions/b.json"'):  # fmt: skip
        assert expected in row, expected


def test_credentials_in_model_args_are_masked_and_an_unsafe_link_is_not_linked(tmp_path):
    board = hand_board()
    board.sections[0].rows[1].entry.model_args = "pretrained=org/m,api_key=sk-SECRET123"
    board.sections[0].rows[2].entry.predictions_file = "javascript:alert(1)"
    write_site(board, str(tmp_path))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "sk-SECRET123" not in path.read_text(), path
    assert 'href="javascript' not in (tmp_path / "cii.html").read_text()


def test_a_paper_row_is_marked_with_its_comparability_and_reasons_and_has_no_rank(site):
    out, _ = site
    text = (out / "cii.html").read_text()
    papers = text[text.index('<details class="papers">') :]
    papers = papers[: papers.index("</details>")]
    row = papers[papers.index('<tr class="reference">') :]
    row = row[: row.index("</tr>")]
    assert row.startswith('<tr class="reference"><th scope="row" class="name"><span class="ref">paper</span> GPT-4o')
    assert "no: prompt variant differs: &lt;cot&gt;" in row
    assert ">rank</button>" not in papers and ">rank</button>" in text  # no rank column for the papers' rows


def test_a_section_of_another_protocol_is_apart_with_its_reasons(site):
    out, _ = site
    text = (out / "cii.html").read_text()
    assert text.index("cii: ranked together") < text.index("cii: ranked apart")
    assert "Apart from the main table because: judge model differs: judge-b@2, not judge-a@1" in text
    assert text.count("<section") == 2


def test_the_rejected_page_lists_every_file_with_every_reason(site):
    out, _ = site
    text = (out / "rejected.html").read_text()
    assert "subs/tampered.json" in text and "cii_none/acc: claimed 0.9000, re-scored 0.4000" in text
    assert "--limit 5: 5 of 40 docs, not the full split" in text
    assert "model-e" not in (out / "cii.html").read_text()


def test_csv_cells_that_a_spreadsheet_would_run_as_formulas_get_an_apostrophe(tmp_path):
    board = hand_board(top=FORMULA)
    board.sections[0].rows[1].label = "-2+3"
    board.sections[0].rows[2].label = "@SUM(A1)"
    write_site(board, str(tmp_path))
    with open(tmp_path / "leaderboard.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    models = {r["model"] for r in rows}
    assert {"'" + FORMULA, "'-2+3", "'@SUM(A1)", "model-d", "GPT-4o (paper)"} <= models
    assert not [m for m in models if m[:1] in "=+-@"]
    assert len(rows) == 2 * 5  # (4 rows of the main section + 1 apart) x 2 columns
    b = next(r for r in rows if r["model"] == "'-2+3" and r["column"] == "cii_none/acc")
    assert (b["value"], b["low"], b["high"], b["rank"], b["tier"], b["flip"]) == ("0.75", "0.65", "0.85", "2", "1", "2")


def test_leaderboard_json_holds_sections_rejected_and_provenance_but_not_per_doc_scores(tmp_path):
    board = hand_board()
    board.sections[0].rows[0].entry.per_doc = {"cii_none": {"acc": {0: 1.0}}}
    write_site(board, str(tmp_path))
    data = json.loads((tmp_path / "leaderboard.json").read_text())
    assert data["format"] == "hanyi-leaderboard" and len(data["sections"]) == 2
    first = data["sections"][0]["rows"][0]
    assert first["label"] == XSS and first["cells"]["cii_none/acc"]["low"] == pytest.approx(0.7)
    assert "per_doc" not in first["entry"] and first["entry"]["protocol"]["cii_none"]["judge_model"] == "judge-a@1"
    assert [r["path"] for r in data["rejected"]] == ["subs/tampered.json", "subs/limit<b>.json"]
    assert "rejected.html" in data["files"] and data["overall"] is None


def _records(out) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "eee" / "data").glob("*/*/*/*.json"))]


def test_every_eval_ever_records_validate_against_the_v0_2_2_schema_by_the_reference_validator(site):
    out, _ = site
    schema = eee.load_schema()
    assert schema["version"] == "0.2.2" and eee.SCHEMA_VERSION == "0.2.2"
    records = _records(out)
    assert len(records) == 4
    for record in records:
        assert record["schema_version"] == "0.2.2"
        assert eee.check(record) == [], record["evaluation_id"]  # jsonschema, the reference validator
        assert eee.validate(record, schema) == [], record["evaluation_id"]  # and the dependency-free one agrees


def test_every_eval_ever_records_meet_the_0_3_0_schema_too(site):
    out, _ = site
    for record in _records(out):
        assert eee.check(record, eee.SCHEMA_0_3_0_PATH) == []
        details = record["model_info"]["additional_details"]
        assert details["deployment_type"] == "self_deployed" and details["model_availability"] == "unknown"


def test_an_every_eval_ever_record_carries_standard_error_judges_and_the_content_hash(site):
    out, _ = site
    record = next(r for r in _records(out) if r["model_info"]["name"] == "model-b")
    assert record["source_metadata"]["additional_details"]["dedupe_identity.content_hash"] == "sha256:" + "b" * 64
    assert record["evaluation_id"].endswith("/" + "b" * 64) and record["model_info"]["id"] == "org/m"
    acc, judged = record["evaluation_results"]
    assert acc["score_details"]["uncertainty"]["standard_error"] == {"value": 0.05, "method": "exact (Clopper-Pearson)"}
    assert acc["score_details"]["uncertainty"]["confidence_interval"]["lower"] == pytest.approx(0.65)
    assert acc["score_details"]["details"]["rank_high"] == "3" and "llm_scoring" not in acc["metric_config"]
    judges = judged["metric_config"]["llm_scoring"]["judges"]
    assert judges == [
        {
            "model_info": {
                "name": "judge-a@1",
                "id": "judge-a@1",
                "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
            }
        }
    ]
    assert judged["metric_config"]["llm_scoring"]["additional_details"] == {"verdicts": "re-aggregated"}
    assert "detailed_evaluation_results" not in record  # no predictions copied: no per-doc jsonl to name


@pytest.mark.parametrize(
    "break_it, expected",
    [
        (lambda r: r.pop("model_info"), "'model_info' is required"),
        (lambda r: r.update(dedupe_identity={"content_hash": "x"}), "additional property 'dedupe_identity'"),
        (lambda r: r["evaluation_results"][0]["score_details"].update(score="0.8"), "is not of type number"),
        (lambda r: r["evaluation_results"][0]["metric_config"].pop("max_score"), "'max_score' is required"),
        (lambda r: r["evaluation_results"][0]["metric_config"].update(score_type="ordinal"), "is not one of"),
        (lambda r: r["evaluation_results"][0]["source_data"].update(source_type="hf"), "oneOf"),
        (lambda r: r["source_metadata"]["additional_details"].update(n=3), "is not of type string"),
    ],
)
def test_the_schema_check_rejects_a_broken_record(site, break_it, expected):
    out, _ = site
    record = _records(out)[0]
    break_it(record)
    errors = eee.validate(record, eee.load_schema())
    assert any(expected in e for e in errors), errors


def test_the_site_never_replaces_a_file_it_did_not_write_and_rebuilds_its_own(tmp_path):
    (tmp_path / "index.html").write_text("mine")
    with pytest.raises(OutDirError, match="index.html exists and is not an earlier hanyi board's"):
        write_site(hand_board(), str(tmp_path))
    assert (tmp_path / "index.html").read_text() == "mine"
    out = tmp_path / "site"
    out.mkdir()
    (out / ".cache").mkdir()
    (out / ".cache" / "keep.json").write_text("{}")
    write_site(hand_board(), str(out))
    board = hand_board()
    del board.sections[1]  # model-d gone: its record is removed, nothing else of the folder
    write_site(board, str(out))
    assert len(_records(out)) == 3
    assert (out / ".cache" / "keep.json").read_text() == "{}"
    assert "model-d" not in (out / "cii.html").read_text()


def test_a_rebuild_with_source_date_epoch_is_byte_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764000000")
    first = {p: open(p, "rb").read() for p in write_site(hand_board(), str(tmp_path / "a"))}
    second = {p: open(p, "rb").read() for p in write_site(hand_board(), str(tmp_path / "b"))}
    assert [first[p] for p in sorted(first)] == [second[p] for p in sorted(second)]
    assert json.loads((tmp_path / "a" / "leaderboard.json").read_text())["built"] == "1764000000"


def test_the_submission_file_is_copied_as_the_rows_per_doc_predictions_when_its_bytes_are_the_scored_ones(tmp_path):
    board = hand_board()
    sub = tmp_path / "sub_submission.json"
    sub.write_bytes(b'{"format": "hanyi-submission", "tasks": {}}')
    changed = tmp_path / "changed_submission.json"
    changed.write_bytes(b"{}")
    rows = board.sections[0].rows
    for row, path in ((rows[1], sub), (rows[2], changed)):
        row.entry.predictions_file, row.entry.source_path = None, str(path)
    rows[1].entry.submission_hash = hashlib.sha256(sub.read_bytes()).hexdigest()
    out = tmp_path / "site"
    write_site(board, str(out))
    copy = f"predictions/{rows[1].entry.submission_hash}.json"
    assert (out / copy).read_bytes() == sub.read_bytes()
    assert f'href="{copy}"' in (out / model_page("model-b")).read_text()
    assert list((out / "predictions").iterdir()) == [out / copy]  # the changed file is not the one scored: no copy
    assert copy in json.loads((out / "leaderboard.json").read_text())["files"]
    record = next(r for r in _records(out) if r["model_info"]["name"] == "model-b")
    assert "detailed_evaluation_results" not in record  # a copy with no doc: no jsonl (tests/leaderboard/test_eee.py)
    assert eee.validate(record, eee.load_schema()) == []


def test_a_credential_in_a_copied_submission_file_is_masked_and_the_checksum_is_of_the_copy(tmp_path):
    board = hand_board()
    sub = tmp_path / "s_submission.json"
    sub.write_bytes(b'{"model_args": "pretrained=org/m,api_key=sk-LEAK42", "tasks": {}}')
    row = board.sections[0].rows[0]
    row.entry.predictions_file, row.entry.source_path = None, str(sub)
    row.entry.submission_hash = hashlib.sha256(sub.read_bytes()).hexdigest()
    write_site(board, str(tmp_path / "site"))
    copy = tmp_path / "site" / "predictions" / f"{row.entry.submission_hash}.json"
    assert json.loads(copy.read_text())["model_args"] == "pretrained=org/m,api_key=***"
    site = tmp_path / "site"
    assert "LEAK42" not in "".join(p.read_text() for p in site.rglob("*") if p.is_file() and ".cache" not in p.parts)


def test_a_secret_named_member_of_a_copied_submission_is_masked_whole(tmp_path):
    """A parsed JSON document holds the name and the value apart (``{"api_key": "sk-..."}``), so neither string alone
    looks like a credential: the value of a secret-named member is masked whatever it holds, nested or not."""
    board = hand_board()
    sub = tmp_path / "s_submission.json"
    doc = {
        "model_args": {"pretrained": "org/m", "api_key": "sk-LEAK42", "max_new_tokens": 5},
        "judge": {"headers": {"Authorization": "LEAK43"}, "hf_token": ["LEAK44"], "secret_key": 45045045},
        "tasks": {},
    }
    sub.write_text(json.dumps(doc))
    row = board.sections[0].rows[0]
    row.entry.predictions_file, row.entry.source_path = None, str(sub)
    row.entry.submission_hash = hashlib.sha256(sub.read_bytes()).hexdigest()
    write_site(board, str(tmp_path / "site"))
    copy = json.loads((tmp_path / "site" / "predictions" / f"{row.entry.submission_hash}.json").read_text())
    assert copy["model_args"] == {"pretrained": "org/m", "api_key": "***", "max_new_tokens": 5}
    assert copy["judge"] == {"headers": {"Authorization": "***"}, "hf_token": "***", "secret_key": "***"}
    site = tmp_path / "site"
    text = "".join(p.read_text() for p in site.rglob("*") if p.is_file() and ".cache" not in p.parts)
    assert not any(leak in text for leak in ("LEAK42", "LEAK43", "LEAK44", "45045045"))
