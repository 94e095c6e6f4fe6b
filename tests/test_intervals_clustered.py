"""Honest uncertainty: intervals that respect how docs cluster, one method per kind of number, power.

Oracles: scipy (``binomtest(...).proportion_ci(method="exact")``, ``beta.ppf``, ``chi2.sf``, ``norm.ppf``), a naive
cluster bootstrap written here loop by loop, and the textbook design effect ``1 + (m − 1) ρ`` with ρ the pairwise
intra-cluster correlation computed by brute force.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from hanyi.metrics import intervals, resample
from hanyi.metrics.unpie_aggregations import unpie_mean_correct_all

scipy_stats = pytest.importorskip("scipy.stats")

REL = 1e-6  # the float rule (docs/dev/contributing.md)


# ---- shares of 0/1 scores: exact Clopper-Pearson, clustered by the design effect -------------------------------------


@pytest.mark.parametrize("k, n", [(0, 5), (5, 5), (1, 1), (3, 11), (7, 20), (13, 800), (400, 800)])
def test_share_interval_is_scipys_exact_binomial_interval(k, n):
    expected = scipy_stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    low, high = intervals.share_interval(k, n)
    assert low == pytest.approx(expected.low, rel=REL, abs=1e-12)
    assert high == pytest.approx(expected.high, rel=REL, abs=1e-12)


@pytest.mark.parametrize("k, n, deff", [(7, 20, 1.7), (0, 12, 2.0), (12, 12, 3.0), (30, 90, 2.5), (1, 9, 1.3)])
def test_clustered_share_interval_is_clopper_pearson_at_the_effective_size(k, n, deff):
    """Korn & Graubard 1998: Beta quantiles at k* = k / deff, n* = n / deff (scipy's beta.ppf takes real parameters)."""
    ks, ns = k / deff, n / deff
    low = 0.0 if ks == 0 else scipy_stats.beta.ppf(0.025, ks, ns - ks + 1)
    high = 1.0 if ks == ns else scipy_stats.beta.ppf(0.975, ks + 1, ns - ks)
    got = intervals.share_interval(k, n, deff)
    assert got[0] == pytest.approx(low, rel=REL, abs=1e-12) and got[1] == pytest.approx(high, rel=REL, abs=1e-12)


def _pairwise_icc(values, clusters):
    """Brute force: ρ = Σ_c Σ_{i≠j in c} d_i d_j / ((m − 1) Σ d²), d = x − x̄, equal clusters of m."""
    mean = sum(values) / len(values)
    d = [x - mean for x in values]
    cross = sum(d[i] * d[j] for i in range(len(d)) for j in range(len(d)) if i != j and clusters[i] == clusters[j])
    m = len(values) // len(set(clusters))
    return cross / ((m - 1) * sum(x * x for x in d))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_design_effect_is_the_textbook_formula(seed):
    rng = np.random.default_rng(seed)
    m, k = 4, 15
    centre = rng.random(k)
    values = [float(rng.random() < c) for c in centre for _ in range(m)]  # correlated within a cluster
    clusters = [c for c in range(k) for _ in range(m)]
    rho = _pairwise_icc(values, clusters)
    assert rho > 0
    assert intervals.design_effect(values, clusters) == pytest.approx(1 + (m - 1) * rho, rel=REL)


def test_design_effect_is_one_without_clusters_and_never_below():
    assert intervals.design_effect([1, 0, 1, 0], None) == 1.0
    assert intervals.design_effect([1, 0, 1, 0], [0, 1, 2, 3]) == 1.0
    assert intervals.design_effect([1, 0, 1, 0], [0, 0, 1, 1]) == 1.0  # ρ < 0: not taken as a gain


def _width(out):
    return out["ci_high"] - out["ci_low"]


def test_three_identical_answers_per_image_widen_a_share_by_about_sqrt_3():
    """The crafted case of the issue: 60 images, 3 questions each. Identical answers within an image carry the
    information of 60 docs, not 180: the interval widens by about √3 over 3 independent answers per image."""
    rng = np.random.default_rng(5)
    per_image = (rng.random(60) < 0.4).astype(float)
    images = [i for i in range(60) for _ in range(3)]
    identical = np.repeat(per_image, 3)
    independent = np.concatenate([per_image, np.roll(per_image, 17), np.roll(per_image, 31)])  # same share
    assert identical.mean() == independent.mean()
    same = intervals.interval(resample.sum_mean, identical, images)
    free = intervals.interval(resample.sum_mean, independent, None)
    assert same["deff"] == pytest.approx(3.0, rel=REL) and same["clusters"] == 60 and same["n"] == 180
    assert _width(same) / _width(free) == pytest.approx(math.sqrt(3), rel=0.08)
    # and it is the interval of the 60 images themselves
    per = scipy_stats.binomtest(int(per_image.sum()), 60).proportion_ci(0.95, method="exact")
    assert same["ci_low"] == pytest.approx(per.low, rel=REL) and same["ci_high"] == pytest.approx(per.high, rel=REL)
    assert "design effect 3.00 over 60 clusters" in same["method"]
    assert same["mdd"] == pytest.approx(math.sqrt(3) * free["mdd"], rel=0.02)


def test_three_identical_scores_per_image_widen_a_bootstrap_by_about_sqrt_3():
    rng = np.random.default_rng(6)
    per_image = rng.random(80)
    images = [i for i in range(80) for _ in range(3)]
    identical = np.repeat(per_image, 3)
    independent = np.concatenate([per_image, rng.permutation(per_image), rng.permutation(per_image)])
    same = intervals.interval(resample.fsum_mean_of_finite, identical, images)
    free = intervals.interval(resample.fsum_mean_of_finite, independent, None)
    assert same["method"].startswith("bootstrap over clusters") and free["method"].startswith("bootstrap over units")
    assert _width(same) / _width(free) == pytest.approx(math.sqrt(3), rel=0.12)


# ---- the cluster bootstrap against a naive one -----------------------------------------------------------------------


def _naive_cluster_bootstrap(values, clusters, combine, iters, seed, strata=None):
    """Loop by loop: in each stratum (in order of first appearance), draw as many clusters as it has, with
    replacement (one ``rng.integers`` call per stratum), then keep every unit of each drawn cluster."""
    rng = np.random.default_rng(seed)
    order = list(dict.fromkeys(clusters))
    strata = strata or [None] * len(values)
    first = {c: strata[clusters.index(c)] for c in order}
    groups = [[c for c in order if first[c] == s] for s in dict.fromkeys(first[c] for c in order)]
    reps = []
    for _ in range(iters):
        count = dict.fromkeys(order, 0)
        for group in groups:
            for j in rng.integers(0, len(group), size=len(group)):
                count[group[j]] += 1
        rows = [v for v, c in zip(values, clusters) for _ in range(count[c])]
        reps.append(combine(np.array(rows)))
    return np.array(reps)


def test_cluster_bootstrap_equals_a_naive_cluster_bootstrap():
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 5, size=25)
    clusters = [f"img{c}" for c, m in enumerate(sizes) for _ in range(m)]
    values = [float(x) for x in rng.random(len(clusters))]
    out = intervals.cluster_bootstrap([(1.0, resample.fsum_mean_of_finite, values, clusters, None)], iters=300, seed=9)
    reps = _naive_cluster_bootstrap(values, clusters, resample.fsum_mean_of_finite, 300, 9)
    assert out["ci_low"] == pytest.approx(np.percentile(reps, 2.5), rel=REL)
    assert out["ci_high"] == pytest.approx(np.percentile(reps, 97.5), rel=REL)
    assert out["stderr"] == pytest.approx(np.std(reps, ddof=1), rel=REL)
    assert out["clusters"] == 25 and out["n"] == len(values)


