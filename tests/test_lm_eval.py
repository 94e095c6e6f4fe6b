"""lm-evaluation-harness: hanyi's text-only tasks under lm-eval 0.4.13, scored by the same code as under lmms-eval.

* discovery (the start-up hook, its stand-down on docs/upstream/0004, the replay model registration);
* one in-process lm-eval run with the replay model (hand-computed scores, generation and likelihood tasks);
* harness equality: the same recorded answers give identical metric values under lm-eval and lmms-eval, for every
  text-only task (and on the real Pun Rebus answer sheet when ../shared/data has it);
* the real ``lm_eval`` CLI in a subprocess with ``--model hf`` on a tiny random causal LM (slow).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import types

import pytest

pytest.importorskip("lm_eval", reason="the lm-eval extra is not installed (pip install 'hanyi[lm-eval]')")

import hanyi  # noqa: E402
from hanyi import _autohook  # noqa: E402
from hanyi.host import discovery  # noqa: E402
from hanyi.lm_eval_tasks import _glue  # noqa: E402

#: The tasks compared: unpie_text's tasks score both splits (All); the one-split ones are tagged unpie_text_splits.
UNPIE_BOTH = ("unpie_grounding_text", *(f"unpie_reconstruction_text_{lang}" for lang in ("de", "fr", "ko")))
LEAVES = (
    "punrebus_textonly",
    "cii_textonly",
    *UNPIE_BOTH,
    *(f"{task}_{kind}" for task in UNPIE_BOTH for kind in ("homo", "hetero")),
)
RUN = ["punrebus_textonly", "cii_textonly", "unpie_text", "unpie_text_splits"]
REAL_CSV = os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "data", "pun_rebus", "answer_sheet_w_element.csv"
)


@pytest.fixture(scope="module")
def lm_task_manager():
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=hanyi.LM_EVAL_TASKS_DIR, include_defaults=False)


@pytest.fixture(scope="module")
def lm_replay(lm_task_manager, session_tmp):
    """``lm_replay(records, tasks, **kw)``: write a replay file and run lm-eval's evaluator with ``ReplayLM``."""
    from lm_eval import evaluator

    from hanyi.models.lm_eval_replay import ReplayLM

    counter = iter(range(10**6))

    def run(records, tasks, on_missing="error", **kwargs):
        path = os.path.join(session_tmp, f"lm-replay-{next(counter)}.jsonl")
        _write(path, records)
        kwargs.setdefault("bootstrap_iters", 0)
        out = evaluator.simple_evaluate(
            model=ReplayLM(path=path, on_missing=on_missing), tasks=list(tasks), task_manager=lm_task_manager, **kwargs
        )
        assert out and out.get("results"), f"lm-eval returned no results for {tasks}"
        return out

    return run


def _write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


# --- glue and discovery ----------------------------------------------------------------------------------------------


def test_prompt_settings_and_metrics_come_from_the_lmms_eval_yaml():
    assert (
        _glue.lmms_task_kwargs("unpie", "unpie_reconstruction_text_de_homo")["template"] == "reconstruction_text.jinja"
    )
    from hanyi.tasks.cii import utils as cii

    by_name = {m["metric"]: m["aggregation"] for m in _glue.metric_list("cii", "cii_textonly")}
    assert by_name["acc"] is cii.cii_acc and by_name["acc_domain_life"].__name__ == "cii_acc_domain_life"
    with pytest.raises(FileNotFoundError, match="no lmms-eval task YAML"):
        _glue.lmms_task_kwargs("cii", "cii_nope")


def test_stripped_process_results_sees_what_lmms_eval_passes():
    seen = []
    _glue.stripped(lambda doc, results: seen.append(results))({}, ["  A. x\n", None])
    assert seen == [["A. x", ""]]


def test_lm_eval_patch_puts_hanyi_first_once_and_keeps_other_arguments():
    class TM:
        def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
            self.args = (verbosity, include_path, include_defaults, metadata)

    assert discovery.patch_lm_eval_task_manager(TM, "/pkg/lm") is True
    assert discovery.patch_lm_eval_task_manager(TM, "/pkg/lm") is False
    assert TM(include_path="/user", metadata={"a": 1}).args == (None, ["/pkg/lm", "/user"], True, {"a": 1})
    assert TM(None, ["/pkg/lm/"], False).args[1] == ["/pkg/lm/"]


