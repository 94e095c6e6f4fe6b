"""A 95 % interval for every headline number: decomposed aggregations, the bootstrap, the in-run
standard errors and per-doc statistics, and the report's intervals from them.

Oracles: scipy (``binomtest(...).proportion_ci(method="exact")``), a plain numpy bootstrap written here, the
aggregations as they were before the decomposition (copied below), and a coverage simulation.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random

import numpy as np
import pytest

from hanyi.metrics import resample
from hanyi.metrics.elements import mean_or_zero, official_mean
from hanyi.metrics.ranking import ranking_metrics

# ---- the bootstrap ----------------------------------------------------------------------------------------------------


def _ratio(stats):
    return float(stats[:, 0].sum() / stats[:, 1].sum())


def test_bootstrap_is_seeded_same_input_same_interval():
    arr = resample.as_array([(random.Random(i).random(), 1 + i % 3) for i in range(40)])
    a, b = resample.bootstrap(_ratio, arr), resample.bootstrap(_ratio, arr)
    assert a == b and a["ci_low"] < a["value"] < a["ci_high"]
    other = resample.bootstrap(_ratio, arr, seed=resample.SEED + 1)
    assert other["ci_low"] != a["ci_low"]


def test_bootstrap_equals_a_plain_numpy_percentile_bootstrap():
    arr = resample.as_array([(math.sin(i) ** 2, 1 + i % 4) for i in range(30)])
    out = resample.bootstrap(_ratio, arr, iters=500, seed=7)
    rng = np.random.default_rng(7)
    reps = []
    for _ in range(500):
        rows = arr[rng.integers(0, len(arr), size=len(arr))]
        reps.append(rows[:, 0].sum() / rows[:, 1].sum())
    assert out["ci_low"] == pytest.approx(np.percentile(reps, 2.5), abs=1e-12)
    assert out["ci_high"] == pytest.approx(np.percentile(reps, 97.5), abs=1e-12)
    assert out["stderr"] == pytest.approx(np.std(reps, ddof=1), abs=1e-12)
    assert out["method"].startswith("bootstrap") and out["n"] == 30


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    covered = 0
    runs = 200
    for i in range(runs):
        sample = rng.exponential(1.0, size=60)  # true mean 1, skewed
        out = resample.bootstrap(resample.sum_mean, sample, iters=400, seed=i)
        covered += out["ci_low"] <= 1.0 <= out["ci_high"]
    assert 0.86 <= covered / runs <= 0.99  # percentile bootstrap on a skewed mean: slightly below nominal


@pytest.mark.parametrize("combine", [resample.mean, resample.sum_mean, resample.percent_share])
@pytest.mark.parametrize("k, n", [(0, 7), (7, 7), (13, 80), (40, 80)])
def test_a_share_of_0_1_statistics_gets_the_exact_interval_scipy_computes(combine, k, n):
    scipy_stats = pytest.importorskip("scipy.stats")
    out = resample.bootstrap(combine, resample.as_array([1.0] * k + [0.0] * (n - k)))
    expected = scipy_stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert out["method"] == "exact (Clopper-Pearson)"
    assert out["ci_low"] == pytest.approx(expected.low, abs=1e-9)
    assert out["ci_high"] == pytest.approx(expected.high, abs=1e-9)


def test_a_share_over_scored_docs_is_exact_given_the_scored_ones():
    scipy_stats = pytest.importorskip("scipy.stats")
    stats = resample.as_array([1.0] * 6 + [0.0] * 9 + [math.nan] * 5)  # 6 of 15 scored docs
    out = resample.bootstrap(resample.share_of_finite, stats)
    expected = scipy_stats.binomtest(6, 15).proportion_ci(0.95, method="exact")
    assert out["value"] == 6 / 15 and out["ci_low"] == pytest.approx(expected.low, abs=1e-9)


def test_stratified_bootstrap_resamples_within_parts():
    from hanyi.metrics import intervals  # the one stratified (cluster) bootstrap

    a = resample.as_array([0.0, 1.0] * 10)
    b = resample.as_array([0.2, 0.4, 0.6] * 4)
    parts = [(0.5, resample.sum_mean, a, None, None), (0.5, resample.sum_mean, b, None, None)]
    out = intervals.cluster_bootstrap(parts, iters=300, seed=3)
    rng = np.random.default_rng(3)
    reps = [(a[rng.integers(0, 20, size=20)].mean() + b[rng.integers(0, 12, size=12)].mean()) / 2 for _ in range(300)]
    assert out["value"] == pytest.approx((0.5 + 0.4) / 2)
    assert out["ci_low"] == pytest.approx(np.percentile(reps, 2.5), abs=1e-9)
    assert out["ci_high"] == pytest.approx(np.percentile(reps, 97.5), abs=1e-9)


# ---- decompositions keep the values bit for bit -----------------------------------------------------------------------


def _old_cvlue_mean(items):
    # CVLUE 0.4: an exactly rounded sum, so the mean does not depend on the order of the items
    return math.fsum(i["v"] for i in items) / len(items) if items else 0.0


def _old_cii(items, key):
    return (100.0 * sum(bool(it[key]) for it in items) / len(items) if items else math.nan) / 100


def _old_over_parsed(items):
    parsed = [it for it in items if it["parsed"]]
    return sum(bool(it["correct"]) for it in parsed) / len(parsed) if parsed else 0.0


def _old_over_all(items):
    return sum(bool(it["correct"]) for it in items) / len(items) if items else 0.0


def _items(seed, n):
    r = random.Random(seed)
    return [
        {
            "v": r.choice([r.random(), r.random() * 10, True, False, 0, 1]),
            "correct": r.random() < 0.4,
            "correct_robust": r.random() < 0.5,
            "miss": r.random() < 0.2,
            "parsed": r.random() < 0.8,
            "instance_score": r.random(),
        }
        for _ in range(n)
    ]


@pytest.mark.parametrize("seed, n", [(0, 0), (1, 1), (2, 7), (3, 101), (4, 1000)])
def test_decomposed_aggregations_are_bit_identical_to_the_old_ones(seed, n):
    from hanyi.metrics import cii_aggregations as cii
    from hanyi.metrics import cvlue_aggregations as cvlue
    from hanyi.tasks.punrebus import aggregate as pun

    items = _items(seed, n)
    for it in items:
        if not it["parsed"]:
            it["instance_score"] = None
    assert cvlue.cvlue_mean(items) == _old_cvlue_mean(items)
    if n:
        assert cii.cii_acc(items) == _old_cii(items, "correct")
        assert cii.cii_acc_robust(items) == _old_cii(items, "correct_robust")
        assert cii.cii_miss_rate(items) == _old_cii(items, "miss")
    else:
        assert math.isnan(cii.cii_miss_rate(items))
    assert pun.punrebus_accuracy_over_parsed(items) == _old_over_parsed(items)
    assert pun.punrebus_accuracy_over_all(items) == _old_over_all(items)
    old = mean_or_zero([it["instance_score"] for it in items if it["parsed"]])
    assert pun.punrebus_mean_over_parsed(items) == old
    for fn in (cvlue.cvlue_mean, cii.cii_miss_rate, pun.punrebus_accuracy_over_parsed):
        assert resample.is_decomposed(fn) and len(fn.per_doc(items)) == n


def test_cvlue_itr_decompositions_are_bit_identical(monkeypatch):
    from hanyi.metrics import cvlue_aggregations as cvlue

    r = random.Random(5)
    queries = [
        {"rank": r.choice([None, 1, 2, 3, 6, 11]), "in_shortlist": r.random() < 0.7, "category": "c", "culture_group": "g"}
        for _ in range(37)
    ]  # fmt: skip
    monkeypatch.setattr(cvlue, "itr_queries", lambda items: queries)
    old = ranking_metrics([q["rank"] for q in queries], (1, 5, 10))
    assert (cvlue.cvlue_itr_r1([]), cvlue.cvlue_itr_r5([]), cvlue.cvlue_itr_r10([])) == (
        old["r1"],
        old["r5"],
        old["r10"],
    )
    assert cvlue.cvlue_itr_stage1_ceiling([]) == sum(q["in_shortlist"] for q in queries) / len(queries)
    pairs = [{"query": f"q{r.randrange(9)}", "score": r.choice([None, 0.5, 1.0])} for _ in range(50)]
    assert cvlue.cvlue_itr_parse_failure_rate(pairs) == sum(p["score"] is None for p in pairs) / 50
    assert len(cvlue.cvlue_itr_parse_failure_rate.per_doc(pairs)) == len({p["query"] for p in pairs})


def test_element_sim_averages_the_logged_per_doc_scores_and_encodes_nothing(monkeypatch):
    """S_Sim is scored per doc in ``process_results`` (Pun Rebus elements 1.4): the aggregation is the official
    scorer's float32 mean over the parsed docs of those scores, in doc order (elements 1.7), with no Sentence-BERT
    call, and light (the report recomputes it)."""
    from hanyi.metrics import elements as el
    from hanyi.tasks.punrebus import aggregate as pun

    monkeypatch.setattr(el, "element_sim_scores", lambda *a, **k: pytest.fail("the aggregation encoded"))
    r = random.Random(9)
    items = []
    for _ in range(60):
        parsed = r.random() < 0.7
        items.append({"gold": ["a"], "pred": ["b"], "parsed": parsed, "instance_score": r.random() if parsed else None})
    official = el.official_mean([it["instance_score"] for it in items if it["parsed"]])
    assert pun.punrebus_element_sim(items) == official and pun.punrebus_element_sim.light
    stats = np.asarray(pun.punrebus_element_sim.per_doc(items), dtype=float)
    assert int(np.isfinite(stats).sum()) == sum(it["parsed"] for it in items)
    assert pun.punrebus_element_sim([]) == 0.0


# ---- in-run hook --------------------------------------------------------------------------------------------------------


class _FakeTask:
    def __init__(self, table):
        self.table = table

    def aggregation(self):
        return self.table


class _FakeOutput:
    """The parts of lmms-eval's TaskOutput the hook reads."""

    def __init__(self, table, items, samples):
        self.task = _FakeTask(table)
        self.task_name = "cii_none"
        self.sample_metrics = {(m, "none"): items for m in table}
        self.logged_samples = samples
        self.agg_metrics = {}

    def calculate_aggregate_metric(self, bootstrap_iters=100000):
        for (metric, filt), items in self.sample_metrics.items():
            self.agg_metrics[f"{metric},{filt}"] = self.task.table[metric](items)
            self.agg_metrics[f"{metric}_stderr,{filt}"] = "N/A"


