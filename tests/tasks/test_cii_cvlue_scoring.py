"""CII-Bench and CVLUE scoring in plain task code: every ``process_results`` returns its metric
dict for any model output, and every aggregation a task YAML names returns the same value whatever the order of its
items (lmms-eval with 2 processes hands them rank by rank)."""

import glob
import json
import math
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hanyi import TASKS_DIR
from hanyi.task_yaml import FunctionRef, read, resolve


def _task_yamls():
    out = {}
    for bench, prefix in (("cii", "cii_"), ("cvlue", "cvlue_")):
        for path in sorted(glob.glob(os.path.join(TASKS_DIR, bench, f"{prefix}*.yaml"))):
            config = read(path)
            if "task" in config and "group" not in config:
                out[config["task"]] = (path, config)
    return out


YAMLS = _task_yamls()
TASKS = sorted(YAMLS)


def test_every_task_yaml_is_covered():
    assert len([t for t in TASKS if t.startswith("cii_")]) == 12
    assert len([t for t in TASKS if t.startswith("cvlue_")]) == 17  # cvlue_vg_abs(_served): Qwen2.5-VL absolute pixels


@pytest.fixture(scope="module")
def task_objects(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(TASKS, task_manager)


@pytest.fixture(scope="module")
def docs(task_objects):
    return {name: list(task_objects[name].test_docs()) for name in TASKS}


def _fn(task, key):
    path, config = YAMLS[task]
    return resolve(config[key], os.path.dirname(path))


def _aggregation(task, entry):
    path, _ = YAMLS[task]
    if isinstance(entry["aggregation"], FunctionRef):
        return resolve(entry["aggregation"], os.path.dirname(path))
    from lmms_eval.api.registry import get_aggregation

    return get_aggregation(entry["aggregation"])


def _metrics(task):
    return [entry["metric"] for entry in YAMLS[task][1]["metric_list"]]


def _response(task, doc, rng):
    """A realistic answer for ``task``'s ``doc``: right, wrong, verbose, unparsable or empty."""
    output_type = YAMLS[task][1].get("output_type", "generate_until")
    if output_type == "loglikelihood":
        return [(rng.uniform(-8, 0), False)]
    if output_type == "multiple_choice":
        return [(rng.uniform(0, 8), False) for _ in doc["answer_options"]]
    if task.startswith("cvlue_vg"):
        x, y = rng.random() * 0.6, rng.random() * 0.6
        box = [x, y, x + rng.random() * 0.4, y + rng.random() * 0.4]
        return [
            rng.choice(
                [
                    str([round(v, 3) for v in box]),
                    "<box>({},{}),({},{})</box>".format(*(int(v * 1000) for v in box)),
                    "不知道",
                    "",
                ]
            )
        ]
    if task.startswith("cvlue_vqa"):
        return [rng.choice([doc["answer"], f"答案：{doc['answer']}", "是的", "不是", "2个", "", "I don't know"])]
    if task == "cii_ctc":
        return [rng.choice(["画中有松。", "", "  ", "一幅山水画，意境深远。"])]
    letter = rng.choice("ABCDEF")
    return [rng.choice([doc["answer"], letter, f"答案：{letter}", f"我认为答案是{letter}选项", "", "(B)和(F)"])]


def _items(task, docs, seed=0):
    """``{metric: [item, ...]}``: process_results on the task's fixture docs, several times over where the metric
    has no per-query grouping (circular rotations and ITR shortlists are taken once, as lmms-eval hands them)."""
    rng = random.Random(seed)
    process = _fn(task, "process_results")
    copies = 1 if task == "cii_circular" or "_rerank" in task or "_mc10" in task else max(1, 120 // len(docs))
    out = {m: [] for m in _metrics(task)}
    for _ in range(copies):
        for doc in docs:
            for metric, item in process(doc, _response(task, doc, rng)).items():
                out[metric].append(item)
    return out


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.fixture
def judged(monkeypatch):
    """cii_ctc with a judge configured and a fake judging: a fixed score per description (no network)."""
    from hanyi.tasks.cii import ctc

    monkeypatch.setenv("HANYI_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")

    def judge_one(user, system, client=None):
        value = None if len(user) % 7 == 0 else len(user) % 5 + 1
        error = None if value else "parse_failure"
        return {"score": value or 0, "judge_raw": str(value), "judge_error": error, "judge_request_failed": False}

    monkeypatch.setattr(ctc, "judge_one", judge_one)


@pytest.mark.parametrize("task", TASKS)
def test_every_aggregation_gives_the_same_value_for_any_order_of_its_items(task, docs, judged):
    items = _items(task, docs[task])
    assert set(items) == set(_metrics(task)), task
    for entry in YAMLS[task][1]["metric_list"]:
        fn, values = _aggregation(task, entry), items[entry["metric"]]
        assert len(values) >= len(docs[task]), (task, entry["metric"])
        expected = fn(list(values))
        for seed in range(5):
            shuffled = list(values)
            random.Random(seed).shuffle(shuffled)
            got = fn(shuffled)
            assert _same(got, expected), (task, entry["metric"], seed, got, expected)


NASTY = [
    None, 0, 7, -1, 3.5, float("nan"), float("inf"), True, b"A", [], ["A"], [None], {}, {"error": "x"}, (1.0, False),
    ("A",), "", " ", "\n\t ", "A\ud800", "\ud800", "\udfff答案：B", "\x00", "\u200b\u202eB\u0301", "😀" * 50,
    "x" * 100_000, "答案：" * 30_000, "(" * 10_000, "[" * 10_000, '{"answer": "B"}', '{"bbox": [1, 2, 3, 4]}',
    "[1, 2, 3, 4]", "[nan, inf, -inf, 1e309]", "[-1, -2, -3, -4]", "<box>(1,2),(3,4)</box>", "<box>(999999,0),(0,0)</box>",
    "(nan, False)", "(1e999, True)", "(-inf, False)", "(1.0, 2.0, 3.0)", "None", "答案：\n", "\n答案", "\n**答案：",
    *"abcdefghABCDEFGH", *[f"({c})" for c in "abcdefAF"], *[f"答案：{c}" for c in "abcdefAF"],
]  # fmt: skip


def _garbage(seed):
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x110000)) for _ in range(100_000))


