"""Generated hostile documents against the board's intake (hypothesis, derandomized): a valid ``hanyi-submission``
built from the declared schema, then fields dropped, retyped, duplicated and oversized. No exception escapes the
validation pass, every file is accepted or rejected with one-line reasons, and ``check`` and ``build`` decide the
same for every file.

The 5,000 documents (1,000 examples of 5) go through the validation pass directly (everything the board does before the re-score, with a
fixed table of tasks so no lmms-eval is needed); a few dozen go through ``check_file`` and ``intake`` with the
re-score replaced by a deterministic board failure, so that both paths run end to end in a second each.
"""

from __future__ import annotations

import copy
import json
from unittest import mock

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

#: The tasks the fuzzed validation pass knows (task -> judged metric keys), as installed_tasks gives them.
TABLE = {"cii_none": frozenset(), "cii_ctc": frozenset({"ctc_score", "ctc_judge_failures"})}


def _known(benchmark):
    return TABLE if benchmark == "cii" else {}


def base() -> dict:
    """A document that passes the validation pass: two tasks, one judged."""
    return {
        "format": "hanyi-submission",
        "version": 2,
        "benchmark": "cii",
        "model": "alpha-vl",
        "model_args": "pretrained=x",
        "date": "2026-01-01",
        "hanyi_version": "0.7.0",
        "lmms_eval_version": "0.7.3",
        "tasks": {
            "cii_none": {
                "version": 2.2,
                "metrics": {"acc": 0.25},
                "data_fingerprint": "sha256:aa",
                "provenance": {"limit": None, "data_source": {"kind": "sample"}, "scorer_backends": {}},
                "predictions": [{"doc_id": i, "doc_hash": f"h{i}", "response": "ABCD"[i]} for i in range(4)],
            },
            "cii_ctc": {
                "version": 1.3,
                "metrics": {"ctc_score": 3.0},
                "data_fingerprint": "sha256:bb",
                "predictions": [
                    {
                        "doc_id": i,
                        "doc_hash": f"c{i}",
                        "response": "text",
                        "verdicts": {"ctc_score": {"score": 3, "judge_model": "j"}},
                    }
                    for i in range(2)
                ],  # fmt: skip
            },
        },
    }


#: Values a field is retyped to: every JSON type, edge numbers (NaN and infinity written as such), hostile text.
VALUES = (None, True, False, 0, -1, 2**70, 1.5, -0.0, 1e308, float("nan"), float("inf"), "", "0", "x", [], {}, [1],
          [None, None], {"a": 1}, {"doc_id": 0}, [[-1.5, False]], {"acc": {"correct": True}})  # fmt: skip
#: Text a field or key is replaced with: bidi, a look-alike, a lone surrogate, a control character, a tag, blanks,
#: an oversized name.
ODD_TEXT = ("\u202eLV-ahpla", "\u0430lpha-vl", "a\ud800b", "\x00", "cii", "", " ", "x" * 300)
OPS = ("drop", "retype", "duplicate", "oversize", "odd_text", "rename")


#: A document this large takes no further mutation: each one walks every slot, and an oversized part repeated 300
#: times already holds every size check the intake makes.
MAX_SLOTS = 20_000
#: No explain phase: it traces every line the test runs (sys.settrace), which over a document of 300 repeated parts
#: held one CI worker for minutes at 12 GB; the failing example and its reasons are what a failure needs.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)


def _slots(doc) -> list[tuple]:
    """Every (container, key) of the document, depth first."""
    out, stack = [], [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((node, key))
            stack.append(value)
    return out


def _mutate(doc, op, where, pick):
    value, odd = VALUES[pick % len(VALUES)], ODD_TEXT[pick % len(ODD_TEXT)]
    slots = _slots(doc)
    if not slots or len(slots) > MAX_SLOTS or (op in ("oversize", "duplicate") and len(slots) > 2_000):
        return  # one oversized part per document: oversizing it again would only test the machine's memory
    node, key = slots[where % len(slots)]
    if op == "drop":
        del node[key]
    elif op == "retype":
        node[key] = copy.deepcopy(value)  # a copy: VALUES' lists and dicts, shared, grew with every later mutation
    elif op == "duplicate":
        if isinstance(node, list):
            node.append(copy.deepcopy(node[key]))
        else:
            node[f"{key}"] = copy.deepcopy(node[key])
            if isinstance(node[key], list):
                node[key] = node[key] + copy.deepcopy(node[key])
    elif op == "oversize":
        old = node[key]
        if isinstance(old, str) and old:
            node[key] = (old * (50_000 // len(old) + 1))[:50_000]
        else:
            node[key] = [old] * 300  # one object, many times
    elif op == "odd_text":
        node[key] = odd
    elif op == "rename" and isinstance(node, dict):
        node[odd] = node.pop(key)


#: A document's mutations: (operation, where in the document, which value or text); the document is built from them
#: inside the test (a strategy that held the bytes would keep every generated document in hypothesis's memory).
MUTATIONS = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10**6), st.integers(0, 10**3)), max_size=4)


