"""Pun Rebus Art tasks: contract, prompt snapshots, end-to-end replay runs, the shared tiny-LLaVA run, prepare."""

import argparse
import csv
import io
import json
import math
import os
import random
import zipfile

import pytest

from hanyi.data import punrebus as data
from hanyi.data import punrebus_sample
from hanyi.metrics import from_samples, punrebus_breakdowns
from hanyi.tasks.punrebus import aggregate, fewshot, utils
from hanyi.tasks.punrebus.constants import FIVE_SHOT_STORIES, LETTERS

ZERO_SHOT = ("punrebus_matching", "punrebus_elements", "punrebus_expression")  # the VLM group; text-only: its own
FIVE_SHOT = ("punrebus_matching_5shot", "punrebus_elements_5shot")
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "punrebus")
REAL_CSV = os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "data", "pun_rebus", "answer_sheet_w_element.csv"
)


@pytest.fixture(scope="module")
def docs():
    import datasets

    root = os.path.join(os.path.dirname(data.__file__), "sample", "punrebus")
    images = datasets.load_dataset(root, "images", split="test")
    text = datasets.load_dataset(root, "textonly", split="test")
    return {d["image_id"]: d for d in images}, list(text)


def test_group_holds_only_generate_until_zero_shot_tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    tasks = get_task_dict(["punrebus", *FIVE_SHOT], task_manager)
    leaves = {
        t.config.task: t for group in tasks.values() for t in (group.values() if isinstance(group, dict) else [group])
    }
    assert set(ZERO_SHOT) | set(FIVE_SHOT) == set(leaves)  # punrebus_textonly sends no image: group punrebus_text
    for name, task in leaves.items():
        assert task.OUTPUT_TYPE == "generate_until", name
        assert task.config.metadata["version"] >= 1.0


@pytest.mark.parametrize(
    "prompt, doc_id",
    [("matching", "mashangfenghou_1.jpg"), ("elements", "jiaguan_1.jpg"), ("expression", "sanduo_1.jpg")],
)
@pytest.mark.parametrize("variant", ["paper", "code_exact"])
def test_prompt_snapshots(docs, snapshot, prompt, doc_id, variant):
    text = utils.punrebus_doc_to_text(docs[0][doc_id], {"prompt": prompt, "prompt_variant": variant})
    snapshot(f"punrebus_{prompt}_{variant}__{doc_id.split('.')[0]}", text)


@pytest.mark.parametrize("variant", ["paper", "code_exact", "qwen_code_exact"])
def test_textonly_prompt_snapshots(docs, snapshot, variant):
    doc = docs[1][0]
    snapshot(
        f"punrebus_textonly_{variant}__{doc['story_pinyin']}",
        utils.punrebus_doc_to_text(doc, {"prompt": "textonly", "prompt_variant": variant}),
    )


def test_code_exact_prompts_are_the_official_strings_byte_for_byte(docs):
    with open(os.path.join(FIXTURES, "code_exact_prompts.json"), encoding="utf-8") as f:
        official = json.load(f)
    image_doc, text_doc = docs[0]["jiaguan_1.jpg"], docs[1][0]
    for name, expected in official.items():
        prompt, variant = name.split("_", 1)
        doc = text_doc if prompt == "textonly" else image_doc
        expected = expected.replace("{chinese_word}", doc.get("story_zh", ""))
        assert utils.punrebus_doc_to_text(doc, {"prompt": prompt, "prompt_variant": variant}) == expected, name
    assert "Pleas answer" in official["elements_code_exact"] and "Happiness,Joy" in official["matching_code_exact"]


def test_paper_matching_prompt_has_clean_options(docs):
    text = utils.punrebus_doc_to_text(docs[0]["jiaguan_1.jpg"], {"prompt": "matching", "prompt_variant": "paper"})
    assert "meaning:\nA. Longevity and Good Health\nB. Happiness, Joy, Good Luck\n" in text
    assert "  " not in text and text.endswith("Please do not include your justification in your response.")


