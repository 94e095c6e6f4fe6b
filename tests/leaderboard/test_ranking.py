"""The board's ranking against brute force on small cases: rank intervals against a plain bootstrap
loop written here, tiers against scipy's exact binomial test and Holm's procedure by hand, flips against an
exhaustive enumeration of every change of every doc; protocol sections, reference rows, the overall mean rank.
Entries are built by hand: no harness, no submission file.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from hanyi.leaderboard import ranking
from hanyi.leaderboard.entries import Entry
from hanyi.metrics.resample import ITERS, SEED
from hanyi.results import stats

scipy_stats = pytest.importorskip("scipy.stats")

COMPARABLE_CII = {  # a hub run of the full split, as hanyi.results.provenance.task_provenance records it
    "task": "cii_none",
    "data_source": {"kind": "hub", "hub_id": "m-a-p/CII-Bench"},
    "prompt_variant": "default",
    "judge_model": None,
    "limit": None,
    "n_effective": 800,
    "generation_failures": 0,
    "scorer_backends": {},
}
PROTOCOL = {"task_version": "1.0", "prompt_variant": "default", "judge": None, "backbones": "", "full_split": "yes"}


def entry(model, scores, bench="cii", task="cii_none", metric="acc", clusters=None, protocol=None, prov=None, **kw):
    """An entry of one column whose value is the mean of ``scores`` (a list, NaN = unscored doc, or a dict)."""
    per = scores if isinstance(scores, dict) else {d: s for d, s in enumerate(scores) if not math.isnan(s)}
    value = kw.pop("value", math.fsum(per.values()) / len(per))
    return Entry(
        submission_hash=f"sha-{model}-{bench}",
        benchmark=bench,
        model=model,
        model_args="",
        date="2026-11-28",
        hanyi_version="0.8",
        lmms_eval_version="0.7.3",
        values={task: {metric: value}},
        per_doc={task: {metric: per}},
        clusters={task: clusters} if clusters else {},
        protocol={task: {**PROTOCOL, **(protocol or {})}},
        provenance={task: {**COMPARABLE_CII, "task": task, **(prov or {})}},
        **kw,
    )


def ranked_rows(section):
    return [r for r in section.rows if not r.reference]


@pytest.fixture
def no_anchors(tmp_path):
    return str(tmp_path)


# ---- rank intervals: a plain bootstrap loop -----------------------------------------------------------------------


def plain_rank_interval(per_row: list[dict], clusters: dict | None, iters: int, seed: int) -> list[tuple[int, int]]:
    """Loop by loop: draw clusters with replacement, weight each doc by its cluster's count, each row's weighted mean
    over the docs it scored, rank = 1 + rows strictly above, then the 2.5 % / 97.5 % inverted-CDF percentiles."""
    docs = sorted({d for p in per_row for d in p})
    label_of = {d: (clusters or {}).get(d, ("doc", d)) for d in docs}
    order = []
    for d in docs:
        if label_of[d] not in order:
            order.append(label_of[d])
    rng = np.random.default_rng(seed)
    ranks = [[] for _ in per_row]
    for _ in range(iters):
        picks = rng.integers(0, len(order), size=len(order))
        count = {c: 0 for c in order}
        for i in picks:
            count[order[i]] += 1
        means = []
        for p in per_row:
            w = sum(count[label_of[d]] for d in p)
            means.append(sum(count[label_of[d]] * s for d, s in p.items()) / w if w else -math.inf)
        for j, m in enumerate(means):
            ranks[j].append(1 + sum(1 for other in means if other > m))
    out = []
    for r in ranks:
        r = sorted(r)
        out.append((r[math.ceil(0.025 * iters) - 1], r[math.ceil(0.975 * iters) - 1]))
    return out


@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("iters", [10, 40, None])
def test_rank_intervals_are_a_plain_paired_bootstrap_loop_over_docs_or_clusters(
    no_anchors, monkeypatch, clustered, iters
):
    monkeypatch.setattr(ranking, "RANK_ITERS", iters or ranking.RANK_ITERS)  # a small B, and the board's
    rng = np.random.default_rng(7)
    rows = [(rng.random(12) < p).astype(float).tolist() for p in (0.75, 0.65, 0.6, 0.3)]
    rows[2][5] = math.nan  # a doc one row did not score: left out of that row's mean only
    clusters = {d: f"image{d // 3}" for d in range(12)} if clustered else None
    entries = [entry(f"m{i}", s, clusters=clusters) for i, s in enumerate(rows)]
    (section,) = ranking.rank(entries, [], no_anchors).sections
    got = ranked_rows(section)
    per_row = [ranking.scores(r.entry, "cii_none/acc") for r in got]
    expected = plain_rank_interval(per_row, clusters, ranking.RANK_ITERS, ranking.bench_seed("cii"))
    assert [(r.rank_low, r.rank_high) for r in got] == expected
    assert any(low < high for low, high in expected)  # the case is not trivially resolved
    assert all(r.rank_low <= r.rank <= r.rank_high for r in got)


def test_the_percentiles_of_ranks_are_the_inverted_cdf_of_the_draws():
    # the smallest r with at least 2.5 % (97.5 %) of the draws at or below it
    assert ranking._quantile(range(1, 41), 0.025) == 1 and ranking._quantile(range(1, 41), 0.975) == 39
    assert ranking._quantile([3, 1, 2, 2], 0.5) == 2 and ranking._quantile([3, 1, 2, 2], 0.975) == 3
    assert ranking._quantile(list(range(1000)), 0.025) == 24 and ranking._quantile(list(range(1000)), 0.975) == 974


def test_clearly_separated_rows_have_rank_intervals_of_one_rank(no_anchors):
    entries = [entry(m, [v] * 30) for m, v in (("best", 1.0), ("worst", 0.0))]
    top, bottom = ranked_rows(ranking.rank(entries, [], no_anchors).sections[0])
    assert (top.label, top.rank, top.rank_low, top.rank_high) == ("best", 1, 1, 1)
    assert (bottom.rank, bottom.rank_low, bottom.rank_high) == (2, 2, 2)


# ---- tiers: McNemar exact (scipy) and Holm by hand ------------------------------------------------------------------


def ones(*docs, n=12):
    return [1.0 if d in docs else 0.0 for d in range(n)]


def holm_by_hand(raw: list[float]) -> list[float]:
    """The i-th smallest times (m - i), running maximum, capped at 1."""
    m = len(raw)
    adjusted, running = [None] * m, 0.0
    for i, k in enumerate(sorted(range(m), key=lambda k: raw[k])):
        running = max(running, min(1.0, (m - i) * raw[k]))
        adjusted[k] = running
    return adjusted


def brute_force_tiers(by_value: list[list[float]]) -> tuple[list[int], list[float]]:
    """Every assignment of tier tops (row 0 always one) in order of the first split, by hand: each row tested by
    scipy's exact binomial test against its tier's top (a top against the previous top), Holm over the n - 1 tests;
    the first non-top row with an adjusted p below 0.05 becomes a top, until none is."""

    def p(hi, lo):
        b = sum(1 for x, y in zip(hi, lo) if x == 1 and y == 0)
        c = sum(1 for x, y in zip(hi, lo) if x == 0 and y == 1)
        return scipy_stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0

    tops = [0]
    while True:
        pairs = []
        for j in range(1, len(by_value)):
            pairs.append((max(t for t in tops if t < j), j))
        adjusted = holm_by_hand([p(by_value[i], by_value[j]) for i, j in pairs])
        new = [j for (_, j), q in zip(pairs, adjusted) if j not in tops and q < 0.05]
        if not new:
            break
        tops.append(new[0])
    return [1 + sum(1 for t in tops if 0 < t <= j) for j in range(len(by_value))], adjusted


def staircase(n_rows: int, n_docs: int, step: int) -> list[list[float]]:
    """Row i right on every doc but the first ``i * step``: each adjacent gap ``step`` discordant docs."""
    return [[0.0 if d < i * step else 1.0 for d in range(n_docs)] for i in range(n_rows)]


TIER_CASES = {
    # B-C has 8 vs 1 discordant docs; against the top A, C has 8 vs 0 (raw p 0.0078): Holm over 3 keeps it (0.023)
    # below 0.05, so C opens tier 2; D against C: 3 vs 0, p 0.25
    "against_the_top": ([ones(*range(12)), ones(*range(11)), ones(0, 1, 2, 11), ones(0)], [1, 1, 2, 2]),
    # B-C 9 vs 0: raw p 0.0039, Holm 0.0117: a new tier below B
    "split": ([ones(*range(12)), ones(*range(11)), ones(0, 1), ones(0)], [1, 1, 2, 2]),
    # three significant steps need more docs: 40 docs, 40-vs-0 style gaps
    "three_tiers": ([ones(*range(40), n=40), ones(*range(20), n=40), ones(n=40)], [1, 2, 3]),
    # no adjacent gap is significant (4 vs 0 discordant docs, p 0.125), the top against the bottom is (16 vs 0,
    # p 3e-5): chaining adjacent pairs kept all five in tier 1
    "no_chaining": (staircase(5, 400, 4), [1, 1, 2, 2, 3]),
    "one_tier": ([ones(*range(12)), ones(*range(11)), ones(*range(10))], [1, 1, 1]),
}


@pytest.mark.parametrize("case", sorted(TIER_CASES))
def test_tiers_hold_the_rows_not_significantly_below_the_tiers_top_holm_over_the_tests_made(no_anchors, case):
    rows, literal = TIER_CASES[case]
    entries = [entry(f"m{i}", s) for i, s in enumerate(rows)]
    got = ranked_rows(ranking.rank(entries, [], no_anchors).sections[0])
    by_value = sorted(rows, key=lambda s: -sum(s))
    tiers, adjusted = brute_force_tiers(by_value)
    assert [r.tier for r in got] == tiers == literal
    assert [r.p_above for r in got[1:]] == pytest.approx(adjusted, rel=1e-9)
    assert "McNemar exact" in ranking.rank(entries, [], no_anchors).sections[0].method
    for r in got:  # "not distinguishable from the tier's best": never significantly below its top
        top = next(x for x in got if x.tier == r.tier)
        if r is not top:
            assert r.p_above >= 0.05 and top.rank <= r.rank


def test_a_row_significantly_below_the_leader_is_not_in_the_leaders_tier(no_anchors):
    rows = staircase(5, 400, 4)
    got = ranked_rows(ranking.rank([entry(f"m{i}", s) for i, s in enumerate(rows)], [], no_anchors).sections[0])
    top, bottom = got[0], got[-1]
    assert scipy_stats.binomtest(16, 16, 0.5).pvalue < 1e-4  # the top against the bottom
    assert bottom.tier > top.tier == 1


def test_one_discordant_doc_in_clusters_is_p_one_by_the_exact_sign_flip_test(no_anchors):
    clusters = {d: f"story{d // 2}" for d in range(12)}
    entries = [entry("a", ones(0, 2), clusters=clusters), entry("b", ones(2), clusters=clusters)]
    section = ranking.rank(entries, [], no_anchors).sections[0]
    assert ranked_rows(section)[1].p_above == 1.0  # the asymptotic clustered McNemar says 0.317
    assert "exact cluster sign-flip permutation test" in section.method


def brute_force_sign_flip(a, b, clusters) -> float:
    sums: dict = {}
    for x, y, c in zip(a, b, clusters):
        sums[c] = sums.get(c, 0) + x - y
    d = list(sums.values())
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d))) >= observed for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


def test_the_exact_sign_flip_test_is_the_enumeration_of_every_cluster_swap_and_mcnemar_without_clusters():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(2, 16))
        a, b = (rng.random(n) < 0.6).astype(int).tolist(), (rng.random(n) < 0.4).astype(int).tolist()
        labels = [f"c{int(x)}" for x in rng.integers(0, 6, size=n)]
        assert ranking.sign_flip_exact(a, b, labels) == pytest.approx(brute_force_sign_flip(a, b, labels), abs=1e-12)
        k = sum(1 for x, y in zip(a, b) if x > y)
        m = sum(1 for x, y in zip(a, b) if x != y)
        plain = scipy_stats.binomtest(k, m, 0.5).pvalue if m else 1.0
        assert ranking.sign_flip_exact(a, b) == pytest.approx(plain, abs=1e-12)


def test_each_benchmark_has_a_seed_stream_of_its_own(no_anchors):
    board = ranking.rank(two_benchmarks(["a", "b", "c"], ["a", "b", "c"]), [], no_anchors)
    seeds = {s.benchmark: ranking.bench_seed(s.benchmark) for s in board.sections}
    assert len(set(seeds.values())) == 2
    for s in board.sections:
        assert f"seed {seeds[s.benchmark]}" in s.method
    # adding a benchmark moves no other benchmark's rank intervals
    alone = ranking.rank([e for e in two_benchmarks(["a", "b", "c"], []) if e.benchmark == "cii"], [], no_anchors)
    assert [(r.rank_low, r.rank_high) for r in ranked_rows(alone.sections[0])] == [
        (r.rank_low, r.rank_high) for r in ranked_rows(board.sections[0])
    ]


def test_clustered_rows_are_tested_by_the_exact_cluster_sign_flip_test(no_anchors):
    clusters = {d: f"story{d // 2}" for d in range(12)}
    entries = [entry("a", ones(*range(10)), clusters=clusters), entry("b", ones(0, 1), clusters=clusters)]
    section = ranking.rank(entries, [], no_anchors).sections[0]
    labels = [clusters[d] for d in range(12)]
    expected = brute_force_sign_flip(ones(*range(10)), ones(0, 1), labels)
    assert ranked_rows(section)[1].p_above == pytest.approx(expected)
    assert "sign-flip" in section.method and "clusters of 12 docs" in section.method


def test_a_continuous_column_is_tested_by_the_paired_bootstrap_p_of_a_plain_loop(no_anchors):
    rng = np.random.default_rng(11)
    a, b = (rng.random(15) * 0.6 + 0.4).tolist(), (rng.random(15) * 0.7 + 0.2).tolist()
    entries = [entry(m, s, "punrebus", "punrebus_elements", "element_sim") for m, s in (("a", a), ("b", b))]
    section = ranking.rank(entries, [], no_anchors).sections[0]
    assert section.ranking_column == "punrebus_elements/element_sim"  # no matching accuracy: the next candidate
    hi, lo = (a, b) if sum(a) > sum(b) else (b, a)
    diffs = [y - x for x, y in zip(hi, lo)]
    draws = []
    loop = np.random.default_rng(ranking.bench_seed("punrebus"))  # 2,000 resamples of the 15 docs
    for _ in range(2000):
        idx = loop.integers(0, 15, size=15)
        draws.append(sum(diffs[i] for i in idx) / 15)
    p = min(1.0, 2 * min(sum(d <= 0 for d in draws) / 2000, sum(d >= 0 for d in draws) / 2000))
    assert 0 < p < 1 and ranked_rows(section)[1].p_above == pytest.approx(p, abs=1e-12)
    assert "paired bootstrap (two-sided percentile p)" in section.method


# ---- flips: exhaustive enumeration -------------------------------------------------------------------------------


def brute_force_flip(upper: dict, lower: dict) -> int | None:
    """Every new 0/1 score of every doc in each row that scored it; the fewest docs changed (in either row or both)
    after which the lower row's mean is strictly above the upper row's, in exact fractions."""
    docs = sorted(set(upper) | set(lower))
    options = []
    for d in docs:
        his = (0, 1) if d in upper else (None,)
        los = (0, 1) if d in lower else (None,)
        options.append([(h, lo) for h in his for lo in los])
    best = None
    for choice in itertools.product(*options):
        changed = sum(1 for d, (h, lo) in zip(docs, choice) if (h is not None and h != upper[d]) or
                      (lo is not None and lo != lower[d]))  # fmt: skip
        new_hi = Fraction(sum(h for h, _ in choice if h is not None), len(upper))
        new_lo = Fraction(sum(lo for _, lo in choice if lo is not None), len(lower))
        if new_lo > new_hi and (best is None or changed < best):
            best = changed
    return best


FLIP_ROWS = [
    [1, 1, 1, 1, 1, 1, 0, 1],
    [1, 1, 1, 0, 0, 0, 1, math.nan],  # one unscored doc: its mean counts 7 docs
    [0, 1, 0, 1, 1, 0, 0, 0],
    [0, 1, 0, 1, 1, 0, 0, 0],  # a tie with the row above: one doc flips it
]


def test_flips_are_the_exhaustive_minimum_over_every_change_of_every_doc(no_anchors):
    entries = [entry(f"m{i}", [float(x) for x in s]) for i, s in enumerate(FLIP_ROWS)]
    got = ranked_rows(ranking.rank(entries, [], no_anchors).sections[0])
    per = [ranking.scores(r.entry, "cii_none/acc") for r in got]
    expected = [None] + [brute_force_flip(hi, lo) for hi, lo in zip(per, per[1:])]
    assert [r.flip for r in got] == expected
    assert expected[1:] == [2, 1, 1]  # one pair needs two docs; the tie needs one


def test_flip_of_continuous_scores_is_the_fewest_docs_at_the_extremes():
    rng = np.random.default_rng(3)
    for _ in range(30):
        hi = {d: float(x) for d, x in enumerate(rng.random(8) ** 0.5)}
        lo = {d: float(x) for d, x in enumerate(rng.random(8) ** 2)}
        if sum(lo.values()) > sum(hi.values()):
            hi, lo = lo, hi
        # any change of a set of docs does at best what putting them at the extremes does (means are monotone)
        best = next(
            k
            for k in range(1, 9)
            for subset in itertools.combinations(range(8), k)
            if sum(1.0 if d in subset else lo[d] for d in range(8))
            > sum(0.0 if d in subset else hi[d] for d in range(8))
        )
        assert ranking.flip(hi, lo) == best


# ---- cells -----------------------------------------------------------------------------------------------------------


def test_a_cell_is_the_reports_interval_in_the_values_unit_and_clustered(no_anchors):
    scores = ones(0, 1, 2, 3, 4, 5, 6, 7, n=12)
    clusters = {d: f"img{d // 4}" for d in range(12)}
    plain = ranking.cell(entry("a", scores, value=100 * 8 / 12), "cii_none/acc")
    clustered = ranking.cell(entry("a", scores, clusters=clusters, value=100 * 8 / 12), "cii_none/acc")
    ref = stats.interval(scores)
    assert (plain.low, plain.high, plain.n) == pytest.approx((100 * ref["ci_low"], 100 * ref["ci_high"], 12))
    ref_c = stats.interval(scores, [clusters[d] for d in range(12)])
    assert (clustered.low, clustered.high) == pytest.approx((100 * ref_c["ci_low"], 100 * ref_c["ci_high"]))
    assert clustered.high - clustered.low > plain.high - plain.low  # the design effect widens it
    assert clustered.stderr == pytest.approx(100 * ref_c["stderr"]) and clustered.method == ref_c["method"]
    assert "design effect" in clustered.method and "design effect" not in plain.method
    given = entry("a", scores, value=100 * 8 / 12, scales={"cii_none": {"acc": 100.0}})
    assert ranking.cell(given, "cii_none/acc").low == pytest.approx(plain.low)
    wrong = entry("a", scores, value=8 / 12, scales={"cii_none": {"acc": 100.0}})  # the intake's factor wins
    assert ranking.cell(wrong, "cii_none/acc").low is None
    corpus = ranking.cell(entry("a", scores, value=0.42), "cii_none/acc")  # not the mean of its per-doc scores
    assert corpus.low is None and "not the mean" in corpus.note


def test_cells_are_cached_per_submission_and_recomputed_when_what_they_depend_on_changes(tmp_path, monkeypatch):
    clusters = {d: f"img{d // 4}" for d in range(12)}
    e = entry("a", ones(0, 1, 2, 3, 4, 5, 6, 7), clusters=clusters)
    first = ranking.cells(e, ["cii_none/acc"], str(tmp_path))
    assert (tmp_path / f"{e.submission_hash}.cells.json").is_file()
    monkeypatch.setattr(ranking, "cell", lambda *a: pytest.fail("recomputed a cached cell"))
    assert ranking.cells(e, ["cii_none/acc"], str(tmp_path)) == first
    monkeypatch.undo()
    changed = entry("a", ones(0, 1, 2, 3, 4, 5, 6), clusters=clusters)  # same submission hash, another re-score
    again = ranking.cells(changed, ["cii_none/acc"], str(tmp_path))["cii_none/acc"]
    assert again.value == pytest.approx(7 / 12) and again == ranking.cell(changed, "cii_none/acc")


# ---- sections, reference rows, overall -----------------------------------------------------------------------------


def test_rows_of_another_judge_are_ranked_apart_with_the_reason(no_anchors):
    base = [entry(f"m{i}", ones(*range(10 - i))) for i in range(3)]
    other = [entry("x", ones(*range(12)), protocol={"judge": "gpt-4o-2024-08-06"})]
    board = ranking.rank(base + other, [], no_anchors)
    main, apart = board.sections
    assert [r.label for r in ranked_rows(main)] == ["m0", "m1", "m2"] and main.apart == []
    assert [r.label for r in ranked_rows(apart)] == ["x"] and ranked_rows(apart)[0].rank == 1
    assert apart.apart == ["judge: gpt-4o-2024-08-06 here, None in the main section"]
    assert main.protocol["judge"] is None and apart.protocol["judge"] == "gpt-4o-2024-08-06"


def test_the_main_section_on_a_tie_is_the_one_comparable_with_the_paper():
    sample = {"data_source": {"kind": "sample"}}
    entries = [entry("s", ones(0, 1), protocol={"data": "sample"}, prov=sample), entry("h", ones(0))]
    board = ranking.rank(entries, [])
    assert [ranked_rows(s)[0].label for s in board.sections] == ["h", "s"]
    assert board.sections[1].apart == ["data: sample here, None in the main section"]


def test_reference_rows_are_the_papers_numbers_marked_by_the_reports_comparability():
    ok = [entry("a", ones(*range(7))), entry("b", ones(*range(5)))]
    board = ranking.rank(ok, [])
    refs = [r for r in board.sections[0].rows if r.reference]
    gpt = next(r for r in refs if r.label == "GPT-4o")
    assert gpt.cells["cii_none/acc"].value == pytest.approx(0.541)  # Table 1's 54.1 %, in our unit (a fraction)
    assert gpt.comparable is True and gpt.reasons == [] and gpt.rank is None
    assert not any("Llama-3-8B-Instruct" in r.label for r in refs)  # a text-only row of another task is left out
    limited = [entry("c", ones(*range(7)), prov={"limit": 10, "n_effective": 10})]
    gpt = next(r for r in ranking.rank(limited, []).sections[0].rows if r.label == "GPT-4o")
    assert gpt.comparable is False and "--limit 10" in gpt.reasons and "800 docs in the paper, 10 here" in gpt.reasons


def two_benchmarks(models_cii, models_pun, judge_of=None):
    out = []
    for i, m in enumerate(models_cii):
        out.append(entry(m, ones(*range(12 - 3 * i))))
    for i, m in enumerate(models_pun):
        proto = {"judge": (judge_of or {}).get(m)}
        out.append(entry(m, ones(*range(3 + 3 * i)), "punrebus", "punrebus_matching", "accuracy", protocol=proto))
    return out


def test_the_overall_mean_rank_and_its_interval_come_from_the_benchmarks_rank_draws(no_anchors):
    board = ranking.rank(two_benchmarks(["a", "b", "c"], ["a", "b", "c"]), [], no_anchors)
    assert board.overall_absent == "" and board.overall is not None
    rows = {r.label: r for r in board.overall.rows}
    assert {m: r.cells["mean_rank"].value for m, r in rows.items()} == {"a": 2.0, "b": 2.0, "c": 2.0}
    mains = {s.benchmark: s for s in board.sections}
    for m, r in rows.items():
        for bench in ("cii", "punrebus"):
            src = next(x for x in ranked_rows(mains[bench]) if x.label == m)
            assert (r.cells[f"{bench}/rank"].low, r.cells[f"{bench}/rank"].high) == (src.rank_low, src.rank_high)
        assert r.cells["mean_rank"].low <= 2.0 <= r.cells["mean_rank"].high


def test_no_overall_score_unless_every_model_is_ranked_in_every_benchmarks_main_section(no_anchors):
    missing = ranking.rank(two_benchmarks(["a", "b", "c"], ["a", "b"]), [], no_anchors)
    assert missing.overall is None and "c has no ranked row in punrebus's main section" in missing.overall_absent
    apart = ranking.rank(two_benchmarks(["a", "b", "c"], ["a", "b", "c"], {"c": "gpt-4o"}), [], no_anchors)
    assert apart.overall is None and "c has no ranked row in punrebus" in apart.overall_absent
    single = ranking.rank(two_benchmarks(["a", "b"], []), [], no_anchors)
    assert single.overall is None and "fewer than two benchmarks" in single.overall_absent


def test_rejected_files_are_carried_to_the_board_and_nothing_of_them_is_ranked(no_anchors):
    from hanyi.leaderboard.entries import Rejected

    bad = Rejected("x.json", None, "<img src=x>", ["malformed JSON at line 1"])
    board = ranking.rank([entry("a", ones(0))], [bad], no_anchors)
    assert board.rejected == [bad]
    assert all(r.label != "<img src=x>" for s in board.sections for r in s.rows)


# ---- sections split on the ranking column only; judged columns the board did not judge --------------------------


def two_tasks(model, acc, ctc, judge="judge-a", how="re-judged"):
    """A cii entry with ``cii_none/acc`` (no judge) and ``cii_ctc/ctc_score`` (judged by ``judge``: ``how``)."""
    e = entry(model, acc)
    e.values["cii_ctc"] = {"ctc_score": math.fsum(ctc) / len(ctc)}
    e.per_doc["cii_ctc"] = {"ctc_score": dict(enumerate(ctc))}
    e.protocol["cii_ctc"] = {**PROTOCOL, "judge_model": judge}
    e.protocol["cii_none"] = {**PROTOCOL, "judge_model": "none"}
    e.judged = {"cii_ctc/ctc_score": how}
    return e


def test_a_judge_difference_on_another_column_does_not_split_the_section_and_is_marked(no_anchors):
    entries = [two_tasks("a", ones(*range(9)), [4.0, 3.0]), two_tasks("b", ones(*range(6)), [2.0, 5.0])]
    entries.append(two_tasks("g", ones(*range(3)), [5.0, 5.0], judge="judge-b"))
    board = ranking.rank(entries, [], no_anchors)
    (section,) = board.sections  # one section: cii_none/acc is the ranking column, and no judge touches it
    assert section.ranking_column == "cii_none/acc"
    assert [r.rank for r in ranked_rows(section)] == [1, 2, 3]
    g = next(r for r in ranked_rows(section) if r.label == "g")
    assert "judge_model=judge-b (most rows: judge-a)" in g.cells["cii_ctc/ctc_score"].note
    assert "judge_model" not in g.cells["cii_none/acc"].note
    assert section.protocol["cii_ctc: judge_model"].startswith("differs by row")


def test_a_judge_difference_on_the_ranking_column_still_splits(no_anchors):
    rows = [two_tasks("a", ones(0), [4.0, 3.0]), two_tasks("b", ones(0), [2.0, 5.0], judge="judge-b")]
    for e in rows:  # a board with only the judged task: the judged column is the ranking column
        for field in (e.values, e.per_doc, e.protocol):
            del field["cii_none"]
    board = ranking.rank(rows, [], no_anchors)
    assert [s.ranking_column for s in board.sections] == ["cii_ctc/ctc_score"] * 2
    assert board.sections[1].apart == ["judge_model: judge-b here, judge-a in the main section"]


def test_judged_columns_on_the_submitters_verdicts_are_shown_marked_and_never_ranked_or_split(no_anchors):
    forged = [two_tasks(m, ones(0), [5.0, 5.0], judge=j, how="re-aggregated") for m, j in (("f", "x"), ("h", "y"))]
    for e in forged:
        for field in (e.values, e.per_doc, e.protocol):
            del field["cii_none"]
    board = ranking.rank(forged, [], no_anchors)
    (section,) = board.sections  # the judges differ, but nothing is ranked on their verdicts: no split either
    assert section.ranking_column == "" and all(r.rank is None and r.tier is None for r in ranked_rows(section))
    assert all(r.cells["cii_ctc/ctc_score"].note.startswith(ranking.UNVERIFIED_NOTE) for r in ranked_rows(section))
    # beside a re-scored column, the submitter's verdicts are shown but the rank is the re-scored column's
    mixed = [two_tasks("a", ones(*range(9)), [1.0, 1.0], how="re-aggregated")]
    mixed.append(two_tasks("b", ones(0), [5.0, 5.0], how="re-aggregated"))
    (section,) = ranking.rank(mixed, [], no_anchors).sections
    assert section.ranking_column == "cii_none/acc" and [r.label for r in ranked_rows(section)] == ["a", "b"]
    only = two_tasks("c", ones(0), [5.0, 5.0], how="re-aggregated")
    only.unverified = ["cii_ctc/ctc_score"]  # the intake's own list is read too
    assert "cii_ctc/ctc_score" in ranking.unverified(only)


# ---- judge scales: a bootstrap inside the scale, never Clopper-Pearson -------------------------------------------


def test_a_judge_scale_whose_docs_all_scored_one_has_the_interval_one_to_one_not_clopper_pearson(no_anchors):
    e = two_tasks("a", ones(0), [1.0] * 12)
    c = ranking.cell(e, "cii_ctc/ctc_score")
    assert (c.value, c.low, c.high) == (1.0, 1.0, 1.0)  # was [0.0250, 1.0000], labelled Clopper-Pearson
    assert "Clopper" not in c.method and c.method.startswith("bootstrap")


def test_a_judge_scale_interval_is_a_plain_bootstrap_loop_and_stays_inside_the_scale():
    rng = np.random.default_rng(9)
    for _ in range(5):
        scores = [float(x) for x in rng.integers(1, 6, size=10)]
        c = ranking.cell(two_tasks("a", ones(0), scores), "cii_ctc/ctc_score")
        loop = np.random.default_rng(SEED)
        means = [sum(scores[i] for i in loop.integers(0, 10, size=10)) / 10 for _ in range(ITERS)]
        assert (c.low, c.high) == pytest.approx((np.percentile(means, 2.5), np.percentile(means, 97.5)), abs=1e-12)
        assert 1.0 <= c.low <= c.value <= c.high <= 5.0


def test_the_array_tests_of_a_0_1_section_are_the_per_pair_tests():
    rng = np.random.default_rng(21)
    for clustered in (False, True):
        docs = 40
        matrix = (rng.random((4, docs)) < [[0.8], [0.6], [0.5], [0.3]]).astype(float)
        matrix[1, 3] = matrix[2, 7] = math.nan  # a doc a row did not score
        labels = {d: f"img{d // 4}" for d in range(docs)} if clustered else {}
        per = [{d: x for d, x in enumerate(row) if not math.isnan(x)} for row in matrix]
        test = ranking._binary_tests(matrix.tolist(), [labels[d] for d in range(docs)] if clustered else None)
        for i, j in itertools.combinations(range(4), 2):
            assert test(i, j) == pytest.approx(ranking.pair_test(per[i], per[j], labels, 0), abs=1e-12)


def test_a_judge_of_another_metric_of_the_ranking_task_neither_splits_nor_marks_the_ranking_column(no_anchors):
    rows = []
    for model, judge, n in (("a", "judge-a", 9), ("b", "judge-a", 6), ("c", "judge-b", 3)):
        e = entry(model, ones(*range(n)), protocol={"judge_model": judge})
        e.values["cii_none"]["judge_score"] = 3.0
        e.per_doc["cii_none"]["judge_score"] = dict.fromkeys(range(12), 3.0)
        e.judged = {"cii_none/judge_score": "re-judged"}
        rows.append(e)
    (section,) = ranking.rank(rows, [], no_anchors).sections
    c = next(r for r in ranked_rows(section) if r.label == "c")
    assert section.ranking_column == "cii_none/acc" and c.rank == 3
    assert "judge_model" not in c.cells["cii_none/acc"].note
    assert "judge_model=judge-b" in c.cells["cii_none/judge_score"].note


def test_the_engine_that_served_the_answers_is_named_in_the_protocol_and_never_splits_or_marks(no_anchors):
    entries = [two_tasks("a", ones(*range(9)), [4.0, 3.0]), two_tasks("b", ones(*range(6)), [2.0, 5.0])]
    entries.append(two_tasks("v", ones(*range(3)), [5.0, 5.0]))
    for e, engine in zip(entries, ("transformers", "transformers", "vllm")):
        for fields in e.protocol.values():
            fields["model_backend"] = engine
    (section,) = ranking.rank(entries, [], no_anchors).sections  # one ranking: the engine is part of the system
    assert [r.rank for r in ranked_rows(section)] == [1, 2, 3]
    v = next(r for r in ranked_rows(section) if r.label == "v")
    assert all("model_backend" not in (c.note or "") for c in v.cells.values())
    assert section.protocol["cii_none: model_backend"] == "transformers (2 rows), vllm (1 row)"


def test_the_intake_protocol_names_the_submitters_engine():
    from types import SimpleNamespace

    from hanyi.leaderboard.intake import protocol

    task = SimpleNamespace(version=1.0)
    assert protocol({}, task, None, None, {"engine": "sglang", "host": "h"})["model_backend"] == "sglang"
    assert protocol({}, task, None, None)["model_backend"] == "unrecorded"
