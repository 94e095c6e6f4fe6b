"""what the report's comparability check counts and says (hanyi.results.provenance)."""

import pytest

from hanyi.results import provenance as pv

HUB = {"data_source": {"kind": "hub"}, "generation_failures": 0, "prompt_variant": "default"}
ANCHOR = {"n": 2000, "judge": "none", "prompt_variant": "default"}


def _caption_run(n_docs, n_missing):
    """A caption task's results and sample log: ``n_missing`` docs loaded and sent without a caption (left out)."""
    task = "unpie_grounding_sm"
    samples = [
        {"doc_id": i, "caption_missing": 1.0} if i < n_missing else {"doc_id": i, "exact_match": {"correct": True}}
        for i in range(n_docs)
    ]
    results = {
        "results": {task: {"exact_match,none": 1.0}},
        "configs": {task: {"task": task, "dataset_path": "unpie/unpie"}},
        "n-samples": {task: {"original": n_docs, "effective": n_docs}},
        "config": {"model": "m", "limit": None},
    }
    return task, results, samples


def test_a_caption_task_compares_the_docs_it_scored_not_the_docs_it_loaded():
    """Item 2: 400 of 2,000 docs loaded without a caption, sent and left out: 1,600 scored, not Table 6's 2,000."""
    task, results, samples = _caption_run(2000, 400)
    prov = pv.task_provenance(results, task, samples)
    assert (prov["n_effective"], prov["n_unscored"]) == (2000, 400)
    ok, reasons = pv.comparability(prov, "pun_word_recovered", ANCHOR)
    assert not ok and "2000 docs in the paper, 1600 here (400 loaded, not scored)" in reasons
    # without a sample log, the emitted count says the same
    results["results"][task]["caption_missing,none"] = 400.0
    assert pv.task_provenance(results, task, None)["n_unscored"] == 400
    task, results, samples = _caption_run(2000, 0)
    prov = pv.task_provenance(results, task, samples)
    assert prov["n_unscored"] == 0 and not any("docs in the paper" in r for r in pv.comparability(prov, "x", ANCHOR)[1])


@pytest.mark.parametrize(
    "task, metric, unspecified",
    [
        ("unpie_grounding", "exact_match", "normalisation"),
        ("unpie_grounding_sm_homo", "exact_match_homo", "normalisation"),
        ("unpie_disambiguation_de", "disamb_acc_bertscore", "BERTScore variant"),
        ("unpie_disambiguation_sm_ko", "disamb_acc_bertscore_hetero", "BERTScore variant"),
        ("unpie_reconstruction_fr", "bleu4", "BLEU-4 implementation"),
        ("unpie_reconstruction_text_de", "meteor", "METEOR tokenisation"),
    ],
)
def test_unpie_choices_the_paper_leaves_open_are_reasons_never_a_pass(task, metric, unspecified):
    """Item 3: a value that depends on a choice the paper does not state is "not specified by the paper"."""
    ok, reasons = pv.comparability({**HUB, "task": task, "n_effective": 2000, "n_unscored": 0}, metric, ANCHOR)
    assert not ok
    (reason,) = [r for r in reasons if r.startswith("not specified by the paper")]
    assert unspecified in reason and "ours:" in reason
    assert pv.short_reason(reasons).startswith("not comparable (not specified by the paper")


def test_a_fully_specified_number_stays_comparable():
    prov = {**HUB, "task": "cii_none", "n_effective": 2000, "n_unscored": 0}
    assert pv.comparability(prov, "acc", ANCHOR) == (True, [])
    assert pv.comparability({**prov, "task": "unpie_reconstruction_de"}, "pun_word_recovered", ANCHOR)[0]


@pytest.mark.parametrize(
    "metric, kind",
    [
        ("correct_custom_judge_homo", "not the paper's scorer"),
        ("correct_custom_judge_hetero", "not the paper's scorer"),
        ("disamb_acc_custom_model_homo", "not the paper's scorer"),
        ("meteor_exact_stem_hetero", "fallback scorer"),
        ("disamb_acc_chrf_homo", "fallback scorer"),
        ("correct_custom_judge", "not the paper's scorer"),
    ],
)
def test_split_rows_of_a_custom_or_fallback_key_keep_its_reason(metric, kind):
    """Item 7: the Homo/Hetero rows of correct_custom_judge omitted "not the paper's judge" (the suffix was only
    recognised at the end of the name)."""
    assert any(r.startswith(kind) for r in pv.fallback_reasons({}, metric))


def test_the_n_of_a_rerank_task_counts_queries_not_query_candidate_pairs():
    """Item 7: cvlue_{tr,ir}_rerank log one doc per (query, candidate) pair; R@K and its interval are over queries."""
    from hanyi.results.measures import docs_scored
    from hanyi.results.runs import TaskResult

    def pair(query, rank):
        return {"r1": {"query": query, "stage1_rank": rank, "is_gold": rank == 0, "score": 0.5}}

    samples = [pair(q, k) for q in ("q1", "q2") for k in range(3)]
    assert docs_scored(TaskResult("cvlue_tr_rerank", {}, n=6, samples=samples)) == "2 queries (6 query-candidate pairs)"
    assert docs_scored(TaskResult("cii_none", {}, n=2, samples=[{"acc": {"correct": True}}] * 2)) == "2"
