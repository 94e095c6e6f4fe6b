"""Circular tasks (cii_circular, punrebus_matching_circular, punrebus_textonly_circular) through the real evaluator."""

import pytest

from hanyi.metrics.circular import to_shown
from hanyi.tasks._circular import METRICS, ROBUST_METRICS, ROTATION
from hanyi.tasks.cii.constants import LETTERS as CII_LETTERS
from hanyi.tasks.punrebus.constants import LETTERS as PR_LETTERS
from hanyi.tasks.punrebus.constants import OPTIONS as PR_OPTIONS

#: task -> (letters, question id field, gold letters of a doc)
TASKS = {
    "cii_circular": (CII_LETTERS, "id", lambda d: [d["answer"]]),
    "punrebus_matching_circular": (PR_LETTERS, "image_id", lambda d: list(d["categories"])),
    "punrebus_textonly_circular": (PR_LETTERS, "story_zh", lambda d: list(d["categories"])),
}


@pytest.fixture(scope="module")
def circular_tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(list(TASKS), task_manager)


def _docs(task):
    return list(task.test_docs())


def _score(res, task, metric):
    return res["results"][task][f"{metric},none"]


@pytest.fixture(scope="module")
def always_a(replay, circular_tasks):
    records = [{"task": t, "doc_id": i, "response": "A"} for t in TASKS for i in range(len(_docs(circular_tasks[t])))]
    return replay(records, list(TASKS))


@pytest.mark.parametrize("task", list(TASKS))
def test_always_answering_a_scores_exactly_zero_circular_acc(always_a, task):
    letters = TASKS[task][0]
    for metric in ("circular_acc", "circular_acc_robust", "consistency_rate", "consistency_rate_robust"):
        assert _score(always_a, task, metric) == 0.0, metric
    if task == "cii_circular":  # single gold: "A" is right in exactly one of the 6 rotations of every question
        assert _score(always_a, task, "rotation_acc") == pytest.approx(1 / len(letters))


def test_always_a_on_multilabel_gold_is_right_once_per_gold_category(always_a, circular_tasks):
    docs = _docs(circular_tasks["punrebus_matching_circular"])
    expected = sum(len(d["categories"]) for d in docs) / len(docs)  # each gold category sits at "A" once
    assert _score(always_a, "punrebus_matching_circular", "rotation_acc") == pytest.approx(expected / 7)


@pytest.fixture(scope="module")
def perfect(replay, circular_tasks):
    records = []
    for task, (letters, qid, gold) in TASKS.items():
        for d in _docs(circular_tasks[task]):
            shown = to_shown(gold(d)[0], d[ROTATION], letters)
            answer = shown if task == "cii_circular" else f"{shown}. {dict(PR_OPTIONS)[gold(d)[0]]}"
            records.append({"task": task, "key": {qid: d[qid], ROTATION: d[ROTATION]}, "response": answer})
    return replay(records, list(TASKS))


@pytest.mark.parametrize("task", list(TASKS))
def test_answering_every_rotation_correctly_scores_one(perfect, task):
    for metric in (*METRICS, *ROBUST_METRICS):
        assert _score(perfect, task, metric) == 1.0, metric


def test_multilabel_gold_right_but_switching_category_is_circular_but_not_consistent(replay, circular_tasks):
    docs = _docs(circular_tasks["punrebus_matching_circular"])
    records = []
    for i, d in enumerate(docs):
        gold = list(d["categories"])
        pick = gold[d[ROTATION] % len(gold)]  # sanduo (A, B, D) and fushoushuangquan (A, B) alternate
        response = to_shown(pick, d[ROTATION], PR_LETTERS)
        records.append({"task": "punrebus_matching_circular", "doc_id": i, "response": response})
    res = replay(records, ["punrebus_matching_circular"])
    assert _score(res, "punrebus_matching_circular", "circular_acc") == 1.0
    assert _score(res, "punrebus_matching_circular", "consistency_rate") == pytest.approx(10 / 12)


@pytest.mark.parametrize("task", list(TASKS))
def test_rotations_are_deterministic_question_major_and_put_gold_once_at_every_position(circular_tasks, task):
    letters, qid, gold = TASKS[task]
    docs = _docs(circular_tasks[task])
    n = len(letters)
    assert [d[ROTATION] for d in docs] == list(range(n)) * (len(docs) // n)
    for start in range(0, len(docs), n):
        block = docs[start : start + n]
        assert len({d[qid] for d in block}) == 1
        assert sorted(to_shown(gold(block[0])[0], d[ROTATION], letters) for d in block) == list(letters)
    again = _docs(circular_tasks[task])
    t = circular_tasks[task]
    assert [t.doc_to_text(d) for d in docs[:n]] == [t.doc_to_text(d) for d in again[:n]]


def test_cii_rotation_k_shows_original_option_i_plus_k_at_position_i(circular_tasks):
    t = circular_tasks["cii_circular"]
    docs = _docs(t)
    original = [docs[0][f"option{i}"] for i in range(1, 7)]
    text = t.doc_to_text(docs[2])  # question 0, rotation 2
    lines = [line for line in text.splitlines() if line.startswith("(")]
    assert lines == [f"({CII_LETTERS[i]}) {original[(i + 2) % 6]}" for i in range(6)]


def test_punrebus_rotation_1_starts_with_the_second_category(circular_tasks):
    t = circular_tasks["punrebus_matching_circular"]
    text = t.doc_to_text(_docs(t)[1])
    assert "\nA. Happiness, Joy, Good Luck\n" in text and "\nG. Longevity and Good Health\n" in text


def test_limit_scores_only_complete_questions(replay):
    records = [{"task": "cii_circular", "doc_id": i, "response": "A"} for i in range(8)]
    res = replay(records, ["cii_circular"], limit=8)  # question 0 complete, question 1 cut after 2 rotations
    assert _score(res, "cii_circular", "rotation_acc") == pytest.approx(1 / 6)


def test_bad_gold_is_an_error_naming_the_doc():
    from hanyi.tasks.cii.circular import cii_circular_process_results
    from hanyi.tasks.punrebus.circular import punrebus_matching_circular_process_results

    with pytest.raises(ValueError, match="id=test-9"):
        cii_circular_process_results({"id": "test-9", "answer": "Z", ROTATION: 0}, ["A"])
    with pytest.raises(ValueError, match="x_1.jpg"):
        punrebus_matching_circular_process_results({"image_id": "x_1.jpg", "categories": ["H"], ROTATION: 0}, ["A"])


def test_code_exact_prompt_is_refused_with_a_clear_error(circular_tasks):
    from hanyi.tasks.punrebus.circular import punrebus_circular_doc_to_text

    doc = _docs(circular_tasks["punrebus_matching_circular"])[0]
    with pytest.raises(ValueError, match="prompt_variant must be 'paper'"):
        punrebus_circular_doc_to_text(doc, {"prompt": "matching", "prompt_variant": "code_exact"})


@pytest.mark.parametrize("task", list(TASKS))
def test_prompt_snapshot_of_rotation_1(circular_tasks, snapshot, task):
    t = circular_tasks[task]
    doc = _docs(t)[1]
    assert doc[ROTATION] == 1
    snapshot(f"{task}__q0_rot1", t.doc_to_text(doc))