def test_without_clusters_it_is_the_bootstrap_over_units():
    values = [math.sin(i) ** 2 for i in range(30)]
    out = intervals.cluster_bootstrap([(1.0, resample.fsum_mean_of_finite, values, None, None)], iters=400, seed=3)
    old = resample.bootstrap(resample.fsum_mean_of_finite, resample.as_array(values), iters=400, seed=3)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((old["ci_low"], old["ci_high"]), rel=REL)


def test_both_splits_are_resampled_within_each_split_and_never_lost():
    """UNPIE's All = (Homo + Hetero) / 2. With one hetero doc a joint bootstrap loses the split in about 1 of e
    resamples and then returns the Homo value alone; stratified by split it never does."""
    items = [{"category": "homographic", "correct": i % 2 == 0} for i in range(20)]
    items.append({"category": "heterographic", "correct": True})
    arr = resample.as_array(unpie_mean_correct_all.per_doc(items))
    combine = unpie_mean_correct_all.combine
    value = combine(arr)
    assert value == pytest.approx((0.5 + 1.0) / 2)
    out = intervals.interval(combine, arr)
    assert out["method"].startswith("stratified bootstrap over units within 2 strata")
    assert out["ci_high"] <= 1.0 and out["ci_low"] >= 0.5  # the hetero value (1.0) is in every resample
    naive = _naive_cluster_bootstrap(
        list(range(len(arr))), list(range(len(arr))), lambda idx: combine(arr[idx.astype(int)]), 2000, 1234,
        strata=arr[:, 0].tolist(),
    )  # fmt: skip
    assert out["ci_low"] == pytest.approx(np.percentile(naive, 2.5), rel=REL)
    joint = resample.bootstrap(combine, arr)  # what the report did before: some resamples have no hetero doc
    assert joint["ci_low"] < out["ci_low"]