def test_lm_eval_stand_down_and_replay_registration():
    class TM:
        def __init__(self, include_path=None):
            self.include_path = include_path

    fixed = types.SimpleNamespace(TaskManager=TM, TASK_ENTRY_POINT_GROUP="lm_eval.tasks")
    assert discovery.lm_eval_reads_plugins(fixed) and not discovery.lm_eval_reads_plugins(
        types.SimpleNamespace(TaskManager=TM)
    )
    registry = _Registry()
    assert discovery.register_lm_eval_replay(registry=registry, models_module=types.SimpleNamespace()) is True
    assert registry == dict.fromkeys(discovery.LM_EVAL_MODEL_NAMES, discovery.LM_EVAL_REPLAY)
    assert discovery.register_lm_eval_replay(registry=registry, models_module=types.SimpleNamespace()) is False
    assert discovery.register_lm_eval_replay(models_module=types.SimpleNamespace(MODEL_ENTRY_POINT_GROUP="x")) is False


class _Registry(dict):
    def register(self, name, target):
        self[name] = target


def test_hook_patched_lm_eval_in_this_process_and_registered_replay():
    import lm_eval.tasks
    from lm_eval.api.registry import get_model

    from hanyi.models.lm_eval_replay import ReplayLM

    tm = lm_eval.tasks.TaskManager(include_defaults=False)
    assert {"punrebus_textonly", "cii_textonly", "unpie_text", "cii_textonly_mc", "punrebus_textonly_mc"} <= set(
        tm.all_tasks
    )
    assert get_model("replay") is ReplayLM
    assert get_model("hf").__name__ == "HFLM"  # lm-eval's own table is still loaded


def test_hook_waits_for_both_harnesses():
    code = "import sys; print(sorted(next(f for f in sys.meta_path if type(f).__name__ == '_TaskManagerHook').pending))"
    env = {k: v for k, v in os.environ.items() if k != _autohook.OPT_OUT_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['lm_eval._cli.harness', 'lm_eval.tasks', 'lmms_eval.tasks']"


def test_old_tasks_list_spelling_becomes_ls_tasks(monkeypatch):
    from lm_eval._cli.harness import HarnessCLI

    assert getattr(HarnessCLI, "_hanyi_tasks_dir_patched", False)  # patched by the start-up hook
    monkeypatch.setattr(sys, "argv", ["lm_eval", "--tasks", "list", "--include_path", "/mine"])
    args = HarnessCLI().parse_args()
    assert (args.command, args.what, args.include_path) == ("ls", "tasks", "/mine")
    monkeypatch.setattr(sys, "argv", ["lm_eval", "--model", "hf", "--tasks", "cii_textonly"])
    assert HarnessCLI().parse_args().command == "run"


def test_missing_data_is_a_clear_error_under_lm_eval(monkeypatch, tmp_path, lm_task_manager):
    from hanyi.data.sources import DataNotFoundError

    monkeypatch.setenv("HANYI_DATA_ROOT", str(tmp_path / "nothing-here"))
    with pytest.raises(DataNotFoundError, match=r"HANYI_DATA_ROOT=.*does not exist.*hanyi prepare punrebus"):
        lm_task_manager.load(["punrebus_textonly"])


def test_upstream_0004_applies_and_makes_the_hook_stand_down(tmp_path):
    import importlib.util
    import shutil

    import lm_eval

    root, work = os.path.dirname(lm_eval.__file__), tmp_path / "lm_eval"
    for rel in ("tasks/manager.py", "models/__init__.py", "_cli/harness.py"):
        (work / os.path.dirname(rel)).mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(root, rel), work / rel)
    patch_file = os.path.join(
        os.path.dirname(__file__), "..", "docs", "upstream", "0004-lm-eval-task-and-model-entry-points.patch"
    )
    subprocess.run(["patch", "-p1", "-s", "-i", os.path.abspath(patch_file)], cwd=tmp_path, check=True)
    modules = {}
    for name, rel in (("manager", "tasks/manager.py"), ("models", "models/__init__.py")):
        spec = importlib.util.spec_from_file_location(f"patched_lm_eval_{name}", work / rel)
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    from pathlib import Path

    assert Path(hanyi.LM_EVAL_TASKS_DIR) in modules["manager"].entry_point_task_dirs()
    assert discovery.lm_eval_reads_plugins(modules["manager"])
    assert discovery.register_lm_eval_replay(registry=_Registry(), models_module=modules["models"]) is False
    assert '["--tasks", "list"]' in (work / "_cli" / "harness.py").read_text()


