"""CII-Bench tasks: contract, golden prompts, few-shot construction, data builder, end-to-end scoring."""

import argparse
import json
import math
import os

import pytest

from hanyi.tasks.cii.constants import CATEGORY_METRICS, FEWSHOT_IDS, TABLE1_METRICS

MCQ_TASKS = ("cii_none", "cii_test", "cii_cot", "cii_domain", "cii_emotion", "cii_rhetoric", "cii_1shot", "cii_2shot",
             "cii_3shot", "cii_textonly")  # fmt: skip
ALL_TASKS = (*MCQ_TASKS, "cii_ctc")


@pytest.fixture(scope="module")
def cii_tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(list(ALL_TASKS), task_manager)


def _docs(task):
    return {d["id"]: d for d in task.test_docs()}


def test_every_task_is_generate_until_and_versioned(cii_tasks, task_manager):
    assert set(ALL_TASKS) | {"cii"} <= set(task_manager.all_tasks)
    for name in ALL_TASKS:
        task = cii_tasks[name]
        assert task.OUTPUT_TYPE == "generate_until", name
        # 1.1 review fixes (CTC prompt, article trap); 1.2 accuracies and rates are fractions; 2.0 (multiple choice)
        # per-category keys computed by hanyi report from the sample log; 2.1 miss_rate too; 2.2 items carry their
        # score; 2.3 the whitespace-only, bidi and gold-letter rules
        assert task.config.metadata["version"] == (1.3 if name == "cii_ctc" else 2.3), name


def test_group_runs_the_paper_setting_on_800_question_split(cii_tasks):
    # the sample holds 8 test + 4 dev questions; the paper's set is test + dev
    assert len(cii_tasks["cii_none"].test_docs()) == 12
    assert len(cii_tasks["cii_test"].test_docs()) == 8


@pytest.mark.parametrize("task,doc_id", [(t, "test-2") for t in MCQ_TASKS if t != "cii_test"] + [("cii_ctc", "test-3")])
def test_prompt_snapshot(cii_tasks, snapshot, task, doc_id):
    t = cii_tasks[task]
    snapshot(f"{task}__{doc_id}", t.doc_to_text(_docs(t)[doc_id]))


def test_keyword_hints_use_stored_chinese_labels_joined_by_ascii_comma(cii_tasks):
    doc = _docs(cii_tasks["cii_rhetoric"])["test-5"]
    assert "\n关键词：隐喻,夸张\n" in cii_tasks["cii_rhetoric"].doc_to_text(doc)
    assert "\n关键词：社会\n" in cii_tasks["cii_domain"].doc_to_text(doc)
    assert cii_tasks["cii_emotion"].doc_to_text(doc).endswith("答案:\n")


def test_none_prompt_is_the_official_string(cii_tasks):
    text = cii_tasks["cii_none"].doc_to_text(_docs(cii_tasks["cii_none"])["test-1"])
    head = "请根据提供的图片尝试回答下面的单选题。直接回答正确选项，不要包含额外的解释。请使用以下格式：“答案：$LETTER”，其中$LETTER是你认为正确答案的字母。\n\n这张图片有什么隐喻？\n(A) "  # noqa: E501
    assert text.startswith(head) and text.endswith("\n(F) 贪婪会带来灾祸。\n答案：") and text.count("\n(") == 6


@pytest.mark.parametrize("shots", [1, 2, 3])
def test_fewshot_is_multiturn_chat_and_excludes_exemplars(cii_tasks, shots):
    task = cii_tasks[f"cii_{shots}shot"]
    docs = _docs(task)
    assert len(docs) == 9 and not set(FEWSHOT_IDS) & set(docs)
    messages = task.config.doc_to_messages(docs["test-1"], lmms_eval_specific_kwargs=task.lmms_eval_specific_kwargs)
    assert [m["role"] for m in messages] == ["user", "assistant"] * shots + ["user"]
    assert [m["content"][0]["text"] for m in messages[1::2]] == ["A", "D", "B"][:shots]
    for user in messages[0::2]:
        assert [c["type"] for c in user["content"]] == ["image", "text"]
        assert user["content"][1]["text"].endswith("答案：")
    assert len(task.doc_to_visual(docs["test-1"])) == shots + 1  # single-prompt fallback: images in order
    assert task.doc_to_text(docs["test-1"]).count("答案：") == 2 * (shots + 1)  # instruction + trailing, per turn


