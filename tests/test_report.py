"""``hanyi report``: metric-name layout, anchors, numbers beside the paper, and reports of real lmms-eval runs.

Hand-written results files check the numbers (our value in the paper's unit, Δ = ours − paper); the replay run and
the shared tiny-LLaVA run (``llava_run``) are written to disk by lmms-eval's own ``EvaluationTracker`` and reported
through the command line entry point, as a user would.
"""

from __future__ import annotations

import json
import os

import pytest

from hanyi.report import main as report_main
from hanyi.results.anchors import ANCHORS_DIR, links_for, load_anchor_file, unmatched_map_entries
from hanyi.results.layout import Cell, classify
from hanyi.results.runs import load_runs

BENCHES = ("punrebus", "cvlue", "cii", "unpie", "vulca")


def full_n(task: str) -> int:
    """The docs behind the paper's tables for ``task`` (anchor ``n``); 10 for tasks without one."""
    if task.startswith("cii"):
        return 800
    return 375 if task.startswith("punrebus_textonly") else 1011 if task.startswith("punrebus") else 10


def write_results(directory: str, model_args: str, results: dict, higher: dict | None = None, **extra) -> str:
    """A minimal lmms-eval 0.7.3 results file: ``results`` is ``{task: {metric,filter: value}}``."""
    os.makedirs(directory, exist_ok=True)
    data = {
        "results": {t: {"alias": t, **m} for t, m in results.items()},
        "group_subtasks": extra.pop("group_subtasks", {t: [] for t in results}),
        "higher_is_better": higher
        or {t: {k.split(",")[0]: True for k in m if "_stderr" not in k} for t, m in results.items()},
        # a full-size run (the docs behind the paper's tables), so the comparison stays comparable
        "n-samples": {t: {"original": full_n(t), "effective": full_n(t)} for t in results},
        "versions": {t: 1.0 for t in results},
        # where lmms-eval records the resolved dataset_path: a hub id unless a test says otherwise
        "configs": extra.pop("configs", {t: {"task": t, "dataset_path": "org/full-release"} for t in results}),
        "config": {"model": "replay", "model_args": model_args, "limit": extra.pop("limit", None)},
        "model_name": model_args.split("=")[-1],
        "date": extra.pop("date", "20250101_000000"),
        "lmms_eval_version": "0.7.3",
    }
    path = os.path.join(directory, f"{data['date']}_results.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return path


def report_json(out_dir: str) -> dict:
    with open(os.path.join(out_dir, "report.json"), encoding="utf-8") as f:
        return json.load(f)


def find_table(report: dict, bench: str, title_start: str) -> dict:
    section = next(s for s in report["sections"] if s["benchmark"] == bench)
    return next(t for t in section["tables"] if t["title"].startswith(title_start))


def row_of(table: dict, first_cell: str) -> list[str]:
    return next(r for r in table["rows"] if r[0] == first_cell)


# ---- layout -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "names, name, expected",
    [
        (["acc", "acc_domain_life"], "acc_domain_life", Cell("acc", "domain", "life")),
        (["acc", "acc_robust"], "acc_robust", None),
        (["accuracy", "accuracy_cat_A"], "accuracy_cat_A", Cell("accuracy", "cat", "A")),
        (
            ["acc", "acc_type_single_panel_comic"],
            "acc_type_single_panel_comic",
            Cell("acc", "type", "single_panel_comic"),
        ),
        (["exact_match", "exact_match_strict", "exact_match_lenient"], "exact_match_lenient", None),
        (["feat_a", "feat_b", "feat_c_d"], "feat_c_d", Cell("feat", "feat", "c_d")),
        (["feat_a", "feat_b"], "feat_a", None),  # two names are not a family
        (
            ["ctc_score", "ctc_score_difficulty_easy"],
            "ctc_score_difficulty_easy",
            Cell("ctc_score", "difficulty", "easy"),
        ),
    ],
)
def test_classify_reads_category_names(names, name, expected):
    assert classify(names)[name] == expected