def test_a_group_resamples_a_cluster_shared_by_its_subtasks_together():
    """One pun in two languages' subtasks: drawn once, for both; subtasks sharing no cluster are strata."""
    puns = [p for p in range(30)]
    a = [float(p % 3 == 0) for p in puns]
    out = intervals.cluster_bootstrap(
        [(0.5, resample.sum_mean, a, puns, None), (0.5, resample.sum_mean, a, puns, None)], iters=500, seed=2
    )
    alone = intervals.cluster_bootstrap([(1.0, resample.sum_mean, a, puns, None)], iters=500, seed=2)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((alone["ci_low"], alone["ci_high"]), rel=REL)
    split = intervals.cluster_bootstrap(
        [(0.5, resample.sum_mean, a, None, None), (0.5, resample.sum_mean, a, None, None)], iters=500, seed=2
    )
    assert split["method"].startswith("stratified") and _width(split) < _width(out)


# ---- paired comparisons and power --------------------------------------------------------------------------------


def test_clustered_mcnemar_without_clusters_is_the_asymptotic_mcnemar():
    a = [1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1]
    b = [0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1]
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    chi2 = (only_a - only_b) ** 2 / (only_a + only_b)
    got = intervals.mcnemar_clustered(a, b, list(range(len(a))))
    assert got == pytest.approx(scipy_stats.chi2.sf(chi2, 1), rel=REL)


def test_clustered_mcnemar_is_durkalskis_statistic():
    a = [1, 1, 0, 1, 0, 0, 1, 1, 0]
    b = [0, 0, 0, 1, 1, 1, 0, 1, 1]
    clusters = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    per = [sum(x - y for x, y, c in zip(a, b, clusters) if c == k) for k in range(3)]
    stat = sum(per) ** 2 / sum(d * d for d in per)
    assert intervals.mcnemar_clustered(a, b, clusters) == pytest.approx(scipy_stats.chi2.sf(stat, 1), rel=REL)


def test_mdd_is_z_975_plus_z_80_standard_errors():
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    assert intervals.mdd(0.037) == pytest.approx(z * 0.037, rel=REL)
    assert intervals.mdd(None) is None


def test_headline_mdd_of_a_share_is_the_two_sample_formula_and_never_zero():
    """MDD of a share: (z 0.975 + z 0.8) · √(2 p̃ (1 − p̃) deff / n), p̃ = (k + 1) / (n + 2) (Agresti & Caffo 2000), so
    0 of 12 (a binomial SE of 0) still has a positive MDD; a real-valued metric without variation has none."""
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    zero = intervals.interval(resample.sum_mean, [0.0] * 12)
    assert zero["mdd"] == pytest.approx(z * math.sqrt(2 * (1 / 14) * (13 / 14) / 12), rel=REL) and zero["mdd"] > 0.2
    flat = intervals.interval(resample.fsum_mean_of_finite, [0.5] * 12)
    assert flat["mdd"] is None and flat["stderr"] == 0.0