def test_five_shot_messages_interleave_exemplars_then_query(docs):
    doc = docs[0]["sanduo_1.jpg"]
    (message,) = fewshot.punrebus_5shot_doc_to_messages(
        doc, {"prompt": "matching", "prompt_variant": "paper", "image_token": "<image>"}
    )
    kinds = [part["type"] for part in message["content"]]
    assert kinds == ["image", "text"] * 6
    answers = [p["text"] for p in message["content"][1:10:2]]
    assert answers == ["G. Peace and Protection from Evil, Societal Harmony", "B. Happiness, Joy, Good Luck",
                       "C. Prestige, Promotion, and Good Exam Results", "E. Wealth or Prosperity",
                       "F. Moral Integrity, Eremitism"]  # fmt: skip
    (elements_message,) = fewshot.punrebus_5shot_doc_to_messages(
        doc, {"prompt": "elements", "prompt_variant": "paper", "image_token": "<image>"}
    )
    assert elements_message["content"][1]["text"] == "Quail, Chrysanthemum"
    assert len(fewshot.punrebus_5shot_doc_to_visual(doc)) == 6


@pytest.mark.parametrize("letter", list(LETTERS))
def test_a_model_copying_the_five_shot_answer_format_is_parsed_by_the_paper_parser(docs, letter):
    # review defect 1: "Answer: G. Peace..." copied by a model was read as A by the paper's first-character rule
    doc = {**docs[0]["sanduo_1.jpg"], "categories": [letter], "category_rows": [letter]}
    copied = fewshot.punrebus_5shot_answer(doc, "matching") + "\nThe bats and the peaches..."
    out = utils.punrebus_matching_process_results(doc, [copied])
    assert out["accuracy"]["pred"] == letter and out["accuracy"]["correct"]
    assert out["accuracy_robust"]["pred"] == letter


def test_a_model_copying_the_five_shot_elements_format_is_scored_in_full(docs):
    doc = docs[0]["fushoushuangquan_1.jpg"]
    from hanyi import backbones

    out = utils.punrebus_elements_process_results(doc, [fewshot.punrebus_5shot_answer(doc, "elements")])
    key = backbones.metric_key("wordnet", "element_abs")  # element_abs_rule_lemma where WordNet is not installed
    assert out[key]["pred"] == [g for g in doc["elements_en"]]
    assert out[key]["instance_score"] == pytest.approx(1.0)


@pytest.mark.parametrize("prompt", ["matching", "elements"])
def test_five_shot_text_fallback_has_one_image_placeholder_per_image_before_its_answer(docs, prompt):
    # review defect 7: the text form for models without chat messages listed "Answer:" lines and no images
    doc = docs[0]["sanduo_1.jpg"]
    text = fewshot.punrebus_5shot_doc_to_text(
        doc, {"prompt": prompt, "prompt_variant": "paper", "image_token": "<image>"}
    )
    assert text.count("<image>") == len(fewshot.punrebus_5shot_doc_to_visual(doc)) == 6
    chunks = text.split("<image>\n")[1:]
    assert chunks[0].startswith("Quail" if prompt == "elements" else "G. Peace")
    assert chunks[-1] == utils.punrebus_doc_to_text(doc, {"prompt": prompt, "prompt_variant": "paper"})
    assert "Answer:" not in text
    custom = fewshot.punrebus_5shot_doc_to_text(
        doc, {"prompt": prompt, "prompt_variant": "paper", "image_token": "<|img|>"}
    )
    assert custom.count("<|img|>") == 6


MATCHING = {
    # image_id: (response, paper parse correct?, robust parse correct?) -- gold from the sample answer sheet
    "mashangfenghou_1.jpg": ("C. Prestige", True, True),
    "mashangfenghou_2.jpg": ("Based on the horse and monkey, C.", False, True),  # paper reads B (wrong), robust C
    "jiqingshuangyu_1.jpg": ("**B**", None, True),  # paper: unparsed; robust: B
    "fushoushuangquan_1.jpg": ("Option B", True, True),  # multi-label A|B
    "jiaguan_1.jpg": ("D. Fecundity", False, False),
    "sanduo_1.jpg": ("D", True, True),  # multi-label A|B|D
    "tongxie_1.jpg": ("A vase with shoes", False, None),  # paper reads A (wrong); robust unparsed
    "anjutu_1.jpg": ("", None, None),
    "fuzaiyanqian_1.jpg": ("G", False, False),
    "bidingshengguan_1.jpg": ("C", True, True),
    "dafugui_1.jpg": ("E", True, True),
    "gaofengliangjie_1.jpg": ("D", False, False),
}


