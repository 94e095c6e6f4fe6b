"""UNPIE tasks: contract, prompt snapshots, doc expansion, images, data builder, and end-to-end runs (replay, tiny LLaVA)."""

import argparse
import importlib.util
import json
import os

import pytest

from hanyi.data import unpie as data
from hanyi.data.images import synthetic_image
from hanyi.data.sources import SAMPLE_DIR
from hanyi.metrics.mt_overlap import simple_tokenize
from hanyi.tasks.unpie import utils

#: The groups (their tasks score both splits) and the tags of the one-split tasks, with their task counts.
GROUPS = {"unpie": 7, "unpie_text": 4, "unpie_sm": 7}
SPLIT_TAGS = {"unpie_splits": 14, "unpie_text_splits": 8, "unpie_sm_splits": 14}
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "unpie")


def _leaf_tasks(task_manager, name):
    from lmms_eval.tasks import get_task_dict

    out = {}

    def walk(d):
        for v in d.values():
            if isinstance(v, dict):
                walk(v)
            else:
                out[v.task_name] = v

    walk(get_task_dict([name], task_manager))
    return out


@pytest.fixture(scope="module")
def tasks(task_manager):
    found = {}
    for name in (*GROUPS, *SPLIT_TAGS):
        found.update(_leaf_tasks(task_manager, name))
    return found


def test_groups_hold_only_generate_until_tasks_with_version(tasks, task_manager):
    for name, n in (GROUPS | SPLIT_TAGS).items():
        leaves = _leaf_tasks(task_manager, name)
        assert len(leaves) == n, name
        both = name in GROUPS  # the groups' tasks score both splits; the tags' tasks one split each
        assert all(t.config.task.endswith(("_homo", "_hetero")) != both for t in leaves.values()), name
        for task in leaves.values():
            assert task.OUTPUT_TYPE == "generate_until"
            # 0.2 robust keys (all); 0.3 meteor_exact_stem / disamb_acc_custom_model fallback keys;
            # disambiguation 0.4: paper and _robust keys in one call; then caption_missing, exact_match_robust,
            # reconstruction 0.5: correct_custom_judge; 0.6: order-independent METEOR mean and BERTScore batch,
            # 0.7 each doc scored in process_results (logged), the aggregations combine the logged numbers;
            # grounding 0.4, the others 0.8: one task for both splits (the one-split tasks keep their version)
            # grounding 0.4 / 0.5 (both splits) and disambiguation 1.0: score_key and cluster_key;
            # reconstruction 0.9: per-doc scores for lmms-eval's Stderr_CLT; reconstruction 1.0: cluster_key; both
            # splits (grounding 0.6, disambiguation 1.1, reconstruction 1.0): score_key all_splits_score
            expected = {
                "grounding": 0.4,
                "reconstruction": 1.0,
                "disambiguation": 1.0,
            }  # 0.8: judge per doc; custom key; disambiguation 0.9: the custom key decided by BERTScore
            if both:
                expected = {"grounding": 0.6, "reconstruction": 1.0, "disambiguation": 1.1}
            kind = next(k for k in expected if k in task.config.task)
            assert task.config.metadata["version"] == expected[kind]
            assert task.config.generation_kwargs["max_new_tokens"] == 200
            assert task.config.generation_kwargs["until"] == []


@pytest.mark.parametrize(
    "task, n_docs",
    [("unpie_grounding_homo", 3), ("unpie_disambiguation_sm_de_hetero", 6), ("unpie_reconstruction_text_ko_homo", 6)],
)
def test_disambiguation_and_reconstruction_expand_two_docs_per_pun(tasks, task, n_docs):
    docs = list(tasks[task].test_docs())
    assert len(docs) == n_docs
    if n_docs == 6:
        assert [(d["unpie_id"], d["meaning_idx"]) for d in docs[:2]] == [
            (docs[0]["unpie_id"], 0),
            (docs[0]["unpie_id"], 1),
        ]


def test_disambiguation_target_is_depicted_meaning_and_distractor_the_other(tasks):
    d0, d1 = list(tasks["unpie_disambiguation_fr_hetero"].test_docs())[:2]
    assert (
        d0["target"]
        == "J'ai essayé d'enregistrer un album dans un magasin de reptiles, mais il y avait un horrible gecko."
    )
    assert d0["distractor"] == d1["target"] and d1["distractor"] == d0["target"]
    r0 = list(tasks["unpie_reconstruction_de_hetero"].test_docs())[1]
    assert r0["target"] == "I tried to record an album in a reptile shop, but there was a terrible gecko."
    assert r0["source_sentence"].endswith("ein schreckliches Echo.")