def test_paired_comparison_resamples_clusters_and_says_when_a_difference_is_below_its_mdd():
    rng = np.random.default_rng(4)
    base = (rng.random(50) < 0.5).astype(float)
    a = np.repeat(base, 3)
    b = a.copy()
    b[:6] = 1 - b[:6]  # two images answered differently, all 3 questions each
    images = [i for i in range(50) for _ in range(3)]
    clustered = intervals.paired(a.tolist(), b.tolist(), images)
    plain = intervals.paired(a.tolist(), b.tolist())
    assert clustered["test"].startswith("clustered McNemar") and plain["test"] == "McNemar exact (two-sided)"
    assert clustered["mcnemar_p"] > plain["mcnemar_p"]  # 2 discordant images, not 6 independent docs
    assert clustered["ci_method"].startswith("paired bootstrap over clusters") and clustered["clusters"] == 50
    assert _width(clustered) > _width(plain)
    assert clustered["mdd"] == pytest.approx(intervals.mdd(clustered["stderr"]), rel=REL)
    assert clustered["below_mdd"] == (abs(clustered["difference"]) < clustered["mdd"])


# ---- the report: the task's cluster_key, the same clusters in intervals and paired tests, named in the caption --------


def _run(tmp_path, name, correct, images):
    from tests.test_report_honest import write_run

    value = sum(correct) / len(correct)
    lines = [
        {"doc_id": i, "accuracy": {"v": float(c), "image_path": img, "category": "x", "culture_group": "y"}}
        for i, (c, img) in enumerate(zip(correct, images))
    ]
    config = {"task": "cvlue_vqa", "cluster_key": "image_path", "metric_list": []}
    return write_run(
        tmp_path / name,
        f"pretrained={name}",
        {"cvlue_vqa": {"accuracy,none": value}},
        samples={"cvlue_vqa": lines},
        configs={"cvlue_vqa": config},
    )


def test_report_clusters_intervals_and_paired_tests_by_the_tasks_cluster_key(tmp_path):
    from tests.test_report_honest import report, section, table

    rng = np.random.default_rng(8)
    per_image = (rng.random(40) < 0.5).tolist()
    images = [f"img{i}.jpg" for i in range(40) for _ in range(3)]
    a = _run(tmp_path, "a", [c for c in per_image for _ in range(3)], images)
    flipped = [not c if i < 5 else c for i, c in enumerate(per_image)]
    b = _run(tmp_path, "b", [c for c in flipped for _ in range(3)], images)
    rep = report(tmp_path, a, b)
    sec = section(rep, "cvlue")
    ci = next(i for i in sec["intervals"] if i["run"] == "a" and i["metric"] == "accuracy")
    assert ci["cluster_key"] == "image_path" and ci["clusters"] == 40 and ci["deff"] == pytest.approx(3.0, rel=REL)
    head = table(rep, "cvlue", "Headline metrics")
    assert "cvlue_vqa by image_path (40 clusters)" in head["caption"]
    (pair,) = [p for p in sec["paired"] if p["metric"] == "accuracy"]
    assert pair["clusters"] == 40 and pair["test"].startswith("clustered McNemar")
    paired = table(rep, "cvlue", "Paired comparison")
    assert paired["header"][-1] == "MDD (80 %)" and "cvlue_vqa by image_path" in paired["caption"]
    assert paired["rows"][0][2] == "120 (40 clusters)"
    power = table(rep, "cvlue", "Power")
    assert power["rows"][0][2].endswith("(n=120, 40 clusters)")
    assert json.dumps(rep)  # plain JSON


def test_report_says_n_of_n_docs_when_the_denominator_is_not_every_doc(tmp_path):
    from tests.test_report_honest import report, table, write_run

    lines = [
        {"doc_id": i, "accuracy": {"parsed": i < 8, "correct": i < 8, "pred": ["A"], "gold": ["A"]}} for i in range(12)
    ]
    d = write_run(
        tmp_path / "run", "pretrained=m", {"punrebus_matching": {"accuracy,none": 1.0}},
        samples={"punrebus_matching": lines},
    )  # fmt: skip
    rep = report(tmp_path, d)
    row = next(r for r in table(rep, "punrebus", "Headline metrics")["rows"] if r[1].startswith("accuracy"))
    expected = scipy_stats.binomtest(8, 8).proportion_ci(0.95, method="exact")
    assert row[2] == f"1.0000 [{expected.low:.4f}, 1.0000] (n=8 of 12 docs)"


# ---- lmms-eval's own table: a standard error for every plain-mean headline metric, clustered where a key is set -----