def _records(task, table):
    return [{"task": task, "key": {"image_id": k}, "response": v[0]} for k, v in table.items()]


@pytest.fixture(scope="module")
def replay_results(replay, tmp_path_factory):
    elements = {
        "jiaguan_1.jpg": "Official Hat, Bird",  # G = [official hat, official hat]: 2/2
        "fushoushuangquan_1.jpg": "Bats, Peaches (桃), coin.",  # 3/3 after lemmatisation
        "tongxie_1.jpg": "Shoes",  # plural GT: 0 even verbatim
        "mashangfenghou_1.jpg": "\nHorse, Monkey",  # lmms-eval strips responses first, so this one parses (docs)
        "mashangfenghou_2.jpg": "马, 猴子",  # Chinese: 0, counted in element_zh_rate
        "sanduo_1.jpg": "Bat, Pomegranate, Fruit bat",  # bat twice: uncapped 3/2, capped 2/2
    }
    records = _records("punrebus_matching", MATCHING) + [
        {"task": "punrebus_elements", "key": {"image_id": k}, "response": v} for k, v in elements.items()
    ]
    records += [{"task": "punrebus_textonly", "key": {"story_pinyin": "sanduo"}, "response": "D. Fecundity"},
                {"task": "punrebus_textonly", "key": {"story_pinyin": "jiaguan"}, "response": "Option C"}]  # fmt: skip
    import nltk

    with pytest.MonkeyPatch.context() as mp:  # without WordNet: the rule-lemma fallback keys (test_backbones: with)
        mp.setattr(nltk.data, "path", [str(tmp_path_factory.mktemp("no_nltk_data"))])
        return replay(records, ["punrebus_matching", "punrebus_elements", "punrebus_textonly"], on_missing="empty")


def test_matching_paper_and_robust_accuracy(replay_results):
    r = replay_results["results"]["punrebus_matching"]
    paper = [v[1] for v in MATCHING.values()]
    robust = [v[2] for v in MATCHING.values()]
    parsed = [p for p in paper if p is not None]
    assert r["accuracy,none"] == pytest.approx(sum(parsed) / len(parsed))  # 5/10: unparsed left out
    assert r["accuracy_robust,none"] == pytest.approx(sum(bool(x) for x in robust) / len(robust))  # 7/12
    derived = _from_sample_log(replay_results, "punrebus_matching")  # hanyi report, from the sample log
    assert derived["parse_rate,none"] == pytest.approx(10 / 12)
    assert derived["parse_rate_robust,none"] == pytest.approx(10 / 12)


def _from_sample_log(results, task):
    """What ``hanyi report`` computes from the task's sample log (hanyi.metrics.punrebus_breakdowns), read as JSON."""
    lines = json.loads(json.dumps(results["samples"][task], default=str))
    return {f"{name},none": value for name, (value, _) in from_samples.derive(task, lines).items()}


def test_matching_emits_no_breakdown_and_the_report_computes_them_from_the_sample_log(replay_results):
    r = replay_results["results"]["punrebus_matching"]
    assert {k for k in r if k.endswith(",none") and "stderr" not in k} == {
        "accuracy,none",
        "accuracy_robust,none",
    }
    assert len(_from_sample_log(replay_results, "punrebus_matching")) == 23  # 21 by category, 2 parse rates


def test_matching_per_category_and_confusion(replay_results):
    r = _from_sample_log(replay_results, "punrebus_matching")
    # parsed gold-C docs: mashangfenghou x2, jiaguan, bidingshengguan = 4; correct with chosen C: 2
    assert r["accuracy_cat_C,none"] == pytest.approx(2 / 4)
    # parsed gold-D docs: sanduo, tongxie = 2; correct chosen D: sanduo
    assert r["accuracy_cat_D,none"] == pytest.approx(1 / 2)
    confusion = {c: r[f"wrong_answer_confusion_{c},none"] for c in "ABCDEFG"}  # one row per true category
    assert confusion["C"]["B"] == 1 and confusion["C"]["D"] == 1 and confusion["D"]["A"] == 1
    assert confusion["F"]["D"] == 1 and confusion["B"]["G"] == 1
    assert sum(sum(row.values()) for row in confusion.values()) == 5