SNAPSHOT_CASES = [
    ("unpie_grounding_homo", 0),
    ("unpie_grounding_text_homo", 0),
    ("unpie_grounding_sm_hetero", 0),
    ("unpie_disambiguation_de_homo", 1),
    ("unpie_disambiguation_sm_ko_hetero", 0),
    ("unpie_reconstruction_fr_hetero", 1),
    ("unpie_reconstruction_text_de_homo", 0),
    ("unpie_reconstruction_sm_ko_homo", 0),
]


@pytest.mark.parametrize("task, doc_id", SNAPSHOT_CASES)
def test_prompt_snapshots(tasks, snapshot, task, doc_id):
    t = tasks[task]
    snapshot(f"{task}__{doc_id}", t.doc_to_text(list(t.test_docs())[doc_id]))


def test_vlm_prompts_match_the_paper_with_the_image_slot_removed(tasks):
    t = tasks["unpie_disambiguation_de_homo"]
    assert t.doc_to_text(list(t.test_docs())[0]) == (
        "[English]: He and his partner made knives, and they shared a cut.\n"
        "Translate the given English sentence into German, given the\n"
        "image as context. Please respond using the format\nbelow:\n[German]:"
    )
    t = tasks["unpie_grounding_text_hetero"]
    assert t.doc_to_text(list(t.test_docs())[2]) == (
        "[sentence]: How do farmers make crop circles? With a protractor.\n"
        "This is a pun sentence. Identify the specific word or phrase\nthat creates the pun. Respond with only the "
        "word or phrase that\nmakes it a pun, without any explanation.\n[answer]:"
    )
    doc = list(tasks["unpie_reconstruction_ko_homo"].test_docs())[0]
    text = utils.unpie_doc_to_text(
        doc, {"mode": "vlm", "template": "reconstruction_image.jinja", "image_slot": "<image>"}
    )
    assert '[Korean]: "그와 그의 파트너는' in text and "\n\n[Image Description]: <image>\n" in text
    kw = {"mode": "vlm", "template": "grounding_image.jinja", "image_slot": "<image>"}
    assert 'given the image as context "<image>".\n' in utils.unpie_doc_to_text(doc, kw)


def test_sm_prompt_pastes_the_caption_inside_quotes_and_a_missing_caption_is_counted_not_raised(tasks):
    doc = list(tasks["unpie_disambiguation_sm_de_homo"].test_docs())[1]
    kw = {"mode": "sm", "template": "disambiguation.jinja", "image_slot": ""}
    assert 'image as context "a photo of share of the profits from a business".' in utils.unpie_doc_to_text(doc, kw)
    assert utils.unpie_doc_to_visual(doc, kw) == []
    no_caption = {**doc, "caption": ""}  # was a KeyError while requests were built (task aborted)
    assert "image as context. Please" in utils.unpie_doc_to_text(no_caption, kw)  # the template drops the slot
    assert utils.unpie_disambiguation_process_results(no_caption, ["[German]: x"]) == {"caption_missing": 1.0}
    assert utils.unpie_grounding_process_results(no_caption, ["cut"]) == {"caption_missing": 1.0}
    assert utils.unpie_reconstruction_process_results(no_caption, ["x"]) == {"caption_missing": 1.0}


def test_sm_tasks_score_every_captioned_doc_and_count_the_rest(replay, tasks, tmp_path, monkeypatch):
    """a doc without a caption aborted the whole caption task (KeyError while building requests),
    and a captioned doc whose image was not cached was dropped from the accuracy. Now every captioned doc is scored,
    whatever its image, and the rest are counted in ``caption_missing``."""
    shipped = json.load(open(os.path.join(SAMPLE_DIR, "unpie", data.CAPTIONS_FILE), encoding="utf-8"))
    captions = {**shipped, "heterographic-2-1": "a photo of a bucket"}  # caption given, image not cached
    del captions["heterographic-0-0"], captions["heterographic-1"]  # no caption: counted, not scored
    path = tmp_path / "captions.json"
    path.write_text(json.dumps(captions), encoding="utf-8")
    monkeypatch.setenv(data.CAPTIONS_ENV, str(path))
    disamb = [
        {**r, "task": "unpie_disambiguation_sm_de_hetero"}
        for r in _disamb_records(tasks, "unpie_disambiguation_de_hetero")
    ]
    disamb.append({**disamb[-1], "key": {"unpie_id": "heterographic-2", "meaning_idx": 1}, "response": "x"})
    grounding = [
        {"task": "unpie_grounding_sm_hetero", "key": {"unpie_id": pid}, "response": r}
        for pid, r in GROUNDING
        if pid.startswith("hetero")
    ]
    res = replay(disamb + grounding, ["unpie_disambiguation_sm_de_hetero", "unpie_grounding_sm_hetero"])["results"]
    d, g = res["unpie_disambiguation_sm_de_hetero"], res["unpie_grounding_sm_hetero"]
    assert d["caption_missing,none"] == 1.0 and "image_unresolved,none" not in d
    assert d["disamb_acc_chrf,none"] == pytest.approx(4 / 5)  # 5 captioned docs scored, the uncached image's too
    assert g["caption_missing,none"] == 1.0
    assert g["exact_match,none"] == pytest.approx(1 / 2)  # gecko right, "" wrong; buoys (no caption) not scored


