"""Pun Rebus and UNPIE scoring in plain task code: every ``process_results`` returns a value for
any model output, every aggregation a YAML names gives the same value whatever the order of its items (lmms-eval
with 2 processes hands them rank by rank), and the per-category breakdowns come from the sample log."""

import copy
import glob
import json
import math
import os
import random
import types

import pytest

from hanyi import TASKS_DIR, floats
from hanyi.metrics import from_samples
from hanyi.task_yaml import FunctionRef, read, resolve

BENCHMARKS = ("punrebus", "unpie")

#: Model outputs no scorer may raise on: non-text, empty, huge, broken UTF-16, every letter case, JSON-ish text,
#: echoed labels, Korean / German / French / Chinese junk.
FUZZ = [
    None,
    0,
    3.5,
    True,
    ["A"],
    {"answer": "B"},
    b"C",
    "",
    " ",
    "\n\t \r\n",
    "\x00",
    "A\ud800",
    "\udfff",
    "\ud83d",
    *"ABCDEFGabcdefg",
    "option c",
    "OPTION G",
    "Option  b.",
    "**B**",
    "(A)",
    "A, B and C",
    '{"answer": "B"}',
    '{"answer": ["A", "G"], "reason": null}',
    "[1, 2, 3]",
    "```json\n{}\n```",
    "[answer]: cut",
    "answer:",
    "[German]:",
    "[English]: \n\n",
    "[French]: «Il a dit»",
    "정답은 B입니다. 한국어 번역: 그는 말했다",
    "Die Antwort ist C. Er sagte: „Hallo“",
    "La réponse est D, évidemment.",
    "答案是E，因为画中有鱼、莲花。",
    "马, 猴子, , ,",
    ", , ,",
    "Here is the translation:\n\n",
    "Sure!\n",
    "\u200b\u200b\ufeff",
    "x" * 100_000,
]


def _garbage(rng, n=100_000):
    alphabet = "AbCdEfG xyz,.:;\n\t[]{}\"'«»„“가나다中文éß\u0301\ufffd0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n))


def _task_yamls():
    out = {}
    for bench in BENCHMARKS:
        for path in sorted(glob.glob(os.path.join(TASKS_DIR, bench, f"{bench}_*.yaml"))):
            config = read(path)
            if "task" in config and "group" not in config and config.get("process_results"):
                out[config["task"]] = (bench, config)
    return out


TASKS = _task_yamls()


def _function(bench, ref):
    return resolve(ref, os.path.join(TASKS_DIR, bench))


def _aggregation(bench, entry):
    agg = entry["aggregation"]
    if isinstance(agg, FunctionRef):
        return _function(bench, agg)
    from lmms_eval.api.registry import get_aggregation

    return get_aggregation(agg)


@pytest.fixture(scope="module")
def task_docs(task_manager):
    """Each task's docs as its ``process_docs`` gives them (the sample data; circular tasks: one per rotation)."""
    from lmms_eval.tasks import get_task_dict

    out = {}

    def walk(d):
        for v in d.values():
            if isinstance(v, dict):
                walk(v)
            else:
                out[v.task_name] = list(v.test_docs())

    walk(get_task_dict(sorted(TASKS), task_manager))
    return out


def test_every_task_of_both_benchmarks_is_covered():
    assert len([t for t in TASKS if t.startswith("punrebus_")]) == 8
    assert len([t for t in TASKS if t.startswith("unpie_")]) == 54  # 36 one-split tasks, 18 of both splits


def _answers(doc, rng):
    """Realistic answers for a doc: right, wrong, chatty, empty, each task's gold fields echoed or garbled."""
    pool = ["A", "B. Happiness", "Option C", "D", "E", "F.", "G", "**B**", "Based on the bats, A.", "", "I cannot tell"]
    for key in ("pun_phrase", "target", "distractor", "pun_sentence"):
        if isinstance(doc.get(key), str):
            pool += [doc[key], f"[answer]: {doc[key]}", f"Here is the translation:\n\n{doc[key]}", doc[key][::-1]]
    pool += ["Official Hat, Bird", "Bats, Peaches (桃), coin.", "马, 猴子"]
    return rng.choice(pool)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_aggregation_gives_the_same_value_whatever_the_order_of_its_items(task, task_docs):
    bench, config = TASKS[task]
    process_results = _function(bench, config["process_results"])
    rng = random.Random(task)
    # more items than docs: each doc answered three times (a circular question: once per rotation, or it is left out)
    docs = task_docs[task] * (1 if "circular" in task else 3)
    outs = [process_results(doc, [_answers(doc, rng)]) for doc in docs]
    checked = 0
    for entry in config["metric_list"]:
        items = [out[entry["metric"]] for out in outs if entry["metric"] in out]
        if not items:
            continue  # a key this setup does not emit (a judge, WordNet, BERTScore weights)
        aggregate = _aggregation(bench, entry)
        expected = aggregate(copy.deepcopy(items))
        for seed in range(4):
            shuffled = copy.deepcopy(items)
            random.Random(seed).shuffle(shuffled)
            if entry["metric"].startswith("element_sim"):  # float32 in doc order, as the official scorer (1.7)
                assert floats.close(aggregate(shuffled), expected), (entry["metric"], seed)
                continue
            assert _same(aggregate(shuffled), expected), (entry["metric"], seed)
        checked += 1
    # Pun Rebus's image tasks emit Table 1's column and its robust sibling (or S_Abs and S_Sim) since matching 1.5;
    # UNPIE disambiguation (both splits): the decision and its _robust twin
    assert checked >= 2