def test_report_shows_categories_and_confusion_from_the_sample_log(replay_results, tmp_path):
    """``hanyi report`` on the run's results file (no breakdown in it) and sample log: the per-category table and
    the confusion rows, with the values the task emitted before (see test_matching_per_category_and_confusion)."""
    from hanyi.report import main as report_main

    task = "punrebus_matching"
    run = tmp_path / "run" / "m"
    run.mkdir(parents=True)
    results = {k: v for k, v in replay_results["results"][task].items()}
    data = {
        "results": {task: results},
        "group_subtasks": {task: []},
        "higher_is_better": {task: {k.split(",")[0]: True for k in results if "," in k and "stderr" not in k}},
        "n-samples": {task: {"original": 12, "effective": 12}},
        "versions": {task: 1.4},
        "configs": {task: {"task": task, "dataset_path": "sample"}},
        "config": {"model": "replay", "model_args": "path=m", "limit": None},
        "model_name": "m",
        "date": "20250101_000000",
        "lmms_eval_version": "0.7.3",
    }
    (run / "20250101_000000_results.json").write_text(json.dumps(data, default=str), encoding="utf-8")
    lines = [json.dumps(line, default=str) for line in replay_results["samples"][task]]
    (run / f"20250101_000000_samples_{task}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert report_main([str(tmp_path / "run"), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    tables = {t["title"]: t for s in rep["sections"] for t in s["tables"]}
    cats = {r[0][:1]: r[1] for r in tables[f"{task} · accuracy by category"]["rows"]}
    assert cats["C"] == "0.5000" and cats["D"] == "0.5000"
    confusion = tables[f"{task} · wrong_answer_confusion"]
    assert confusion["header"] == ["row", *LETTERS]
    rows = {r[0]: dict(zip(LETTERS, map(int, r[1:]))) for r in confusion["rows"]}
    assert rows["C"]["B"] == 1 and rows["C"]["D"] == 1 and rows["D"]["A"] == 1 and rows["F"]["D"] == 1
    assert sum(sum(row.values()) for row in rows.values()) == 5


def test_matching_dedup_per_category_equals_official_without_duplicate_rows(replay_results):
    r = _from_sample_log(replay_results, "punrebus_matching")
    for c in LETTERS:  # the sample answer sheet repeats no (story, category) pair
        assert r[f"accuracy_cat_dedup_{c},none"] == pytest.approx(r[f"accuracy_cat_{c},none"], nan_ok=True)


def test_per_category_official_denominator_counts_duplicated_answer_sheet_rows(docs):
    # review defect 5: the official scorer counts a story listed twice under B twice in B's denominator
    base = docs[0]["jiqingshuangyu_1.jpg"]
    doubled = {**base, "categories": ["B"], "category_rows": ["B", "B"]}
    single = {**base, "categories": ["B"], "category_rows": ["B"]}
    out = [utils.punrebus_matching_process_results(d, [r]) for d, r in ((doubled, "B"), (single, "C"))]
    derived = punrebus_breakdowns.by_category([o["accuracy"] for o in out])
    assert derived["accuracy_cat_B"] == pytest.approx(1 / 3)
    assert derived["accuracy_cat_dedup_B"] == pytest.approx(1 / 2)


def test_answer_sheet_keeps_duplicated_category_rows_for_the_official_denominators():
    stories, _, anomalies = data.parse_answer_sheet(
        "Chinese Name,Pinyin Name,Category,Element 1,Element 2,Element 3,Element 4\n"
        "吉庆,jiqing,B,Fish,,,\n吉庆,jiqing,C,Fish,,,\n吉庆,jiqing,B,Fish,,,\n"
    )
    assert stories["jiqing"]["categories"] == ["B", "C"]
    assert stories["jiqing"]["category_rows"] == ["B", "C", "B"]
    assert anomalies["duplicate_rows"] == [4]


def test_expression_parse_rate_and_accuracy_use_the_same_image_parser(docs):
    # review defect 4: parse_rate used the text-only parser, which rejects "Option X", accuracy the image parser
    doc = docs[0]["fushoushuangquan_1.jpg"]
    out = utils.punrebus_expression_process_results(doc, ["Option B\nThe bats..."])
    assert out["accuracy"]["parsed"] and out["accuracy"]["correct"]
    assert "parse_rate" not in out  # hanyi report reads parse_rate from the accuracy item's "parsed"


def test_elements_metrics(replay_results):
    r = replay_results["results"]["punrebus_elements"]
    # parsed: the 6 answered docs; the 6 empty answers are unparsed and left out, as in the official scorer
    abs_scores = [1.0, 1.0, 1.0, 0.0, 0.0, 1.5]  # jiaguan, fushoushuangquan, mashangfenghou x2, tongxie, sanduo
    capped = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    assert "element_abs,none" not in r and "element_abs_capped,none" not in r  # no WordNet: never the paper's key
    assert r["element_abs_rule_lemma,none"] == pytest.approx(sum(abs_scores) / 6)
    assert 0.0 < r["element_sim,none"] < 1.0
    assert {k for k in r if k.endswith(",none") and "stderr" not in k} == {
        "element_abs_rule_lemma,none",
        "element_sim,none",
    }
    derived = _from_sample_log(replay_results, "punrebus_elements")  # hanyi report, from the sample log
    assert derived["element_abs_capped_rule_lemma,none"] == pytest.approx(sum(capped) / 6)
    assert derived["element_parse_rate,none"] == pytest.approx(6 / 12)
    assert derived["element_zh_rate,none"] == pytest.approx(2 / 12)  # "马, 猴子" and "Peaches (桃)"
    samples = replay_results["samples"]["punrebus_elements"]
    sample = next(s for s in samples if s["element_abs_rule_lemma"]["gold"] == ["shoes"])
    assert sample["element_abs_rule_lemma"]["lemmatizer"] == "rule_fallback"


def test_textonly_counts_unparsed_as_wrong(replay_results):
    r = replay_results["results"]["punrebus_textonly"]
    n = replay_results["n-samples"]["punrebus_textonly"]["effective"]
    assert n == 11
    assert r["accuracy,none"] == pytest.approx(1 / 11)  # "Option C" is unparsed by the text scorer
    assert r["accuracy_robust,none"] == pytest.approx(2 / 11)


def test_five_shot_excludes_exemplar_stories(replay):
    results = replay([], list(FIVE_SHOT), on_missing="empty")
    for task in FIVE_SHOT:
        assert results["n-samples"][task]["effective"] == 12 - len(FIVE_SHOT_STORIES)


def test_expression_judge_not_emitted_without_config_and_aggregates_with_fake(replay, monkeypatch):
    results = replay(
        [{"task": "punrebus_expression", "doc_id": 0, "response": "G. Peace. The quail..."}],
        ["punrebus_expression"],
        on_missing="empty",
    )
    r = results["results"]["punrebus_expression"]
    assert "judge_score,none" not in r and "parse_rate,none" not in r
    assert _from_sample_log(results, "punrebus_expression")["parse_rate,none"] == pytest.approx(1 / 12)

    import hanyi.metrics.judge as judge

    class FakeClient:
        def judge_many(self, prompts, parse, system=None):
            return [judge.JudgeResult("h", "Score: 7", parse("7"), None, False) for _ in prompts]

    config = type("Config", (), {"model": "fake-judge"})()
    monkeypatch.setattr(judge, "JudgeConfig", type("C", (), {"from_env": staticmethod(lambda o=None: config)}))
    monkeypatch.setattr(judge, "get_judge_client", lambda cfg: FakeClient())
    out = utils.punrebus_expression_process_results({"categories": ["B"], "elements_en": ["fish"], "story_zh": "吉庆双余",
                                                      "story_pinyin": "jiqingshuangyu", "image_id": "x"}, ["B. fish"])  # fmt: skip
    assert "Correct option(s): B. Happiness, Joy, Good Luck" in out["judge_score"]["prompt"]
    assert (out["judge_score"]["verdict"], out["judge_score"]["judge_raw"]) == (7, "Score: 7")  # judged per doc
    # provenance and lmms-eval's clustered SE: the judge's name, the doc's story, its verdict as the CLT score
    assert (out["judge_score"]["judge_model"], out["judge_score"]["story"], out["judge_score"]["score"]) == (
        "fake-judge",
        "吉庆双余",
        7.0,
    )
    assert aggregate.punrebus_judge_score([out["judge_score"]] * 2) == 7


EXPRESSION = [
    {"task": "punrebus_expression", "key": {"image_id": "mashangfenghou_1.jpg"}, "response": "C. The horse and monkey"},
    {"task": "punrebus_expression", "key": {"image_id": "jiaguan_1.jpg"}, "response": "C. An official hat"},
    {"task": "punrebus_expression", "key": {"image_id": "sanduo_1.jpg"}, "response": "D. Three abundances"},
]


def _judge_env(monkeypatch, tmp_path, base_url):
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", base_url)
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
    monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))