def test_visuals_per_mode_and_unresolvable_disambiguator_image_gives_no_image(tasks):
    g = list(tasks["unpie_grounding_homo"].test_docs())[0]
    assert len(utils.unpie_doc_to_visual(g, {"mode": "vlm"})) == 1
    assert utils.unpie_doc_to_visual(g, {"mode": "text"}) == []
    docs = list(tasks["unpie_disambiguation_sm_de_hetero"].test_docs())  # the caption task keeps every doc
    assert [d["image_status"] == data.IMAGE_OK for d in docs] == [True, True, True, True, True, False]
    assert "example.invalid" in docs[5]["image_status"]
    assert [len(utils.unpie_doc_to_visual(d, {"mode": "vlm"})) for d in docs[:5]] == [1, 1, 1, 1, 1]
    with pytest.raises(ValueError, match="heterographic-2 meaning_idx=1"):  # never sent without its image
        utils.unpie_doc_to_visual(docs[5], {"mode": "vlm"})
    vlm = list(tasks["unpie_disambiguation_de_hetero"].test_docs())  # left out at load
    assert [(d["unpie_id"], d["meaning_idx"]) for d in vlm] == [(d["unpie_id"], d["meaning_idx"]) for d in docs[:5]]


def test_the_sample_says_why_its_doc_is_left_out_and_advises_no_command_that_cannot_work(caplog):
    """every run on the sample warned that https://example.invalid/... is not cached and advised
    `hanyi prepare unpie --download-images`, which cannot fetch it (nor touch the bundled sample)."""
    import datasets

    from hanyi.data.unpie_sample import SAMPLE_UNRESOLVED_URL

    assert SAMPLE_UNRESOLVED_URL.split("/")[2].endswith(".invalid")
    rows = datasets.load_dataset(os.path.join(SAMPLE_DIR, "unpie"), split="heterographic")
    with caplog.at_level("WARNING", logger="hanyi"):
        docs = data.expand(rows, "disambiguation", "heterographic", "de", needs_image=True)
    (line,) = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert "left out 1 of 6 docs" in line and "heterographic-2/1" in line and len(docs) == 5
    assert "keeps one such image on purpose" in line and "left out and counted" in line
    assert "hanyi prepare" not in line and data.DOWNLOAD_ENV not in line


def test_image_resolution_order_base64_path_root_cache_and_opt_in(tmp_path, monkeypatch):
    from hanyi.data.images import ImageUnavailableError

    img = synthetic_image("x")
    uri = data.to_data_uri(img)
    assert data.load_disamb_image(uri).size == img.size
    assert data.load_disamb_image(uri.split(",", 1)[1]).size == img.size
    img.save(tmp_path / "a.png")
    monkeypatch.setenv(data.IMAGE_ROOT_ENV, str(tmp_path))
    assert data.load_disamb_image("a.png").size == img.size
    monkeypatch.setenv(data.IMAGE_CACHE_ENV, str(tmp_path / "cache"))
    url = "https://example.invalid/x.jpg"
    with pytest.raises(ImageUnavailableError, match="doc-7.*reserved .invalid host") as err:
        data.load_disamb_image(url, doc_hint="doc-7")
    assert "HANYI_UNPIE_DOWNLOAD_IMAGES" not in str(err.value)  # no download can fetch it
    with pytest.raises(ImageUnavailableError, match="doc-7.*HANYI_UNPIE_DOWNLOAD_IMAGES.*--download-images"):
        data.load_disamb_image("https://u:p@images.example.org:8443/x.jpg", doc_hint="doc-7")  # a real host: advised
    for yes in ("YES", "True", " 1 "):  # YES validated, then read as off
        monkeypatch.setenv(data.DOWNLOAD_ENV, yes)
        with pytest.raises(ImageUnavailableError, match="doc-7: download of https://example.invalid/x.jpg failed"):
            data.load_disamb_image(url, doc_hint="doc-7")
    monkeypatch.setenv(data.DOWNLOAD_ENV, "No")
    with pytest.raises(ImageUnavailableError, match="doc-7.*is not in the cache"):
        data.load_disamb_image(url, doc_hint="doc-7")
    monkeypatch.delenv(data.DOWNLOAD_ENV)
    os.makedirs(tmp_path / "cache")
    img.save(data.url_cache_path(url), format="PNG")
    assert data.load_disamb_image(url).size == img.size


