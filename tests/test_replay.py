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
    assert sum(s["accuracy"]["parsed"] for s in out["samples"]["punrebus_matching"]) == 2  # hanyi report's parse_rate


def test_missing_record_names_task_and_doc(replay):
    with pytest.raises(ReplayRecordMissing, match=r"task 'punrebus_matching', doc_id 1 \(split 'test'\)"):
        replay([{"task": "punrebus_matching", "doc_id": 0, "response": "C"}], ["punrebus_matching"], limit=2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"task": "t", "doc_id": 1.9, "response": "A"}', r"r.jsonl:2: doc_id must be an integer, got 1.9"),
        ('{"task": "t", "doc_id": true, "response": "A"}', r"r.jsonl:2: doc_id must be an integer, got True"),
        ('{"task": "t", "doc_id": "abc", "response": "A"}', r"r.jsonl:2: doc_id must be an integer, got 'abc'"),
        ('{"task": "t", "doc_id": 1e400, "response": "A"}', r"r.jsonl:2: doc_id must be an integer, got inf"),
        ('{"task": "t", "doc_id": 1, "response": {"text": "A"}}', r"r.jsonl:2: response must be a string .* an object"),
        ('{"task": "t", "doc_id": 1, "response": ["A"]}', r"r.jsonl:2: response must be a string .* a list"),
        ('{"task": "t", "doc_id": 1, "response": true}', r"r.jsonl:2: response must be a string .* a bool"),
        ('{"task": "t", "doc_id": 1, "response": NaN}', r"r.jsonl:2: response must be a string .* nan"),
        ('{"task": "t", "doc_id": 1, "loglikelihoods": [NaN]}', r"r.jsonl:2: loglikelihoods must be"),
        ('{"task": "t", "doc_id": 1, "loglikelihoods": [1e400]}', r"r.jsonl:2: loglikelihoods must be .*finite"),
        ('{"task": "t", "doc_id": 1, "loglikelihoods": [[-Infinity, true]]}', r"r.jsonl:2: loglikelihoods must be"),
        ('{"task": "t", "doc_id": 1, "response": ' + "[" * 100_000, r"r.jsonl:2: not valid JSON"),
    ],
)
def test_wrong_typed_values_name_the_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, ['{"task": "t", "doc_id": 0, "response": "A"}', line])
    with pytest.raises(ReplayFileError, match=message):
        load_records(path)


def test_a_lone_surrogate_in_a_response_is_repaired_counted_and_named(tmp_path, caplog):
    """a reply cut at max_tokens can hold half a surrogate pair, which no UTF-8 file can hold."""
    path = _write(
        tmp_path,
        ['{"task": "t", "doc_id": 0, "response": "A\\ud800B"}', '{"task": "t", "doc_id": 1, "response": "ok"}'],
    )
    with caplog.at_level("WARNING", logger="hanyi.replay"):
        by_doc_id, _ = load_records(path)
    assert by_doc_id["t", 0]["response"] == "A\ufffdB"
    by_doc_id["t", 0]["response"].encode("utf-8")  # valid UTF-8 from here on
    assert "1 response(s) with a lone surrogate" in caplog.text and "r.jsonl:1" in caplog.text


def test_a_line_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"task": "t", "doc_id": 0, "response": "A"}\n{"task": "t", "doc_id": 1, "response": "\xff"}\n')
    with pytest.raises(ReplayFileError, match=r"r.jsonl:2: not valid UTF-8"):
        load_records(str(path))


def test_duplicates_and_unmatched_records_are_counted_and_the_last_line_wins(tmp_path, caplog):
    lines = [
        {"task": "t", "doc_id": 0, "response": "first"},
        {"task": "t", "doc_id": 0, "response": "second"},
        {"task": "t", "doc_id": 9, "response": "no such doc"},
        {"task": "other", "doc_id": 0, "response": "no such task"},
        {"task": "t", "key": {"id": "zz"}, "response": "no doc has this key"},
    ]
    path = _write(tmp_path, [json.dumps(r) for r in lines])
    with caplog.at_level("WARNING", logger="hanyi.replay"):
        model = ReplayModel(path=path)
        model.task_dict = {"t": {"test": _Docs([{"id": "a"}, {"id": "b"}])}}
        assert model.generate_until([_instance(("ctx", {}, None, 0, "t", "test"))]) == ["second"]
    text = caplog.text
    assert "1 duplicate record(s)" in text and "the last line wins" in text and "line 1 replaced by line 2" in text
    assert "1 record(s)" in text and "name a task not being evaluated" in text and "2 match no doc" in text
    assert model.unmatched == {"no_task": 1, "no_doc": 2}


class _Docs(list):
    """The little of a ``datasets.Dataset`` that replay's key matching uses."""

    @property
    def column_names(self):
        return list(self[0])

    def select_columns(self, fields):
        rows = self

        class _Cols:
            def __getitem__(self, _):
                return {f: [r[f] for r in rows] for f in fields}

        return _Cols()