def test_element_similarity_is_a_function_of_its_doc_and_the_aggregation_needs_no_model(task_docs, monkeypatch):
    """A batch-sensitive fake embedder (each vector depends on its place in the call): S_Sim is computed per doc in
    ``process_results``, so a doc scores the same alone or after others within the float rule, and the aggregation
    only averages the logged scores (no model), in any order within the float rule (a float32 sum in doc order, as
    the official scorer's; elements 1.7)."""
    import torch

    from hanyi.metrics import elements as el
    from hanyi.tasks.punrebus import aggregate, utils

    class Fake:
        def encode(self, strings, convert_to_tensor=True, batch_size=256):
            if isinstance(strings, str):  # one string per call (elements 1.6): a vector, as SentenceTransformer's
                return self.encode([strings])[0]
            return [
                torch.tensor([float(len(s) % 7) + 1e-7 * i, float(sum(map(ord, s)) % 11), 1.0])
                for i, s in enumerate(strings)
            ]

    monkeypatch.setattr(el, "load_sbert", lambda *a, **k: Fake())
    rng = random.Random(1)
    docs = task_docs["punrebus_elements"] * 4
    answers = [_answers(doc, rng) for doc in docs]

    def sim_items(order):
        out = {i: utils.punrebus_elements_process_results(docs[i], [answers[i]]) for i in order}
        return [next(v for k, v in out[i].items() if k.startswith("element_sim")) for i in range(len(docs))]

    items = sim_items(range(len(docs)))
    assert any(it["parsed"] and it["instance_score"] > 0 for it in items)
    other = sim_items(random.Random(0).sample(range(len(docs)), len(docs)))
    assert [it["parsed"] for it in other] == [it["parsed"] for it in items]
    assert all(floats.close(a["instance_score"], b["instance_score"]) for a, b in zip(other, items) if a["parsed"])
    monkeypatch.setattr(el, "load_sbert", lambda *a, **k: pytest.fail("the aggregation encoded"))
    expected = aggregate.punrebus_element_sim(items)
    for seed in range(5):
        shuffled = list(items)
        random.Random(seed).shuffle(shuffled)
        assert floats.close(aggregate.punrebus_element_sim(shuffled), expected)


def test_disambiguation_decisions_are_made_per_doc_and_the_aggregation_scores_nothing(task_docs, monkeypatch):
    """A batch-sensitive fake BERTScore (each score depends on its place in the call): each doc's paper and
    ``_robust`` decisions are made in ``process_results`` in one call on its own pairs, so they do not depend on the
    other docs; the aggregations combine the logged decisions, in any order, and call no scorer."""
    from hanyi.tasks.unpie import scoring, utils

    calls = []

    def scorer(cands, refs):  # coarse scores, ties broken by the place in the call
        calls.append(len(cands))
        return [len(set(c.split()) & set(r.split())) + 0.001 * i for i, (c, r) in enumerate(zip(cands, refs))]

    monkeypatch.setattr(scoring, "bertscore_scorer", lambda: scorer)
    monkeypatch.setattr(utils.backbones, "metric_key", lambda backbone, key: key)  # the paper's key: BERTScore
    rng = random.Random(2)
    docs = task_docs["unpie_disambiguation_de_homo"] * 5
    answers = [_answers(doc, rng) for doc in docs]

    def outs(order):
        got = {i: utils.unpie_disambiguation_process_results(docs[i], [answers[i]]) for i in order}
        return [got[i] for i in range(len(docs))]

    first = outs(range(len(docs)))
    assert 0 < len(calls) <= len(docs) and max(calls) <= 4  # at most one call per doc, on its own (up to 4) pairs
    assert outs(random.Random(1).sample(range(len(docs)), len(docs))) == first
    paper = [o["disamb_acc_bertscore"] for o in first]
    robust = [o["disamb_acc_bertscore_robust"] for o in first]
    monkeypatch.setattr(scoring, "bertscore_scorer", lambda: pytest.fail("the aggregation scored"))
    expected = (utils.unpie_disamb_acc_bertscore(paper), utils.unpie_disamb_acc_bertscore(robust))
    assert all(0.0 <= v <= 1.0 for v in expected)
    for seed in range(5):
        order = list(range(len(docs)))
        random.Random(seed).shuffle(order)
        got = (
            utils.unpie_disamb_acc_bertscore([paper[i] for i in order]),
            utils.unpie_disamb_acc_bertscore([robust[i] for i in order]),
        )
        assert got == expected


