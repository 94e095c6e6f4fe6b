"""UNPIE's both-split value is the mean of the Homo and Hetero values: every standard error printed beside it describes
that number (docs/reading-results.md, "The Stderr columns"), and reconstruction's docs of one pun are one cluster."""

import math
import os

import numpy as np
import pytest

from hanyi.metrics import resample
from hanyi.metrics import unpie_aggregations as ua


def _items(correct_homo, correct_hetero, puns=None):
    """Grounding items as process_results logs them: 0/1 ``correct``, the split in ``category``, the pun id."""
    items = [{"correct": c, "category": "homographic"} for c in correct_homo]
    items += [{"correct": c, "category": "heterographic"} for c in correct_hetero]
    for i, it in enumerate(items):
        it["unpie_id"] = puns[i] if puns else f"p{i}"
    return items


def _split_se(values):
    return np.std(values, ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0


HOMO, HETERO = [1, 1, 1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1]


def test_the_value_is_the_mean_of_the_splits_values_not_of_the_pooled_docs():
    value = ua.unpie_mean_correct_all(_items(HOMO, HETERO))
    assert value == pytest.approx((np.mean(HOMO) + np.mean(HETERO)) / 2)
    assert value != pytest.approx(np.mean(HOMO + HETERO))  # the pooled docs' mean is another number


def test_in_run_stderr_is_that_of_a_mean_of_two_independent_split_values():
    """``hanyi eval``'s Stderr column (hanyi.host.run_intervals): sqrt(SE_homo^2 + SE_hetero^2) / 2, each split's
    closed form; before, a bootstrap over the pooled docs that drew the splits' sizes at random."""
    agg = ua.unpie_mean_correct_all
    stats = resample.as_array(agg.per_doc(_items(HOMO, HETERO)))
    expected = math.sqrt(_split_se(HOMO) ** 2 + _split_se(HETERO) ** 2) / 2
    assert resample.standard_error(agg.combine, stats) == pytest.approx(expected, rel=1e-12)


def test_in_run_stderr_of_meteor_is_the_closed_form_on_the_value_scale():
    items = [
        {"meteor_score": s, "meteor_matcher": "exact+stem", "category": c}
        for s, c in ((0.5, "homographic"), (0.25, "homographic"), (0.1, "heterographic"), (0.7, "heterographic"))
    ]
    agg = ua.unpie_meteor_all
    stats = resample.as_array(agg.per_doc(items))
    expected = 100 * math.sqrt(_split_se([0.5, 0.25]) ** 2 + _split_se([0.1, 0.7]) ** 2) / 2
    assert resample.standard_error(agg.combine, stats) == pytest.approx(expected, rel=1e-12)
    assert resample.standard_error(ua.unpie_meteor.combine, np.array([0.5, 0.25])) == pytest.approx(
        100 * _split_se([0.5, 0.25]), rel=1e-12
    )


def test_lmms_eval_clt_and_clustered_stderr_read_scores_whose_mean_is_the_value():
    """lmms-eval computes Stderr_CLT / Stderr_Clustered after aggregating, from the same items and the task's
    ``score_key`` (``all_splits_score``): the aggregation writes it; the CLT is then the in-run Stderr, and the
    clustered one each split's clustered SE combined the same way (within-cluster terms of one split only)."""
    from lmms_eval.api.metrics import clustered_stderr

    puns = [f"h{i // 2}" for i in range(len(HOMO))] + [f"t{i // 2}" for i in range(len(HETERO))]
    items = _items(HOMO, HETERO, puns) + [{"caption_missing": 1.0, "category": "homographic", "unpie_id": "x"}]
    items.append({"correct": 1.0, "category": "heterographic", "unpie_id": "y", "image_ok": False})
    value = ua.unpie_mean_correct_all(items)
    scores = [it[ua.ALL_SPLITS_SCORE] for it in items if ua.ALL_SPLITS_SCORE in it]
    assert len(scores) == len(HOMO) + len(HETERO) + 1  # a doc without a caption has none
    stats = resample.as_array(ua.unpie_mean_correct_all.per_doc(items))
    assert np.mean(scores) == pytest.approx(value, abs=1e-12)
    clt = np.std(scores, ddof=1) / math.sqrt(len(scores))  # lmms-eval's calculate_clt_aggregate_metric
    assert clt == pytest.approx(resample.standard_error(ua.unpie_mean_correct_all.combine, stats), rel=1e-9)
    labelled = [it for it in items if ua.ALL_SPLITS_SCORE in it]
    clustered = clustered_stderr(scores, [it["unpie_id"] for it in labelled])

    def split_clustered(split):  # lmms-eval's formula on one split's own docs
        own = [it for it in labelled if it["category"] == split]
        return clustered_stderr([float(it["correct"]) for it in own], [it["unpie_id"] for it in own])

    expected = math.sqrt(split_clustered("homographic") ** 2 + split_clustered("heterographic") ** 2) / 2
    assert clustered == pytest.approx(expected, rel=0.05)  # within-cluster terms weighted (N-1) n_s / (N (n_s - 1))


def test_a_run_with_one_split_has_the_plain_standard_error():
    items = _items(HOMO, [])
    value = ua.unpie_mean_correct_all(items)
    scores = [it[ua.ALL_SPLITS_SCORE] for it in items]
    assert value == pytest.approx(np.mean(HOMO)) and scores == pytest.approx([float(c) for c in HOMO])


def test_corpus_bleu_writes_no_per_doc_score():
    items = [{"bleu_stats": [4, 4, 4, 3, 2, 1, 4, 3, 2, 1], "category": "homographic"}] * 2
    ua.unpie_bleu4_all(items)
    assert ua.ALL_SPLITS_SCORE not in items[0]  # lmms-eval prints N/A: no per-doc score has BLEU as its mean


def test_yamls_name_the_score_and_reconstruction_clusters_by_pun():
    import hanyi
    from hanyi.task_yaml import read

    folder = os.path.join(hanyi.TASKS_DIR, "unpie")
    for name in ("_grounding_all_yaml", "_disambiguation_all_yaml", "_reconstruction_all_yaml"):
        assert read(os.path.join(folder, name))["score_key"] == ua.ALL_SPLITS_SCORE, name
    for name in ("_reconstruction_yaml", "_reconstruction_all_yaml"):
        assert read(os.path.join(folder, name))["cluster_key"] == "unpie_id", name


def test_one_split_reconstruction_logs_pun_word_recovered_with_its_pun(sample_reconstruction_doc):
    from hanyi.tasks.unpie import utils

    out = utils.unpie_reconstruction_process_results(sample_reconstruction_doc, ["Translation: a cat sat"])
    for key in ("pun_word_recovered", "pun_word_recovered_robust"):
        item = out[key]
        assert item["unpie_id"] == sample_reconstruction_doc["unpie_id"] and item["score"] in (0.0, 1.0)
        assert utils.unpie_word_recovered([item, item]) == item["score"]  # the same value as lmms-eval's mean


@pytest.fixture(scope="module")
def sample_reconstruction_doc():
    import datasets

    from hanyi.data import unpie as data
    from hanyi.data.sources import SAMPLE_DIR

    rows = datasets.load_dataset(os.path.join(SAMPLE_DIR, "unpie"), split=data.SPLITS[0])
    return data.expand_rows(rows, "reconstruction", data.SPLITS[0], "de")[0][0]