def _patched(monkeypatch):
    from hanyi.host import ownership, run_intervals

    cls = type("TaskOutput", (_FakeOutput,), {})
    monkeypatch.setattr(ownership, "is_hanyi_task", lambda task: True)
    assert run_intervals.patch_task_output(cls) and not run_intervals.patch_task_output(cls)
    return cls


@pytest.fixture
def eval_extras():
    """``hanyi eval``'s run-time extras installed for one test (a plain run has none), lmms-eval restored after."""
    from hanyi.host import eval_extras

    with eval_extras():
        yield


def test_hook_writes_stderr_and_per_doc_stats(monkeypatch):
    from hanyi.metrics import cii_aggregations as cii

    cls = _patched(monkeypatch)
    items = [{"correct": i % 3 == 0, "correct_robust": True, "miss": i % 5 == 0} for i in range(30)]
    samples = [{"doc_id": i, "acc": it} for i, it in enumerate(items)]
    out = cls({"acc": cii.cii_acc, "miss_rate": cii.cii_miss_rate}, items, samples)
    out.calculate_aggregate_metric(bootstrap_iters=100)
    p = 10 / 30
    assert out.agg_metrics["acc,none"] == _old_cii(items, "correct")
    assert out.agg_metrics["acc_stderr,none"] == pytest.approx(math.sqrt(p * (1 - p) / 29))  # lmms-eval's mean_stderr
    assert [s["hanyi_per_doc"]["acc"] for s in samples] == [float(it["correct"]) for it in items]
    assert [s["hanyi_per_doc"]["miss_rate"] for s in samples] == [float(it["miss"]) for it in items]
    json.dumps(samples)  # plain JSON