def test_textonly_has_no_image(cii_tasks):
    assert cii_tasks["cii_textonly"].doc_to_visual(_docs(cii_tasks["cii_textonly"])["test-1"]) == []


def test_ctc_keeps_one_doc_per_distinct_ctc_image(cii_tasks):
    # test-3 and test-4 share one image (explanation); test-8 is the other CTC image of the sample
    assert list(_docs(cii_tasks["cii_ctc"])) == ["test-3", "test-8"]


def test_missing_image_names_the_doc(cii_tasks, monkeypatch):
    from hanyi.data.images import ImageUnavailableError

    monkeypatch.delenv("HANYI_CII_IMAGE_ROOT", raising=False)
    doc = dict(_docs(cii_tasks["cii_none"])["test-1"], image=None)
    with pytest.raises(ImageUnavailableError, match="id=test-1"):
        cii_tasks["cii_none"].doc_to_visual(doc)


# doc order: test-1..test-8, dev-1, dev-33, dev-34, dev-35; gold C E B A D E F A F A D B
RESPONSES = [
    "C",  # official C (correct), robust C
    "我认为答案是E选项",  # official miss (no \b between CJK and E), robust E
    "分析(A)...(B)...\n答案：(B)\n因为A不符合",  # official A (alphabetical scan), robust B
    "",  # miss
    "   ",  # miss (the official script would say F)
    "答案：E",  # both correct
    "(B)和(F)都有道理，但(F)更好",  # official F (most frequent), robust B (leading letter)
    "The answer is C",  # both wrong
    "F",  # both correct
    "努力终有回报。",  # option-text fallback: A, both correct
    "分析\n答案：Hello",  # official H: wrong, not a miss; robust miss
    "B",  # both correct
]


@pytest.fixture(scope="module")
def replay_out(replay):
    records = [{"task": "cii_none", "doc_id": i, "response": r} for i, r in enumerate(RESPONSES)]
    return replay(records, ["cii_none"])


@pytest.fixture(scope="module")
def replayed(replay_out):
    return replay_out["results"]["cii_none"]


def _from_samples(out, task):
    """What ``hanyi report`` computes from the task's sample log (every breakdown, emitted or not)."""
    from hanyi.metrics.from_samples import derive

    return {name: value for name, (value, _) in derive(task, out["samples"][task]).items()}


def test_replay_overall_metrics(replayed, replay_out):
    assert replayed["acc,none"] == pytest.approx(0.50)  # fractions: hanyi's unit for accuracies and rates
    assert replayed["acc_robust,none"] == pytest.approx(7 / 12)
    derived = _from_samples(replay_out, "cii_none")  # hanyi report
    # the official eval_cii.py marks no blank answer a miss ("" is skipped, "   " extracts F): one miss
    # (the CJK-bound E); the two blank answers are counted apart, in blank_rate (was 0.25 = 3/12 under miss_rate)
    assert (derived["miss_rate"], derived["blank_rate"]) == (pytest.approx(1 / 12), pytest.approx(2 / 12))


@pytest.mark.parametrize(
    "metric,expected",
    [
        ("acc_domain_life", 100.0),
        ("acc_domain_art", 200 / 3),
        ("acc_domain_society", 100 / 3),
        ("acc_domain_ctc", 0.0),
        ("acc_emotion_positive", 0.0),
        ("acc_difficulty_easy", 80.0),
        ("acc_type_single_panel_comic", 50.0),
        ("acc_type_illustration", 100 / 3),
        ("acc_rhetoric_metaphor", 300 / 7),
        ("acc_rhetoric_symbolism", 100 / 3),
        ("acc_rhetoric_contrast", 100.0),
        ("acc_rhetoric_antithesis", 0.0),
    ],
)
def test_replay_category_metrics(replay_out, metric, expected):
    """Every category accuracy comes from the sample log; Table 1's columns are also emitted, with the same value."""
    derived = _from_samples(replay_out, "cii_none")
    assert derived[metric] == pytest.approx(expected / 100)  # expected in percent, stored as a fraction
    if metric in TABLE1_METRICS:
        assert replay_out["results"]["cii_none"][f"{metric},none"] == derived[metric]


