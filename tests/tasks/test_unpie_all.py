"""UNPIE tasks that score both splits: their aggregations (``all_splits`` of the one-split tasks' own) give the
paper's All, the unweighted mean of Homo and Hetero, with the arithmetic of lmms-eval's group of the two one-split tasks
(``aggregate_subtask_metrics``, ``weight_by_size: false``), bit for bit, whatever the order of the docs; ``hanyi
report`` gives them an interval."""

import math
import os
import random

import pytest
from lmms_eval.api.metrics import aggregate_subtask_metrics
from lmms_eval.api.metrics import mean as lmms_mean

from hanyi.data import unpie as data
from hanyi.data.sources import SAMPLE_DIR
from hanyi.metrics import resample
from hanyi.metrics import unpie_aggregations as agg
from hanyi.tasks.unpie import both_splits, utils

ANSWERS = ["", "cut", "[answer]: chemistry", "Here is the answer:\nsweet", "gecko", "nothing", "[German]: x"]


def _same(a, b):
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


@pytest.fixture(scope="module")
def docs():
    """The sample's docs per kind and split (German for disambiguation and reconstruction)."""
    import datasets

    root = os.path.join(SAMPLE_DIR, "unpie")
    rows = {s: datasets.load_dataset(root, split=s) for s in data.SPLITS}
    out = {}
    for kind in data.KINDS:
        lang = None if kind == "grounding" else "de"
        out[kind] = {s: data.expand_rows(rows[s], kind, s, lang)[0] for s in data.SPLITS}
    return out


def _answer(doc, rng):
    gold = [doc.get(k) for k in ("pun_phrase", "target", "distractor") if isinstance(doc.get(k), str)]
    pool = ANSWERS + gold + [f"[English]: {g}" for g in gold] + [f"[German]: {g}" for g in gold]
    return rng.choice(pool)


def _lmms_mean_of_score(items):
    """lmms-eval's ``mean`` over the one-split task's logged 0/1 scores (its aggregation until reconstruction 1.0),
    which its aggregation since, ``unpie_word_recovered``, gives bit for bit."""
    value = lmms_mean([it["score"] for it in items])
    assert _same(agg.unpie_word_recovered(items), value)
    return value


#: (kind, the both-splits key, its aggregation, the one-split key, the one-split aggregation)
CASES = [
    ("grounding", "exact_match", agg.unpie_mean_correct_all, "exact_match", agg.unpie_mean_correct),
    ("grounding", "exact_match_robust", agg.unpie_mean_correct_all, "exact_match_robust", agg.unpie_mean_correct),
    ("disambiguation", "DISAMB", agg.unpie_disamb_acc_all, "DISAMB", agg.unpie_disamb_acc_bertscore),
    ("reconstruction", "bleu4", agg.unpie_bleu4_all, "bleu4", agg.unpie_bleu4),
    ("reconstruction", "METEOR", agg.unpie_meteor_all, "METEOR", agg.unpie_meteor),
    ("reconstruction", "pun_word_recovered", agg.unpie_word_recovered_all, "pun_word_recovered", _lmms_mean_of_score),
]


@pytest.fixture
def no_backbones(monkeypatch):
    """No judge; BERTScore and WordNet as this machine has them (their keys: :func:`_key`)."""
    monkeypatch.delenv("HANYI_JUDGE_BASE_URL", raising=False)


def _key(key: str) -> str:
    """The disambiguation / METEOR key this machine emits (the paper's, or its fallback)."""
    from hanyi import backbones

    if key == "DISAMB":
        return backbones.metric_key("bertscore", "disamb_acc_bertscore")
    return backbones.metric_key("wordnet", "meteor") if key == "METEOR" else key


@pytest.mark.parametrize("kind, key, both, leaf_key, leaf", CASES)
def test_all_is_the_former_groups_mean_bit_for_bit_in_any_order(docs, no_backbones, kind, key, both, leaf_key, leaf):
    key, leaf_key = _key(key), _key(leaf_key)
    one_split = getattr(utils, f"unpie_{kind}_process_results")
    both_splits_hook = getattr(both_splits, f"unpie_{kind}_all_process_results")
    for seed in range(6):
        rng = random.Random(seed)
        values, items = [], []
        for split in data.SPLITS:
            split_docs = docs[kind][split] * (2 if split == "homographic" else 5)  # unequal: All is no pooled mean
            answers = [_answer(d, rng) for d in split_docs]
            leaf_items = [one_split(d, [a])[leaf_key] for d, a in zip(split_docs, answers)]
            values.append(leaf(leaf_items))
            items += [both_splits_hook(d, [a])[key] for d, a in zip(split_docs, answers)]
        group = aggregate_subtask_metrics(values, [len(docs[kind][s]) for s in data.SPLITS], weight_by_size=False)
        assert _same(both(items), group), (key, seed)
        for order in range(3):
            random.Random(order).shuffle(items)
            assert _same(both(items), group), (key, seed, order)
        assert resample.by_name(both.__name__) is both is getattr(agg, both.__name__) and both.light  # YAML name
        stats = resample.as_array(both.per_doc(items))
        assert stats.shape[1] >= 2 and _same(both.combine(stats), group)