# --- one in-process lm-eval run: hand-computed scores ----------------------------------------------------------------

PUNREBUS_RECORDS = [
    {"task": "punrebus_textonly", "key": {"story_pinyin": "anjutu"}, "response": "\n  G. Peace"},  # gold G, stripped
    {"task": "punrebus_textonly", "key": {"story_pinyin": "dafugui"}, "response": "A because ..."},
    {"task": "punrebus_textonly", "doc_id": 1, "response": "**E**"},  # unparsed (paper rule), robust parses it
]


def test_in_process_lm_eval_run_replays_by_key_and_doc_id(lm_replay):
    import datasets

    from hanyi.data.sources import resolve

    docs = list(datasets.load_dataset(resolve("punrebus"), "textonly", split="test"))
    assert [d["story_pinyin"] for d in docs[:3]] == ["anjutu", "bidingshengguan", "dafugui"]
    mc = [
        {"task": "punrebus_textonly_mc", "doc_id": 0, "loglikelihoods": [-9, -9, -9, -9, -9, -9, -1]},  # G: right
        {"task": "punrebus_textonly_mc", "doc_id": 1, "loglikelihoods": [[-1, True]] + [[-5, False]] * 6},
        {"task": "cii_textonly_mc", "doc_id": 0, "loglikelihoods": [-3, -2, -1, -4, -5, -6]},  # C
    ]
    out = lm_replay(PUNREBUS_RECORDS + mc, ["punrebus_textonly", "punrebus_textonly_mc", "cii_textonly_mc"],
                    on_missing="empty", log_samples=True)  # fmt: skip
    res, n = out["results"]["punrebus_textonly"], len(docs)
    assert res["parse_rate,none"] == pytest.approx(2 / n)
    assert docs[0]["categories"] == ["G"] and "A" not in docs[2]["categories"]  # "A" for dafugui is wrong
    assert res["accuracy,none"] == pytest.approx(1 / n)
    assert res["accuracy_robust,none"] == pytest.approx((1 + ("E" in docs[1]["categories"])) / n)
    # docs 0 and 1 have records (G, A); the rest answer -inf everywhere, and a tie picks the first letter, A
    expected = ("G" in docs[0]["categories"]) + sum("A" in d["categories"] for d in docs[1:])
    assert out["results"]["punrebus_textonly_mc"]["acc_loglik,none"] == pytest.approx(expected / n)
    cii_sample = out["samples"]["cii_textonly_mc"][0]
    assert cii_sample["acc_loglik"]["pred"] == "C" and cii_sample["acc_loglik"]["correct"] == (
        cii_sample["doc"]["answer"] == "C"
    )


def test_lm_eval_replay_names_the_missing_doc(lm_replay):
    from hanyi.models.replay import ReplayRecordMissing

    with pytest.raises(ReplayRecordMissing, match=r"punrebus_textonly.*doc_id 1"):
        lm_replay(PUNREBUS_RECORDS[:1] + [{"task": "punrebus_textonly", "doc_id": 0, "response": "x"}],
                  ["punrebus_textonly"], limit=2)  # fmt: skip


# --- harness equality ------------------------------------------------------------------------------------------------


