"""Scoring ahead: a task's response filter sees every response at once, sends the judge's requests at
its concurrency whatever ``--process_docs_parallel``, and encodes each distinct string once in batches; the numbers
are those of scoring each doc alone (a backbone's within the float tolerance)."""

import os
import sys

import numpy as np
import pytest

from hanyi.tasks import _ahead
from hanyi.tasks._common import ValidUtf8Responses

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fixtures", "vulca"))
from tiny_nli import build_tiny_nli  # noqa: E402

VULCA_DOCS = ("01", "04", "05", "08", "10", "12")
CRITIQUES = [f"Critique {i}: lanterns, willows and a pavilion, seen {i} times." for i in range(len(VULCA_DOCS))]


def _vulca_records(task="vulca_baseline"):
    return [{"task": task, "key": {"doc_id": d}, "response": t} for d, t in zip(VULCA_DOCS, CRITIQUES)]


def _judge_env(monkeypatch, path, base_url, concurrency):
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", base_url)
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
    monkeypatch.setenv("HANYI_JUDGE_CONCURRENCY", str(concurrency))
    monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(path))


def test_judge_keeps_its_concurrency_with_one_process_results_worker(replay, monkeypatch, tmp_path, fake_judge):
    """VULCA: 6 critiques x 3 rubrics at 200 ms per request. Asked per doc in process_results, one worker had one
    request in flight (3.6 s); sent ahead, 8 are in flight, each request is sent once, and every level is the same."""
    monkeypatch.delenv("HANYI_VULCA_NLI_MODEL", raising=False)
    runs = {}
    for mode in ("ahead", "per doc"):
        if mode == "per doc":  # the filter without its ahead step: what process_results alone does
            monkeypatch.setattr(_ahead.ScoreAhead, "apply", ValidUtf8Responses.apply)
        with fake_judge(delay_s=0.2) as judge:
            _judge_env(monkeypatch, tmp_path / mode, judge.base_url, 8)
            out = replay(_vulca_records(), ["vulca_baseline"], process_docs_parallel=1)
            runs[mode] = (
                judge.max_in_flight,
                judge.total_requests,
                [s["vulca_rubric"] for s in out["samples"]["vulca_baseline"]],
            )
    assert runs["ahead"][0] == 8 and runs["per doc"][0] == 1
    assert runs["ahead"][1] == runs["per doc"][1] == 3 * len(VULCA_DOCS)
    assert runs["ahead"][2] == runs["per doc"][2] and all(v is not None for d in runs["ahead"][2] for v in d.values())


@pytest.mark.parametrize(
    "task, records",
    [
        (
            "cii_ctc",
            [
                {"task": "cii_ctc", "key": {"id": i}, "response": f"画中老人在松下抚琴 {i}。"}
                for i in ("test-3", "test-8")
            ],
        ),
    ],
)
def test_every_judged_task_sends_ahead(replay, monkeypatch, tmp_path, fake_judge, task, records):
    with fake_judge(delay_s=0.2) as judge:
        _judge_env(monkeypatch, tmp_path, judge.base_url, 8)
        replay(records, [task], process_docs_parallel=1, on_missing="empty")
        assert judge.max_in_flight > 1, task


def test_unpie_reconstruction_and_punrebus_expression_send_ahead(
    replay, tasks_unpie, monkeypatch, tmp_path, fake_judge
):
    task = "unpie_reconstruction_text_de_homo"
    docs = tasks_unpie[task].test_docs()
    records = [
        {
            "task": task,
            "key": {"unpie_id": d["unpie_id"], "meaning_idx": d["meaning_idx"]},
            "response": f"[English]: pun {i}",
        }
        for i, d in enumerate(docs)
    ]
    with fake_judge(delay_s=0.2) as judge:
        _judge_env(monkeypatch, tmp_path / "unpie", judge.base_url, 8)
        replay(records, [task], process_docs_parallel=1)
        assert judge.max_in_flight == min(8, len(docs)) and judge.total_requests == len(docs)
    with fake_judge(delay_s=0.2) as judge:
        _judge_env(monkeypatch, tmp_path / "punrebus", judge.base_url, 8)
        out = replay([], ["punrebus_expression"], process_docs_parallel=1, on_missing="empty")
        n = len(out["samples"]["punrebus_expression"])
        assert judge.max_in_flight == 8 and judge.total_requests <= n  # the empty answers of two docs: one prompt