def test_cvlue_culture_groups_come_from_the_anchor_file_hints():
    hints = load_anchor_file("cvlue")["categories"]
    cells = classify(["miou", "miou_coco", "miou_non_wordnet", "miou_non_wordnet_macro", "acc_iou_0_5"], hints)
    assert cells["miou_non_wordnet"] == Cell("miou", "culture group", "non_wordnet")
    assert cells["miou_non_wordnet_macro"] == Cell("miou", "culture group (macro)", "non_wordnet")
    assert cells["acc_iou_0_5"] is None


# ---- anchors ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bench, table, model, column, value",
    [
        ("punrebus", "t1", "GPT-4o", "Symbolic Matching Accuracy (%)", 40.40),
        ("punrebus", "t1e", "Qwen-VL-Max (five-shot)", "Element Identification S_Abs", 0.0327),
        ("punrebus", "t2", "Gemini Pro", "Accuracy (%)", 85.06),
        ("cii", "t1", "Qwen2-VL-72B", "Overall", 64.4),
        ("cii", "t6", "Qwen2-VL-7B", "Poster", 0.8),  # the paper's typo, kept as printed
        ("cii", "t8", "Human_best", "Antithesis", 66.7),
        ("cii", "t4", "GPT-4o", "Difficult", 2.35),
        ("cvlue", "t4", "QwenVL-Chat (7B)", "VG mIoU", 40.4),
        ("cvlue", "t4", "mPLUG-Owl2 (7B)", "VG mIoU", None),
        ("unpie", "t6_de", "LLaVA (VLM, V + L)", "All Bleu-4", 26.0),  # typo kept, flagged in the note
        ("unpie", "t5", "GPT-4 (SM, V + L)", "En→Ko All", 65.8),
        ("vulca", "t5", "Qwen-2.5-VL-7B", "Comprehensive Analyst", 0.7783469856),
        ("vulca", "t7", "HumanAvg (Human Expert)", "Clear Logic", 0.093),
    ],
)
def test_anchor_numbers_are_the_papers(bench, table, model, column, value):
    data = load_anchor_file(bench)
    t = next(t for t in data["tables"] if t["id"] == table)
    row = next(r for r in t["rows"] if r["model"] == model)
    assert row["values"][t["columns"].index(column)] == value
    assert t["cite"].startswith("Table") or "README" in t["cite"]


def test_every_anchor_file_is_cited_and_well_formed():
    for bench in BENCHES:
        data = load_anchor_file(bench)
        assert data["benchmark"] == bench and data["paper"]
        assert data["map"], bench
        for table in data["tables"]:
            assert table["cite"] and table["caption"] and table["rows"]


def _breakdown_names(task: str) -> list[str]:
    """The metrics ``hanyi report`` adds to ``task`` from its sample log (hanyi.metrics.from_samples): a
    breakdown computed over no items still names every metric it gives (NaN or None)."""
    from hanyi.metrics.from_samples import registry

    names = []
    for item in registry():
        if item.applies_to(task):
            try:
                names += list(item.compute([]))
            except Exception:  # a breakdown that needs items: its names are not known here
                continue
    return names


def test_anchor_map_names_tasks_and_metrics_that_exist(task_manager):
    """Upkeep check: every map entry matches a registered task whose YAML reports that metric, or whose sample log
    gives it (a breakdown computed by ``hanyi report``; VULCA's are listed in hanyi.metrics.vulca_breakdowns)."""
    from hanyi.metrics import vulca_breakdowns

    tasks = {}
    for name in task_manager.all_tasks:
        if name.split("_")[0] not in BENCHES:
            continue
        cfg = task_manager._get_config(name) if hasattr(task_manager, "_get_config") else {}
        metrics = [m["metric"] for m in (cfg or {}).get("metric_list", [])]
        agg = [m["metric"] for m in (cfg or {}).get("aggregate_metric_list", []) or []]
        vulca = list(vulca_breakdowns.METRICS) if name.startswith("vulca_") else []
        tasks[name] = metrics + agg + _breakdown_names(name) + vulca
    assert len(tasks) > 50 and sum(map(len, tasks.values())) > 300  # the check is not vacuous
    for bench in BENCHES:
        assert unmatched_map_entries(bench, tasks, ANCHORS_DIR) == [], bench