#: ``{task: {metric: clustered?}}``: the plain-mean headline metrics whose items carry lmms-eval's ``score_key``, and
#: whether the task sets a ``cluster_key`` (Stderr_Clustered then differs from N/A).
PLAIN_MEANS = {
    "cii_none": {"acc": False, "acc_robust": False},
    "cvlue_vqa": {"accuracy": True, "accuracy_robust": True},
    "cvlue_vg": {"miou": True},
    "unpie_grounding": {"exact_match": True, "exact_match_robust": True},
    "unpie_disambiguation_de": {},  # disamb_acc_<scorer> and its _robust: the scorer this machine has
    "punrebus_matching": {"accuracy": True, "accuracy_robust": True},  # over the parsed docs / every doc
    "punrebus_elements": {"element_sim": True},  # + element_abs or its _rule_lemma fallback: found below
    "unpie_reconstruction_de": {"meteor": True, "pun_word_recovered": True},  # found below (meteor x100)
}
#: the item field lmms-eval reads (the task's ``score_key``; ``score`` where the task sets none); UNPIE's both-split
#: tasks: the score their aggregation writes, whose mean is the value (the mean of the splits' values)
SCORE_KEYS = {"cvlue_vqa": "v", "cvlue_vg": "v"} | {
    t: "all_splits_score" for t in ("unpie_grounding", "unpie_disambiguation_de", "unpie_reconstruction_de")
}
#: the per-doc statistic of a both-split UNPIE metric (its split in ``category``), for the standard error of the value
UNPIE_STATS = {"exact_match": "correct", "meteor": "meteor_score", "pun_word_recovered": "pun_word_recovered"}


def _mean_of_splits_stderr(items: list[dict], field: str, scale: float) -> float:
    """sqrt(SE_homo^2 + SE_hetero^2) / 2 over the docs each split's value counts, SE_s = sd_s (ddof 1) / sqrt(n_s)."""
    errors = []
    for split in ("homographic", "heterographic"):
        xs = [scale * float(it[field]) for it in items if it["category"] == split and not math.isnan(float(it[field]))]
        if xs:
            errors.append(np.std(xs, ddof=1) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0)
    return math.sqrt(sum(e * e for e in errors)) / len(errors)


