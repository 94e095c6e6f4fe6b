"""``hanyi report`` says what its numbers are: provenance per task, comparability with the papers, units, 95 %
intervals and paired comparisons of two runs.

Results files and sample logs are written here in lmms-eval 0.7.3's format (``*_results.json`` with ``configs``,
``n-samples``, ``config.limit``; ``<date>_samples_<task>.jsonl`` beside it); scipy is the independent oracle.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from hanyi.data.sources import SAMPLE_DIR
from hanyi.report import main as report_main
from hanyi.results import provenance, stats

DATE = "20250101_000000"


def write_run(directory, model_args, results, samples=None, configs=None, limit=None, n=None) -> str:
    """``results``: ``{task: {metric,filter: value}}``; ``samples``: ``{task: [sample-log lines]}``."""
    os.makedirs(directory, exist_ok=True)
    samples = samples or {}
    data = {
        "results": {t: {"alias": t, **m} for t, m in results.items()},
        "group_subtasks": {t: [] for t in results},
        "configs": configs or {t: {"task": t, "dataset_path": "org/full-release"} for t in results},
        "higher_is_better": {t: {k.split(",")[0]: True for k in m} for t, m in results.items()},
        "n-samples": {
            t: {"original": k, "effective": k}
            for t in results
            for k in [(n or {}).get(t, len(samples.get(t, [])) or 10)]
        },
        "versions": {t: 1.0 for t in results},
        "config": {"model": "replay", "model_args": model_args, "limit": limit},
        "model_name": model_args.split("=")[-1],
        "date": DATE,
        "lmms_eval_version": "0.7.3",
    }
    with open(os.path.join(directory, f"{DATE}_results.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)
    for task, lines in samples.items():
        with open(os.path.join(directory, f"{DATE}_samples_{task}.jsonl"), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
    return directory


def choice_samples(correct: list[bool], responses: list[str] | None = None) -> list[dict]:
    """Sample-log lines of a Pun Rebus choice task (``accuracy`` items as ``process_results`` returns them)."""
    responses = responses or ["A"] * len(correct)
    return [
        {
            "doc_id": i,
            "filtered_resps": [r],
            "accuracy": {"parsed": True, "correct": c, "pred": ["A"], "gold": ["A" if c else "B"]},
        }
        for i, (c, r) in enumerate(zip(correct, responses))
    ]


def report(tmp_path, *dirs) -> dict:
    out = tmp_path / "rep"
    assert report_main([*map(str, dirs), "--out", str(out), "--no-plots"]) == 0
    with open(out / "report.json", encoding="utf-8") as f:
        return json.load(f)


def section(rep, bench):
    return next(s for s in rep["sections"] if s["benchmark"] == bench)


def table(rep, bench, start):
    return next(t for t in section(rep, bench)["tables"] if t["title"].startswith(start))


# ---- comparability ----------------------------------------------------------------------------------------------------
def test_sample_data_makes_every_paper_comparison_not_comparable(tmp_path):
    correct = [True, False, True, False]
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {
            "punrebus_textonly": {"accuracy,none": 0.5},
            "cii_none": {"acc,none": 0.6, "acc_domain_life,none": 0.5},
        },
        samples={"punrebus_textonly": choice_samples(correct)},
        configs={
            "punrebus_textonly": {"dataset_path": os.path.join(SAMPLE_DIR, "punrebus")},
            "cii_none": {"dataset_path": os.path.join(SAMPLE_DIR, "cii")},
        },
    )
    rep = report(tmp_path, d)
    comps = [c for s in rep["sections"] for c in s["comparisons"]]
    assert len(comps) > 10
    assert all(c["comparable"] is False and c["difference"] is None for c in comps)
    assert all(any(r.startswith("sample data") for r in c["reasons"]) for c in comps)
    pun = table(rep, "punrebus", "punrebus_textonly · accuracy vs.")
    ours = next(r for r in pun["rows"] if r[0].startswith("m (ours)"))
    assert "not comparable (sample data)" in ours[0]
    assert {r[2] for r in pun["rows"]} <= {"n/c", "-"}  # no Δ anywhere
    domains = table(rep, "cii", "cii_none · acc by domain")
    assert "not comparable (sample data)" in domains["header"][1]
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "not comparable \\(sample data\\)" in md and "n/c" in md  # Markdown syntax escaped in report.md
    assert "n/c" in (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")


def test_a_clean_full_run_is_comparable_and_shows_the_difference(tmp_path):
    d = write_run(tmp_path / "run", "pretrained=m", {"cii_none": {"acc,none": 0.6}}, n={"cii_none": 800})
    rep = report(tmp_path, d)
    gpt = next(c for c in section(rep, "cii")["comparisons"] if c["paper_model"] == "GPT-4o")
    assert gpt["comparable"] is True and gpt["reasons"] == [] and gpt["difference"] == pytest.approx(5.9)
    row = next(r for r in table(rep, "cii", "cii_none · acc vs.")["rows"] if r[0] == "GPT-4o")
    assert row[2] == "+5.9"


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"limit": 5}, "--limit 5"),
        ({"responses": ["A", "", "A", "A"]}, "1 failed or empty generation"),
        ({"responses": ["A", None, None, "A"]}, "2 failed or empty generations"),
    ],
)
def test_limit_and_failed_generations_are_reasons(tmp_path, kwargs, reason):
    responses = kwargs.pop("responses", None)
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5}},
        samples={"punrebus_textonly": choice_samples([True, False, True, False], responses)},
        **kwargs,
    )
    rep = report(tmp_path, d)
    comps = section(rep, "punrebus")["comparisons"]
    assert comps and all(not c["comparable"] and reason in c["reasons"] for c in comps)


def test_a_fallback_scorer_is_a_reason_for_the_metric_it_decides_only(tmp_path):
    lines = [
        {
            "doc_id": i,
            "filtered_resps": ['["a"]'],
            "element_abs": {"parsed": True, "lemmatizer": "rule_fallback", "instance_score": s},
            "element_sim": {"parsed": True, "lemmatizer": "rule_fallback"},
        }
        for i, s in enumerate([0.5, 0.25])
    ]
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_elements": {"element_abs,none": 0.375, "element_sim,none": 0.5}},
        samples={"punrebus_elements": lines},
    )
    rep = report(tmp_path, d)
    comps = section(rep, "punrebus")["comparisons"]
    abs_ = [c for c in comps if c["metric"] == "element_abs"]
    sim = [c for c in comps if c["metric"] == "element_sim"]
    assert abs_ and all("fallback scorer (lemmatizer: rule_fallback)" in c["reasons"] for c in abs_)
    assert sim and all(not any("fallback" in r for r in c["reasons"]) for c in sim)
    prov = rep["runs"][0]["provenance"]["punrebus_elements"]
    assert prov["scorer_backends"] == {"lemmatizer": ["rule_fallback"]}


def test_anchor_row_task_variant_judge_and_doc_count_are_reasons():
    from hanyi.results.anchors import Link
    from hanyi.results.comparability import anchor_fields

    table_ = {
        "id": "t",
        "judge": "GPT-4o",
        "n": 800,
        "columns": ["Acc"],
        "rows": [
            {"model": "A", "values": [1.0], "task": "punrebus_matching", "variant": "paper"},
            {"model": "B", "values": [2.0], "task": "punrebus_textonly", "variant": "code_exact"},
        ],
    }
    link = Link("punrebus_textonly", "accuracy", table_, "Acc")
    prov = {"task": "punrebus_textonly", "prompt_variant": "paper", "data_source": {"kind": "hub"}}
    prov |= {"n_effective": 800, "judge_model": "gpt-4o", "generation_failures": 0}
    ok_a, reasons_a = provenance.comparability(prov, "accuracy", anchor_fields(link, "A"))
    ok_b, reasons_b = provenance.comparability(prov, "accuracy", anchor_fields(link, "B"))
    assert not ok_a and reasons_a == ["a different task (paper row: punrebus_matching, ours: punrebus_textonly)"]
    assert not ok_b and reasons_b == ["a different prompt variant (paper row: code_exact, ours: paper)"]
    other = {**prov, "judge_model": "qwen2.5-7b", "n_effective": 12}
    _, reasons = provenance.comparability(other, "accuracy", {"judge": "GPT-4o", "n": 800, "prompt_variant": "paper"})
    assert reasons == ["a different judge (paper: GPT-4o, ours: qwen2.5-7b)", "800 docs in the paper, 12 here"]


def test_provenance_of_a_prepared_directory_has_its_content_hash(tmp_path):
    data = tmp_path / "prepared" / "cii"
    data.mkdir(parents=True)
    (data / "README.md").write_text("configs: []\n")
    (data / "test.parquet").write_bytes(b"x" * 10)
    src = provenance.classify_source(str(data))
    assert src["kind"] == "prepared" and src["content_hash"].startswith("sha256:")
    provenance.directory_hash.cache_clear()
    (data / "test.parquet").write_bytes(b"y" * 10)
    assert provenance.classify_source(str(data))["content_hash"] != src["content_hash"]
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"cii_none": {"acc,none": 0.6}},
        configs={"cii_none": {"dataset_path": str(data), "metadata": {"judge_model": "j"}}},
        limit=3,
    )
    prov = report(tmp_path, d)["runs"][0]["provenance"]["cii_none"]
    assert prov["data_source"]["kind"] == "prepared" and prov["limit"] == 3 and prov["judge_model"] == "j"
    assert prov["generation_failures"] is None  # no sample log: unknown, not zero
    assert provenance.classify_source("m-a-p/CII-Bench", {"revision": "r1"})["revision"] == "r1"


# ---- units ------------------------------------------------------------------------------------------------------------
def test_a_count_is_printed_as_an_integer_not_a_rate(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {
            "unpie_disambiguation_de": {
                "accuracy,none": 0.5,
                "image_unresolved,none": 1.0,
                "image_unresolved_stderr_clt,none": 0.1667,
            }
        },
        configs={
            "unpie_disambiguation_de": {
                "dataset_path": "org/x",
                "metric_list": [
                    {"metric": "accuracy", "aggregation": "mean"},
                    {"metric": "image_unresolved", "aggregation": "<function unpie_sum at 0x7f>"},
                ],
            }
        },
    )
    rep = report(tmp_path, d)
    head = table(rep, "unpie", "Headline metrics")
    row = next(r for r in head["rows"] if r[1].startswith("image_unresolved"))
    assert row[2] == "1"
    ci = next(i for i in section(rep, "unpie")["intervals"] if i["metric"] == "image_unresolved")
    assert ci["unit"] == "count" and ci["ci_low"] is None


# ---- intervals --------------------------------------------------------------------------------------------------------
def test_headline_accuracy_gets_the_exact_interval_scipy_computes(tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    correct = [i % 3 == 0 for i in range(20)]  # 7 of 20
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 7 / 20}},
        samples={"punrebus_textonly": choice_samples(correct)},
    )
    rep = report(tmp_path, d)
    ci = next(i for i in section(rep, "punrebus")["intervals"] if i["metric"] == "accuracy")
    expected = scipy_stats.binomtest(7, 20).proportion_ci(0.95, method="exact")
    assert ci["ci_low"] == pytest.approx(expected.low, abs=1e-9)
    assert ci["ci_high"] == pytest.approx(expected.high, abs=1e-9)
    assert ci["method"].startswith("exact") and ci["n"] == 20
    row = next(r for r in table(rep, "punrebus", "Headline metrics")["rows"] if r[1].startswith("accuracy"))
    assert row[2] == f"0.3500 [{expected.low:.4f}, {expected.high:.4f}]"


@pytest.mark.parametrize("k, n", [(0, 7), (7, 7), (1, 1), (13, 800), (400, 800)])
def test_clopper_pearson_matches_scipy(k, n):
    scipy_stats = pytest.importorskip("scipy.stats")
    expected = scipy_stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    low, high = stats.clopper_pearson(k, n)
    assert low == pytest.approx(expected.low, abs=1e-9) and high == pytest.approx(expected.high, abs=1e-9)


def test_non_binary_scores_get_a_seeded_bootstrap_interval_and_odd_aggregates_none(tmp_path):
    scores = [0.1, 0.9, 0.5, 0.25, 0.75, 0.0]
    lines = [{"doc_id": i, "filtered_resps": ["x"], "element_abs": {"parsed": True, "instance_score": s}}
             for i, s in enumerate(scores)]  # fmt: skip
    lines.append({"doc_id": 6, "filtered_resps": ["x"], "element_abs": {"parsed": False, "instance_score": None}})
    mean = sum(scores) / len(scores)  # over parsed docs, as the paper's scorer
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_elements": {"element_abs,none": mean, "element_sim,none": 0.123}},
        samples={"punrebus_elements": lines},
    )
    rep = report(tmp_path, d)
    by_metric = {i["metric"]: i for i in section(rep, "punrebus")["intervals"]}
    ci = by_metric["element_abs"]
    assert ci["method"].startswith("bootstrap") and ci["n"] == 6
    assert ci["ci_low"] < mean < ci["ci_high"] and ci == report(tmp_path, d)["sections"][0]["intervals"][0]
    # element_sim: its per-doc scores are not in this log (no element_sim items, no statistics), so no interval
    assert by_metric["element_sim"]["ci_low"] is None and "per-doc statistics" in by_metric["element_sim"]["why"]


# ---- paired comparison ------------------------------------------------------------------------------------------------
def test_two_runs_of_punrebus_textonly_get_the_mcnemar_p_scipy_computes(tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    a = [i % 2 == 0 for i in range(60)]
    b = [(i % 2 == 0) != (i % 7 == 0) or i % 5 == 0 for i in range(60)]
    dirs = []
    for name, correct in (("a", a), ("b", b)):
        dirs.append(
            write_run(
                tmp_path / name,
                "pretrained=same-model",  # the same model twice: still two runs, one per directory
                {"punrebus_textonly": {"accuracy,none": sum(correct) / 60}},
                samples={"punrebus_textonly": choice_samples(correct)},
            )
        )
    rep = report(tmp_path, *dirs)
    (rec,) = [p for p in section(rep, "punrebus")["paired"] if p["metric"] == "accuracy"]
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    assert (rec["a_only"], rec["b_only"]) == (only_a, only_b) and only_a + only_b > 5
    assert rec["mcnemar_p"] == pytest.approx(scipy_stats.binomtest(only_b, only_a + only_b, 0.5).pvalue, rel=1e-9)
    assert rec["difference"] == pytest.approx((sum(b) - sum(a)) / 60)
    assert rec["ci_low"] <= rec["difference"] <= rec["ci_high"] and rec["n_pairs"] == 60
    assert rec["significant"] == (rec["mcnemar_p"] < 0.05)
    paired_table = table(rep, "punrebus", "Paired comparison")
    row = next(r for r in paired_table["rows"] if r[1] == "accuracy")
    assert row[7] == f"{rec['mcnemar_p']:.4g}" and row[8] in ("significant", "not significant")


@pytest.mark.parametrize("changed", [0, 7])
def test_two_runs_on_different_data_versions_are_not_paired_doc_by_doc(tmp_path, changed):
    """`hanyi report A B` paired docs by id only, so two data versions were compared doc by doc."""
    a = [i % 2 == 0 for i in range(30)]
    dirs = []
    for name, correct, shift in (("a", a, 0), ("b", [not x for x in a], changed)):
        samples = choice_samples(correct)
        for i, line in enumerate(samples):
            line["doc_hash"] = f"h{i + 1000}" if i < shift else f"h{i}"  # the first `changed` docs differ in b
        dirs.append(
            write_run(
                tmp_path / name,
                "pretrained=m",
                {"punrebus_textonly": {"accuracy,none": sum(correct) / 30}},
                samples={"punrebus_textonly": samples},
            )
        )
    rep = report(tmp_path, *dirs)
    sec = section(rep, "punrebus")
    paired = [p for p in sec["paired"] if p["task"] == "punrebus_textonly"]
    notes = [n for n in sec["notes"] if "not paired doc by doc" in n]
    if changed:
        assert paired == [] and len(notes) == 1 and f"{changed} of the 30 doc ids" in notes[0]
    else:
        assert paired and paired[0]["n_pairs"] == 30 and notes == []


@pytest.mark.parametrize("b, c", [(0, 0), (1, 9), (5, 5), (3, 17), (40, 61)])
def test_mcnemar_exact_matches_scipy(b, c):
    scipy_stats = pytest.importorskip("scipy.stats")
    expected = 1.0 if b + c == 0 else scipy_stats.binomtest(b, b + c, 0.5).pvalue
    assert stats.mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


def test_submission_carries_the_same_provenance_record(tmp_path):
    from hanyi.results.runs import load_runs
    from hanyi.submit import hanyi_submission, validate_hanyi_submission

    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5}},
        samples={"punrebus_textonly": choice_samples([True, False], ["A", ""])},
        configs={"punrebus_textonly": {"dataset_path": os.path.join(SAMPLE_DIR, "punrebus")}},
        limit=2,
    )
    (run,) = load_runs([str(d)])
    doc = hanyi_submission(run, "punrebus", ["punrebus_textonly"])
    validate_hanyi_submission(doc)
    prov = doc["tasks"]["punrebus_textonly"]["provenance"]
    assert prov["data_source"]["kind"] == "sample" and prov["limit"] == 2 and prov["generation_failures"] == 1


def test_a_run_on_fewer_docs_than_the_paper_is_not_comparable(tmp_path):
    d = write_run(tmp_path / "run", "pretrained=m", {"cii_none": {"acc,none": 0.6}}, n={"cii_none": 765})
    comps = section(report(tmp_path, d), "cii")["comparisons"]
    assert comps and all(c["reasons"] == ["800 docs in the paper, 765 here"] for c in comps)


def test_ctc_judge_other_than_the_papers_is_a_reason(tmp_path):
    lines = [{"doc_id": 0, "filtered_resps": ["画"], "ctc_score": {"judge_model": "qwen2.5-7b-instruct"}}]
    d = write_run(tmp_path / "run", "pretrained=m", {"cii_ctc": {"ctc_score,none": 3.0}}, samples={"cii_ctc": lines})
    comps = section(report(tmp_path, d), "cii")["comparisons"]
    assert comps and all("a different judge (paper: GPT-4o, ours: qwen2.5-7b-instruct)" in c["reasons"] for c in comps)


# ---- layout: paper-shaped tables, contents, no empty section ------------------------------------------------------
class _Page:
    """Ids, in-page links, and what each <section> holds, from an HTML document."""

    def __init__(self, text: str):
        from html.parser import HTMLParser

        page = self
        self.ids, self.links, self.sections = set(), [], []

        class Parser(HTMLParser):
            def handle_starttag(self, tag, attrs):
                attrs = dict(attrs)
                if attrs.get("id"):
                    page.ids.add(attrs["id"])
                if tag == "a" and (attrs.get("href") or "").startswith("#"):
                    page.links.append(attrs["href"][1:])
                if tag == "section":
                    page.sections.append({"tables": 0, "cells": []})
                elif page.sections and tag == "table":
                    page.sections[-1]["tables"] += 1

            def handle_data(self, data):
                if page.sections and data.strip():
                    page.sections[-1]["cells"].append(data.strip())

        Parser().feed(text)


def check_page(text: str) -> None:
    page = _Page(text)
    assert page.links and all(link in page.ids for link in page.links), set(page.links) - page.ids
    assert page.sections and all(s["tables"] >= 1 for s in page.sections)


def test_report_has_paper_shaped_tables_contents_and_collapsed_breakdowns(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"cii_none": {"acc,none": 0.6, "acc_domain_life,none": 0.5, "acc_domain_art,none": 0.7}},
        n={"cii_none": 800},
    )
    rep = report(tmp_path, d)
    t1 = table(rep, "cii", "Table 1 as in the paper")
    paper = load_cii_t1()
    assert t1["header"] == ["model", *paper["columns"], "comparable"]
    assert [r[0] for r in t1["rows"][: len(paper["rows"])]] == [r["model"] for r in paper["rows"]]  # paper's order
    ours = t1["rows"][t1["ours"][0]]
    # comparability per paper row: the 3 text-only LLM rows are not compared with an image run
    assert ours[0] == "m (ours, cii_none)" and ours[-1] == "✓ comparable with 20 of 23 paper rows"
    by_model = {r[0]: r[-1] for r in t1["rows"]}
    assert by_model["GPT-4o"] == "✓ comparable"
    assert re.fullmatch(r"⚠ not comparable \[\d+(, \d+)*\]", by_model["Qwen2-7B-Instruct"])
    notes = re.findall(r"\[\d+\] ([^;]*)", t1["caption"].split(" Reasons: ")[1])
    assert any(n.startswith("a different task (paper row: cii_textonly") for n in notes)  # the reasons: once, below
    cols = paper["columns"]
    assert ours[1 + cols.index("Overall")] == "60.0" and ours[1 + cols.index("Life")] == "50.0"
    html_text = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    check_page(html_text)
    assert "<details" in html_text and 'id="contents"' in html_text
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Contents" in md and "<details" in md


def load_cii_t1():
    from hanyi.results.anchors import load_anchor_file

    return next(t for t in load_anchor_file("cii")["tables"] if t["id"] == "t1")


def test_tables_with_no_value_of_ours_are_left_out_with_a_note(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {
            "punrebus_matching": {
                "accuracy,none": 0.5,
                "accuracy_cat_A,none": "N/A",
                "accuracy_cat_B,none": "N/A",
                "wrong_answer_confusion_A,none": {"B": 1},
            }
        },
    )
    rep = report(tmp_path, d)
    titles = [t["title"] for t in section(rep, "punrebus")["tables"]]
    assert not any("by category" in t for t in titles)
    assert any("left out" in n for n in section(rep, "punrebus")["notes"])
    head = table(rep, "punrebus", "Headline metrics")
    assert not any(r[1].startswith("wrong_answer_confusion") for r in head["rows"])  # all "(table)": not a row


def test_category_cells_beside_paper_columns_are_judged_too(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"cii_none": {"acc,none": 0.6, "acc_domain_life,none": 0.5}},
        configs={"cii_none": {"dataset_path": os.path.join(SAMPLE_DIR, "cii")}},
        n={"cii_none": 800},
    )
    comps = section(report(tmp_path, d), "cii")["comparisons"]
    life = [c for c in comps if c["metric"] == "acc_domain_life"]
    assert life and all(c["column"] == "Life" and c["ours"] == 50.0 and not c["comparable"] for c in life)


@pytest.mark.slow
def test_two_replay_runs_of_punrebus_textonly_report_scipys_mcnemar_p(replay, tmp_path):
    """End to end: two real lmms-eval runs (replay model), saved by lmms-eval's tracker, compared by ``hanyi report``."""
    import datasets

    from hanyi.results.lmms_output import save_like_cli

    scipy_stats = pytest.importorskip("scipy.stats")
    n = len(datasets.load_dataset(os.path.join(SAMPLE_DIR, "punrebus"), "textonly", split="test"))
    letters = "ABCDEFG"
    dirs, per_doc = [], []
    for name, shift in (("a", 0), ("b", 3)):
        records = [
            {"task": "punrebus_textonly", "doc_id": i, "response": letters[(i * 5 + shift) % 7]} for i in range(n)
        ]
        results = replay(records, ["punrebus_textonly"])
        per_doc.append({s["doc_id"]: bool(s["accuracy"]["correct"]) for s in results["samples"]["punrebus_textonly"]})
        dirs.append(save_like_cli(results, str(tmp_path / name), model_args=f"path=replay-{name}"))
    rep = report(tmp_path, *dirs)
    (rec,) = [p for p in section(rep, "punrebus")["paired"] if p["metric"] == "accuracy"]
    a, b = per_doc
    only_a = sum(a[d] and not b[d] for d in a)
    only_b = sum(b[d] and not a[d] for d in a)
    expected = 1.0 if only_a + only_b == 0 else scipy_stats.binomtest(only_b, only_a + only_b, 0.5).pvalue
    assert rec["n_pairs"] == n and (rec["a_only"], rec["b_only"]) == (only_a, only_b)
    assert rec["mcnemar_p"] == pytest.approx(expected, rel=1e-9)
    comps = section(rep, "punrebus")["comparisons"]
    assert comps and all(not c["comparable"] and c["reasons"][0].startswith("sample data") for c in comps)
    assert rep["runs"][0]["provenance"]["punrebus_textonly"]["data_source"]["kind"] == "sample"
