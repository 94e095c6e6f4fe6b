"""Report sections beyond the papers: answer position bias per MCQ task and CII prompt sensitivity."""

from __future__ import annotations

import json
import os

import pytest

from hanyi.report import main as report_main
from hanyi.report.bias import choice_evidence, position_bias


def _line(pred, gold):
    return {"accuracy": {"parsed": pred is not None, "correct": pred in gold, "pred": pred, "gold": gold}}


def test_always_one_letter_is_maximal_bias_and_matching_the_gold_is_none():
    golds = [["A"], ["B"], ["C"], ["D"]]
    biased = position_bias([_line("A", g) for g in golds])
    assert biased["answered"] == {"A": 4, "B": 0, "C": 0, "D": 0}
    assert biased["tv"] == pytest.approx(0.75)
    assert biased["chi2"] == pytest.approx(12.0) and biased["df"] == 3 and biased["p"] < 0.01
    fair = position_bias([_line(g[0], g) for g in golds])
    assert fair["tv"] == 0.0 and fair["chi2"] == 0.0


def test_unparsed_answers_are_counted_apart_and_multilabel_gold_is_split():
    b = position_bias([_line(None, ["A", "B"]), _line("B", ["B"])])
    assert b["unparsed"] == 1 and b["answered"] == {"A": 0, "B": 1}
    assert b["gold"] == {"A": 0.5, "B": 1.5}


def test_free_text_samples_are_not_mcq():
    assert position_bias([{"exact_match": 1.0, "x": {"pred": "年年有余", "gold": "年年有余"}}]) is None
    assert choice_evidence({"acc": {"pred": None, "answer": "F"}}) == (None, ["F"])


def _write(directory, model_args, results):
    os.makedirs(directory, exist_ok=True)
    data = {
        "results": {t: {"alias": t, **m} for t, m in results.items()},
        "group_subtasks": {t: [] for t in results},
        "higher_is_better": {t: {"acc": True} for t in results},
        "config": {"model": "replay", "model_args": model_args, "limit": None},
        "model_name": model_args,
        "date": "20250101_000000",
    }
    with open(os.path.join(directory, "20250101_000000_results.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)


def _report(tmp_path, out="out"):
    assert report_main([str(tmp_path / out), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    with open(tmp_path / "rep" / "report.json", encoding="utf-8") as f:
        return json.load(f)


def _table(rep, bench, title):
    section = next(s for s in rep["sections"] if s["benchmark"] == bench)
    return next(t for t in section["tables"] if t["title"].startswith(title))


def test_prompt_spread_from_results_alone_has_no_ci(tmp_path):
    _write(str(tmp_path / "out"), "m", {"cii_none": {"acc,none": 0.4}, "cii_cot": {"acc,none": 0.475}})
    table = _table(_report(tmp_path), "cii", "cii · prompt sensitivity")
    assert table["rows"] == [["m", "2", "40.00 (cii_none)", "47.50 (cii_cot)", "7.50", "-"]]
    assert "--log_samples" in table["caption"]


# cii sample docs: test-1..test-8, dev-1, dev-33, dev-34, dev-35; gold C E B A D E F A F A D B
CII_GOLD = "CEBADEFAFADB"


@pytest.mark.slow
def test_report_of_a_replay_run_shows_position_bias_and_prompt_spread(replay, circular_run_docs, tmp_path):
    from hanyi.results.lmms_output import save_like_cli

    records = [{"task": "cii_none", "doc_id": i, "response": g} for i, g in enumerate(CII_GOLD)]  # all right
    records += [{"task": "cii_cot", "doc_id": i, "response": g if i < 6 else "A"} for i, g in enumerate(CII_GOLD)]
    records += [{"task": "cii_circular", "doc_id": i, "response": "A"} for i in range(circular_run_docs)]
    results = replay(records, ["cii_none", "cii_cot", "cii_circular"])
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay-bias")
    rep = _report(tmp_path)

    spread = _table(rep, "cii", "cii · prompt sensitivity")
    cot = 100 * (6 + sum(g == "A" for g in CII_GOLD[6:])) / 12
    [row] = spread["rows"]
    assert row[:5] == ["replay-bias", "2", f"{cot:.2f} (cii_cot)", "100.00 (cii_none)", f"{100 - cot:.2f}"]
    lo, hi = (float(x) for x in row[5].split("]")[0].strip("[").split(","))
    assert lo <= 100 - cot <= hi and row[5].endswith("(n=12)")
    assert _report(tmp_path)["sections"] == rep["sections"]  # seeded: the same CI every time

    circ = _table(rep, "cii", "cii_circular · answer position bias")
    rows = {r[0]: r[1:] for r in circ["rows"]}
    assert rows["A"] == [f"{100 / 6:.1f}", "100.0"]  # every gold sits at A once in 6 rotations
    assert rows["B"][1] == "0.0" and rows["total variation"][1] == f"{1 - 1 / 6:.3f}"
    none = {r[0]: r[1:] for r in _table(rep, "cii", "cii_none · answer position bias")["rows"]}
    assert none["total variation"][1] == "0.000"


@pytest.fixture(scope="module")
def circular_run_docs(task_manager):
    from lmms_eval.tasks import get_task_dict

    return len(get_task_dict(["cii_circular"], task_manager)["cii_circular"].test_docs())


def test_a_corrupt_samples_file_is_a_note_naming_the_file_not_a_crash(tmp_path):
    _write(str(tmp_path / "out"), "m", {"cii_none": {"acc,none": 0.4}, "cii_cot": {"acc,none": 0.475}})
    for task in ("cii_none", "cii_cot"):
        with open(tmp_path / "out" / f"20250101_000000_samples_{task}.jsonl", "w", encoding="utf-8") as f:
            f.write('{"acc": {"id": "q1", "correct": true, "pred": "A", "answer": "A"}}\n{not json\n')
    rep = _report(tmp_path)
    notes = next(s for s in rep["sections"] if s["benchmark"] == "cii")["notes"]
    assert any("samples_cii_none.jsonl:2: not valid JSON" in n for n in notes)


def test_a_task_with_no_parsed_answer_prints_dashes_not_nan():
    from hanyi.report.bias import bias_table

    b = position_bias([_line(None, ["A"]), _line(None, ["B"])])
    assert b["tv"] is None and b["chi2"] is None and b["unparsed"] == 2
    table, _ = bias_table("t", [("run", b)])
    assert {r[0]: r[2] for r in table.rows}["total variation"] == "-"
    assert "nan" not in str(table.rows)
