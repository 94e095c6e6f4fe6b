"""A headline value the run reported as an infinity stays in the report's table, shown as such, with its reason."""

from __future__ import annotations

import math

import pytest

from tests.test_report_honest import choice_samples, report, table, write_run


def _headline(rep, bench):
    return table(rep, bench, "Headline metrics")


@pytest.mark.parametrize("value, cell", [(math.inf, "Infinity"), (-math.inf, "-Infinity")])
def test_an_infinite_headline_row_stays_with_its_reason(tmp_path, value, cell):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5, "accuracy_robust,none": value}},
        {"punrebus_textonly": choice_samples([True, False])},
    )
    head = _headline(report(tmp_path, d), "punrebus")
    assert [r[2] for r in head["rows"] if r[1].startswith("accuracy_robust")] == [cell]
    assert head["caption"].startswith(f"{cell}: the run reported {cell}, so scoring or aggregation failed")


def test_results_file_infinity_is_marked_non_finite():
    from hanyi.results.runs import task_metrics

    metrics = task_metrics({"ctc_score,none": math.inf, "acc,none": math.nan, "acc_robust,none": 0.5})
    assert [(m.nan, m.reported, m.value) for m in metrics.values()] == [
        (True, "Infinity", None),
        (True, "NaN", None),
        (False, "", 0.5),
    ]