def test_corrupt_rows_are_skipped_with_their_ids(caplog):
    rows = [
        {
            "pun_sentence": "s",
            "pun_phrase": "p",
            "translation1": {"de": "a", "fr": "b", "ko": "c"},
            "translation2": None,
        }
    ]
    docs, skipped = data.expand_rows(rows, "reconstruction", "homographic", "de")
    assert docs == [] and skipped == ["homographic-0: translation2 missing"]


@pytest.mark.parametrize(
    "kind, lang, kept",
    [
        ("grounding", None, True),
        ("disambiguation", "de", True),
        ("reconstruction", "fr", True),
        ("disambiguation", "ko", False),
        ("reconstruction", "ko", False),
    ],
)
def test_an_empty_translation_removes_the_pun_only_from_its_own_language(kind, lang, kept):
    """one empty Korean translation removed the pun from every UNPIE task (grounding, German and
    French too), so their denominators fell below the paper's 500 / 1,000."""
    row = {
        "pun_sentence": "s",
        "pun_phrase": "p",
        "translation1": {"de": "a", "fr": "b", "ko": ""},
        "translation2": {"de": "d", "fr": "e", "ko": "f"},
    }
    docs, skipped = data.expand_rows([row], kind, "homographic", lang)
    assert (len(docs) > 0, skipped) == (kept, [] if kept else ["homographic-0: translation1.ko empty"])


def test_an_empty_pun_phrase_is_skipped_only_where_it_is_read():
    row = {"pun_sentence": "s", "pun_phrase": " ", "translation1": {"de": "a"}, "translation2": {"de": "b"}}
    assert data.expand_rows([row], "grounding", "homographic")[0] == []
    assert data.expand_rows([row], "reconstruction", "homographic", "de")[0] == []  # pun_word_recovered reads it
    assert len(data.expand_rows([row], "disambiguation", "homographic", "de")[0]) == 2


def test_run_prepare_rebuilds_a_hub_format_copy_and_counts_unresolved(tmp_path):
    parser = argparse.ArgumentParser()
    data.add_prepare_arguments(parser)
    args = parser.parse_args(["--source", os.path.join(SAMPLE_DIR, "unpie")])
    args.out_dir = str(tmp_path / "unpie")
    counts = data.run_prepare(args)
    assert counts == {
        "images_embedded": 11,
        "images_unresolved": 1,
        "corrupt_rows": 0,
        "rows_homographic": 3,
        "rows_heterographic": 3,
    }
    info = json.loads((tmp_path / "unpie" / "hanyi_build.json").read_text())
    assert info["counts"] == {"default": {"heterographic": 3, "homographic": 3}}
    assert "example.invalid" in info["unresolved_images"][0]


GROUNDING = [
    ("homographic-0", "[answer]: Cut."),
    ("homographic-1", "chemistry"),
    ("homographic-2", "dreams"),
    ("heterographic-0", "gecko"),
    ("heterographic-1", "buoys"),
    ("heterographic-2", ""),
]


def _recon_records(tasks, task, answer):
    return [
        {"task": task, "key": {"unpie_id": d["unpie_id"], "meaning_idx": d["meaning_idx"]}, "response": answer(d)}
        for d in tasks[task].test_docs()
    ]


def _disamb_records(tasks, task, wrong=()):
    return [
        {
            "task": task,
            "key": {"unpie_id": d["unpie_id"], "meaning_idx": d["meaning_idx"]},
            "response": d["distractor"] if (d["unpie_id"], d["meaning_idx"]) in wrong else f"[German]: {d['target']}",
        }
        for d in tasks[task].test_docs()
    ]