def _process_tasks():
    """One task per distinct process_results function (their docs differ only in the variants of one function)."""
    seen, out = set(), []
    for task in TASKS:
        ref = YAMLS[task][1]["process_results"]
        key = (os.path.dirname(YAMLS[task][0]), ref)
        if key not in seen:
            seen.add(key)
            out.append(task)
    return out


def _results_for(task, doc, output):
    output_type = YAMLS[task][1].get("output_type", "generate_until")
    if output_type == "multiple_choice":
        n = len(doc["answer_options"])
        return [[output] * n, [output] + [(1.0, False)] * (n - 1), [(1.0, False)] * (n - 1) + [output], []]
    return [[output], []]


def _check(task, doc, output):
    process = _fn(task, "process_results")
    for results in _results_for(task, doc, output):
        out = process(doc, results)
        # cii_ctc without a judge configured emits ctc_blank_rate only (docs/cii.md)
        expected = {"ctc_blank_rate"} if task == "cii_ctc" and "ctc_score" not in out else set(_metrics(task))
        assert isinstance(out, dict) and set(out) == expected, (task, repr(output)[:80])


@pytest.mark.parametrize("task", _process_tasks())
def test_process_results_never_raises_for_any_model_output(task, docs):
    outputs = [*NASTY, _garbage(1), _garbage(2)]
    for doc in docs[task][:4]:
        for output in outputs:
            _check(task, doc, output)


ANY_OUTPUT = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),
    st.text(alphabet="ABCDEFGHabcdefgh()[]<>,.0123456789 答案：\n-"),
    st.binary(),
    st.lists(st.one_of(st.text(), st.floats(), st.none()), max_size=4),
    st.tuples(st.floats(), st.booleans()),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@pytest.mark.parametrize("task", _process_tasks())
def test_process_results_never_raises_fuzzed(task, docs):
    @settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(output=ANY_OUTPUT, index=st.integers(min_value=0, max_value=3))
    def check(output, index):
        task_docs = docs[task]
        _check(task, task_docs[index % len(task_docs)], output)

    check()


def _function_refs(node):
    if isinstance(node, FunctionRef):
        yield str(node)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _function_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _function_refs(value)