def test_only_table1_columns_are_emitted_and_every_category_comes_from_the_sample_log(replay_out):
    emitted = {k.split(",")[0] for k in replay_out["results"]["cii_none"] if "," in k and "_stderr" not in k}
    assert emitted == {"acc", "acc_robust", *TABLE1_METRICS}
    derived = _from_samples(replay_out, "cii_none")
    assert set(derived) == {*CATEGORY_METRICS, "miss_rate", "blank_rate"}
    assert math.isnan(derived["acc_rhetoric_visual_dislocation"]) is False  # test-1 carries 视觉错位


def test_sample_log_breakdowns_equal_the_old_per_category_aggregation(replay_out):
    """The breakdown from the logged ``acc`` items equals what the per-category aggregations once computed:
    per category key an item ``{correct, field}`` for the docs carrying the label and None for the others, then
    ``category_accuracy`` over the non-None items / 100 (the old ``utils._aggregation``)."""
    from hanyi.metrics.cii_extract import category_accuracy

    items = [line["acc"] for line in sorted(replay_out["samples"]["cii_none"], key=lambda line: line["doc_id"])]
    derived = _from_samples(replay_out, "cii_none")
    for name, (field, label) in CATEGORY_METRICS.items():
        old_items = [
            {"correct": it["correct"], field: it[field]}
            if (label in it[field] if isinstance(it[field], list) else it[field] == label)
            else None
            for it in items
        ]
        old = category_accuracy([it for it in old_items if it is not None], field, label) / 100
        assert derived[name] == old or (math.isnan(old) and math.isnan(derived[name])), name


def test_prompt_variants_emit_only_the_overall_columns(replay):
    records = [{"task": "cii_cot", "doc_id": i, "response": r} for i, r in enumerate(RESPONSES)]
    out = replay(records, ["cii_cot"])
    emitted = {k.split(",")[0] for k in out["results"]["cii_cot"] if "," in k and "_stderr" not in k}
    assert emitted == {"acc", "acc_robust"}
    derived = _from_samples(out, "cii_cot")
    assert set(derived) == {*CATEGORY_METRICS, "miss_rate", "blank_rate"} and derived["acc_domain_life"] == 1.0
    assert derived["miss_rate"] == pytest.approx(1 / 12)  # hanyi report: the official miss rate


def test_ctc_without_judge_emits_no_judge_metric(replay):
    res = replay(
        [{"task": "cii_ctc", "doc_id": i, "response": r} for i, r in enumerate(["画中有松。", " "])], ["cii_ctc"]
    )
    metrics = {k.split(",")[0] for k in res["results"]["cii_ctc"] if "," in k and "_stderr" not in k}
    assert metrics == {"ctc_blank_rate"}
    assert res["results"]["cii_ctc"]["ctc_blank_rate,none"] == 0.5


def test_tiny_llava_runs_the_group(llava_run):
    res = llava_run["results"]["cii_none"]
    assert 0.0 <= res["acc,none"] <= 1.0 and "miss_rate,none" not in res  # miss_rate: hanyi report
    # `cii` is a tag of cii_none (not a one-task group that printed every number twice)
    assert "cii" not in llava_run["results"] and "cii" not in llava_run.get("groups", {})