@pytest.fixture(scope="module")
def replay_run(replay, tasks, tmp_path_factory):
    records = [
        {
            "task": f"unpie_grounding_{'homo' if pid.startswith('homo') else 'hetero'}",
            "key": {"unpie_id": pid},
            "response": r,
        }
        for pid, r in GROUNDING
    ]
    records += _disamb_records(tasks, "unpie_disambiguation_de_homo")
    records += _disamb_records(tasks, "unpie_disambiguation_de_hetero", wrong={("heterographic-0", 1)})
    records += _recon_records(tasks, "unpie_reconstruction_de_homo", lambda d: f"[English]: {d['target']}")
    records += _recon_records(tasks, "unpie_reconstruction_de_hetero", lambda d: "")
    # the same answers (matched by unpie_id and meaning_idx) for the tasks that score both splits
    both = {"grounding": "unpie_grounding", "disambiguation": "unpie_disambiguation_de"}
    both["reconstruction"] = "unpie_reconstruction_de"
    records += [{**r, "task": next(t for k, t in both.items() if k in r["task"])} for r in records]
    names = sorted({r["task"] for r in records})
    import nltk

    with pytest.MonkeyPatch.context() as mp:  # without WordNet: meteor_exact_stem (test_backbones: with WordNet)
        mp.setattr(nltk.data, "path", [str(tmp_path_factory.mktemp("no_nltk_data"))])
        out = replay(records, names)
    return {**out["results"], "samples": out["samples"]}


def test_grounding_end_to_end_and_all_is_mean_of_homo_and_hetero(replay_run):
    homo, hetero, group = (replay_run[k] for k in ("unpie_grounding_homo", "unpie_grounding_hetero", "unpie_grounding"))
    assert homo["exact_match,none"] == pytest.approx(2 / 3) and hetero["exact_match,none"] == pytest.approx(1 / 3)
    assert homo["exact_match_strict,none"] == pytest.approx(1 / 3) and hetero[
        "exact_match_strict,none"
    ] == pytest.approx(1 / 3)
    assert hetero["exact_match_lenient,none"] == pytest.approx(2 / 3) and hetero["answer_rate,none"] == pytest.approx(
        2 / 3
    )
    assert group["exact_match,none"] == (homo["exact_match,none"] + hetero["exact_match,none"]) / 2 == 0.5
    assert group["exact_match_robust,none"] == (homo["exact_match_robust,none"] + hetero["exact_match_robust,none"]) / 2
    # the task that scores both splits emits All only; its diagnostics and Homo/Hetero values are the report's
    assert sorted(k for k in group if "," in k and "stderr" not in k) == ["exact_match,none", "exact_match_robust,none"]


def test_disambiguation_without_bertscore_weights_reports_chrf_only_and_excludes_unresolved(replay_run):
    homo, hetero = replay_run["unpie_disambiguation_de_homo"], replay_run["unpie_disambiguation_de_hetero"]
    assert not any(k.startswith("disamb_acc_bertscore") for r in (homo, hetero) for k in r)
    assert homo["disamb_acc_chrf,none"] == 1.0
    assert hetero["disamb_acc_chrf,none"] == pytest.approx(4 / 5)  # 1 wrong of 5 scored; 1 image unresolved
    # the doc whose image is unresolved is left out at load (a VLM task sends no request without its image)
    assert hetero["image_unresolved,none"] == 0.0 and homo["image_unresolved,none"] == 0.0
    both = replay_run["unpie_disambiguation_de"]
    assert both["disamb_acc_chrf,none"] == (homo["disamb_acc_chrf,none"] + hetero["disamb_acc_chrf,none"]) / 2 == 0.9
    assert sorted(k for k in both if "," in k and "stderr" not in k) == [
        "disamb_acc_chrf,none",
        "disamb_acc_chrf_robust,none",
    ]