def _responses(task: str, doc: dict) -> list[str]:
    """Answers that exercise every parsing path: right, padded, wrong, markdown, empty."""
    if task.startswith("punrebus"):
        gold = doc["categories"][0]
        return [f"{gold}. reason", f"\n  {gold}", "A", f"**{gold}**", "", f"Option {gold}", "Based on it, F"]
    if task.startswith("cii"):
        gold = doc["answer"]
        return [f"答案：{gold}", f"  答案：{gold}\n", "答案：A", f"The answer is ({gold})", "", gold, "我选B和C"]
    if "grounding" in task:
        gold = doc["pun_phrase"]
        return [gold, f"  {gold}\n", "nothing", f"[answer]: {gold}", "", gold.upper()]
    gold = doc["target"]
    return [f'[English]: "{gold}"', f"  {gold}\n", "", "a plain sentence with no pun", gold.split(" ")[0]]


def _records(lm_task_manager, tasks=LEAVES) -> list[dict]:
    loaded = lm_task_manager.load(list(tasks))["tasks"]
    records = []
    for name in tasks:
        homographic = sum(doc.get("category") == "homographic" for doc in loaded[name].eval_docs)
        for i, doc in enumerate(loaded[name].eval_docs):
            answers = _responses(name, doc)
            # a doc of a task that scores both splits gets the answer it gets in its one-split task
            position = i - homographic if name in UNPIE_BOTH and doc["category"] == "heterographic" else i
            rec = {"task": name, "response": answers[position % len(answers)]}
            if name == "punrebus_textonly":
                rec["key"] = {"story_pinyin": doc["story_pinyin"]}
            elif name == "cii_textonly":
                rec["key"] = {"id": doc["id"]}
            else:
                rec["doc_id"] = i
            records.append(rec)
    return records


def _metrics(results: dict, name: str) -> dict:
    row = results["results"][name]
    return {k: v for k, v in row.items() if k.endswith(",none") and "_stderr" not in k}


def _assert_same(a, b, where):
    assert a.keys() == b.keys(), f"{where}: metric keys differ: {sorted(a.keys() ^ b.keys())}"
    for key in a:
        x, y = a[key], b[key]
        same = (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)) or x == y
        assert same, f"{where} {key}: lmms-eval {x!r} != lm-eval {y!r}"


def test_same_answers_give_identical_scores_in_both_harnesses(lm_task_manager, lm_replay, replay):
    records = _records(lm_task_manager)
    lm = lm_replay(records, RUN)
    lmms = replay(records, RUN)
    for name in LEAVES:
        got = _metrics(lm, name)
        assert got, f"{name}: no metrics under lm-eval"
        _assert_same(_metrics(lmms, name), got, name)
    for name in UNPIE_BOTH:  # All = the mean of Homo and Hetero, in both harnesses
        key = "bleu4,none" if "reconstruction" in name else "exact_match,none"
        homo, hetero = (_metrics(lm, f"{name}_{split}")[key] for split in ("homo", "hetero"))
        assert _metrics(lm, name)[key] == (homo + hetero) / 2, name
    # not vacuous: the answers mix right and wrong
    assert 0 < lm["results"]["cii_textonly"]["acc,none"] < 100
    assert (
        0
        < lm["results"]["punrebus_textonly"]["accuracy,none"]
        < lm["results"]["punrebus_textonly"]["accuracy_robust,none"]
    )
    assert 0 < lm["results"]["unpie_grounding_text_homo"]["exact_match,none"] < 1


@pytest.mark.skipif(not os.path.isfile(REAL_CSV), reason="shared/data answer sheet not present")
def test_real_answer_sheet_same_accuracy_in_both_harnesses(tmp_path, monkeypatch, lm_task_manager, lm_replay, replay):
    import io

    from PIL import Image

    from hanyi.data.punrebus import build_dataset

    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, format="PNG")  # the text-only config needs no image; one keeps the build valid
    with open(REAL_CSV, encoding="utf-8-sig") as f:
        counts = build_dataset(f.read(), [("anjutu_1.png", png.getvalue)], str(tmp_path / "punrebus"))
    assert counts["textonly_docs"] == 375
    monkeypatch.setenv("HANYI_PUNREBUS_DATA", str(tmp_path / "punrebus"))
    # lm-eval keeps a task folder's modules per process (keyed by path, reloaded when the file changes): forget the
    # dataset.py it executed under the sample data, so the path follows the variable just set (lmms-eval re-executes it)
    monkeypatch.delitem(sys.modules, os.path.join(hanyi.LM_EVAL_TASKS_DIR, "punrebus", "dataset"), raising=False)
    records = _records(lm_task_manager, ("punrebus_textonly",))
    assert len(records) == 375
    lm, lmms = lm_replay(records, ["punrebus_textonly"]), replay(records, ["punrebus_textonly"])
    _assert_same(_metrics(lmms, "punrebus_textonly"), _metrics(lm, "punrebus_textonly"), "real answer sheet")
    assert 0 < lm["results"]["punrebus_textonly"]["accuracy,none"] < 1