def test_expression_judge_is_asked_per_doc_in_process_results_and_logged(replay, monkeypatch, tmp_path, fake_judge):
    """The judge is asked in process_results (one request per judged doc, while the run scores its docs), its
    verdict is logged in the doc's judge_score item, and the aggregation only averages the logged scores."""
    verdicts = {"C. The horse": "Score: 8", "C. An official": "Score: 3", "D. Three": "I cannot rate this."}

    def answer(messages):
        explanation = messages[-1]["content"].split("Model explanation:\n", 1)[1]
        return next((v for k, v in verdicts.items() if explanation.startswith(k)), "Score: 1")  # empty answers: 1

    with fake_judge(answer=answer) as judge:
        _judge_env(monkeypatch, tmp_path, judge.base_url)
        out = replay(EXPRESSION, ["punrebus_expression"], on_missing="empty")
        asked = judge.total_requests
    samples = {s["doc"]["image_id"]: s["judge_score"] for s in out["samples"]["punrebus_expression"]}
    judged = {k: (v["verdict"], v["judge_raw"], v["judge_error"]) for k, v in samples.items()}
    assert judged.pop("mashangfenghou_1.jpg") == (8, "Score: 8", None)
    assert judged.pop("jiaguan_1.jpg") == (3, "Score: 3", None)
    assert judged.pop("sanduo_1.jpg") == (None, "I cannot rate this.", "parse_failure")  # left out, never a 0
    assert judged and set(judged.values()) == {(1, "Score: 1", None)}  # the empty answers
    assert asked == len(samples)  # every doc judged once, in process_results
    expected = (8 + 3 + len(judged)) / (2 + len(judged))
    assert out["results"]["punrebus_expression"]["judge_score,none"] == pytest.approx(expected)
    # the aggregation asks nothing: with no judge reachable it gives the same value from the logged items
    items = [s["judge_score"] for s in out["samples"]["punrebus_expression"]]
    random.Random(0).shuffle(items)
    assert aggregate.punrebus_judge_score(items) == out["results"]["punrebus_expression"]["judge_score,none"]