@pytest.mark.slow
def test_a_plain_run_prints_clt_and_clustered_standard_errors(tmp_path, monkeypatch):
    """``--include_path`` with the start-up hook off: lmms-eval 0.7.3's own ``calculate_clt_aggregate_metric`` gives
    ``<metric>_stderr_clt`` (sd / √n of the items' ``score_key``) and, with a ``cluster_key``,
    ``<metric>_stderr_clustered`` (its Eq. 4 of Miller 2024) for each of :data:`PLAIN_MEANS`; both agree with the
    closed form on the same sample log."""
    import glob
    import os
    import sys

    import hanyi

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
    import plain_run_fixture as prf

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "plain_run", "responses.jsonl")
    responses = str(tmp_path / "responses.jsonl")
    prf.merged_responses(here, responses)
    monkeypatch.setattr(prf, "GROUPS", ",".join(PLAIN_MEANS))
    results = prf.run_replay(
        responses,
        str(tmp_path / "out"),
        env={"HANYI_NO_AUTOHOOK": "1"},
        extra_args=["--include_path", hanyi.TASKS_DIR],
    )["results"]
    disamb = {k.split(",")[0]: True for k in results["unpie_disambiguation_de"] if k.startswith("disamb_acc_")}
    assert len({k for k in disamb if "_stderr" not in k}) == 2
    table1 = {k.split(",")[0]: False for k in results["cii_none"] if k.startswith(("acc_domain", "acc_emotion"))}
    assert len({k for k in table1 if "_stderr" not in k}) == 9  # Table 1's columns: over the docs with the label
    found = {**PLAIN_MEANS, "unpie_disambiguation_de": disamb, "cii_none": {**PLAIN_MEANS["cii_none"], **table1}}
    abs_key = next(k.split(",")[0] for k in results["punrebus_elements"] if k.startswith("element_abs"))
    found["punrebus_elements"] = {**PLAIN_MEANS["punrebus_elements"], abs_key: True}
    recon = results["unpie_reconstruction_de"]
    meteor = next(k.split(",")[0] for k in recon if k.startswith("meteor") and "_stderr" not in k and "robust" not in k)
    found["unpie_reconstruction_de"] = {meteor: True, "pun_word_recovered": True}
    assert recon["bleu4_stderr_clt,none"] == "N/A"  # corpus BLEU-4: no per-doc score, no CLT standard error
    for task, metrics in found.items():
        metrics = {k: v for k, v in metrics.items() if "_stderr" not in k}
        (path,) = glob.glob(str(tmp_path / "out" / "**" / f"*_samples_{task}.jsonl"), recursive=True)
        lines = [json.loads(x) for x in open(path, encoding="utf-8")]
        for metric, clustered in metrics.items():
            clt = results[task].get(f"{metric}_stderr_clt,none")
            key = SCORE_KEYS.get(task, "score")
            scores = [float(ln[metric][key]) for ln in lines if isinstance(ln.get(metric), dict) and key in ln[metric]]
            if task.startswith(("punrebus", "unpie_reconstruction")):  # each doc the value counts logs its score
                parsed_only = task.startswith("punrebus") and metric != "accuracy_robust"
                items = [ln[metric] for ln in lines if isinstance(ln.get(metric), dict)]
                assert len(scores) == len([it for it in items if it.get("parsed") or not parsed_only]), (task, metric)
            if len(scores) < 2:  # lmms-eval: no standard error of one doc
                assert clt == "N/A", (task, metric, clt)
                continue
            assert isinstance(clt, float), (task, metric, clt)
            assert clt == pytest.approx(np.std(scores, ddof=1) / math.sqrt(len(scores)), rel=REL)
            # UNPIE's All, the mean of its splits' values, too: its items' scores have that mean, and their CLT
            # standard error is the one of a mean of two independent split values (each split's sd / sqrt(n))
            assert np.mean(scores) == pytest.approx(results[task][f"{metric},none"], rel=REL, abs=1e-12)
            if task.startswith("unpie"):
                base = metric.removesuffix("_robust").removesuffix("_exact_stem")
                stat = "correct" if task == "unpie_disambiguation_de" else UNPIE_STATS[base]
                items = [ln[metric] for ln in lines if isinstance(ln.get(metric), dict) and stat in ln[metric]]
                scale = 100.0 if metric.startswith("meteor") else 1.0
                expected = _mean_of_splits_stderr(items, stat, scale)
                assert {it["category"] for it in items} == {"homographic", "heterographic"}, (task, metric)
                assert clt == pytest.approx(expected, rel=REL), (task, metric, clt, expected)
            got = results[task].get(f"{metric}_stderr_clustered,none")
            assert isinstance(got, float) if clustered else got == "N/A", (task, metric, got)
    # hanyi report resamples the same clusters, named in the caption (Pun Rebus: stories)
    from hanyi.report import main as report_main

    assert report_main([str(tmp_path / "out"), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    captions = " ".join(
        t["caption"] for sec in rep["sections"] for t in sec["tables"] if t["title"] == "Headline metrics"
    )
    for task, key in (
        ("cvlue_vqa", "image_path"),
        ("unpie_disambiguation_de", "unpie_id"),
        ("punrebus_matching", "story"),
    ):
        assert f"{task} by {key} (" in captions, (task, captions[-400:])
    stories = next(
        i
        for s in rep["sections"]
        for i in s["intervals"]
        if i["task"] == "punrebus_elements" and i["metric"] == "element_sim"
    )
    assert stories["cluster_key"] == "story" and stories["clusters"] < stories["n_units"]


# ---- VULCA: 12 paintings under 9 conditions, one cluster per painting across the conditions' tasks -----------------

VULCA_CONDITIONS = ["vulca_baseline", *(f"vulca_persona_kb_{p}" for p in ("mama_zola", "okakura_kakuzo",
    "elena_petrova", "brother_thomas", "john_ruskin", "su_shi", "guo_xi", "aris_thorne"))]  # fmt: skip


def _vulca_run(tmp_path, name, scores):
    """A run of the ``vulca`` group with a value (the mean of its 9 conditions' ``expert_alignment``, as a group
    with ``aggregate_metric_list`` would give it): ``scores[task][painting]`` 0/1, items as ``process_results``
    logs them (``score``, ``chance``, ``painting``: the task's ``cluster_key``)."""
    from tests.test_report_honest import write_run

    samples = {
        t: [{"doc_id": p, "expert_alignment": {"score": s, "chance": 0.1, "painting": f"{p + 1:02d}"}}
            for p, s in enumerate(scores[t])]
        for t in VULCA_CONDITIONS
    }  # fmt: skip
    values = {t: {"expert_alignment,none": sum(scores[t]) / 12} for t in VULCA_CONDITIONS}
    group = sum(v["expert_alignment,none"] for v in values.values()) / len(values)
    configs = {t: {"dataset_path": "org/full-release"} for t in VULCA_CONDITIONS}  # cluster_key: the shipped YAML's
    d = write_run(
        tmp_path / name, f"pretrained={name}", {"vulca": {"expert_alignment,none": group}, **values},
        samples=samples, configs=configs,
    )  # fmt: skip
    path = next((tmp_path / name).glob("*_results.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["group_subtasks"]["vulca"] = VULCA_CONDITIONS
    path.write_text(json.dumps(data), encoding="utf-8")
    return d


def test_vulca_critiques_of_one_painting_cluster_across_its_conditions(tmp_path):
    """The same verdict for a painting under all 9 conditions carries the information of 12 paintings, not 108
    critiques: the group's interval is the exact interval of the 12 paintings (design effect 9, about 3x as wide as
    for 9 independent verdicts per painting), and its paired test resamples the 12 paintings."""
    from tests.test_report_honest import report, section

    per_painting = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]  # 6 of 12
    same = {t: per_painting for t in VULCA_CONDITIONS}
    # 9 verdicts per painting that do not move together (4 or 5 of 9 each): 6 of 12 per condition again
    free = {t: [float((p + 5 * i) % 12 < 6) for p in range(12)] for i, t in enumerate(VULCA_CONDITIONS)}
    flipped = {t: [1.0 - v if p < 2 else v for p, v in enumerate(per_painting)] for t in VULCA_CONDITIONS}
    a = _vulca_run(tmp_path / "same", "a", same)
    b = _vulca_run(tmp_path / "same", "b", flipped)
    rep = report(tmp_path / "same", a, b)
    (ci,) = [i for i in section(rep, "vulca")["intervals"] if i["task"] == "vulca" and i["run"] == "a"]
    assert ci["cluster_key"] == "painting" and ci["clusters"] == 12 and ci["n"] == 108
    assert ci["deff"] == pytest.approx(9.0, rel=REL)
    paintings = scipy_stats.binomtest(6, 12).proportion_ci(0.95, method="exact")
    assert (ci["ci_low"], ci["ci_high"]) == pytest.approx((paintings.low, paintings.high), rel=REL)
    (pair,) = [p for p in section(rep, "vulca")["paired"] if p["task"] == "vulca"]
    assert pair["clusters"] == 12 and pair["n_pairs"] == 108 and pair["test"].startswith("clustered McNemar")

    rep = report(tmp_path, _vulca_run(tmp_path, "free", free))
    (ci_free,) = [i for i in section(rep, "vulca")["intervals"] if i["task"] == "vulca"]
    assert ci_free["value"] == ci["value"] and ci_free["deff"] == 1.0
    docs = scipy_stats.binomtest(54, 108).proportion_ci(0.95, method="exact")  # the 108 critiques' own interval
    assert (ci_free["ci_low"], ci_free["ci_high"]) == pytest.approx((docs.low, docs.high), rel=REL)
    assert _width(ci) / _width(ci_free) == pytest.approx(3.0, rel=0.05)  # √9


def test_pun_rebus_items_carry_a_score_where_their_key_counts_the_doc():
    """The plain run's sample answers parse as no letter; here one that does: ``accuracy`` counts the parsed docs,
    ``accuracy_robust`` (and the text-only task's ``accuracy``) every doc; lmms-eval reads each item's ``score``."""
    from hanyi.tasks.punrebus import utils

    doc = {"categories": ["A"], "story_zh": "守株待兔"}
    parsed, unparsed = (utils.punrebus_matching_process_results(doc, [r]) for r in ("A", "???"))
    assert parsed["accuracy"]["score"] == 1.0 and "score" not in unparsed["accuracy"]
    assert unparsed["accuracy_robust"]["score"] == 0.0 and unparsed["accuracy_robust"]["story"] == "守株待兔"
    import hanyi
    from hanyi.task_yaml import read

    text = read(os.path.join(hanyi.TASKS_DIR, "punrebus", "punrebus_textonly.yaml"))  # both keys: every doc
    assert (
        text["score_key"] == "correct"
        and utils.punrebus_textonly_process_results(doc, ["???"])["accuracy"]["correct"] is False
    )