def _fake_github_clone(root):
    from hanyi.data.images import synthetic_image

    def rec(rid, answer, rhetoric, with_image=True):
        if with_image:
            synthetic_image(rid).save(os.path.join(root, "images", rid.split("-")[0], f"{rid}.jpg"))
        opts = [f"选项{i}" for i in range(6)]
        q = {
            "id": rid,
            "question": "这张图片有什么隐喻？",
            "options": opts,
            "correct_option": opts[0],
            "answer": answer,
        }
        meta = {"image_type": "绘画(Painting)", "difficulty": "简单", "domain": "中华传统文化", "emotion": "积极",
                "rhetoric": rhetoric, "metaphorical_meaning": "含义", "explanation": f"解释{rid}"}  # fmt: skip
        return {"local_path": f"images/{rid.split('-')[0]}/{rid}.jpg", "questions": [q], "meta_data": meta}

    for split in ("test", "dev"):
        os.makedirs(os.path.join(root, "images", split))
    os.makedirs(os.path.join(root, "data"))
    test = [rec("test-2", "A", {"choices": ["隐喻", "象征"]}), rec("test-1", "A", "隐喻"), rec("test-3", "Z", "隐喻")]
    dev = [rec("dev-1", "A", "隐喻", with_image=False)]
    for split, rows in (("test", test), ("dev", dev)):
        with open(os.path.join(root, "data", f"{split}.json"), "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False)


def test_prepare_from_github_writes_hub_layout_and_reports(tmp_path, task_manager, monkeypatch):
    import datasets
    from lmms_eval.tasks import get_task_dict

    from hanyi.data import cii

    _fake_github_clone(str(tmp_path / "clone"))
    parser = argparse.ArgumentParser()
    cii.add_prepare_arguments(parser)
    args = parser.parse_args(["--source", "github", "--github-root", str(tmp_path / "clone")])
    args.out_dir = str(tmp_path / "out")
    counts = cii.run_prepare(args)
    cannot_run = counts.pop("cannot_run")  # the CLI exits 1 on it: dev-1's image is missing
    assert counts == {"counts": {"test": 2, "dev": 1}, "anomalies": {"bad_answer": 1, "missing_image": 1}}
    assert cannot_run.startswith("1 of 3 questions have no image (first: dev-1 (images/dev/dev-1.jpg))")
    ds = datasets.load_dataset(args.out_dir, split="test")
    assert ds["id"] == ["test-1", "test-2"]
    assert ds["rhetoric"] == ["隐喻", "{'choices': ['隐喻', '象征']}"]
    dev = datasets.load_dataset(args.out_dir, split="dev")
    from hanyi.data.images import ImageUnavailableError, synthetic_image
    from hanyi.tasks.cii import utils

    monkeypatch.delenv("HANYI_CII_IMAGE_ROOT", raising=False)
    with pytest.raises(ImageUnavailableError, match=r"id: dev-1\)"):  # reported by prepare, refused before inference
        utils.cii_process_docs(dev)
    missing = tmp_path / "clone" / dev[0]["local_path"]
    missing.parent.mkdir(parents=True, exist_ok=True)
    missing.write_bytes(b"jpg")  # found there, then decoded like an embedded image: refused
    monkeypatch.setenv("HANYI_CII_IMAGE_ROOT", str(tmp_path / "clone"))
    with pytest.raises(ImageUnavailableError, match=r"id dev-1: "):
        utils.cii_process_docs(dev)
    synthetic_image("dev-1").save(missing, format="JPEG")
    monkeypatch.setenv("HANYI_CII_IMAGE_ROOT", str(tmp_path / "clone"))  # the clone now serves it
    monkeypatch.setenv("HANYI_CII_DATA", args.out_dir)
    task = get_task_dict(["cii_rhetoric"], task_manager)["cii_rhetoric"]
    assert [d["id"] for d in task.test_docs()] == ["test-1", "test-2", "dev-1"]
    assert "关键词：隐喻,象征" in task.doc_to_text(task.test_docs()[1])


def test_prepare_rejects_a_folder_that_is_not_a_clone(tmp_path):
    from hanyi.data import cii

    args = argparse.Namespace(source="github", github_root=str(tmp_path), hub_id=None, out_dir=str(tmp_path / "o"))
    with pytest.raises(FileNotFoundError, match="not a CII-Bench clone"):
        cii.run_prepare(args)


def test_malformed_multilabel_is_reported():
    from hanyi.data.cii import check_rows, parse_multilabel

    with pytest.raises(ValueError, match="malformed"):
        parse_multilabel("{'choices': ['隐喻'")
    row = {"id": "test-9", "answer": "A", "image": 1, "rhetoric": "{'choices': [", "image_type": "海报(Poster)",
           **{f"option{i}": "x" for i in range(1, 7)}}  # fmt: skip
    assert check_rows([row])[1] == {"malformed_rhetoric": ["test-9"]}


def test_load_time_checks_read_only_the_checked_fields():
    """The load-time check reads CHECKED_FIELDS only (fewer columns converted per doc); every kind of
    anomaly is found from them alone, as from whole rows."""
    from hanyi.data.cii import CHECKED_FIELDS, COLUMNS, check_rows

    base = {c: "x" for c in COLUMNS} | {"answer": "A", "correct_option": "x", "image_type": "海报(Poster)",
                                        "rhetoric": "隐喻", "image": True}  # fmt: skip
    rows = [
        base | {"id": "test-1"},
        base | {"id": "test-1"},  # duplicate
        base | {"id": "test-2", "answer": "G"},  # no option letter
        base | {"id": "test-5", "option3": " "},  # unscorable
        base | {"id": "test-3", "correct_option": "y"},  # mismatch
        base | {"id": "test-4", "image_type": "{'choices': ["},  # malformed
    ]
    whole = check_rows(rows)[1]
    assert whole == check_rows([{k: r[k] for k in (*CHECKED_FIELDS, "image")} for r in rows])[1]
    assert set(whole) == {
        "duplicate_id",
        "bad_answer",
        "dropped_unscorable",
        "correct_option_mismatch",
        "malformed_image_type",
    }


def test_ctc_with_a_judge_scores_through_the_evaluator(replay, monkeypatch, tmp_path, fake_judge):
    seen = []

    def answer(messages):
        seen.append(messages)
        return "[4]\n\nDetailed." if "松" in messages[-1]["content"] else "no rating"

    with fake_judge(answer=answer) as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
        records = [{"task": "cii_ctc", "key": {"id": "test-3"}, "response": "画中老人在松下抚琴。"},
                   {"task": "cii_ctc", "key": {"id": "test-8"}, "response": "梅花。"}]  # fmt: skip
        res = replay(records, ["cii_ctc"])["results"]["cii_ctc"]
    assert len(seen) == 2  # judged once for all eight ctc_* metrics
    system, user = seen[0][0]["content"], seen[0][1]["content"]
    assert system.startswith("\n# Role\nYou are an impartial judge") and system.endswith('"[ratings]". \n')
    assert user.startswith("\n    human answer: {") and user.endswith("}\n    ")
    assert res["ctc_score,none"] == 2.0  # [4] and an unparsable answer scored 0, over 2
    assert res["ctc_score_difficulty_hard,none"] == 4.0 and res["ctc_score_difficulty_medium,none"] == 0.0
    assert res["ctc_judge_failures,none"] == 1.0
    # lmms-eval's Stderr_CLT over the docs each key counts (the one hard doc: none), none for the count
    assert res["ctc_score_stderr_clt,none"] == pytest.approx(2.0)  # sd of [4, 0] / √2
    assert res["ctc_score_difficulty_hard_stderr_clt,none"] == "N/A"
    assert res["ctc_judge_failures_stderr_clt,none"] == "N/A"


def test_ctc_score_is_nan_never_a_silent_0_when_judge_requests_failed(replay, monkeypatch, tmp_path, caplog):
    """with every judge request failing, ctc_score printed 0.0000 beside the paper's 2.71."""
    import math
    import socket

    with socket.socket() as sock:  # a port with nobody listening: every request fails
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "down-judge")
    monkeypatch.setenv("HANYI_JUDGE_MAX_RETRIES", "0")
    monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
    records = [{"task": "cii_ctc", "key": {"id": "test-3"}, "response": "画中老人在松下抚琴。"},
               {"task": "cii_ctc", "key": {"id": "test-8"}, "response": "梅花。"}]  # fmt: skip
    res = replay(records, ["cii_ctc"])["results"]["cii_ctc"]
    scores = {k: v for k, v in res.items() if k.startswith("ctc_score") and "_stderr" not in k}
    assert scores and all(math.isnan(v) for v in scores.values()), scores
    assert res["ctc_judge_failures,none"] == 2.0
    said = [r.getMessage() for r in caplog.records if "judge requests failed" in r.getMessage()]
    assert len(said) == 1 and "2 of 2 judge requests failed (first: request_failed: ConnectError" in said[0]


