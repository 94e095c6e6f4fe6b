"""The replay model: record formats, key matching, clear errors, loglikelihood records."""

from __future__ import annotations

import json
import types

import pytest

from hanyi.models.replay import ReplayFileError, ReplayModel, ReplayRecordMissing, load_records


def _write(tmp_path, lines):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"r.jsonl:2: not valid JSON"),
        ('{"doc_id": 1, "response": "A"}', r":2: a record needs a 'task'"),
        ('{"task": "t", "doc_id": 1}', r":2: a record needs 'response' or 'loglikelihoods'"),
        ('{"task": "t", "response": "A"}', r":2: a record needs 'doc_id' or a non-empty 'key'"),
    ],
)
def test_malformed_lines_name_the_line(tmp_path, line, message):
    path = _write(tmp_path, ['{"task": "t", "doc_id": 0, "response": "A"}', line])
    with pytest.raises(ReplayFileError, match=message):
        load_records(path)


def test_missing_path_is_a_clear_error():
    with pytest.raises(ValueError, match="path=<responses.jsonl>"):
        ReplayModel()


def _instance(args, idx=0):
    return types.SimpleNamespace(args=args, idx=idx)


def test_loglikelihood_records_by_choice_index(tmp_path):
    path = _write(tmp_path, [json.dumps({"task": "t", "doc_id": 3, "loglikelihoods": [[-1.5, True], -2.0]})])
    model = ReplayModel(path=path)
    reqs = [_instance(("ctx", " a", None, 3, "t", "test"), idx=i) for i in (0, 1)]
    assert model.loglikelihood(reqs) == [(-1.5, True), (-2.0, False)]
    with pytest.raises(ReplayRecordMissing, match=r"loglikelihood for choice 2 for task 't', doc_id 3"):
        model.loglikelihood([_instance(("ctx", " c", None, 3, "t", "test"), idx=2)])


def test_key_records_match_docs_by_their_fields(replay):
    records = [
        {"task": "punrebus_matching", "key": {"image_id": "mashangfenghou_2.jpg"}, "response": "C"},
        {
            "task": "punrebus_matching",
            "key": {"story_pinyin": "jiaguan", "image_id": "jiaguan_1.jpg"},
            "response": "C",
        },
    ]
    out = replay(records, ["punrebus_matching"], on_missing="empty")
    samples = {s["doc"]["image_id"]: s for s in out["samples"]["punrebus_matching"]}
    assert samples["mashangfenghou_2.jpg"]["filtered_resps"][0] == "C"
    assert samples["jiaguan_1.jpg"]["accuracy"]["correct"] is True
    assert samples["mashangfenghou_1.jpg"]["filtered_resps"][0] == ""  # no record, on_missing=empty
    assert out["results"]["punrebus_matching"]["accuracy,none"] == pytest.approx(1.0)
    n = len(out["samples"]["punrebus_matching"])
    assert out["results"]["punrebus_matching"]["parse_rate,none"] == pytest.approx(2 / n)


def test_missing_record_names_task_and_doc(replay):
    with pytest.raises(ReplayRecordMissing, match=r"task 'punrebus_matching', doc_id 1 \(split 'test'\)"):
        replay([{"task": "punrebus_matching", "doc_id": 0, "response": "C"}], ["punrebus_matching"], limit=2)