def test_hook_leaves_na_without_bootstrap_and_never_breaks_a_run(monkeypatch, caplog):
    from hanyi.metrics.resample import decomposed, sum_mean

    cls = _patched(monkeypatch)

    @decomposed(sum_mean)
    def good(items):
        return [float(x) for x in items]

    @decomposed(sum_mean)
    def bad(items):
        return [float(x) for x in items]

    out = cls({"good": good}, [0.5, 0.25, 1.0], [{"doc_id": i} for i in range(3)])
    out.calculate_aggregate_metric(bootstrap_iters=0)
    assert out.agg_metrics["good_stderr,none"] == "N/A" and out.logged_samples[0]["hanyi_per_doc"]["good"] == 0.5

    bad.combine = lambda stats: 1 / 0  # fails inside the hook only (the aggregation itself ran)
    bad.per_doc = lambda items: (_ for _ in ()).throw(RuntimeError("boom"))
    out = cls({"bad": lambda items: 0.5}, [1, 2], [{"doc_id": 0}, {"doc_id": 1}])
    out.task.table["bad"].per_doc, out.task.table["bad"].combine = bad.per_doc, bad.combine
    with caplog.at_level(logging.WARNING, logger="hanyi.host.run_intervals"):
        out.calculate_aggregate_metric(bootstrap_iters=100)
    assert out.agg_metrics["bad_stderr,none"] == "N/A" and out.agg_metrics["bad,none"] == 0.5
    assert "cii_none" in caplog.text and "bad" in caplog.text