RUBRIC_AXES = ("美学", "笔墨", "技法", "文化", "历史", "背景", "含义", "传统", "绘画", "内涵", "隐喻")


def test_ctc_description_prompt_is_neutral(cii_tasks):
    # review defect 8: the prompt named the judge's scoring axes (美学特征、笔墨技法、文化与历史背景、深层含义)
    task = cii_tasks["cii_ctc"]
    prompt = task.doc_to_text(_docs(task)["test-3"])
    assert prompt == "请描述这幅图像。"
    assert not [axis for axis in RUBRIC_AXES if axis in prompt]


def _ctc_records(path, explanations):
    records = [{"id": str(i), "title": f"【图{i}】", "explanation": e, "metaphorical meaning": "m"}
               for i, e in enumerate(explanations)]  # fmt: skip
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_ctc_titles_from_the_official_records_reach_the_judge(cii_tasks, tmp_path, monkeypatch):
    from hanyi.tasks.cii import ctc

    task = cii_tasks["cii_ctc"]
    docs = _docs(task)
    monkeypatch.setenv(ctc.ENV_CTC_JSON, _ctc_records(tmp_path / "exp_CTC.json", [docs["test-3"]["explanation"]]))
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
    monkeypatch.setenv("HANYI_JUDGE_MAX_RETRIES", "0")  # nothing listens on port 9: the prompt is what is checked
    titled = {d["id"]: d for d in ctc.cii_ctc_process_docs(task.dataset[task.config.test_split])}
    assert titled["test-3"]["title"] == "【图0】" and titled["test-8"]["title"] == ""
    item = ctc.cii_ctc_process_results(titled["test-3"], ["画中有松。"])["ctc_score"]
    assert "human answer: {【图0】" + titled["test-3"]["explanation"] in item["judge_user"]