# --- the real lm_eval CLI with lm-eval's hf model on a tiny random causal LM -----------------------------------------


@pytest.fixture(scope="session")
def tiny_causal_lm(session_tmp) -> str:
    from hanyi.models.tiny_causal_lm import build_tiny_causal_lm

    return build_tiny_causal_lm(os.path.join(session_tmp, "tiny_causal_lm"))


@pytest.mark.slow
def test_lm_eval_cli_hf_tiny_lm_with_no_flag(tmp_path, tiny_causal_lm):
    """Plain ``lm_eval --model hf`` (no --include_path): generation and likelihood tasks run and are scored by us."""
    lm_eval_cli = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    tasks = "punrebus_textonly_mc,cii_textonly_mc,punrebus_textonly,unpie_grounding_text"  # (both splits)
    cmd = [lm_eval_cli, "--model", "hf", "--model_args", f"pretrained={tiny_causal_lm},dtype=float32",
           "--device", "cpu", "--tasks", tasks, "--gen_kwargs", "max_gen_toks=4", "--limit", "3",
           "--output_path", str(tmp_path / "out"), "--log_samples"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (results_file,) = list((tmp_path / "out").rglob("results_*.json"))
    res = json.loads(results_file.read_text())["results"]
    assert {"punrebus_textonly_mc", "cii_textonly_mc", "punrebus_textonly", "unpie_grounding_text"} <= set(res)
    assert "accuracy,none" in res["punrebus_textonly"] and "acc,none" not in res["punrebus_textonly_mc"]
    for task, letters, scale in (("punrebus_textonly_mc", "ABCDEFG", 1.0), ("cii_textonly_mc", "ABCDEF", 100.0)):
        (samples_file,) = list((tmp_path / "out").rglob(f"samples_{task}_*.jsonl"))
        lines = [json.loads(line) for line in samples_file.read_text().splitlines()]
        assert len(lines) == 3
        for s in lines:
            lls = [float(r[0][0]) for r in s["resps"]]
            assert len(lls) == len(letters)
            assert s["acc_loglik"]["pred"] == letters[lls.index(max(lls))]  # our pick is the model's argmax
        expected = scale * sum(s["acc_loglik"]["correct"] for s in lines) / 3
        assert res[task]["acc_loglik,none"] == pytest.approx(expected)


@pytest.mark.slow
def test_lm_eval_ls_tasks_with_include_path_and_the_hook_off(tmp_path):
    lm_eval_cli = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    env = {**os.environ, _autohook.OPT_OUT_ENV: "1"}
    listed = subprocess.run([lm_eval_cli, "ls", "tasks", "--include_path", hanyi.LM_EVAL_TASKS_DIR], env=env,
                            capture_output=True, text=True, timeout=600, cwd=tmp_path)  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-2000:]
    for name in ("cii_textonly", "unpie_text", "punrebus_textonly", "cii_textonly_mc"):
        assert f"|{name} " in listed.stdout


def test_tiny_causal_lm_is_small_idempotent_and_loads(tiny_causal_lm):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hanyi.models.tiny_causal_lm import build_tiny_causal_lm

    assert build_tiny_causal_lm(tiny_causal_lm) == tiny_causal_lm
    size = sum(os.path.getsize(os.path.join(tiny_causal_lm, f)) for f in os.listdir(tiny_causal_lm))
    assert size < 2_000_000
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_lm)
    tok = AutoTokenizer.from_pretrained(tiny_causal_lm)
    text = "答案：A"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text
    assert sum(p.numel() for p in model.parameters()) < 500_000