def test_expression_judge_down_gives_nan_and_one_clear_error(replay, monkeypatch, tmp_path, caplog):
    import socket

    with socket.socket() as sock:  # a port with nobody listening: every request fails
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _judge_env(monkeypatch, tmp_path, f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("HANYI_JUDGE_MAX_RETRIES", "0")
    out = replay(EXPRESSION, ["punrebus_expression"], on_missing="empty")
    r = out["results"]["punrebus_expression"]
    assert math.isnan(r["judge_score,none"])  # no judgement: NaN, never a 0
    assert not math.isnan(r["accuracy,none"])  # the rest of the run is scored as usual
    items = [s["judge_score"] for s in out["samples"]["punrebus_expression"]]
    assert all(it["verdict"] is None and it["judge_error"].startswith("request_failed") for it in items)
    said = [r.getMessage() for r in caplog.records if "judge requests failed" in r.getMessage()]
    assert said and f"{len(items)} of {len(items)} judge requests failed (first: request_failed:" in said[0]


def test_llava_run_scores_every_zero_shot_task(llava_run):
    for task in ZERO_SHOT:
        assert task in llava_run["results"], task
    assert 0.0 <= llava_run["results"]["punrebus_matching"]["accuracy_robust,none"] <= 1.0
    from hanyi import backbones

    key = backbones.metric_key("wordnet", "element_abs")  # element_abs with WordNet, else element_abs_rule_lemma
    assert f"{key},none" in llava_run["results"]["punrebus_elements"]


def _zip_of_images(path, names):
    from hanyi.data.images import synthetic_image

    with zipfile.ZipFile(path, "w") as zf:
        for name in names:
            buf = io.BytesIO()
            synthetic_image(name).save(buf, format="PNG")
            zf.writestr(f"Pun Chinese Painting/{name}", buf.getvalue() if name != "broken_1.jpg" else b"not an image")


def test_prepare_from_local_zip_reports_every_anomaly(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(
        punrebus_sample.sample_answer_sheet() + "福到,fudao,B,Bat,,,\n福到,fudao,B,Fu,,,\n加官,jiaguan,C,Official Hat,Official Hat,,\n坏行,,Z,,,,\n",
        encoding="utf-8",
    )  # fmt: skip
    names = ["jiaguan_1.jpg", "fudao_1.png", "fudao_2.jpeg", "unknown_1.jpg", "Odd Name.JPG", "broken_1.jpg"]
    sheet_text = sheet.read_text(encoding="utf-8").replace("坏行,,Z", "broken,broken,B")  # give "broken" a story
    sheet.write_text(sheet_text, encoding="utf-8")
    _zip_of_images(tmp_path / "images.zip", names)
    parser = argparse.ArgumentParser()
    data.add_prepare_arguments(parser)
    args = parser.parse_args(["--answer-sheet", str(sheet), "--images", str(tmp_path / "images.zip")])
    args.out_dir = str(tmp_path / "out")
    counts = data.run_prepare(args)
    assert counts["images"] == 3 and counts["stories"] == 13 and counts["textonly_docs"] == 13
    assert counts["images_with_no_story"] == 1 and counts["odd_file_names"] == 1 and counts["undecodable_images"] == 1
    assert counts["duplicate_rows"] == 1 and counts["element_conflicts"] == 1
    import datasets

    ds = datasets.load_dataset(args.out_dir, "images", split="test")
    by_id = {d["image_id"]: d for d in ds}
    assert by_id["fudao_1.png"]["elements_en"] == ["fu"]  # last row wins
    assert by_id["jiaguan_1.jpg"]["elements_en"] == ["official hat", "official hat"]
    with open(os.path.join(args.out_dir, "hanyi_build.json"), encoding="utf-8") as f:
        build = json.load(f)
    assert build["anomalies"]["odd_file_names"] == ["Pun Chinese Painting/Odd Name.JPG"]
    assert build["answer_sheet_is_pinned_official"] is False


@pytest.mark.skipif(not os.path.isfile(REAL_CSV), reason="shared/data answer sheet not present")
def test_real_answer_sheet_gives_375_stories_and_text_docs():
    with open(REAL_CSV, "rb") as f:
        raw = f.read()
    assert data.sha256_bytes(raw) == data.ANSWER_SHEET_SHA256
    stories, names, anomalies = data.parse_answer_sheet(raw.decode("utf-8-sig"))
    assert len(stories) == 375 and len(names) == 375
    assert stories["jiaguan"]["elements_en"] == ["official hat", "official hat"]
    # the file lists Bat then Fu, so last-row-wins keeps "fu" (the spec text says "bat"; see docs)
    assert stories["fudao"]["elements_en"] == ["fu"] and stories["fushoushuangquan"]["categories"] == ["A", "B"]
    assert sorted(anomalies["element_conflicts"]) == sorted(
        ["fushoushuangquan", "sangongbaishou", "wufupengshou", "wufuchangqing", "wufuhehe", "fudao"]
    )
    assert set(anomalies["names_with_several_pinyins"]) == {"富贵有余"}
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))[1:]
    assert sum(len(s["categories"]) for s in stories.values()) == len({(r[1], r[2]) for r in rows})
    assert set(LETTERS) == {c for s in stories.values() for c in s["categories"]}