@pytest.mark.slow
def test_a_real_lmms_eval_run_gets_stderr_and_logs_per_doc_stats(replay, eval_extras):
    responses = ["A", "答案：B", "", "C", "The answer is D", "E", "F", "B", "答案是A", "G", "C", "D"]
    records = [{"task": "cii_none", "doc_id": i, "response": r} for i, r in enumerate(responses)]
    results = replay(records, ["cii_none"], bootstrap_iters=50)
    res, samples = results["results"]["cii_none"], results["samples"]["cii_none"]
    for metric in ("acc", "acc_robust"):  # miss_rate: hanyi report, from the sample log (CII 2.1)
        stats = [s["hanyi_per_doc"][metric] for s in samples]
        assert len(stats) == len(samples) > 1 and set(stats) <= {0.0, 1.0}
        p = sum(stats) / len(stats)
        assert res[f"{metric},none"] == pytest.approx(p, abs=1e-12)
        assert res[f"{metric}_stderr,none"] == pytest.approx(math.sqrt(p * (1 - p) / (len(stats) - 1)), abs=1e-12)
    # Table 1's columns are decomposed too (their units: the docs carrying the label): a standard error from 2 docs on
    for name, label in (("acc_domain_life", "生活"), ("acc_domain_art", "艺术")):
        units = sum(s["acc"]["domain"] == label for s in samples)
        assert isinstance(res[f"{name}_stderr,none"], float) if units > 1 else res[f"{name}_stderr,none"] == "N/A"


# ---- report ---------------------------------------------------------------------------------------------------------


def _report(tmp_path, results, samples, groups=None):
    from tests.test_report_honest import report, section, write_run

    d = write_run(tmp_path / "run", "pretrained=m", results, samples=samples)
    if groups:
        path = next((tmp_path / "run").glob("*_results.json"))
        data = json.loads(path.read_text(encoding="utf-8"))
        data["group_subtasks"].update(groups)
        path.write_text(json.dumps(data), encoding="utf-8")
    rep = report(tmp_path, d)
    return {(i["task"], i["metric"]): i for s in rep["sections"] for i in s["intervals"]}, rep, section