def test_every_function_target_is_a_name_defined_in_its_file():
    """a ``!function`` target is a ``def``, an assignment or a named import in the named file (the
    aggregations are imported by name from ``hanyi.metrics``), never a name made by a module ``__getattr__`` or
    ``globals().update``."""
    import ast

    import yaml

    from hanyi.task_yaml import _Loader

    checked = 0
    for bench in ("cii", "cvlue"):
        folder = os.path.join(TASKS_DIR, bench)
        for path in sorted(glob.glob(os.path.join(folder, "*.yaml")) + glob.glob(os.path.join(folder, "_*_yaml"))):
            with open(path, encoding="utf-8") as f:
                raw = yaml.load(f, Loader=_Loader) or {}  # noqa: S506 (a SafeLoader subclass)
            for ref in _function_refs(raw):
                module, _, name = ref.rpartition(".")
                source = os.path.join(folder, *module.split(".")) + ".py"
                assert os.path.isfile(source), (os.path.basename(path), ref)  # a file beside the YAML
                with open(source, encoding="utf-8") as f:
                    tree = ast.parse(f.read())
                defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
                defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if hasattr(t, "id")}
                defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
                assert "__getattr__" not in defined, source
                assert name in defined, (os.path.basename(path), ref)
                checked += 1
    assert checked > 40


# ---- the report needs nothing but the sample log and hanyi.metrics ---------------------------------

#: Run first in a subprocess: every import of ``hanyi.tasks`` (or a module below it) raises ImportError.
BLOCK_TASKS = """
import importlib.abc, sys

class _NoTasks(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "hanyi.tasks" or name.startswith("hanyi.tasks."):
            raise ImportError(f"blocked for this test: {name}")
        return None

sys.meta_path.insert(0, _NoTasks())
"""


def _python(code: str, *args: str) -> str:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(TASKS_DIR)), "HANYI_NO_AUTOHOOK": "1"}
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _yaml_aggregations():
    """``{name lmms-eval logs: function}`` of every aggregation a CII or CVLUE task YAML names."""
    out = {}
    for task in TASKS:
        for entry in YAMLS[task][1]["metric_list"]:
            if isinstance(entry["aggregation"], FunctionRef):
                fn = _aggregation(task, entry)
                out[fn.__name__] = fn
    return out


def test_every_yaml_aggregation_is_light_and_found_by_name_without_hanyi_tasks():
    from hanyi.metrics import resample

    named = _yaml_aggregations()
    assert len(named) == 31  # cii_miss_rate: no YAML names it since CII 2.1 (hanyi report computes miss_rate)
    for name, fn in named.items():
        assert resample.by_name(name) is fn, name  # the YAML's function is the one hanyi.metrics registers
        assert resample.is_decomposed(fn) and fn.light, name
    code = (
        BLOCK_TASKS
        + """
import json, sys
from hanyi.metrics import resample
found = {n: [resample.is_decomposed(f := resample.by_name(n)), getattr(f, "light", False), f.__module__]
         for n in json.loads(sys.argv[1])}
assert not [m for m in sys.modules if m.startswith("hanyi.tasks")]
print(json.dumps(found))
"""
    )
    found = json.loads(_python(code, json.dumps(sorted(named))))
    assert {n: v[:2] for n, v in found.items()} == {n: [True, True] for n in named}
    # defined in hanyi/metrics (the circular ones once for every benchmark, in hanyi.metrics.circular)
    assert {v[2] for v in found.values()} == {
        "hanyi.metrics.cii_aggregations",
        "hanyi.metrics.cvlue_aggregations",
        "hanyi.metrics.circular",
    }


INTERVALS = """
import json, sys
from hanyi.results.measures import interval_of
from hanyi.results.runs import load_runs

(run,) = load_runs([sys.argv[1]])
out = {}
for task in sorted(run.tasks):
    for metric in sorted(run.tasks[task].metrics):
        rec = interval_of(run, task, metric)
        out[f"{task} {metric}"] = {k: rec.get(k) for k in ("value", "ci_low", "ci_high", "stderr", "method", "n", "why")}
assert not [m for m in sys.modules if m.startswith("hanyi.tasks")], "the report imported hanyi.tasks"
print(json.dumps(out, sort_keys=True))
"""

#: One task of each kind of aggregation: MC with Table 1 columns, circular, VQA and VG means, ITR re-ranking, VD.
REPORTED = ("cii_none", "cii_circular", "cvlue_vqa", "cvlue_vg", "cvlue_ir_rerank", "cvlue_vd")