def test_reconstruction_overlap_metrics_and_no_judge_metric_without_judge(replay_run):
    homo, hetero = replay_run["unpie_reconstruction_de_homo"], replay_run["unpie_reconstruction_de_hetero"]
    assert not any(k.startswith("correct") for k in homo)
    assert homo["bleu4,none"] == pytest.approx(100.0) and hetero["bleu4,none"] == 0.0
    sentences = [
        "He and his partner made knives, and they shared a cut.",
        "The science teachers broke up because there was no chemistry between them.",
        "Diabetics should not be allowed to have sweet dreams.",
    ]
    expected = 100 * sum(1 - 0.5 / len(simple_tokenize(s)) ** 3 for s in sentences) / 3  # one chunk each
    assert "meteor,none" not in homo and homo["meteor_exact_stem,none"] == pytest.approx(expected)
    assert replay_run["unpie_reconstruction_de"]["meteor_exact_stem,none"] == pytest.approx(expected / 2)
    assert homo["pun_word_recovered,none"] == 1.0 and hetero["pun_word_recovered,none"] == 0.0
    assert replay_run["unpie_reconstruction_de"]["bleu4,none"] == pytest.approx(50.0)
    assert hetero["answer_rate,none"] == 0.0
    both = replay_run["unpie_reconstruction_de"]
    for key in ("bleu4,none", "meteor_exact_stem,none", "pun_word_recovered,none", "bleu4_robust,none"):
        assert both[key] == (homo[key] + hetero[key]) / 2, key  # All, bit for bit the former group's mean
    assert "answer_rate,none" not in both and "correct_custom_judge,none" not in both  # no judge: its stand-in


@pytest.mark.parametrize("kind", ["grounding", "disambiguation_de", "reconstruction_de"])
def test_the_report_gives_the_one_split_numbers_of_a_task_that_scores_both_splits(replay_run, kind):
    """Every number the one-split tasks emit is computed by hanyi report from the both-splits task's sample log,
    under ``<metric>_homo`` / ``<metric>_hetero`` (the diagnostics also at All: the former group's mean), the same
    value bit for bit."""
    from hanyi.metrics.from_samples import derive

    task = f"unpie_{kind}"
    found = {k: v for k, (v, _) in derive(task, replay_run["samples"][task]).items()}
    checked = 0
    for suffix in ("homo", "hetero"):
        for key, value in replay_run[f"{task}_{suffix}"].items():
            if "," not in key or "stderr" in key:
                continue
            metric = key.split(",")[0]
            assert found[f"{metric}_{suffix}"] == value, (metric, suffix)
            checked += 1
    assert checked >= 8
    homo, hetero = replay_run[f"{task}_homo"], replay_run[f"{task}_hetero"]
    assert found["answer_rate"] == (homo["answer_rate,none"] + hetero["answer_rate,none"]) / 2
    if kind == "grounding":
        assert found["exact_match_lenient"] == pytest.approx(2 / 3)  # the former group's value
    if kind.startswith("disambiguation"):
        assert found["image_unresolved"] == 0.0 == found["image_unresolved_hetero"]


def test_a_task_that_scores_both_splits_has_the_docs_of_both_in_order(tasks):
    for both in ("unpie_grounding", "unpie_disambiguation_de", "unpie_reconstruction_sm_ko", "unpie_grounding_text"):
        docs = list(tasks[both].test_docs())
        homo, hetero = (list(tasks[f"{both}_{s}"].test_docs()) for s in ("homo", "hetero"))
        assert docs == homo + hetero, both  # homographic docs first: doc i of _hetero is doc len(homo) + i
        assert {d["category"] for d in docs} == {"homographic", "heterographic"}