def test_a_split_with_no_doc_gives_the_other_splits_value_and_an_uncaptioned_doc_is_no_doc(docs, no_backbones):
    doc = {**docs["grounding"]["homographic"][0], "caption": "a knife"}
    right, wrong = (both_splits.unpie_grounding_all_process_results(doc, [a])["exact_match"] for a in ("cut", "spoon"))
    uncaptioned = both_splits.unpie_grounding_all_process_results({**doc, "caption": ""}, ["cut"])
    assert uncaptioned["exact_match"]["caption_missing"] == 1.0 and set(uncaptioned) == {
        "exact_match",
        "exact_match_robust",
    }
    hetero = {**right, "category": "heterographic"}
    assert agg.unpie_mean_correct_all([right, wrong, uncaptioned["exact_match"]]) == 0.5  # Homo only
    assert agg.unpie_mean_correct_all([right, wrong, hetero]) == (0.5 + 1.0) / 2
    assert math.isnan(agg.unpie_mean_correct_all([uncaptioned["exact_match"]]))  # no doc scored at all


def test_the_all_interval_is_a_bootstrap_of_the_mean_of_the_split_values(docs, no_backbones):
    rng = random.Random(3)
    items = []
    for split in data.SPLITS:
        for d in docs["reconstruction"][split] * 4:
            items.append(both_splits.unpie_reconstruction_all_process_results(d, [_answer(d, rng)])["bleu4"])
    out = resample.bootstrap(
        agg.unpie_bleu4_all.combine, resample.as_array(agg.unpie_bleu4_all.per_doc(items)), iters=200
    )
    assert out["value"] == agg.unpie_bleu4_all(items)
    assert out["ci_low"] is not None and out["ci_low"] <= out["value"] <= out["ci_high"]


def test_reconstruction_emits_the_judge_or_its_offline_stand_in_never_both(docs, no_backbones, monkeypatch):
    doc = docs["reconstruction"]["homographic"][0]
    keys = set(both_splits.unpie_reconstruction_all_process_results(doc, ["[English]: x"]))
    meteor = _key("METEOR")
    assert keys == {
        "bleu4",
        "bleu4_robust",
        meteor,
        f"{meteor}_robust",
        "pun_word_recovered",
        "pun_word_recovered_robust",
    }
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake")
    monkeypatch.setenv("HANYI_JUDGE_MAX_RETRIES", "0")  # nothing listens on port 9: the keys are what is checked
    out = both_splits.unpie_reconstruction_all_process_results(doc, ["[English]: x"])
    assert "correct_custom_judge" in out and not any(k.startswith("pun_word_recovered") for k in out)
    assert out["bleu4"]["pun_word_recovered"] in (0.0, 1.0)  # still logged, for hanyi report


@pytest.mark.parametrize("kind, task", [("grounding", "unpie_grounding"), ("disambiguation", "unpie_disambiguation_de"),
                                        ("reconstruction", "unpie_reconstruction_de")])  # fmt: skip
def test_every_homo_and_hetero_value_of_the_report_has_an_interval_that_reproduces_it(docs, no_backbones, kind, task):
    """The report's ``<metric>_homo`` / ``_hetero`` values (columns of Tables 4-6) get an interval: the one-split
    aggregation registered beside the breakdown gives the breakdown's value from the same logged items."""
    from hanyi.metrics import from_samples

    hook = getattr(both_splits, f"unpie_{kind}_all_process_results")
    rng = random.Random(5)
    lines = [hook(d, [_answer(d, rng)]) for s in data.SPLITS for d in docs[kind][s] * 3]
    lines = [{**line, "doc_id": i} for i, line in enumerate(lines)]
    derived = from_samples.derive(task, lines)
    split_values = [m for m in derived if m.endswith(("_homo", "_hetero")) and not m.startswith(("answer_rate",
                    "exact_match_strict", "exact_match_lenient", "image_unresolved", "caption_missing"))]  # fmt: skip
    assert len(split_values) >= 4, sorted(derived)
    for metric in split_values:
        sources = [(s, fn) for s, fn in from_samples.interval_sources(task, metric) if all(s in ln for ln in lines)]
        assert sources, f"{task}: {metric} has no interval"
        source, fn = sources[0]
        assert fn.light and _same(fn([ln[source] for ln in lines]), derived[metric][0]), metric
        out = resample.bootstrap(fn.combine, resample.as_array(fn.per_doc([ln[source] for ln in lines])), iters=50)
        assert _same(out["value"], derived[metric][0])