@pytest.fixture(scope="module")
def tasks_unpie(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(["unpie_reconstruction_text_de_homo"], task_manager)


def test_announced_requests_are_sent_only_once_one_of_them_is_asked(fake_judge, tmp_path):
    """A filter's guess of which doc a response answers may be wrong (``--offset``): announced requests cost nothing
    until process_results asks for one of them; then all are sent, and each is asked once."""
    from hanyi.metrics.judge import JudgeClient, JudgeConfig, parse_integer_score

    parse = lambda t: parse_integer_score(t, 1, 5)  # noqa: E731
    with fake_judge(delay_s=0.05) as judge:
        client = JudgeClient(JudgeConfig(base_url=judge.base_url, model="m", concurrency=4, cache_dir=str(tmp_path)))
        client.expect([f"announced {i}" for i in range(6)])
        (other,) = client.judge_many(["not announced"], parse)
        assert judge.total_requests == 1 and other.value is not None
        (first,) = client.judge_many(["announced 0"], parse)
        rest = client.judge_many([f"announced {i}" for i in range(1, 6)], parse)
        assert judge.total_requests == 7 and judge.max_in_flight == 4
        assert [r.value for r in [first, *rest]] == [
            r.value for r in client.judge_many([f"announced {i}" for i in range(6)], parse)
        ]
        assert judge.total_requests == 7


def test_an_announced_request_that_failed_is_asked_again_next_time(fake_judge, tmp_path):
    from hanyi.metrics.judge import JudgeClient, JudgeConfig, parse_integer_score

    parse = lambda t: parse_integer_score(t, 1, 5)  # noqa: E731
    with fake_judge(failure_rate=1.0, failure_statuses=(400,)) as judge:
        client = JudgeClient(JudgeConfig(base_url=judge.base_url, model="m", max_retries=0, cache_dir=str(tmp_path)))
        client.expect(["p"])
        (failed,) = client.judge_many(["p"], parse)
        assert failed.request_failed and judge.total_requests == 1
        judge.configure(failure_rate=0.0)
        (ok,) = client.judge_many(["p"], parse)
        assert ok.value is not None and judge.total_requests == 2


def test_aligned_docs_follow_the_rank_and_drop_images(monkeypatch):
    import datasets

    docs = [{"i": i} for i in range(5)]
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert _ahead.aligned_docs(2, docs) == [{"i": 1}, {"i": 3}]
    assert _ahead.aligned_docs(5, docs) == docs  # every doc in this process
    assert _ahead.aligned_docs(1, docs) is None and _ahead.aligned_docs(1, None) is None  # --limit: unknown
    features = datasets.Features({"i": datasets.Value("int32"), "image": datasets.Image()})
    table = datasets.Dataset.from_dict({"i": [0, 1], "image": [None, None]}, features=features)
    assert _ahead.aligned_docs(2, table) == [{"i": 0}, {"i": 1}]


def test_a_failing_ahead_step_leaves_the_responses_and_logs(caplog):
    def broken(responses, docs):
        raise KeyError("boom")

    resps = [["a\ud800"], ["b"]]
    assert _ahead.ScoreAhead(ahead=broken).apply(resps, None) == [["a\ufffd"], ["b"]]
    assert "scoring ahead failed (KeyError" in caplog.text


def test_vulca_backbones_encode_each_distinct_critique_once_with_the_same_scores(replay, monkeypatch, session_tmp):
    """The NLI model and the embedder are called once for the task's distinct critiques (two docs share one), in
    batches; each doc's zero-shot scores and embedding equal scoring that doc alone within 1e-6 relative."""
    from sentence_transformers import SentenceTransformer

    import hanyi.metrics.zeroshot_nli as nli
    from hanyi.metrics import critique_embed, critique_scoring

    monkeypatch.setenv("HANYI_VULCA_NLI_MODEL", build_tiny_nli(os.path.join(session_tmp, "tiny_nli")))
    monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", "sentence-transformers/all-MiniLM-L6-v2")
    for env in ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(critique_scoring, "_CACHE", {})
    monkeypatch.setattr(critique_embed, "_CACHE", {})
    calls = {"nli": [], "embed": []}
    hf = nli.hf_logits_fn

    def counted(config):
        fn = hf(config)
        return lambda premises, hypotheses: calls["nli"].append(len(set(premises))) or fn(premises, hypotheses)

    monkeypatch.setattr(nli, "hf_logits_fn", counted)
    encode = SentenceTransformer.encode
    monkeypatch.setattr(
        SentenceTransformer,
        "encode",
        lambda self, s, *a, **k: calls["embed"].append(len(s)) or encode(self, s, *a, **k),
    )
    records = _vulca_records("vulca_baseline")
    records[5]["response"] = records[4]["response"]  # one critique twice: encoded once
    out = replay(records, ["vulca_baseline"], process_docs_parallel=2)
    assert calls == {"nli": [5], "embed": [5]}
    samples = out["samples"]["vulca_baseline"]
    monkeypatch.setattr(critique_scoring, "_CACHE", {})
    monkeypatch.setattr(critique_embed, "_CACHE", {})
    config, embed = nli.NLIConfig.from_env(), critique_embed.EmbedConfig.from_env()
    texts = {r["key"]["doc_id"]: r["response"] for r in records}
    for sample in samples:
        text = texts[sample["doc"]["doc_id"]]
        alone = critique_scoring.critique_features([text.strip()], config)[0]
        got = sample["vulca_nli_custom_model"]
        for part in ("features", "quality", "stance"):
            np.testing.assert_allclose(list(got[part].values()), list(alone[part].values()), rtol=1e-6, atol=1e-7)
        vector = critique_embed.embed_texts([text.strip()], embed)[0]
        np.testing.assert_allclose(sample["vulca_embed_custom_model"]["vector"], vector, rtol=1e-6, atol=1e-7)
    assert len(calls["nli"]) == 1 + 5 and len(calls["embed"]) == 1 + 5  # the check above: one call per critique


def _tiny_bert(path):
    import importlib.util

    fixtures = os.path.join(os.path.dirname(__file__), "..", "fixtures", "unpie", "tiny_bert.py")
    spec = importlib.util.spec_from_file_location("ahead_tiny_bert", fixtures)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_bert(str(path)), module.NUM_LAYERS


PAIRS = [
    ("Er teilte einen Schnitt.", "He shared a cut of the profit."),
    ("Ein schreckliches Echo", "a terrible gecko"),
    ("Kurz", "A much longer reference sentence that pads the batch a lot more than the others do."),
    ("Er teilte einen Schnitt.", "a terrible gecko"),
    ("Bojen", "buoys"),
]


@pytest.mark.parametrize("batch_size", [1, 2, 64])
def test_bertscore_f1_from_cached_encodings_is_bert_scores_own_in_any_order_and_batch(tmp_path, batch_size):
    """Each distinct string encoded once per process; each pair's F1 equals BERTScorer.score's within 1e-6
    relative, whatever the batch size, the order of the pairs, or what was encoded before."""
    from hanyi.metrics import reference_choice as rc

    model, layers = _tiny_bert(tmp_path / "bert")
    scorer = rc.load_bertscorer(model, layers)
    cands, refs = [c for c, _ in PAIRS], [r for _, r in PAIRS]
    want = scorer.score(cands, refs, batch_size=64)[2].tolist()
    rc._EMBEDDED.clear()
    f1 = rc.bertscore_f1_scorer(model, layers, batch_size)
    f1.encode(refs[::-1])  # ahead: the references only
    got = f1(cands, refs)
    assert got == pytest.approx(want, rel=1e-6)
    backwards = f1(cands[::-1], refs[::-1])[::-1]
    assert backwards == pytest.approx(want, rel=1e-6)
    assert len([k for k in rc._EMBEDDED if k[0] == id(scorer)]) == len(set(cands + refs))  # each string once


def test_unpie_disambiguation_encodes_each_distinct_string_once_with_the_same_decisions(
    replay, monkeypatch, tmp_path, task_manager
):
    """The task's answers (both extractions), targets and distractors encoded in one batched pass before
    process_results; each logged score is the doc's own BERTScore-F1 (BERTScorer.score) within 1e-6 relative."""
    from lmms_eval.tasks import get_task_dict

    from hanyi.metrics import reference_choice as rc

    model, layers = _tiny_bert(tmp_path / "bert")
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", model)
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", str(layers))
    task = "unpie_disambiguation_de"
    docs = list(get_task_dict([task], task_manager)[task].test_docs())
    records = [
        {
            "task": task,
            "key": {"unpie_id": d["unpie_id"], "meaning_idx": d["meaning_idx"]},
            "response": f"[German]: {d['target'] if i % 2 else d['distractor']}",
        }
        for i, d in enumerate(docs)
    ]
    calls = []
    encode = rc.bert_embeddings
    monkeypatch.setattr(rc, "bert_embeddings", lambda scorer, s, b: calls.append(len(s)) or encode(scorer, s, b))
    rc._EMBEDDED.clear()
    out = replay(records, [task], process_docs_parallel=2)
    assert [n for n in calls if n] == [len({s for d in docs for s in (d["target"], d["distractor"])})]  # one pass
    scorer = rc.load_bertscorer(model, layers)
    for sample in out["samples"][task]:
        got = sample["disamb_acc_custom_model"]
        pred, doc = got["prediction"], sample["doc"]
        want = scorer.score([pred, pred], [got["target"], got["distractor"]], batch_size=64)[2].tolist()
        assert [got["target_score"], got["distractor_score"]] == pytest.approx(want, rel=1e-6), doc["unpie_id"]