def test_disambiguation_with_another_bertscore_model_has_its_own_key(replay, tasks, tmp_path, monkeypatch):
    """A tiny local BERT is not the paper's mBERT layer 9: same decision rule, its own key (never the paper's)."""
    spec = importlib.util.spec_from_file_location("unpie_tiny_bert", os.path.join(FIXTURES, "tiny_bert.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", module.build_tiny_bert(str(tmp_path / "bert")))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", str(module.NUM_LAYERS))
    records = _disamb_records(tasks, "unpie_disambiguation_de_hetero", wrong={("heterographic-0", 1)})
    res = replay(records, ["unpie_disambiguation_de_hetero"])["results"]["unpie_disambiguation_de_hetero"]
    assert "disamb_acc_chrf,none" not in res and "disamb_acc_bertscore,none" not in res
    assert res["disamb_acc_custom_model,none"] == pytest.approx(4 / 5)


def test_the_custom_model_key_is_decided_by_bertscore_with_the_configured_model_not_chrf(tasks, tmp_path, monkeypatch):
    """the rename to disamb_acc_custom_model made its decisions fall back to chrF; each logged score must
    be the configured model's BERTScore-F1 (here a tiny BERT whose scores are nothing like chrF's 0-100)."""
    from hanyi.metrics import reference_choice as rc
    from hanyi.tasks.unpie import scoring

    spec = importlib.util.spec_from_file_location("unpie_tiny_bert", os.path.join(FIXTURES, "tiny_bert.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.build_tiny_bert(str(tmp_path / "bert"))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", model)
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", str(module.NUM_LAYERS))
    doc = list(tasks["unpie_disambiguation_de_hetero"].test_docs())[0]
    out = utils.unpie_disambiguation_process_results(doc, [f"[German]: {doc['distractor']} und mehr"])
    assert set(out) >= {"disamb_acc_custom_model", "disamb_acc_custom_model_robust"}
    bert = rc.bertscore_f1_scorer(model, module.NUM_LAYERS)
    for key in ("disamb_acc_custom_model", "disamb_acc_custom_model_robust"):
        got, pred = out[key], out[key]["prediction"]
        want = bert([pred, pred], [doc["target"], doc["distractor"]])
        assert [got["target_score"], got["distractor_score"]] == pytest.approx(want, rel=1e-6), key
        assert got["target_score"] != pytest.approx(rc.chrf_scores([pred], [doc["target"]])[0]), key
    assert scoring.pair_scorer("disamb_acc_chrf_robust") is rc.chrf_scores


def test_judge_correct_through_fake_judge_server(replay, tasks, tmp_path, monkeypatch, fake_judge):

    def answer(messages):
        text = json.dumps(messages[-1]["content"], ensure_ascii=False)
        return "No." if "[Sentence B]: nonsense" in text else ("Maybe" if "unsure" in text else "Yes")

    responses = iter(
        ["[English]: He and his partner made knives, and they shared a cut.", "nonsense", "unsure", "", "x", "y"]
    )
    records = _recon_records(tasks, "unpie_reconstruction_text_de_homo", lambda d: next(responses))
    with fake_judge(answer=answer) as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge"))
        res = replay(records, ["unpie_reconstruction_text_de_homo"])["results"]["unpie_reconstruction_text_de_homo"]
        assert judge.total_requests == 5  # the empty answer is not sent
    # Yes, No, parse failure (0), empty (0), Yes, Yes -> 3 of 6
    assert res["correct_custom_judge,none"] == pytest.approx(3 / 6)


def test_judge_score_is_never_the_papers_correct_under_any_judge_model(
    replay, tasks, tmp_path, monkeypatch, fake_judge
):
    """Paper Table 6 "Correct" is GPT-4 with an unpublished prompt; ours is our prompt: its own key, even with
    the paper's judge model, and the sample log names the judge model (hanyi report's comparability check)."""
    records = _recon_records(tasks, "unpie_reconstruction_text_de_homo", lambda d: "[English]: a pun")
    with fake_judge(answer=lambda messages: "Yes") as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "gpt-4-0613")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge"))
        out = replay(records, ["unpie_reconstruction_text_de_homo"])
    res = out["results"]["unpie_reconstruction_text_de_homo"]
    assert "correct,none" not in res and res["correct_custom_judge,none"] == 1.0
    sample = out["samples"]["unpie_reconstruction_text_de_homo"][0]
    assert sample["correct_custom_judge"]["judge_model"] == "gpt-4-0613"
    assert sample["correct_custom_judge"]["judge_verdict"] is True  # asked per doc, logged (reconstruction 0.8)


def test_a_judge_that_is_down_gives_nan_and_a_warning_not_a_lost_run(
    replay, tasks, tmp_path, monkeypatch, fake_judge, caplog
):
    records = _recon_records(tasks, "unpie_reconstruction_text_de", lambda d: "[English]: a pun")
    with fake_judge(failure_rate=1.0, failure_statuses=(500,)) as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake")
        monkeypatch.setenv("HANYI_JUDGE_MAX_RETRIES", "0")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge"))
        out = replay(records, ["unpie_reconstruction_text_de"])
    res = out["results"]["unpie_reconstruction_text_de"]
    assert res["correct_custom_judge,none"] != res["correct_custom_judge,none"]  # NaN: every request failed
    assert "bleu4,none" in res and "pun_word_recovered,none" not in res  # the rest is scored; no stand-in beside it
    assert all(
        s["correct_custom_judge"]["judge_score"] != s["correct_custom_judge"]["judge_score"]
        for s in out["samples"]["unpie_reconstruction_text_de"]
    )
    assert "1 request failures, 0 parse failures; first error: request_failed: HTTP 500" in caplog.text  # the client


def test_tiny_llava_runs_the_unpie_group(llava_run):
    results = llava_run["results"]
    assert results["unpie_grounding"]["exact_match,none"] >= 0.0
    assert "unpie_grounding_homo" not in results and "unpie_reconstruction_ko" in results
    # the doc whose image cannot be resolved is left out at load: no request without an image
    assert llava_run["n-samples"]["unpie_disambiguation_fr"]["effective"] == 6 + 5
    assert llava_run["n-samples"]["unpie_reconstruction_ko"]["effective"] == 6 + 6


def test_caption_script_keys_match_what_sm_tasks_read(tmp_path):
    import datasets

    from hanyi.data.unpie_captions import caption_images, collect_images

    root = os.path.join(SAMPLE_DIR, "unpie")
    rows = {s: datasets.load_dataset(root, split=s) for s in data.SPLITS}
    items, unresolved = collect_images(rows)
    captions = caption_images(items, lambda imgs: [f"{im.size[0]}px picture" for im in imgs])
    shipped = json.load(open(os.path.join(root, data.CAPTIONS_FILE), encoding="utf-8"))
    assert len(unresolved) == 1 and set(captions) == set(shipped) - {"heterographic-2-1"}


def test_preamble_answers_scored_robustly_under_their_own_keys(replay, tasks):
    """ "Here is the translation:\\n<answer>" is the preamble for the paper rule, the answer for
    the ``_robust`` keys; answers without preamble score the same under both."""
    records = [
        {**r, "response": f"Here is the translation:\n{r['response']}"}
        for r in _disamb_records(tasks, "unpie_disambiguation_de_homo")
    ]
    records += _recon_records(
        tasks, "unpie_reconstruction_de_homo", lambda d: f"Sure! Here is the English pun:\n\n**{d['target']}**"
    )
    records += _recon_records(tasks, "unpie_reconstruction_de_hetero", lambda d: f"[English]: {d['target']}")
    res = replay(
        records, ["unpie_disambiguation_de_homo", "unpie_reconstruction_de_homo", "unpie_reconstruction_de_hetero"]
    )["results"]
    disamb, homo, hetero = (
        res[k]
        for k in ("unpie_disambiguation_de_homo", "unpie_reconstruction_de_homo", "unpie_reconstruction_de_hetero")
    )
    assert disamb["disamb_acc_chrf_robust,none"] == 1.0 and disamb["disamb_acc_chrf,none"] < 1.0
    assert homo["bleu4_robust,none"] == pytest.approx(100.0) and homo["bleu4,none"] < 5.0
    assert homo["pun_word_recovered_robust,none"] == 1.0 and homo["pun_word_recovered,none"] == 0.0
    from hanyi import backbones

    meteor = backbones.metric_key("wordnet", "meteor")  # meteor_exact_stem where WordNet is not installed
    assert homo[f"{meteor}_robust,none"] > homo[f"{meteor},none"]
    for key in ("bleu4", meteor, "pun_word_recovered"):
        assert hetero[f"{key}_robust,none"] == pytest.approx(hetero[f"{key},none"])


def test_grounding_answer_after_a_preamble_scores_under_exact_match_robust_only(tasks):
    """ "The word that creates the pun is:\\ncut" scored 0 on every grounding key."""
    doc = list(tasks["unpie_grounding_homo"].test_docs())[0]
    out = utils.unpie_grounding_process_results(doc, ["The word that creates the pun is:\ncut"])
    assert out["exact_match_robust"]["correct"] and out["exact_match_robust"]["prediction"] == "cut"
    assert not out["exact_match"]["correct"] and out["exact_match_strict"] == 0.0  # the paper key is unchanged
    same = utils.unpie_grounding_process_results(doc, ["cut"])
    assert same["exact_match"]["correct"] and same["exact_match_robust"]["correct"]


def test_download_images_setting_in_upper_case_end_to_end(task_manager, monkeypatch, tmp_path, caplog):
    """through task load: HANYI_UNPIE_DOWNLOAD_IMAGES=YES was validated, then read as off."""
    from lmms_eval.tasks import get_task_dict

    monkeypatch.setenv(data.IMAGE_CACHE_ENV, str(tmp_path / "empty-cache"))
    said = {}
    for setting in ("YES", "no"):
        monkeypatch.setenv(data.DOWNLOAD_ENV, setting)
        caplog.clear()
        with caplog.at_level("WARNING"):
            get_task_dict(["unpie_disambiguation_de_hetero"], task_manager)
        said[setting] = caplog.text
    assert "download of https://example.invalid/unpie/sample-tractor.jpg failed" in said["YES"]  # it tried
    assert "is not in the cache" in said["no"] and "download of" not in said["no"]
