"""One strict JSON Lines reader (hanyi/jsonl.py) behind the report, submit, replay and the CVLUE breakdown: the same
bad line gets the same one-line message naming file and line from each of them."""

from __future__ import annotations

import pytest

from hanyi.jsonl import json_lines

FIRST = b'{"doc_id": 0, "task": "cii_none", "response": "A"}\n'
BAD = [
    (FIRST + b"\xff\xfe\n", "not valid UTF-8 (byte 0)"),
    (FIRST + b'{"doc_id": 1,\n', "not valid JSON"),
    (FIRST + b"[" * 100_000 + b"\n", "not valid JSON"),
]


@pytest.mark.parametrize("content,said", BAD)
def test_every_reader_names_file_and_line_the_same_way(tmp_path, content, said, capsys):
    from hanyi.models.replay import ReplayFileError, _read_lines
    from hanyi.report.cvlue_breakdown import main as breakdown
    from hanyi.results.samples import SamplesFileError, read_samples
    from hanyi.submit.samples import SubmissionError
    from hanyi.submit.samples import read_samples as submit_samples

    path = tmp_path / "samples_cii_none.jsonl"
    path.write_bytes(content)
    where = f"{path}:2: {said}"
    for read, error in ((read_samples, SamplesFileError), (submit_samples, SubmissionError)):
        with pytest.raises(error) as exc:
            read(str(path))
        assert str(exc.value).startswith(where)
    with pytest.raises(ReplayFileError) as exc:
        _read_lines(str(path), None, {}, {}, [], [])
    assert str(exc.value).startswith(where)
    assert breakdown([str(path)]) == 1 and where in capsys.readouterr().err


def test_blank_lines_are_skipped_and_numbers_kept(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n  \n[2]\n', encoding="utf-8")
    assert list(json_lines(str(path))) == [(1, {"a": 1}), (4, [2])]
