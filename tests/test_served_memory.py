"""benchmarks/served_memory.py: the per-doc memory figure is a slope over three sizes and rounds, with its spread,
and a verdict is called resolved only where the distance to the limit exceeds the noise."""

import math

import pytest


@pytest.fixture(scope="module")
def sm(bench_script):
    return bench_script("served_memory")


def _run(docs, rnd, start, peak, scored=None, imports=None):
    return {"docs": docs, "round": rnd, "start_mb": start, "peak_mb": peak,
            "scored_mb": peak if scored is None else scored, "imports_peak_mb": imports or start}  # fmt: skip


def test_slope_and_standard_error(sm):
    assert sm.slope_se([(100, 1.0), (400, 4.0), (1600, 16.0)]) == (0.01, 0.0)
    slope, se = sm.slope_se([(100, 1.0), (400, 5.0), (1600, 16.0)])
    assert slope == pytest.approx(0.0097619, abs=1e-6) and se > 0
    assert math.isnan(sm.slope_se([(100, 1.0), (400, 4.0)])[1])  # two points: no spread


def test_rss_figures_read_the_evaluations_peak_over_its_start_per_round(sm):
    # round 0: 1 KB per doc over the start; round 1 started 3 MB higher (imports), the same growth, plus 0.1 MB noise
    runs = [_run(d, 0, 500, 500 + 10 + d / 1024) for d in (100, 400, 1600)]
    runs += [_run(d, 1, 503, 503 + 10 + d / 1024 + (0.1 if d == 400 else 0)) for d in (100, 400, 1600)]
    f = sm.rss_figures(runs)
    assert f["kb_per_doc"] == pytest.approx(1.0, abs=0.02)
    assert len(f["rounds"]) == 2 and all(r == pytest.approx(1.0, abs=0.05) for r in f["rounds"])
    assert 0 < f["se"] < 0.1
    assert f["sizes"] == [100, 400, 1600]


def test_verdict_is_resolved_only_beyond_two_standard_errors(sm):
    builtin = {"kb_per_doc": 4.0, "se": 0.1}  # limit 1.5 x 4 + 1 = 7
    assert sm.verdict({"kb_per_doc": 5.0, "se": 0.2}, builtin) == ("PASS", 7.0, "resolved")
    assert sm.verdict({"kb_per_doc": 9.0, "se": 0.2}, builtin) == ("FAIL", 7.0, "resolved")
    assert sm.verdict({"kb_per_doc": 7.2, "se": 0.5}, builtin)[::2] == ("FAIL", "not resolved")
    assert "no spread" in sm.verdict({"kb_per_doc": 5.0, "se": math.nan}, builtin)[2]


def test_baseline_labels_run_the_same_case(sm):
    assert sm.base("cii@base") == "cii" and sm.base("cii") == "cii"
    assert {b for _, b in sm.PAIRS} == {"mmstar_jpeg", "ii_bench", "chartqa"}