def _fake_judge(monkeypatch):
    """A judge whose verdict is a function of the prompt alone: 'Yes' / a score from the prompt's hash."""
    import hashlib

    from hanyi.metrics import judge
    from hanyi.metrics.judge.results import JudgeResult

    class Client:
        def judge_many(self, prompts, parse, **kw):
            out = []
            for p in prompts:
                h = int(hashlib.sha256(str(p).encode()).hexdigest(), 16)
                raw = ("Yes" if h % 2 else "No") if h % 3 else f"Score: {h % 10 + 1}"
                value = parse(raw)
                out.append(JudgeResult(str(h), raw, value, None if value is not None else "parse_failure", False))
            return out

    monkeypatch.setattr(
        judge.JudgeConfig, "from_env", classmethod(lambda cls, *a, **k: types.SimpleNamespace(model="fake-judge"))
    )
    monkeypatch.setattr(judge, "get_judge_client", lambda config: Client())


@pytest.mark.parametrize(
    "task, metric", [("punrebus_expression", "judge_score"), ("unpie_reconstruction_de_homo", "correct_custom_judge")]
)
def test_judge_aggregations_give_the_same_value_whatever_the_order(task, metric, task_docs, monkeypatch):
    _fake_judge(monkeypatch)
    bench, config = TASKS[task]
    process_results = _function(bench, config["process_results"])
    rng = random.Random(4)
    items = [process_results(doc, [_answers(doc, rng)])[metric] for doc in task_docs[task] * 5]
    entry = next(e for e in config["metric_list"] if e["metric"] == metric)
    aggregate = _aggregation(bench, entry)
    expected = aggregate(copy.deepcopy(items))
    assert math.isfinite(expected)
    for seed in range(4):
        shuffled = copy.deepcopy(items)
        random.Random(seed).shuffle(shuffled)
        assert aggregate(shuffled) == expected


@pytest.mark.parametrize("task", sorted(TASKS))
def test_process_results_returns_a_value_for_any_model_output(task, task_docs):
    bench, config = TASKS[task]
    process_results = _function(bench, config["process_results"])
    docs = task_docs[task]
    rng = random.Random(task)
    outputs = [*FUZZ, _garbage(rng)]
    for i, response in enumerate(outputs):
        doc = docs[i % len(docs)]
        out = process_results(doc, [response])
        assert isinstance(out, dict) and out, (task, repr(response)[:40])
    assert isinstance(process_results(docs[0], []), dict)  # no answer at all


@pytest.mark.parametrize("task", sorted(t for t in TASKS if "circular" not in t))
def test_aggregations_take_what_the_fuzzed_outputs_give(task, task_docs):
    """Unparsable answers are unparsed items: every aggregation of the task takes them (no backbone needed here)."""
    bench, config = TASKS[task]
    process_results = _function(bench, config["process_results"])
    docs = task_docs[task]
    outs = [process_results(docs[i % len(docs)], [r]) for i, r in enumerate(FUZZ[:30])]
    for entry in config["metric_list"]:
        items = [out[entry["metric"]] for out in outs if entry["metric"] in out]
        if items:
            value = _aggregation(bench, entry)(items)
            assert isinstance(value, (int, float, dict)), entry["metric"]


# ---- Pun Rebus breakdowns from the sample log ---------------------------------------------------------------------
#: What task version 1.3 emitted (its own aggregations, lmms-eval 0.7.3) for the responses of :func:`_breakdown_items`.
OLD_EMITTED = {
    "accuracy_cat_A": 1.0,
    "accuracy_cat_B": 1 / 3,
    "accuracy_cat_C": 1 / 3,
    "accuracy_cat_D": 0.0,
    "accuracy_cat_E": 0.0,
    "accuracy_cat_F": 0.0,
    "accuracy_cat_G": 0.0,
    "accuracy_cat_dedup_A": 1.0,
    "accuracy_cat_dedup_B": 1 / 3,
    "accuracy_cat_dedup_C": 1 / 3,
    "accuracy_cat_dedup_D": 0.0,
    "accuracy_cat_dedup_E": 0.0,
    "accuracy_cat_dedup_F": 0.0,
    "accuracy_cat_dedup_G": 0.0,
}
_ZERO = dict.fromkeys("ABCDEFG", 0)
OLD_CONFUSION = {
    "A": _ZERO,
    "B": {**_ZERO, "A": 1},
    "C": {**_ZERO, "B": 1, "F": 1},
    "D": {**_ZERO, "B": 1},
    "E": {**_ZERO, "G": 1},
    "F": {**_ZERO, "B": 1},
    "G": {**_ZERO, "F": 1},
}


