"""benchmarks/served_cost.py: the per-doc figure is the marginal one, hook by hook, over the cheapest run per size."""

import pytest


def _run(docs, visual, cpu, rss, start=0.0):
    hooks = {"visual": visual, "prompt": 0.0, "encode": 0.0, "score": 0.0}
    return {"docs": docs, "hooks_s": hooks, "evaluate_cpu_s": cpu, "rss_peak_mb": rss, "rss_start_mb": start}


def test_per_doc_is_the_slope_over_the_cheapest_run_at_each_size(bench_script):
    sc = bench_script("served_cost")
    # 100 docs: 0.02 s and a noisy 0.05 s; 400 docs: 0.08 s; the fixed 0.0 s part drops out: 0.2 ms per doc
    runs = [_run(100, 0.05, 1.0, 600), _run(100, 0.02, 1.0, 500), _run(400, 0.08, 2.5, 503)]
    f = sc.per_doc(runs)
    assert f["visual"] == pytest.approx(0.2)
    assert f["hooks"] == pytest.approx(0.2)
    assert f["client"] == pytest.approx((2.42 - 0.95) / 300 * 1000)  # the rest of the CPU, cheapest per size too
    assert f["rss_kb_per_doc"] == pytest.approx(1024 * 3 / 300)  # lowest peak at each size: 500 -> 503 MB
    assert f["sizes"] == [100, 400]


def test_rss_growth_is_the_evaluations_peak_over_the_rss_it_started_from(bench_script):
    """A run that started 2 MB higher (its imports) is not 2 MB of growth: 10 MB at 100 docs, 13 MB at 400."""
    sc = bench_script("served_cost")
    runs = [_run(100, 0.02, 1.0, 540, start=530), _run(400, 0.08, 2.5, 545, start=532)]
    f = sc.per_doc(runs)
    assert f["rss_kb_per_doc"] == pytest.approx(1024 * 3 / 300)
    assert f["rss_peak_mb"] == 545


def test_every_case_is_paired_with_its_like_for_like_built_in(bench_script):
    """full_scale.py's slope pairs, but CII against ii_bench on CII-Bench's own rows: the same pictures to encode."""
    sc = bench_script("served_cost")
    fs = sc.full_scale()
    assert sc.TARGET == {**{c: fs.SLOPE_TARGET[c] for c in sc.OURS}, "cii": "ii_bench"}
    assert set(sc.TARGET) == set(sc.OURS)