def test_ctc_titles_file_that_is_not_the_records_list_is_an_error(tmp_path):
    from hanyi.data.cii import ctc_titles

    bad = tmp_path / "exp_CTC.json"
    bad.write_text('{"explanation": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="exp_CTC.json"):
        ctc_titles(str(bad))


def test_missing_images_fail_at_load_time_naming_the_docs(tmp_path, monkeypatch):
    """A doc without its picture stops the task before any model call, listing the ids and the fix."""
    import datasets

    from hanyi.data.images import ImageUnavailableError
    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.cii import utils

    monkeypatch.delenv("HANYI_CII_IMAGE_ROOT", raising=False)
    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "cii"), split="test", cache_dir=str(tmp_path / "c"))
    assert len(utils.cii_process_docs(ds)) == len(ds)  # the sample has every image
    broken = (
        ds.cast_column("image", datasets.Image(decode=False))
        .map(lambda row, i: {"image": None if i in (1, 3) else row["image"]}, with_indices=True)
        .cast_column("image", datasets.Image())
    )
    gone = [ds[1]["id"], ds[3]["id"]]
    with pytest.raises(
        ImageUnavailableError, match=rf"2 doc\(s\) have no image \(id: {gone[0]}, {gone[1]}\).*HANYI_CII_IMAGE_ROOT"
    ):
        utils.cii_process_docs(broken)
    assert len(utils.cii_textonly_process_docs(broken)) == len(ds)  # text-only needs no image
    monkeypatch.setenv("HANYI_CII_IMAGE_ROOT", str(tmp_path / "imgs"))
    with pytest.raises(ImageUnavailableError):  # a clone that lacks them does not help
        utils.cii_process_docs(broken)
    for i in (1, 3):  # the sample rows carry the GitHub clone's local_path, as the hub rows do
        (tmp_path / "imgs" / broken[i]["local_path"]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "imgs" / broken[i]["local_path"]).write_bytes(b"x")
    with pytest.raises(ImageUnavailableError, match="does not decode"):  # found there, then decoded
        utils.cii_process_docs(broken)
    for i in (1, 3):
        ds[i]["image"].save(tmp_path / "imgs" / broken[i]["local_path"], format="PNG")
    assert len(utils.cii_process_docs(broken)) == len(ds)  # served from the local clone instead