@pytest.mark.slow
def test_report_intervals_from_a_plain_run_are_the_same_with_hanyi_tasks_blocked(replay, docs, tmp_path):
    """A plain in-process run of one task per aggregation kind, saved as the CLI does; ``hanyi report``'s intervals
    are computed from its sample log in a process where ``hanyi.tasks`` cannot be imported, and equal those of a
    process where it can; every headline number has one."""
    from hanyi.results.lmms_output import save_like_cli

    rng = random.Random(7)
    records = []
    for task in REPORTED:
        for i, doc in enumerate(docs[task]):
            answer = _response(task, doc, rng)
            if YAMLS[task][1].get("output_type", "generate_until") == "generate_until":
                records.append({"task": task, "doc_id": i, "response": answer[0] if i % 3 else doc.get("answer")})
            else:
                records.append({"task": task, "doc_id": i, "loglikelihoods": [[ll, g] for ll, g in answer]})
    results = replay(records, list(REPORTED))
    save_like_cli(results, str(tmp_path / "out"))
    blocked = json.loads(_python(BLOCK_TASKS + INTERVALS, str(tmp_path / "out")))
    importable = json.loads(_python(INTERVALS.replace("assert not [m", "assert [m").replace(
        "import json, sys", "import json, sys\nimport hanyi.tasks.cii.utils, hanyi.tasks.cvlue.aggregate"
    ), str(tmp_path / "out")))  # fmt: skip
    assert blocked == importable
    headline = {
        "cii_none": ("acc", "acc_robust", "acc_domain_life", "acc_emotion_positive"),
        "cii_circular": ("circular_acc", "rotation_acc", "consistency_rate", "circular_acc_robust"),
        "cvlue_vqa": ("accuracy", "accuracy_robust"),
        "cvlue_vg": ("miou", "acc_iou_0_5"),
        "cvlue_ir_rerank": ("r1", "r5", "r10", "stage1_ceiling"),
        "cvlue_vd": ("r1", "mrr", "mean_rank"),
    }
    for task, metrics in headline.items():
        for metric in metrics:
            rec = blocked.get(f"{task} {metric}") or sorted(blocked)
            assert isinstance(rec, dict) and rec["ci_low"] is not None and rec["n"] > 0, (task, metric, rec)
            assert rec["ci_low"] <= rec["value"] + 1e-12 <= rec["ci_high"] + 2e-12, (task, metric, rec)


def test_cii_decomposed_table1_and_circular_aggregations_equal_the_former_ones_bit_for_bit():
    from hanyi.data.cii_categories import TABLE1_METRICS
    from hanyi.metrics import cii_aggregations as agg
    from hanyi.metrics import punrebus_aggregations as pun
    from hanyi.metrics.cii_extract import category_accuracy
    from hanyi.metrics.circular import rotation_item
    from hanyi.tasks import _circular

    rng = random.Random(11)
    labels = {
        field: sorted({label for f, label in TABLE1_METRICS.values() if f == field}) for field in ("domain", "emotion")
    }
    for n in (0, 1, 7, 113):
        items = [{"correct": rng.random() < 0.4, **{f: rng.choice(v) for f, v in labels.items()}} for _ in range(n)]
        for name, (field, label) in TABLE1_METRICS.items():
            old = category_accuracy(items, field, label) / 100
            assert _same(getattr(agg, f"cii_{name}")(items), old), (name, n)
    for n_questions in (0, 1, 13, 97):
        items = [
            rotation_item(f"q{q}", k, 6, [rng.choice("ABCDEF")], rng.choice([*"ABCDEF", None]), "ABCDEF")
            for q in range(n_questions) for k in range(6) if rng.random() < 0.97 or k  # some incomplete questions
        ]  # fmt: skip
        former = _former_circular_scores(items)
        for metric in (*_circular.METRICS, *_circular.ROBUST_METRICS):
            for bench, module in (("cii", agg), ("punrebus", pun)):  # one implementation, hanyi.metrics.circular
                new = getattr(module, f"{bench}_{metric}")(items)
                assert _same(new, former[metric.removesuffix("_robust")]), (bench, metric, n_questions)


def _former_circular_scores(items):
    """hanyi 0.3's ``circular_scores`` (one pass over the complete questions), the reference of the test above."""
    from hanyi.metrics.circular import group_rotations

    complete, _ = group_rotations(items)
    if not complete:
        return dict.fromkeys(("circular_acc", "rotation_acc", "consistency_rate"), math.nan)
    solved = consistent = correct = total = 0
    for rows in complete.values():
        solved += all(r["correct"] for r in rows)
        picks = {r["pred"] for r in rows}
        consistent += len(picks) == 1 and None not in picks
        correct += sum(bool(r["correct"]) for r in rows)
        total += len(rows)
    n = len(complete)
    return {"circular_acc": solved / n, "rotation_acc": correct / total, "consistency_rate": consistent / n}
