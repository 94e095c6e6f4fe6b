"""What the report says about a run and draws: the installed lmms-eval release in the Runs table,
``n`` = 0 with the reason when no doc was scored, error bars and unclipped labels on the paper-comparison plots, and
the Pun Rebus element scores in the headline table."""

from __future__ import annotations

import json
import os
import struct
import sys
from importlib import metadata

import pytest

from hanyi.report import main as report_main
from hanyi.report.tables import BarPlot
from hanyi.results.layout import category_tables

sys.path.insert(0, os.path.dirname(__file__))
from test_report_comparability import write_run  # noqa: E402


def _report(tmp_path, run: str, *flags: str) -> dict:
    out = tmp_path / "rep"
    assert report_main([run, "--out", str(out), *flags]) == 0
    with open(out / "report.json", encoding="utf-8") as f:
        return json.load(f) | {"md": (out / "report.md").read_text(encoding="utf-8")}


def _table(rep: dict, bench: str, title_start: str) -> dict:
    section = next(s for s in rep["sections"] if s["benchmark"] == bench)
    return next(t for t in section["tables"] if t["title"].startswith(title_start))


def test_runs_table_shows_the_installed_lmms_eval_release_not_the_callers_git_branch(tmp_path):
    # lmms-eval 0.7.3 writes `<git branch>@<commit>` of the directory it ran in (here: main@0123abcd)
    run = write_run(tmp_path / "run", {"cii_none": {"acc,none": 0.6}}, n={"cii_none": 800}, configs={})
    rep = _report(tmp_path, run, "--no-plots")
    # the cell said "the results file says main@0123abcd", as if that were lmms-eval's commit
    expected = f"{metadata.version('lmms-eval')} \\(installed\\) | main@0123abcd |"
    assert f"| {expected}" in rep["md"]  # Markdown syntax escaped in report.md
    assert "results file says" not in rep["md"]
    assert "git branch@commit of the folder the run started in" in rep["md"] and "not lmms-eval's version" in rep["md"]


def test_n_is_zero_with_the_reason_when_no_doc_was_scored(tmp_path):
    run = write_run(
        tmp_path / "run",
        {"unpie_disambiguation_de_homo": {"disamb_acc_chrf,none": "N/A", "image_unresolved,none": 0.0}},
        n={"unpie_disambiguation_de_homo": 4},
        configs={},
    )
    with open(tmp_path / "run" / "20250101_000000_samples_unpie_disambiguation_de_homo.jsonl", "w") as f:
        for i in range(4):  # every doc left out of the mean (e.g. its image unresolved)
            line = {"doc_id": i, "filtered_resps": ["x"], "hanyi_per_doc": {"disamb_acc_chrf": None}}
            f.write(json.dumps(line) + "\n")
    head = _table(_report(tmp_path, run, "--no-plots"), "unpie", "Headline metrics")
    rows = {r[1].split(" ")[0]: r for r in head["rows"]}
    reason = "0 (no doc scored: every per-doc statistic of the 4 docs is empty)"
    assert rows["disamb_acc_chrf"][2] == "-" and rows["disamb_acc_chrf"][-1] == reason
    assert rows["image_unresolved"][-1] == reason  # never the task's doc count (4)


def _png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def test_paper_comparison_plot_has_error_bars_and_does_not_clip_long_labels():
    pytest.importorskip("matplotlib")
    from matplotlib.container import ErrorbarContainer

    from hanyi.report import plots

    long = "pretrained=/models/a-very-long-local-checkpoint-directory-name/with/subfolders (ours) ⚠ n/c"
    plot = BarPlot(
        "p", "t", ["Human", long, "Random"], [("Acc", [81.0, 60.0, 14.3], False)], "Acc", "ranking",
        [False, True, False], [None, (56.6, 63.4), None],
    )  # fmt: skip
    fig = plots._ranking(plot)
    bars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1  # our bar only; the paper's rows have no interval
    width, _ = _png_size(plots.render_png(plot))
    # the figure is 7.5 in x 90 dpi = 675 px; a tight bounding box grows to hold the whole label
    assert width > 7.5 * plots.DPI


def test_punrebus_element_scores_are_headline_metrics_not_an_element_family():
    names = ["element_abs_rule_lemma", "element_abs_capped_rule_lemma", "element_sim", "parse_rate", "answer_rate"]
    head, families = category_tables(names)
    assert head == names and families == {}