@pytest.mark.parametrize(
    "task, variant, shown",
    [
        ("punrebus_expression", "code_exact", {"GPT-4o", "GPT-4V", "Qwen-VL-Max", "Qwen-VL-Plus"}),
        ("punrebus_matching", "code_exact", {"Claude 3 Opus", "Claude 3 Sonnet", "Claude 3 Haiku"}),
        ("punrebus_matching", "paper", set()),
        ("punrebus_matching", None, set()),
        ("punrebus_textonly", "qwen_code_exact", {"Qwen-VL-Max", "Qwen-VL-Plus"}),
        ("punrebus_elements", "code_exact", {"GPT-4o", "GPT-4V", "Gemini Pro", "Claude 3 Opus", "Claude 3 Sonnet",
                                             "Claude 3 Haiku", "Qwen-VL-Max", "Qwen-VL-Plus"}),
    ],
)  # fmt: skip
def test_punrebus_anchor_rows_match_only_the_task_and_prompt_variant_that_produced_them(task, variant, shown):
    metric = "element_abs" if "elements" in task else "accuracy"
    (link,) = links_for("punrebus", task, [metric], ANCHORS_DIR, variant)
    baselines = {"Random Choice", "Human Estimate"}
    assert {r.model for r in link.rows()} - baselines == shown
    assert "arXiv 2406.10318v1" in link.cite


def test_every_punrebus_model_row_names_its_task_and_prompt_variant():
    for table in load_anchor_file("punrebus")["tables"]:
        for row in table["rows"]:
            if row["model"] not in ("Random Choice", "Human Estimate"):
                assert row.get("task", "").startswith("punrebus_") and row.get("prompt_variant"), row


def test_punrebus_deduplicated_per_category_accuracy_is_its_own_category_family():
    from hanyi.results.layout import classify

    cells = classify(["accuracy", "accuracy_cat_A", "accuracy_cat_dedup_A"], load_anchor_file("punrebus")["categories"])
    assert cells["accuracy_cat_A"] == Cell("accuracy", "category", "A")
    assert cells["accuracy_cat_dedup_A"] == Cell("accuracy", "category (deduplicated)", "A")