def test_images_missing_from_the_hub_parquet_are_fetched_from_the_repo_by_local_path(tmp_path, monkeypatch):
    """The hub's dev split may not embed its images; they are fetched from the repo's images/ folder instead."""
    import datasets
    import huggingface_hub

    from hanyi.data.images import ImageUnavailableError, synthetic_image
    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.cii import utils

    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "cii"), split="dev", cache_dir=str(tmp_path / "c"))
    no_images = ds.cast_column("image", datasets.Image(decode=False)).map(lambda r: {"image": None})
    no_images = no_images.cast_column("image", datasets.Image())
    monkeypatch.delenv("HANYI_CII_IMAGE_ROOT", raising=False)
    monkeypatch.setenv("HANYI_CII_DATA", "m-a-p/CII-Bench")  # a hub source
    asked = []

    def fake_download(repo_id, filename, repo_type):
        asked.append((repo_id, filename, repo_type))
        path = tmp_path / "hub" / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        synthetic_image(filename).save(path, format="PNG")
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    served = utils.cii_process_docs(no_images)
    assert [a[1] for a in asked] == list(ds["local_path"]) and {a[2] for a in asked} == {"dataset"}
    assert served[0]["image"].size == (48, 48)  # decodable, from the fetched file

    def offline(*args, **kwargs):
        raise OSError("offline")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(ImageUnavailableError, match=rf"{len(ds)} doc\(s\) have no image"):
        utils.cii_process_docs(no_images)


def test_ctc_titles_env_that_is_not_a_file_is_a_clear_error(tmp_path, monkeypatch):
    from hanyi.tasks.cii import ctc

    monkeypatch.setenv(ctc.ENV_CTC_JSON, str(tmp_path / "missing.json"))
    with pytest.raises(FileNotFoundError, match="HANYI_CII_CTC_JSON"):
        ctc._titles_file()


def test_parse_multilabel_cache_returns_fresh_lists_and_still_rejects_bad_cells():
    from hanyi.data.cii import parse_multilabel

    cell = "{'choices': ['隐喻', '象征']}"
    first = parse_multilabel(cell)
    first.append("changed by a caller")
    assert parse_multilabel(cell) == ["隐喻", "象征"]  # the cached value was not changed through the caller's list
    for _ in range(2):  # an error is not cached away
        with pytest.raises(ValueError, match="malformed"):
            parse_multilabel("{'choices': ")


def test_an_undecodable_or_truncated_image_fails_at_load_naming_the_docs(tmp_path):
    """only nulls were checked at load, so a truncated image stopped the run mid-generation."""
    import io

    import datasets

    from hanyi.data.images import ImageUnavailableError, synthetic_image
    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks._common import require_images
    from hanyi.tasks.cii import utils

    def encoded(fmt):
        buf = io.BytesIO()
        synthetic_image(fmt, size=96).save(buf, format=fmt)
        return buf.getvalue()

    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "cii"), split="test", cache_dir=str(tmp_path / "c"))
    bad = {1: encoded("PNG")[:-30], 3: b"not an image at all", 4: encoded("JPEG")[: len(encoded("JPEG")) // 2]}
    broken = (
        ds.cast_column("image", datasets.Image(decode=False))
        .map(lambda row, i: {"image": {"bytes": bad[i], "path": None} if i in bad else row["image"]}, with_indices=True)
        .cast_column("image", datasets.Image())
    )
    ids = [ds[i]["id"] for i in sorted(bad)]
    with pytest.raises(ImageUnavailableError, match=r"3 doc\(s\) have an image that does not decode") as err:
        utils.cii_process_docs(broken)
    assert all(str(i) in str(err.value) for i in ids) and "HANYI_CII_IMAGE_ROOT" in str(err.value)
    assert len(require_images(ds, "image", "id", "fix")) == len(ds)  # intact images pass