def test_report_uses_logged_per_doc_stats_of_element_sim(tmp_path):
    r = random.Random(3)
    stats = [r.random() if i % 4 else None for i in range(40)]  # None: unparsed, out of the mean
    scored = [s for s in stats if s is not None]
    value = official_mean(scored)  # S̄_Sim: the official float32 mean (Pun Rebus elements 1.7)
    lines = [{"doc_id": i, "element_sim": {"parsed": s is not None}, "hanyi_per_doc": {"element_sim": s}}
             for i, s in enumerate(stats)]  # fmt: skip
    by, _, _ = _report(
        tmp_path, {"punrebus_elements": {"element_sim,none": value, "element_sim_custom_model,none": 0.5}},
        {"punrebus_elements": [{**ln, "element_sim_custom_model": {}} for ln in lines]},
    )  # fmt: skip
    ci = by[("punrebus_elements", "element_sim")]
    arr = np.array([math.nan if s is None else s for s in stats])
    rng = np.random.default_rng(resample.SEED)
    reps = []
    for _ in range(resample.ITERS):
        x = arr[rng.integers(0, len(arr), size=len(arr))]
        reps.append(official_mean(x[np.isfinite(x)].tolist()))
    assert ci["n"] == len(scored) and ci["method"].startswith("bootstrap over units")
    # a float32 sum in the resample's order (as the official scorer sums): the order moves its last float32 bits
    assert ci["ci_low"] == pytest.approx(np.percentile(reps, 2.5), abs=1e-6)
    assert ci["ci_high"] == pytest.approx(np.percentile(reps, 97.5), abs=1e-6)
    other = by[("punrebus_elements", "element_sim_custom_model")]  # no statistics logged, items without scores
    assert other["ci_low"] is None and "do not fit" in other["why"]