def test_a_doc_without_its_image_stops_the_task_at_load_time(tmp_path):
    import datasets

    from hanyi.data.images import ImageUnavailableError
    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.punrebus import utils

    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "punrebus"), "images", split="test", cache_dir=str(tmp_path))
    assert len(utils.punrebus_process_docs(ds)) == len(ds)
    raw = ds.cast_column("image", datasets.Image(decode=False))
    broken = raw.map(lambda r, i: {"image": None if i == 2 else r["image"]}, with_indices=True)
    broken = broken.cast_column("image", datasets.Image())
    with pytest.raises(ImageUnavailableError, match=rf"image_id: {ds[2]['image_id']}\).*hanyi prepare punrebus"):
        utils.punrebus_process_docs(broken)
    with pytest.raises(ImageUnavailableError):  # 5-shot checks before dropping the exemplar stories
        fewshot.punrebus_drop_exemplar_stories(broken)


@pytest.mark.parametrize(
    "config, loader", [("images", "punrebus_process_docs"), ("textonly", "punrebus_textonly_process_docs")]
)
def test_a_gold_label_column_stored_as_a_string_is_refused_at_load(tmp_path, config, loader):
    """categories "A,B" became the gold ['A', ',', 'B']."""
    import datasets

    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.punrebus import loading

    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "punrebus"), config, split="test", cache_dir=str(tmp_path))
    assert len(getattr(loading, loader)(ds)) == len(ds)  # the real schema passes
    flat = ds.map(lambda row: {"categories": ",".join(row["categories"])}, remove_columns=["categories"])
    with pytest.raises(ValueError, match=r"column 'categories' must be a list of strings, got Value\('string'\)"):
        getattr(loading, loader)(flat)


