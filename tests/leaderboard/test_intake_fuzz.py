"""Generated hostile documents against the board's intake (hypothesis, derandomized): a valid ``hanyi-submission``
built from the declared schema, then fields dropped, retyped, duplicated and oversized. No exception escapes the
validation pass, every file is accepted or rejected with one-line reasons, and ``check`` and ``build`` decide the
same for every file.

The 5,000 documents go through the validation pass directly (everything the board does before the re-score, with a
fixed table of tasks so no lmms-eval is needed); a few dozen go through ``check_file`` and ``intake`` with the
re-score replaced by a deterministic board failure, so that both paths run end to end in a second each.
"""

from __future__ import annotations

import copy
import json
from unittest import mock

from hypothesis import HealthCheck, given, settings
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


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=4,
)
ODD_TEXT = st.sampled_from(["\u202eLV-ahpla", "\u0430lpha-vl", "a\ud800b", "\x00", "cii", "", " ", "x" * 300])


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


def _mutate(doc, op, where, value, odd):
    slots = _slots(doc)
    if not slots or (op in ("oversize", "duplicate") and len(slots) > 2_000):
        return  # one oversized part per document: oversizing it again would only test the machine's memory
    node, key = slots[where % len(slots)]
    if op == "drop":
        del node[key]
    elif op == "retype":
        node[key] = value
    elif op == "duplicate":
        if isinstance(node, list):
            node.append(copy.deepcopy(node[key]))
        else:
            node[f"{key}"] = copy.deepcopy(node[key])
            if isinstance(node[key], list):
                node[key] = node[key] + copy.deepcopy(node[key])
    elif op == "oversize":
        old = node[key]
        node[key] = (old * 5_000)[:50_000] if isinstance(old, str) and old else [old] * 300  # one object, many times
    elif op == "odd_text":
        node[key] = odd
    elif op == "rename" and isinstance(node, dict):
        node[odd] = node.pop(key)


WHERE = st.integers(0, 10**6)
OP = st.one_of(
    st.tuples(st.sampled_from(("drop", "duplicate", "oversize")), WHERE, st.none(), st.none()),
    st.tuples(st.just("retype"), WHERE, JSON, st.none()),
    st.tuples(st.sampled_from(("odd_text", "rename")), WHERE, st.none(), ODD_TEXT),
)
DOCS = st.lists(OP, max_size=4).map(lambda ops: _apply(ops))


def _apply(ops) -> bytes:
    doc = base()
    for op in ops:
        _mutate(doc, *op)
    return json.dumps(doc, ensure_ascii=True).encode()  # NaN, Infinity and lone surrogates written as such


def _assert_lines(problems):
    assert isinstance(problems, list)
    for line in problems:
        assert isinstance(line, str) and line and "\n" not in line and len(line) < 2_000, line


@settings(max_examples=5_000, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(DOCS)
def test_the_validation_pass_never_raises_and_says_every_problem_in_one_line(raw):
    from hanyi.leaderboard.intake import content_hashes
    from hanyi.leaderboard.submission_schema import validate

    doc, problems = validate(raw, known_tasks=_known)
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


@settings(max_examples=40, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(DOCS)
def test_check_and_build_decide_the_same_for_every_file(tmp_path_factory, raw):
    """Through the real entry points (installed tasks, the cache): the same state and the same reasons."""
    from hanyi.leaderboard import intake as intake_mod

    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "x_submission.json"
    path.write_bytes(raw)

    def board_down(doc, tasks, work):
        raise OSError("the board's data is not there")

    with mock.patch.object(intake_mod, "rescore", board_down):
        alone = intake_mod.check_file(str(path))
        found = intake_mod.intake([str(folder)], str(folder / "cache"))
    (built,) = found.rejected  # the re-score never succeeds here: rejected or pending, never accepted
    assert (alone.state, alone.reasons) == (built.state, built.reasons)
    _assert_lines(alone.reasons)
    assert alone.state in ("rejected", "pending")