def test_report_recomputes_light_aggregations_from_logged_items(tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    right = [i % 4 == 0 for i in range(24)]  # 6 of 24
    cii_lines = [{"doc_id": i, "acc_robust": {"correct": False, "correct_robust": m, "miss": True}}
                 for i, m in enumerate(right)]  # fmt: skip
    v = [0.25 * (i % 5) for i in range(15)]
    cvlue_lines = [{"doc_id": i, "miou": {"v": x, "category": "c", "culture_group": "coco"}} for i, x in enumerate(v)]
    by, _, _ = _report(
        tmp_path,
        {"cii_none": {"acc_robust,none": 0.25}, "cvlue_vg": {"miou,none": sum(v) / len(v)}},
        {"cii_none": cii_lines, "cvlue_vg": cvlue_lines},
    )
    ci = by[("cii_none", "acc_robust")]
    expected = scipy_stats.binomtest(6, 24).proportion_ci(0.95, method="exact")
    assert ci["method"] == "exact (Clopper-Pearson)" and ci["n"] == 24
    assert ci["ci_low"] == pytest.approx(expected.low, abs=1e-9)
    miou = by[("cvlue_vg", "miou")]
    assert miou["method"].startswith("bootstrap") and miou["ci_low"] < sum(v) / len(v) < miou["ci_high"]


def test_report_gives_no_interval_when_the_stats_do_not_reproduce_the_value(tmp_path):
    lines = [{"doc_id": i, "acc_robust": {"correct_robust": i % 2 == 0}} for i in range(10)]
    by, _, _ = _report(tmp_path, {"cii_none": {"acc_robust,none": 0.7}}, {"cii_none": lines})
    ci = by[("cii_none", "acc_robust")]
    assert ci["ci_low"] is None and "do not reproduce" in ci["why"]


def test_a_group_of_unequal_subtasks_gets_a_stratified_interval(tmp_path):
    a = [i % 3 == 0 for i in range(30)]  # 10 / 30
    b = [i % 2 == 0 for i in range(8)]  # 4 / 8
    value = (10 / 30 + 4 / 8) / 2  # the group's value: the mean of its subtasks' values, not the pooled 14 / 38
    lines = {t: [{"doc_id": i, "acc": {"correct": c}} for i, c in enumerate(xs)] for t, xs in
             (("cii_none", a), ("cii_textonly", b))}  # fmt: skip
    by, _, _ = _report(
        tmp_path,
        {"cii": {"acc,none": value}, "cii_none": {"acc,none": 10 / 30}, "cii_textonly": {"acc,none": 4 / 8}},
        lines,
        groups={"cii": ["cii_none", "cii_textonly"]},
    )
    ci = by[("cii", "acc")]
    assert ci["method"].startswith("stratified") and ci["n"] == 38
    xa, xb = np.array(a, dtype=float), np.array(b, dtype=float)
    rng = np.random.default_rng(resample.SEED)
    reps = [
        (xa[rng.integers(0, 30, size=30)].mean() + xb[rng.integers(0, 8, size=8)].mean()) / 2
        for _ in range(resample.ITERS)
    ]
    assert ci["ci_low"] == pytest.approx(np.percentile(reps, 2.5), abs=1e-9)
    assert ci["ci_high"] == pytest.approx(np.percentile(reps, 97.5), abs=1e-9)


def test_no_interval_when_no_doc_was_scored(tmp_path):
    from hanyi.results.decomposed import NONE_SCORED

    lines = [{"doc_id": i, "element_abs": {"parsed": False, "instance_score": None}} for i in range(5)]
    by, _, _ = _report(tmp_path, {"punrebus_elements": {"element_abs,none": 0.0}}, {"punrebus_elements": lines})
    assert by[("punrebus_elements", "element_abs")]["ci_low"] is None
    assert by[("punrebus_elements", "element_abs")]["why"] == NONE_SCORED


def test_the_hook_installs_no_interval_patch_but_hanyi_eval_does(eval_extras):
    """A plain run (start-up hook on or off) leaves lmms-eval's aggregation alone; ``hanyi eval`` adds the interval
    hook outside the doc-order one."""
    import subprocess
    import sys

    code = (
        "import lmms_eval.tasks; from lmms_eval.evaluator_utils import TaskOutput; "
        "print(TaskOutput.calculate_aggregate_metric.__module__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "HANYI_NO_AUTOHOOK"}
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert plain.stdout.strip() == "lmms_eval.evaluator_utils"
    from lmms_eval.evaluator_utils import TaskOutput

    fn = TaskOutput.calculate_aggregate_metric
    assert getattr(fn, "_hanyi_intervals", False)
    assert fn.__wrapped__.__module__ == "lmms_eval.evaluator_utils"  # one wrapper: no doc-order patch any more


def test_per_doc_stats_land_on_their_own_docs_under_two_ranks(monkeypatch):
    from hanyi.host import ownership, run_intervals
    from hanyi.metrics.resample import decomposed, sum_mean

    @decomposed(sum_mean)
    def agg(items):
        return [float(x) for x in items]

    cls = type("TaskOutput", (_FakeOutput,), {})
    monkeypatch.setattr(ownership, "is_hanyi_task", lambda task: True)
    run_intervals.patch_task_output(cls)
    monkeypatch.setenv("WORLD_SIZE", "2")
    # rank 0 scored docs 0, 2, 4; rank 1 docs 1, 3: gathered rank by rank; doc d scores d / 10
    out = cls({"m": agg}, [0.0, 0.2, 0.4, 0.1, 0.3], [{"doc_id": d} for d in (0, 2, 4, 1, 3)])
    out.calculate_aggregate_metric(bootstrap_iters=10)
    # items and sample-log lines come in the same (rank-major) order: each statistic lands on its own doc
    assert sorted((s["doc_id"], s["hanyi_per_doc"]["m"]) for s in out.logged_samples) == [(d, d / 10) for d in range(5)]


@pytest.mark.parametrize("k, n", [(13000, 26892), (1, 26892), (26890, 26892)])
def test_clopper_pearson_at_full_benchmark_size_matches_scipy(k, n):
    """CVLUE-size counts: the vectorised binomial tail keeps the exact interval (and stays fast)."""
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    low, high = resample.clopper_pearson(k, n)
    assert low == pytest.approx(ci.low, abs=1e-9) and high == pytest.approx(ci.high, abs=1e-9)


def test_standard_error_is_lmms_evals_closed_form_for_means_and_a_bootstrap_otherwise():
    x = resample.as_array([0.1, 0.5, 0.25, 0.9, float("nan"), 0.4])
    kept = x[~np.isnan(x)]
    assert resample.standard_error(resample.nan_mean, x) == pytest.approx(kept.std(ddof=1) / math.sqrt(5), abs=1e-15)
    bits = resample.as_array([1.0, 0.0, 1.0, 1.0])
    assert resample.standard_error(resample.sum_mean, bits) == pytest.approx(math.sqrt(0.75 * 0.25 / 3), abs=1e-15)
    arr = resample.as_array([(math.sin(i) ** 2, 1 + i % 4) for i in range(30)])
    assert resample.standard_error(_ratio, arr) == resample.bootstrap(_ratio, arr)["stderr"]


def test_report_gives_no_interval_but_no_crash_when_logged_items_do_not_fit_the_aggregation():
    """A sample log whose items lack the fields a light aggregation reads (an older or foreign log) costs the interval
    with its reason, never the report."""
    from types import SimpleNamespace

    from hanyi.results.decomposed import unit_stats

    run = SimpleNamespace(
        tasks={"punrebus_matching": SimpleNamespace(samples=[{"doc_id": 0, "accuracy": {"pred": "A", "score": 1.0}}])}
    )
    why = unit_stats(run, "punrebus_matching", "accuracy,none")
    assert isinstance(why, str) and "do not fit" in why and "KeyError" in why


def _real_output(table, items):
    """A real lmms-eval ``TaskOutput`` of a hanyi task holding ``items`` for every metric of ``table``."""
    from lmms_eval.evaluator_utils import TaskOutput

    out = object.__new__(TaskOutput)
    out.task, out.task_name, out.logged_samples = _FakeTask(table), "cii_none", []
    out.sample_metrics = {(m, "none"): list(items) for m in table}
    out.agg_metrics = {}
    return out


def test_hanyi_tasks_get_lmms_evals_standard_errors_without_its_per_metric_imports(monkeypatch, eval_extras):
    """lmms-eval's ``stderr_for_metric`` retries two failing optional imports for every metric; for a
    hanyi task the hook writes the same standard errors without calling it."""
    import lmms_eval.evaluator_utils as evu
    import lmms_eval.tasks  # noqa: F401  (the start-up hook patches on this import)
    from lmms_eval.api import metrics
    from lmms_eval.evaluator_utils import TaskOutput

    from hanyi.host import ownership
    from hanyi.metrics.resample import decomposed, sum_mean

    @decomposed(sum_mean)
    def dec(items):
        return [float(x) for x in items]

    def plain(items):
        return max(items)

    table = {"m_mean": metrics.mean, "m_plain": plain, "m_dec": dec}
    items = [0.0, 1.0, 1.0, 0.5, 0.25]
    monkeypatch.setattr(ownership, "is_hanyi_task", lambda task: True)
    lmms_eval_way = _real_output(table, items)
    original = TaskOutput.calculate_aggregate_metric.__wrapped__  # under the interval hook
    original(lmms_eval_way, bootstrap_iters=100)
    assert lmms_eval_way.agg_metrics["m_plain_stderr,none"] == "N/A"

    calls = []
    real = evu.stderr_for_metric
    monkeypatch.setattr(evu, "stderr_for_metric", lambda *a, **k: calls.append(a or k) or real(*a, **k))
    ours = _real_output(table, items)
    ours.calculate_aggregate_metric(bootstrap_iters=100)
    assert calls and all(c == {"metric": c["metric"], "bootstrap_iters": 0} for c in calls)  # returns before importing
    expected = dict(lmms_eval_way.agg_metrics)
    expected["m_dec_stderr,none"] = pytest.approx(math.sqrt(np.var(items, ddof=1) / len(items)))  # ours, not N/A
    assert ours.agg_metrics == expected
    assert ours.agg_metrics["m_mean_stderr,none"] == metrics.mean_stderr(items)

    one = _real_output(table, [1.0])  # one item: N/A, as lmms-eval writes it
    one.calculate_aggregate_metric(bootstrap_iters=100)
    assert one.agg_metrics["m_mean_stderr,none"] == "N/A"
    off = _real_output(table, items)  # 0 turns standard errors off, as in lmms-eval
    off.calculate_aggregate_metric(bootstrap_iters=0)
    assert {k: v for k, v in off.agg_metrics.items() if "_stderr" in k} == dict.fromkeys(
        ["m_mean_stderr,none", "m_plain_stderr,none", "m_dec_stderr,none"], "N/A"
    )
    with pytest.raises(ValueError):  # not an integer: lmms-eval's own error
        _real_output(table, items).calculate_aggregate_metric(bootstrap_iters="many")


def test_lmms_eval_stderr_answers_as_stderr_for_metric():
    from lmms_eval.api import metrics

    from hanyi.host.run_intervals import lmms_eval_stderr
    from hanyi.metrics import cii_aggregations as cii

    for fn in (metrics.mean, metrics.acc_all, cii.cii_acc, cii.cii_acc_domain_life, metrics.median, metrics.bleu):
        theirs, ours = metrics.stderr_for_metric(fn, 100), lmms_eval_stderr(fn, "m", 100)
        assert (theirs is None) == (ours is None), fn
        if fn in (metrics.mean, metrics.acc_all):
            assert ours is theirs


def test_upstream_patch_0008_imports_the_optional_aggregations_once(tmp_path, monkeypatch):
    """docs/upstream/0008 applies to the installed lmms-eval's metrics.py; patched, stderr_for_metric answers as
    before and tries its optional task imports once per process, not once per metric."""
    import builtins
    import importlib.util
    import os
    import shutil
    import subprocess

    import lmms_eval.api.registry as registry
    from lmms_eval.api import metrics

    work = tmp_path / "lmms_eval" / "api"
    work.mkdir(parents=True)
    shutil.copy(metrics.__file__, work / "metrics.py")
    patch_file = os.path.join(os.path.dirname(__file__), "..", "docs", "upstream")
    patch_file = os.path.join(patch_file, "0008-try-optional-stderr-imports-once.patch")
    subprocess.run(["patch", "-p1", "-s", "-i", os.path.abspath(patch_file)], cwd=tmp_path, check=True)
    for table in (
        "AGGREGATION_REGISTRY",
        "METRIC_REGISTRY",
        "METRIC_AGGREGATION_REGISTRY",
        "HIGHER_IS_BETTER_REGISTRY",
    ):
        if hasattr(registry, table):
            monkeypatch.setattr(registry, table, {})  # the copy registers its functions again
    spec = importlib.util.spec_from_file_location("patched_lmms_eval_metrics", work / "metrics.py")
    patched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patched)

    tries = []
    real_import = builtins.__import__

    def counting(name, *args, **kwargs):
        if name.endswith(("amber_g.utils", "coco_cap_chair.utils")):
            tries.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", counting)
    assert patched.stderr_for_metric(patched.mean, 100) is patched.mean_stderr
    assert patched.stderr_for_metric(lambda items: 0.0, 100) is None
    assert callable(patched.stderr_for_metric(patched.median, 100))
    assert len(tries) == 2 and sorted(set(tries)) == sorted(tries)  # each tried once in all three calls
    first = len(tries)
    metrics.stderr_for_metric(metrics.mean, 100)
    metrics.stderr_for_metric(metrics.mean, 100)
    assert len(tries) - first >= 2 * first  # the unpatched function tries them on every call