def test_punrebus_element_scores_are_in_the_reports_headline_table(tmp_path):
    metrics = {"element_abs_rule_lemma,none": 0.25, "element_abs_capped_rule_lemma,none": 0.2, "element_sim,none": 0.5}
    run = write_run(tmp_path / "run", {"punrebus_elements": metrics}, n={"punrebus_elements": 1011}, configs={})
    rep = _report(tmp_path, run, "--no-plots")
    head = _table(rep, "punrebus", "Headline metrics")
    assert {r[1].split(" ")[0] for r in head["rows"]} == {m.split(",")[0] for m in metrics}
    titles = [t["title"] for s in rep["sections"] for t in s["tables"]]
    assert not [t for t in titles if "by element" in t]


def test_a_zero_bar_is_drawn_and_a_missing_one_is_labelled():
    """a 0.0 bar had no height, so it looked like a missing one."""
    pytest.importorskip("matplotlib")
    from hanyi.report import plots

    grouped = BarPlot(
        "b", "t", list("ABC"), [("gold", [50.0, 50.0, 0.0], False), ("m answered", [100.0, 0.0, None], True)]
    )
    ax = plots._grouped(grouped).axes[0]
    stubs = [p for p in ax.patches if p.get_gid() == "zero-stub"]
    assert len(stubs) == 2 and all(p.get_height() > 0 for p in stubs)
    assert sorted(round(p.get_x() + p.get_width() / 2, 2) for p in stubs) == [1.2, 1.8]  # answered B, gold C
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("0") == 2 and texts.count("n/a") == 1  # answered C has no value
    ranking = BarPlot("r", "t", ["Human", "m (ours)"], [("Acc", [81.0, 0.0], False)], "Acc", "ranking", [False, True])
    ax = plots._ranking(ranking).axes[0]
    (stub,) = [p for p in ax.patches if p.get_gid() == "zero-stub"]
    assert stub.get_width() > 0 and stub.get_facecolor()[:3] != (0.651, 0.675, 0.686)  # ours: in our colour


def test_one_letter_position_labels_stay_upright_and_long_labels_slant():
    """the one-letter answer-position labels (A-G) were rotated."""
    pytest.importorskip("matplotlib")
    from hanyi.report import plots

    letters = BarPlot("p", "t", list("ABCDEFG"), [("gold", [1.0] * 7, False), ("m answered", [1.0] * 7, True)])
    assert [t.get_rotation() for t in plots._grouped(letters).axes[0].get_xticklabels()] == [0.0] * 7
    long = BarPlot("c", "t", [f"prompt configuration {i}" for i in range(8)], [("acc", [1.0] * 8, True)])
    assert {t.get_rotation() for t in plots._grouped(long).axes[0].get_xticklabels()} == {30.0}


def test_label_names_each_run_in_order_and_refuses_a_count_that_does_not_fit(tmp_path, capsys):
    """`hanyi report` had no --label, so replay runs were named after their replay files."""
    a = write_run(tmp_path / "a", {"cii_none": {"acc,none": 0.6}}, n={"cii_none": 800}, configs={})
    b = write_run(tmp_path / "b", {"cii_none": {"acc,none": 0.5}}, n={"cii_none": 800}, configs={})
    out = tmp_path / "rep"
    assert report_main([a, b, "--out", str(out), "--no-plots", "--label", "7B", "--label", "72B"]) == 0
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    head = next(t for s in rep["sections"] if s["benchmark"] == "cii" for t in s["tables"] if t["kind"] == "headline")
    assert head["header"] == ["task", "metric", "7B", "72B", "n"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# hanyi report: 7B, 72B\n") and "\n| 7B | replay |" in md and "\n| 72B | replay |" in md
    assert report_main([a, b, "--out", str(tmp_path / "r2"), "--no-plots", "--label", "7B"]) == 2
    err = capsys.readouterr().err
    assert "1 --label for 2 run(s)" in err and "one per run" in err
    assert report_main([a, b, "--out", str(tmp_path / "r3"), "--no-plots", "--label", "x", "--label", "x"]) == 2
    assert "distinct" in capsys.readouterr().err