def test_two_runs_get_a_paired_comparison_of_the_homo_and_hetero_values(docs, no_backbones, tmp_path):
    """``hanyi report RUN_A RUN_B`` compares the Homo and Hetero grounding accuracies doc by doc, on the docs of that
    split, as it did when the one-split tasks emitted them (0.3.0)."""
    import json

    from tests.test_report_honest import report, section, write_run

    split_docs = [(s, d) for s in data.SPLITS for d in docs["grounding"][s] * 6]
    answers = {"a": [d["pun_phrase"] if i % 3 else "no" for i, (_, d) in enumerate(split_docs)], "b": ["no"] * 3}
    answers["b"] = [d["pun_phrase"] if i % 2 else "no" for i, (_, d) in enumerate(split_docs)]
    dirs, correct = [], {}
    for name, responses in answers.items():
        lines = [
            {"doc_id": i, **json.loads(json.dumps(both_splits.unpie_grounding_all_process_results(d, [r])))}
            for i, ((_, d), r) in enumerate(zip(split_docs, responses))
        ]
        correct[name] = {s: [float(ln["exact_match"]["correct"]) for (sp, _), ln in zip(split_docs, lines) if sp == s]
                         for s in data.SPLITS}  # fmt: skip
        emitted = {"exact_match,none": agg.unpie_mean_correct_all([ln["exact_match"] for ln in lines])}
        dirs.append(write_run(tmp_path / name, "pretrained=m", {"unpie_grounding": emitted}, samples={"unpie_grounding": lines}))  # fmt: skip
    rep = report(tmp_path, *dirs)
    paired = {p["metric"]: p for p in section(rep, "unpie")["paired"]}
    for split, suffix in (("homographic", "homo"), ("heterographic", "hetero")):
        rec = paired[f"exact_match_{suffix}"]
        a, b = correct["a"][split], correct["b"][split]
        assert rec["n_pairs"] == len(a) == len(docs["grounding"][split]) * 6
        assert rec["difference"] == pytest.approx((sum(b) - sum(a)) / len(a)) and rec["difference"] != 0


def test_a_hub_id_reads_the_heterographic_split_from_the_same_dataset_and_cache(monkeypatch, tmp_path):
    """The both-splits tasks append the heterographic docs by loading that split of the dataset lmms-eval loaded:
    the same path (here a hub id, as ``hanyi.data.sources.resolve`` gives it without local data), config
    ``default`` and the datasets cache lmms-eval uses (``$LMMS_EVAL_DATASETS_CACHE``); offline, ``datasets`` serves a
    hub id from that cache. Without the variable, ``datasets``' own default cache, which is lmms-eval's too unless
    that cache is on a remote filesystem (lmms-eval 0.7.3 then moves its cache to local scratch; docs/unpie.md)."""
    import datasets

    from hanyi.data import sources
    from hanyi.tasks.unpie import loading

    root = os.path.join(SAMPLE_DIR, "unpie")
    local = {s: datasets.load_dataset(root, split=s) for s in data.SPLITS}
    calls = []

    def fake_load_dataset(path, name=None, split=None, cache_dir=None, **kw):
        calls.append((path, name, split, cache_dir, kw))
        return local[split]

    monkeypatch.setattr(sources, "resolve", lambda bench: "some-org/unpie")
    monkeypatch.setattr(loading.datasets, "load_dataset", fake_load_dataset)
    monkeypatch.setattr(loading.scoring, "require_backbones", lambda kind: None)
    monkeypatch.setenv("LMMS_EVAL_DATASETS_CACHE", str(tmp_path / "cache"))
    loading._heterographic_files.cache_clear()
    docs = loading.unpie_grounding_docs(local["homographic"])
    assert loading.unpie_reconstruction_de_docs(local["homographic"]) is not None  # another task: read once
    assert calls == [("some-org/unpie", "default", "heterographic", str(tmp_path / "cache"), {})]
    expected = [data.expand_rows(local[s], "grounding", s)[0] for s in data.SPLITS]
    assert docs["unpie_id"] == [d["unpie_id"] for d in expected[0] + expected[1]]  # homographic, then heterographic
    monkeypatch.delenv("LMMS_EVAL_DATASETS_CACHE")
    loading.unpie_grounding_docs(local["homographic"])
    assert calls[-1][3] is None and len(calls) == 2
    loading._heterographic_files.cache_clear()