def _breakdown_items(task_docs):
    """The logged ``accuracy`` items (through JSON, as the sample log holds them) of seeded answers to the sample."""
    from hanyi.tasks.punrebus import utils

    rng = random.Random(7)
    pool = ["A", "B. Happiness", "C", "D. Fecundity", "Option E", "F", "G", "**B**", "Based on it, C", "",
            "The answer is D", "E", "G. Peace"]  # fmt: skip
    docs = task_docs["punrebus_matching"]
    lines = [
        {"doc_id": i, **utils.punrebus_matching_process_results(doc, [rng.choice(pool)])} for i, doc in enumerate(docs)
    ]
    return json.loads(json.dumps(lines))


def test_punrebus_breakdowns_from_the_sample_log_equal_what_the_task_emitted_before(task_docs):
    lines = _breakdown_items(task_docs)
    derived = from_samples.derive("punrebus_matching", lines)
    values = {k: v for k, (v, _) in derived.items()}
    assert {k: values[k] for k in OLD_EMITTED} == OLD_EMITTED
    assert {c: values[f"wrong_answer_confusion_{c}"] for c in "ABCDEFG"} == OLD_CONFUSION
    assert len(values) == 23  # 21 by category, parse_rate and parse_rate_robust (emitted before matching 1.5)
    assert all(higher is (not k.startswith("wrong_answer_confusion")) for k, (_, higher) in derived.items())
    assert from_samples.derive("punrebus_matching_5shot", lines) == derived
    # expression: its parse rates only (no per-category breakdown was ever emitted there)
    assert set(from_samples.derive("punrebus_expression", lines)) == {"parse_rate", "parse_rate_robust"}
    shuffled = list(lines)
    random.Random(3).shuffle(shuffled)
    assert from_samples.derive("punrebus_matching", [{**ln, "doc_id": i} for i, ln in enumerate(shuffled)]) == derived


def test_punrebus_tasks_emit_only_headline_keys_robust_siblings_and_parse_rates(task_docs):
    """The image tasks emit Table 1's accuracy and its robust sibling (the parse rates: hanyi report, matching 1.5);
    the text-only task, its own metric list and an lm-eval task too, still emits its parse rates."""
    from hanyi.tasks.punrebus import utils

    doc = task_docs["punrebus_matching"][0]
    keys = {"accuracy", "accuracy_robust"}
    assert set(utils.punrebus_matching_process_results(doc, ["B"])) == keys
    text_keys = keys | {"parse_rate", "parse_rate_robust"}
    assert set(utils.punrebus_textonly_process_results(task_docs["punrebus_textonly"][0], ["B"])) == text_keys
    for task in ("punrebus_matching", "punrebus_matching_5shot"):
        assert {m["metric"] for m in TASKS[task][1]["metric_list"]} == keys


# ---- every !function target is a name its file defines -------------------------------------------------------------
def _defined_names(path):
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def _function_refs():
    import importlib.util
    import re

    from hanyi import lm_eval_tasks

    folders = [os.path.join(TASKS_DIR, b) for b in BENCHMARKS]
    folders += [os.path.join(os.path.dirname(lm_eval_tasks.__file__), b) for b in BENCHMARKS]
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if not (name.endswith(".yaml") or name.endswith("_yaml")):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                refs = re.findall(r"!function\s+([\w.]+)", f.read())
            for ref in refs:
                module, _, attr = ref.rpartition(".")
                beside = os.path.join(folder, *module.split(".")) + ".py"
                path = beside if os.path.isfile(beside) else importlib.util.find_spec(module).origin
                yield f"{os.path.basename(folder)}/{name}: {ref}", path, attr


def test_every_function_target_is_a_name_defined_in_its_file():
    refs = list(_function_refs())
    assert len(refs) >= 120
    for where, path, attr in refs:
        assert attr in _defined_names(path), f"{where} names nothing that {path} defines"
    for bench in BENCHMARKS:
        for path in glob.glob(os.path.join(TASKS_DIR, bench, "*.py")):
            assert "__getattr__" not in _defined_names(path) and "globals()" not in open(path, encoding="utf-8").read()