# ---- numbers in the report --------------------------------------------------------------------------------------------
def test_report_puts_ours_in_the_papers_unit_with_the_difference(tmp_path):
    write_results(
        str(tmp_path / "run" / "m1"),
        "path=m1",
        {
            "punrebus_matching": {
                "accuracy,none": 0.5,
                "accuracy_stderr,none": "N/A",
                "accuracy_cat_A,none": 0.25,
                "accuracy_cat_B,none": 1.0,
            },
            "cii_none": {"acc,none": 0.6, "acc_domain_life,none": 0.5, "acc_domain_art,none": 0.7},
        },
        configs={
            "punrebus_matching": {
                "task": "punrebus_matching",
                "dataset_path": "org/full-release",
                "lmms_eval_specific_kwargs": {"prompt": "matching", "prompt_variant": "code_exact"},
            },
            "cii_none": {"task": "cii_none", "dataset_path": "org/full-release"},
        },
    )
    out = tmp_path / "rep"
    assert report_main([str(tmp_path / "run"), "--out", str(out)]) == 0
    rep = report_json(str(out))
    pun = find_table(rep, "punrebus", "punrebus_matching · accuracy vs. Table 1")
    assert row_of(pun, "m1 (ours)")[1] == "50.00"
    assert row_of(pun, "Claude 3 Opus") == ["Claude 3 Opus", "22.47", "+27.53"]
    assert row_of(pun, "Human Estimate")[2] == "n/c"  # 3 workers x 50 images, not the 1,011
    # review defect 3: GPT-4o/GPT-4V/Qwen rows come from the justification prompt (punrebus_expression), Gemini's
    # from its own wording: they are not compared with a punrebus_matching run
    assert not [r[0] for r in pun["rows"] if r[0].startswith(("GPT-4", "Qwen", "Gemini"))]
    assert all("five-shot" not in r[0] for r in pun["rows"])  # rows filter: zero-shot rows only
    cii = find_table(rep, "cii", "cii_none · acc vs. Table 1")
    assert row_of(cii, "GPT-4o") == ["GPT-4o", "54.1", "+5.9"]  # our fraction 0.6 is 60.0 in the paper's percent
    domains = find_table(rep, "cii", "cii_none · acc by domain")
    assert row_of(domains, "Life")[1] == "50.00" and row_of(domains, "Art")[1] == "70.00"
    # paper rows: one human row, then best / median / worst by mean over the shown labels (Life, Art)
    assert domains["header"][:4] == ["domain", "m1 (ours)", "Human_best (paper)", "Gemini-1.5 Pro (paper)"]
    cats = find_table(rep, "punrebus", "punrebus_matching · accuracy by category")
    assert [r[:2] for r in cats["rows"]] == [["A Longevity", "0.2500"], ["B Happiness", "1.0000"]]
    assert rep["missing_benchmarks"] == ["cvlue", "unpie", "vulca", "vulca_bench"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## punrebus" in md and "## cii" in md and "Not in these results: cvlue, unpie, vulca, vulca\\_bench." in md
    assert len(rep["sections"][0]["plots"]) >= 2 and all(
        (out / p).stat().st_size > 1000 for p in rep["sections"][0]["plots"]
    )


def test_two_result_dirs_are_compared_side_by_side(tmp_path):
    write_results(
        str(tmp_path / "a"), "pretrained=org/model-a", {"cii_none": {"acc,none": 0.4, "acc_stderr,none": 0.015}}
    )
    write_results(str(tmp_path / "b"), "pretrained=org/model-b", {"cii_none": {"acc,none": 0.7}})
    out = tmp_path / "rep"
    assert report_main([str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--no-plots"]) == 0
    rep = report_json(str(out))
    head = find_table(rep, "cii", "Headline metrics")
    assert head["header"] == ["task", "metric", "model-a", "model-b", "n"]
    assert row_of(head, "cii_none")[2:4] == ["0.4000 ± 0.0150", "0.7000"]
    comp = find_table(rep, "cii", "cii_none · acc vs. Table 1")
    assert row_of(comp, "GPT-4o")[2:] == ["-14.1", "+15.9"]
    assert not list((out / "plots").iterdir())


def test_newer_results_file_of_the_same_model_wins_and_partial_runs_merge(tmp_path):
    d = str(tmp_path / "run")
    write_results(d, "pretrained=m", {"cii_none": {"acc,none": 10.0}}, date="20250101_000000")
    write_results(
        d,
        "pretrained=m",
        {"cii_none": {"acc,none": 20.0}, "vulca_baseline": {"expert_alignment,none": 0.5}},
        date="20250102_000000",
    )
    (run,) = load_runs([d])
    assert run.tasks["cii_none"].metrics["acc"].value == 20.0 and "vulca_baseline" in run.tasks


def test_results_without_hanyi_tasks_get_a_clear_message(tmp_path, capsys):
    write_results(str(tmp_path / "run"), "pretrained=m", {"mmmu_val": {"acc,none": 0.3}})
    assert report_main([str(tmp_path / "run"), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert "no hanyi task" in err and "mmmu_val" in err and "punrebus" in err
    assert not (tmp_path / "rep").exists()


def test_a_dir_without_results_files_gets_a_clear_message(tmp_path, capsys):
    assert report_main([str(tmp_path)]) == 2
    assert "no lmms-eval results file" in capsys.readouterr().err


def test_unknown_tasks_and_limit_runs_are_reported_generically(tmp_path):
    write_results(
        str(tmp_path / "r"),
        "pretrained=m",
        {"vulca_new_thing": {"novel_metric,none": 0.25, "other,flex": 3.0}},
        limit=2,
    )
    out = tmp_path / "rep"
    assert report_main([str(tmp_path / "r"), "--out", str(out)]) == 0
    rep = report_json(str(out))
    head = find_table(rep, "vulca", "Headline metrics")
    assert ["vulca_new_thing", "novel_metric ↑", "0.2500", "10"] in head["rows"]
    assert any(r[1].startswith("other,flex") for r in head["rows"])
    notes = rep["sections"][0]["notes"]
    assert any("--limit 2" in n for n in notes) and any("is mapped to a paper table" in n for n in notes)


# ---- real lmms-eval runs ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_report_of_a_replay_run_shows_the_known_accuracy(replay, tmp_path):
    from hanyi.results.lmms_output import save_like_cli

    records = [{"task": "punrebus_matching", "doc_id": i, "response": "C"} for i in range(_punrebus_docs())]
    results = replay(records, ["punrebus_matching"])
    golds = [
        json.loads(s["target"].replace("'", '"')) if isinstance(s["target"], str) else s["target"]
        for s in results["samples"]["punrebus_matching"]
    ]
    expected = sum("C" in g for g in golds) / len(golds)
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay-all-C")
    assert report_main([str(tmp_path / "out"), "--out", str(tmp_path / "rep")]) == 0
    table = find_table(report_json(str(tmp_path / "rep")), "punrebus", "punrebus_matching · accuracy vs. Table 1")
    ours = next(r for r in table["rows"] if r[0].startswith("replay-all-C (ours)"))
    assert ours[1] == f"{100 * expected:.2f}"
    # the bundled sample is not the paper's data: shown, but no Δ beside the paper's number
    assert "not comparable (sample data" in ours[0]
    assert row_of(table, "Human Estimate")[2] == "n/c"
    assert not [r[0] for r in table["rows"] if r[0].startswith(("GPT-4", "Claude"))]  # paper variant: no model rows


@pytest.mark.slow
def test_report_of_a_replay_run_shows_the_cii_and_cvlue_breakdowns_from_the_sample_log(replay, tmp_path):
    """the per-category numbers CII and CVLUE no longer emit (CII difficulty, image type and rhetoric;
    CVLUE culture groups and semantic fields) are computed by ``hanyi report`` from the sample log, under the old
    names, so their tables are still there; Table 1's emitted domain columns stay as emitted."""
    from hanyi.results.lmms_output import save_like_cli

    records = [{"task": "cii_none", "doc_id": i, "response": "C"} for i in range(12)]
    answers = ["2个", "是的", "躺着", "3", "不是", "答案：地上\n因为"]
    records += [{"task": "cvlue_vqa", "doc_id": i, "response": r} for i, r in enumerate(answers)]
    results = replay(records, ["cii_none", "cvlue_vqa"])
    assert "acc_rhetoric_metaphor,none" not in results["results"]["cii_none"]
    assert "accuracy_coco,none" not in results["results"]["cvlue_vqa"]
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay-c")
    assert report_main([str(tmp_path / "out"), "--out", str(tmp_path / "rep")]) == 0
    rep = report_json(str(tmp_path / "rep"))
    # sample docs: gold C is test-8 only (easy, poster, single-panel comic, neutral; domain life)
    assert row_of(find_table(rep, "cii", "cii_none · acc by domain"), "Life")[1] == "100.00"  # emitted
    assert row_of(find_table(rep, "cii", "cii_none · acc by difficulty"), "Easy")[1] == "20.00"
    assert row_of(find_table(rep, "cii", "cii_none · acc by type"), "Poster")[1] == "50.00"
    assert [r[1] for r in find_table(rep, "cii", "cii_none · acc by rhetoric")["rows"][:2]] == ["0.0000", "0.0000"]
    groups = find_table(rep, "cvlue", "cvlue_vqa · accuracy by culture group")
    assert [r[:2] for r in groups["rows"]] == [["not in WordNet", "1.0000"], ["moderate", "0.5000"]] + [
        ["MS-COCO overlap", "0.5000"]
    ]
    assert find_table(rep, "cvlue", "cvlue_vqa · accuracy by culture group (macro)")["rows"]
    fields = find_table(rep, "cvlue", "cvlue_vqa · accuracy by field")
    assert row_of(fields, "animal")[1] == "0.5000" and row_of(fields, "food")[1] == "-"


@pytest.fixture(scope="module")
def llava_report(llava_run, tmp_path_factory):
    from hanyi.results.lmms_output import save_like_cli

    root = tmp_path_factory.mktemp("llava")
    save_like_cli(llava_run, str(root / "out"))
    out = root / "rep"
    assert report_main([str(root / "out"), "--out", str(out)]) == 0
    return out, llava_run


@pytest.mark.slow
def test_report_of_the_shared_tiny_llava_run_has_a_section_per_benchmark(llava_report):
    out, results = llava_report
    rep = report_json(str(out))
    # a benchmark by its tasks' names (`cii` is a tag of cii_none since CII 2.1: no entry of its own)
    groups = [g for g in BENCHES if any(t == g or t.startswith(g + "_") for t in results["results"])]
    assert [s["benchmark"] for s in rep["sections"]] == groups
    for section in rep["sections"]:
        head = section["tables"][0]
        assert head["title"] == "Headline metrics" and head["rows"]
    assert list(out.glob("plots/*.png"))
    files = list((out.parent / "out").rglob("*_samples_*.jsonl"))
    assert files, "EvaluationTracker wrote no sample logs"


def _chromium():
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="chromium not installed (CI: apt-get install -y chromium)")
def test_html_report_renders_in_headless_chromium_with_tables_images_and_contents(llava_report, tmp_path):
    import subprocess
    from html.parser import HTMLParser

    out, _ = llava_report
    html_file = out / "report.html"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run(
        [_chromium(), *flags, "--dump-dom", html_file.as_uri()], capture_output=True, text=True, timeout=120, check=True
    ).stdout

    class Count(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.images, self.ids, self.links, self.sections = {}, [], set(), [], []

        def handle_starttag(self, tag, attrs):
            self.tags[tag] = self.tags.get(tag, 0) + 1
            attrs = dict(attrs)
            if tag == "img":
                self.images.append(attrs.get("src", ""))
            if attrs.get("id"):
                self.ids.add(attrs["id"])
            if tag == "a" and (attrs.get("href") or "").startswith("#"):
                self.links.append(attrs["href"][1:])
            if tag == "section":
                self.sections.append(0)
            elif tag == "table" and self.sections:
                self.sections[-1] += 1

    parsed = Count()
    parsed.feed(dom)
    expected_images = len(report_json(str(out))["sections"][0]["plots"])
    assert parsed.tags.get("table", 0) >= 3 and parsed.tags.get("h2", 0) >= 1
    # the table of contents resolves in the rendered DOM, and no section is empty
    assert parsed.links and all(link in parsed.ids for link in parsed.links), set(parsed.links) - parsed.ids
    assert parsed.sections and all(n >= 1 for n in parsed.sections), parsed.sections
    assert parsed.images and all(src.startswith("data:image/png;base64,") for src in parsed.images)
    assert len(parsed.images) >= expected_images
    shot = out / "report.png"
    subprocess.run(
        [_chromium(), *flags, f"--screenshot={shot}", "--window-size=1280,2000", html_file.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000


def _punrebus_docs() -> int:
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    return len(datasets.load_dataset(os.path.join(SAMPLE_DIR, "punrebus"), "images", split="test"))


def test_results_under_a_hidden_model_folder_are_found(tmp_path):
    """lmms-eval names the model folder after the model path: a model at ".cache/tiny" writes to ".cache__tiny/"."""
    from hanyi.results.runs import find_results_files

    hidden = tmp_path / ".cache__tiny"
    hidden.mkdir()
    (hidden / "20261122_000000_results.json").write_text("{}")
    assert find_results_files(str(tmp_path)) == [str(hidden / "20261122_000000_results.json")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "bench",
    ["punrebus", "cvlue", "cii", "unpie", "vulca"],
)
def test_every_headline_number_of_the_five_group_report_has_an_interval(llava_report, bench):
    from hanyi.results.decomposed import NONE_SCORED

    out, results = llava_report
    rep = report_json(str(out))
    section = next((s for s in rep["sections"] if s["benchmark"] == bench), None)
    if section is None:
        pytest.skip(f"{bench} not in the shared run")
    records = section["intervals"]
    assert records
    from hanyi.results.runs import load_runs

    (run,) = load_runs([str(out.parent / "out")])  # the run the report read
    # a diagnostic the report computes from the sample log (UNPIE's answer_rate, ...) is shown, with no interval
    computed = {(r["task"], r["metric"]) for r in records if run.tasks[r["task"]].metrics[r["metric"]].from_samples}
    missing = [
        (r["task"], r["metric"], r.get("why"))
        for r in records
        if r.get("ci_low") is None
        and r.get("unit") != "count"
        and r.get("why") not in ("no value", NONE_SCORED)
        and (r["task"], r["metric"]) not in computed
    ]
    assert missing == []
    for r in records:
        if r.get("ci_low") is not None:
            assert r["method"] and r["n"] > 0 and r["ci_low"] <= r["value"] + 1e-12 <= r["ci_high"] + 2e-12
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "[" in md and "95 %" in md