def _apply(ops) -> bytes:
    doc = base()
    for op in ops:
        _mutate(doc, *op)
    return json.dumps(doc, ensure_ascii=True).encode()  # NaN, Infinity and lone surrogates written as such


def _assert_lines(problems):
    assert isinstance(problems, list)
    for line in problems:
        assert isinstance(line, str) and line and "\n" not in line and len(line) < 2_000, line


#: Documents per generated example: 1,000 examples x 5 = 5,000 documents (hypothesis's engine slows down well past a
#: thousand examples of one test, so each example carries several documents).
PER_EXAMPLE = 5


@settings(max_examples=1_000, derandomize=True, deadline=None, database=None, phases=PHASES,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(st.lists(MUTATIONS, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
def test_the_validation_pass_never_raises_and_says_every_problem_in_one_line(documents):
    from hanyi.leaderboard.intake import content_hashes
    from hanyi.leaderboard.submission_schema import validate

    for ops in documents:
        doc, problems = validate(_apply(ops), known_tasks=_known)
        _assert_lines(problems)
        if not problems:  # accepted by the pass: everything the re-score reads is there, and its identity computes
            assert set(doc["tasks"]) <= set(TABLE)
            for task in doc["tasks"].values():
                ids = [p["doc_id"] for p in task["predictions"]]
                assert len(ids) == len(set(ids)) and all(type(i) is int and i >= 0 for i in ids)
            assert set(content_hashes(doc)) == set(doc["tasks"])


def test_the_base_document_passes_and_known_breaks_are_said():
    from hanyi.leaderboard.submission_schema import validate

    assert validate(json.dumps(base()).encode(), known_tasks=_known)[1] == []
    doc = base()
    doc["tasks"]["cii_none"]["predictions"][0]["verdicts"] = {"acc": {"correct": True}}
    doc["tasks"]["cii_none"]["predictions"].append(dict(doc["tasks"]["cii_none"]["predictions"][1]))
    doc["tasks"]["cii_ctc"]["predictions"][0]["doc_id"] = "0"
    problems = validate(json.dumps(doc).encode(), known_tasks=_known)[1]
    assert problems == [
        "tasks.cii_ctc.predictions[0].doc_id: Input should be a valid integer",
        "cii_none: 1 doc id(s) predicted twice (first: doc 1)",
        "cii_none: a verdict under acc in 1 prediction(s), which the task does not declare as a judged metric (its "
        "judged metrics: none); a submitter's verdict never replaces the board's re-score",
    ]


@settings(max_examples=40, derandomize=True, deadline=None, database=None, phases=PHASES,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(MUTATIONS)
def test_check_and_build_decide_the_same_for_every_file(tmp_path_factory, ops):
    """Through the real entry points (installed tasks, the cache): the same state and the same reasons."""
    from hanyi.leaderboard import intake as intake_mod

    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "x_submission.json"
    path.write_bytes(_apply(ops))

    def board_down(doc, tasks, work):
        raise OSError("the board's data is not there")

    with mock.patch.object(intake_mod, "rescore", board_down):
        alone = intake_mod.check_file(str(path))
        found = intake_mod.intake([str(folder)], str(folder / "cache"))
    (built,) = found.rejected  # the re-score never succeeds here: rejected or pending, never accepted
    assert (alone.state, alone.reasons) == (built.state, built.reasons)
    _assert_lines(alone.reasons)
    assert alone.state in ("rejected", "pending")
