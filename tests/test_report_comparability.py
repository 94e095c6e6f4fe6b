"""The report never marks a non-comparable number comparable: every anchor table says how the
paper produced its numbers (judge, doc count, prompt variant), a missing field is "not comparable (unknown)", and the
paper-shaped tables decide comparability per paper row. Checked on a report built from crafted provenance."""

from __future__ import annotations

import json
import os
import re

import pytest

from hanyi import BENCHMARKS
from hanyi.report import main as report_main
from hanyi.results import provenance
from hanyi.results.anchors import load_anchor_file

HUB = {"kind": "hub", "hub_id": "org/full-release"}


def write_run(directory, results: dict, n: dict, configs: dict) -> str:
    """A minimal lmms-eval 0.7.3 results file: ``results`` ``{task: {metric,filter: value}}``, ``n`` docs scored."""
    os.makedirs(directory, exist_ok=True)
    data = {
        "results": {t: {"alias": t, **m} for t, m in results.items()},
        "group_subtasks": {t: [] for t in results},
        "higher_is_better": {t: {k.split(",")[0]: True for k in m} for t, m in results.items()},
        "n-samples": {t: {"original": n[t], "effective": n[t]} for t in results},
        "versions": {t: 1.0 for t in results},
        "configs": {t: {"task": t, "dataset_path": "org/full-release", **configs.get(t, {})} for t in results},
        "config": {"model": "replay", "model_args": "pretrained=m", "limit": None},
        "date": "20250101_000000",
        "lmms_eval_version": "main@0123abcd",
    }
    with open(os.path.join(directory, "20250101_000000_results.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)
    return str(directory)


def footnotes(caption: str) -> dict[str, str]:
    """``{number: reason}`` of a paper-shaped table's caption (``Reasons: [1] ...; [2] ....``)."""
    if " Reasons: " not in caption:
        return {}
    return dict(re.findall(r"\[(\d+)\] (.*?)(?=; \[\d+\] |\.(?: Note: |$))", caption.split(" Reasons: ", 1)[1]))


def reasons_of(cell: str, caption: str) -> list[str]:
    """The full reasons a ``⚠ not comparable [1, 3]`` mark points to."""
    numbers = re.fullmatch(r"⚠ not comparable \[([\d, ]+)\]", cell).group(1).split(", ")
    return [footnotes(caption)[n] for n in numbers]


def paper_rows(rep: dict, bench: str, title_start: str, column: int = -1) -> tuple[dict, dict]:
    """``({paper model: comparable cell}, {our row label: comparable cell})`` of one paper-shaped table; a paper
    row's footnoted mark is given back as ``⚠ not comparable (<kind>; <kind>)`` (its reasons' kinds)."""
    section = next(s for s in rep["sections"] if s["benchmark"] == bench)
    table = next(t for t in section["tables"] if t["title"].startswith(title_start))
    ours = {table["rows"][i][0]: table["rows"][i][column] for i in table["ours"]}
    cells = {r[0]: r[column] for i, r in enumerate(table["rows"]) if i not in table["ours"]}
    short = {m: f"⚠ {provenance.short_reason(reasons_of(c, table['caption']))}" if c.startswith("⚠") else c
             for m, c in cells.items()}  # fmt: skip
    return short, ours


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_every_anchor_table_gives_its_judge_doc_count_and_prompt_variant(bench):
    for table in load_anchor_file(bench)["tables"]:
        for key in ("judge", "n", "prompt_variant"):
            missing = [r["model"] for r in table["rows"] if table.get(key) is None and r.get(key) is None]
            assert not missing, f"{bench} {table['id']}: no {key} for {missing}"


def test_a_missing_anchor_field_means_not_comparable_unknown_never_comparable():
    prov = {"task": "t", "data_source": HUB, "n_effective": 800, "generation_failures": 0}
    ok, reasons = provenance.comparability(prov, "acc", {})
    assert not ok and reasons == [
        "unknown prompt variant (the anchor records none)",
        "unknown judge (the anchor records none)",
        "unknown doc count (the anchor records none)",
    ]
    assert provenance.short_reason(reasons) == (
        "not comparable (unknown prompt variant; unknown judge; unknown doc count)"
    )
    full = {"judge": "none", "n": 800, "prompt_variant": "default"}
    assert provenance.comparability(prov, "acc", full) == (True, [])
    assert not provenance.comparability(prov, "acc", {**full, "n": "unpublished"})[0]
    assert not provenance.comparability({**prov, "n_effective": None}, "acc", full)[0]  # ours unknown too


def test_crafted_provenance_7b_judge_640_docs_other_prompt_and_text_only_rows_are_not_comparable(tmp_path):
    run = write_run(
        tmp_path / "run",
        {
            # a 7B judge on 640 docs (Table 6 Correct: GPT-4, 1,000 docs per split)
            "unpie_reconstruction_de_homo": {"correct_custom_judge,none": 0.5, "bleu4,none": 20.0},
            # the paper prompt, where the GPT-4o/Claude rows came from the code_exact wording
            "punrebus_matching": {"accuracy,none": 0.3},
            # an image run, beside Table 1's text-only LLM rows
            "cii_none": {"acc,none": 0.6},
        },
        n={"unpie_reconstruction_de_homo": 640, "punrebus_matching": 1011, "cii_none": 800},
        configs={
            "unpie_reconstruction_de_homo": {"metadata": {"judge_model": "Qwen2.5-VL-7B-Instruct"}},
            "punrebus_matching": {"lmms_eval_specific_kwargs": {"prompt": "matching", "prompt_variant": "paper"}},
        },
    )
    out = tmp_path / "rep"
    assert report_main([run, "--out", str(out), "--no-plots"]) == 0
    with open(out / "report.json", encoding="utf-8") as f:
        rep = json.load(f)

    paper, ours = paper_rows(rep, "unpie", "Table 6 (De→En)")
    assert ours["pretrained=m (ours, unpie_reconstruction_de_homo)"] == "⚠ comparable with none of 10 paper rows"
    gpt4 = paper["GPT-4 (VLM, V + L)"]
    assert gpt4.startswith("⚠ not comparable (") and "a different judge" in gpt4 and "1000 docs in the paper" in gpt4
    comps = [c for c in next(s for s in rep["sections"] if s["benchmark"] == "unpie")["comparisons"]]
    judged = [c for c in comps if c["metric"] == "correct_custom_judge"]
    assert judged and not any(c["comparable"] for c in judged)
    for c in judged:
        assert "a different judge (paper: gpt-4-0613, ours: Qwen2.5-VL-7B-Instruct)" in c["reasons"]
        assert "1000 docs in the paper, 640 here" in c["reasons"]
    bleu = [c for c in comps if c["metric"] == "bleu4"]  # no judge behind BLEU-4: the doc count differs, and
    unspecified = "not specified by the paper: the BLEU-4 implementation (ours: sacrebleu corpus BLEU, 13a tokenizer)"
    assert bleu and all(c["reasons"] == [unspecified, "1000 docs in the paper, 640 here"] for c in bleu)

    paper, ours = paper_rows(rep, "punrebus", "Table 1 (arXiv 2406.10318v1), symbolic")
    assert paper["GPT-4o"] == "⚠ not comparable (a different task; a different prompt variant)"
    assert paper["Claude 3 Opus"] == "⚠ not comparable (a different prompt variant)"
    assert (
        ours["pretrained=m (ours, punrebus_matching)"] == "✓ comparable with 1 of 13 paper rows"
    )  # Random Choice only

    paper, ours = paper_rows(rep, "cii", "Table 1 as in the paper")
    for model in ("Llama-3-8B-Instruct", "DeepSeek-67B-Chat", "Qwen2-7B-Instruct"):
        assert paper[model] == "⚠ not comparable (a different task; unknown doc count)"
    assert paper["GPT-4o"] == "✓ comparable"
    cii = next(s for s in rep["sections"] if s["benchmark"] == "cii")["comparisons"]
    assert not [c for c in cii if c["paper_model"] == "Qwen2-7B-Instruct" and c["task"] == "cii_none"]


def test_full_table_reads_the_prompt_variant_key_the_anchor_files_use():
    """``build.anchor_fields`` read ``variant`` while the YAMLs say ``prompt_variant``: the reason never fired."""
    from hanyi.results.anchors import links_for
    from hanyi.results.comparability import anchor_fields

    (link,) = links_for("punrebus", "punrebus_matching", ["accuracy"], variant="paper")
    fields = anchor_fields(link, "Claude 3 Opus")
    assert fields["prompt_variant"] == "code_exact" and fields["n"] == 1011 and fields["judge"] == "none"
    prov = {"task": "punrebus_matching", "prompt_variant": "paper", "data_source": HUB, "n_effective": 1011}
    assert provenance.comparability(prov, "accuracy", fields)[1] == [
        "a different prompt variant (paper row: code_exact, ours: paper)"
    ]


@pytest.mark.parametrize("docs, comparable", [(2000, True), (1990, False)])
def test_the_homo_value_of_a_task_that_scores_both_splits_compares_on_the_docs_of_its_run(tmp_path, docs, comparable):
    """UNPIE's ``unpie_reconstruction_de`` scores both splits (2,000 docs); its Homo BLEU-4 (``bleu4_homo``, from the
    sample log) is the paper's Homo column, 1,000 docs of one split: the map entry's ``n`` is the run's 2,000."""
    results = {"unpie_reconstruction_de": {"bleu4,none": 29.0, "bleu4_homo,none": 28.0, "bleu4_hetero,none": 30.0}}
    run = write_run(tmp_path / "run", results, n={"unpie_reconstruction_de": docs}, configs={})
    out = tmp_path / "rep"
    assert report_main([run, "--out", str(out), "--no-plots"]) == 0
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    comps = next(s for s in rep["sections"] if s["benchmark"] == "unpie")["comparisons"]
    homo = [c for c in comps if c["metric"] == "bleu4_homo"]
    assert homo and not any(c["comparable"] for c in homo), homo  # BLEU-4: not specified by the paper
    counted = [c for c in homo if "2000 docs in the paper, 1990 here" in c["reasons"]]
    assert counted == ([] if comparable else homo)  # comparable: the doc count is no reason


def test_two_tasks_in_one_paper_table_get_a_mark_column_each_and_their_reasons_once_as_footnotes(tmp_path):
    """Pun Rebus Table 1 repeated a two-task "not comparable" text on every paper row, and our
    rows merged contradictory reasons ("1011 docs in the paper ... 150 docs in the paper")."""
    run = write_run(
        tmp_path / "run",
        {"punrebus_matching": {"accuracy,none": 0.3}, "punrebus_expression": {"accuracy,none": 0.2}},
        n={"punrebus_matching": 1011, "punrebus_expression": 100},
        configs={},
    )
    assert report_main([run, "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    section = next(s for s in rep["sections"] if s["benchmark"] == "punrebus")
    table = next(t for t in section["tables"] if t["title"].startswith("Table 1 (arXiv 2406.10318v1), symbolic"))
    marks = ["comparable: punrebus_matching", "comparable: punrebus_expression"]
    assert sorted(table["header"][-2:]) == sorted(marks)
    notes = footnotes(table["caption"])
    assert notes and len(set(notes.values())) == len(notes)  # every reason once
    used = set()
    for i, row in enumerate(table["rows"]):
        if i in table["ours"]:
            continue
        for cell in row[-2:]:
            assert re.fullmatch(r"-|✓ comparable|⚠ not comparable \[\d+(, \d+)*\]", cell), cell
            used.update(re.findall(r"\d+", cell) if cell.startswith("⚠") else [])
    assert used == set(notes)
    docs = [r for r in notes.values() if "docs in the paper" in r]
    assert len(docs) >= 2 and all(r.count("docs in the paper") == 1 for r in docs)  # never merged into one text
    col = [table["header"].index(m) for m in marks]
    ours = {table["rows"][i][0]: [table["rows"][i][c] for c in col] for i in table["ours"]}
    matching, expression = (
        ours["pretrained=m (ours, punrebus_matching)"],
        ours["pretrained=m (ours, punrebus_expression)"],
    )
    assert re.fullmatch(r"[✓⚠] comparable with (\d+|none) of \d+ paper rows", matching[0]) and matching[1] == ""
    assert expression[0] == "" and re.fullmatch(r"[✓⚠] comparable with (\d+|none) of \d+ paper rows", expression[1])
    assert "not comparable with any paper row" not in table["caption"]