def test_release_download_shows_a_tqdm_bar(tmp_path, monkeypatch, capsys):
    """the image zip download (hundreds of MB) showed no progress."""
    import io
    import urllib.request

    from hanyi.data import punrebus_release

    class Response(io.BytesIO):
        headers = {"Content-Length": str(3 << 20)}

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: Response(b"x" * (3 << 20)))
    data, origin = punrebus_release._read_source("https://example.invalid/z.zip", str(tmp_path), "images.zip")
    assert len(data) == 3 << 20 and origin == str(tmp_path / "images.zip")
    err = capsys.readouterr().err
    assert "images.zip" in err and "100%" in err and "3.15M" in err


def test_elements_ahead_encodes_every_string_of_the_task_once_and_process_results_reads_the_cache(docs, monkeypatch):
    """For all-MiniLM-L6-v2: the task's filter (punrebus_elements_ahead, through ScoreAhead) encodes
    every distinct gold and parsed element once, in one batch here; scoring the docs then encodes nothing."""
    from hanyi import backbones
    from hanyi.metrics import elements as el

    sbert = el.load_sbert()
    if sbert is None or backbones.metric_key("sbert", "element_sim") is None:
        pytest.skip("all-MiniLM-L6-v2 not available offline")
    calls = []

    class Counting:
        def encode(self, strings, **kwargs):
            calls.append([strings] if isinstance(strings, str) else list(strings))
            return sbert.encode(strings, **kwargs)

    model = Counting()
    monkeypatch.setattr(el, "load_sbert", lambda name=None: model)
    images = list(docs[0].values())
    responses = [
        ", ".join(d["elements_en"][::-1]) + "s, Peach (桃)" if i % 2 else "Bat, coins" for i, d in enumerate(images)
    ]
    utils.punrebus_elements_ahead(responses, images)
    strings = {s for d in images for s in d["elements_en"]} | {
        s for r in responses for s in el.parse_elements_official(r)
    }
    assert len(calls) == 1 and sorted(calls[0]) == sorted(strings)  # each distinct string once, one batch
    for doc, response in zip(images, responses):
        out = utils.punrebus_elements_process_results(doc, [response])
        assert out["element_sim"]["instance_score"] is not None
    assert len(calls) == 1  # process_results read the cache
