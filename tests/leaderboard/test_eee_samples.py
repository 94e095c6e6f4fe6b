"""Every Eval Ever records in that repository's own layout (``hanyi.leaderboard.eee.datastore_paths``): under the
site's ``eee/``, ``data/<benchmark>/<developer>/<model>/<uuid>.json`` and its per-doc results beside it as
``<uuid>_samples.jsonl``, each line valid against the vendored instance-level schema by the reference validator
(``jsonschema``), the record valid against v0.2.2 and 0.3.0 and naming its jsonl as 0.3.0 asks."""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid

import pytest

from hanyi.leaderboard import eee
from hanyi.leaderboard.entries import Board, Cell, Entry, Row, Section
from hanyi.leaderboard.site import MANIFEST, write_site

HOME = "/home/alice/secret-project"
COLUMNS = {
    "cii_none/acc": Cell(0.5, 0.3, 0.7, 11, stderr=0.1),
    "cii_none/miss_rate": Cell(1 / 12, 0.0, 0.3, 12),
    "cii_ctc/ctc_score": Cell(4.0, 3.0, 5.0, 2),
}
#: what a layout path of the site looks like: eee/ + that repository's data/<benchmark>/<developer>/<model>/<uuid4>
LAYOUT = re.compile(
    r"^eee/(data/[^/]+/[^/]+/[^/]+/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}))"
    r"(\.json|_samples\.jsonl)$"
)


def submission(path, model_args: str = "pretrained=Qwen/Qwen2.5-VL-7B-Instruct") -> tuple[str, str]:
    """A ``hanyi-submission`` file as ``hanyi submit`` writes it (12 multiple-choice docs, 2 judged ones), a path of
    the submitter's machine and a credential in it; returns ``(path, sha256)``."""
    none = [
        {"doc_id": d, "doc_hash": f"h{d}", "target": "ABCDEF"[d % 6], "response": "ABCDEF"[d % 4],
         "evidence": {"pred": "ABCDEF"[d % 4], "domain": "life" if d % 2 else "art"}}
        for d in range(12)
    ]  # fmt: skip
    none[3]["response"] = f"see {HOME}/notes.txt, api_key=sk-LEAK9"
    none.append({"doc_id": 12, "doc_hash": "h12", "target": "A", "response": "A"})  # no per-doc score: no line
    ctc = [
        {"doc_id": d, "doc_hash": f"c{d}", "target": {"meaning": "reading"}, "response": f"画中之意 {d}",
         "verdicts": {"ctc_score": {"score": 4 + d}}}
        for d in range(2)
    ]  # fmt: skip
    tasks = {"cii_none": {"predictions": none}, "cii_ctc": {"predictions": ctc}}
    doc = {
        "format": "hanyi-submission",
        "version": 2,
        "benchmark": "cii",
        "model": "llava_hf",
        "model_args": model_args,
    }
    doc["tasks"] = tasks
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    with open(path, "rb") as f:
        return str(path), hashlib.sha256(f.read()).hexdigest()


def entry(path: str, digest: str, model_args: str, **kw) -> Entry:
    acc = {d: float(d % 6 == d % 4) for d in range(12) if d != 7}  # doc 7 unparsed: no accuracy score
    return Entry(
        submission_hash=digest,
        benchmark="cii",
        model="llava_hf",
        model_args=model_args,
        date="20261120_103000",
        hanyi_version="0.9.0",
        lmms_eval_version="0.7.3",
        per_doc={
            "cii_none": {"acc": acc, "miss_rate": {d: float(d == 7) for d in range(12)}},
            "cii_ctc": {"ctc_score": {0: 4.0, 1: 5.0}},
        },  # fmt: skip
        protocol={"cii_ctc": {"judge_model": "gpt-4o-2024-08-06"}},
        judged={"cii_ctc/ctc_score": "re-judged"},
        source_path=path,
        **kw,
    )


def board(tmp_path, model_args: str = "pretrained=Qwen/Qwen2.5-VL-7B-Instruct", **kw) -> Board:
    path, digest = submission(tmp_path / "q_submission.json", model_args)
    section = Section("cii", {}, list(COLUMNS), "cii_none/acc")
    section.rows = [Row("llava_hf", dict(COLUMNS), entry(path, digest, model_args, **kw), rank=1)]
    return Board(sections=[section])


def layout(site) -> dict[str, str]:
    """``{.json | _samples.jsonl: path under the site}`` of the one record written."""
    found = {}
    for path in (site / "eee").rglob("*"):
        if path.is_file():
            rel = path.relative_to(site).as_posix()
            match = LAYOUT.fullmatch(rel)
            assert match, f"{rel} is not in the Every Eval Ever layout"
            found[match.group(3)] = rel
    return found


@pytest.fixture
def site(tmp_path):
    out = tmp_path / "site"
    write_site(board(tmp_path), str(out))
    return out


def _read(site, rel: str):
    text = (site / rel).read_text(encoding="utf-8")
    return json.loads(text) if rel.endswith(".json") else [json.loads(line) for line in text.splitlines()]


def test_the_record_and_its_jsonl_lie_in_the_eee_repository_layout_and_the_record_names_it_as_0_3_0_asks(site):
    files = layout(site)
    assert set(files) == {".json", "_samples.jsonl"}
    record_path, samples_path = files[".json"], files["_samples.jsonl"]
    assert record_path.startswith("eee/data/cii/Qwen/Qwen2.5-VL-7B-Instruct/")  # the Hugging Face id's owner
    assert samples_path == record_path[: -len(".json")] + "_samples.jsonl"  # one folder, one uuid
    assert uuid.UUID(record_path.split("/")[-1][:36]).version == 4
    record = _read(site, record_path)
    detail = record["detailed_evaluation_results"]
    data = (site / samples_path).read_bytes()
    assert detail["format"] == "jsonl" and detail["file_path"] == samples_path[len("eee/") :]  # rooted at data/
    assert detail["hash_algorithm"] == "sha256" and detail["checksum"] == hashlib.sha256(data).hexdigest()
    assert detail["total_rows"] == len(data.decode("utf-8").splitlines()) == 14  # 12 docs + 2 judged ones
    assert detail["additional_details"]["docs_without_a_per_doc_score"] == "1"  # doc 12
    assert eee.check(record) == [] and eee.check(record, eee.SCHEMA_0_3_0_PATH) == []  # v0.2.2 and 0.3.0
    assert eee.validate(record, eee.load_schema(eee.SCHEMA_0_3_0_PATH)) == []  # the dependency-free one agrees


def test_each_jsonl_line_is_valid_for_the_reference_validator_against_the_instance_level_schema(site):
    import jsonschema

    schema = eee.load_schema(eee.INSTANCE_SCHEMA_PATH)
    assert schema["version"] == "0.3.0" and "sample_id" in schema["required"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    files = layout(site)
    record, lines = _read(site, files[".json"]), _read(site, files["_samples.jsonl"])
    for line in lines:
        assert [e.message for e in validator.iter_errors(line)] == [], line["sample_id"]
        assert eee.validate(line, schema) == []
    results = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}
    assert {line["evaluation_id"] for line in lines} == {record["evaluation_id"]}  # the foreign key
    assert {line["model_id"] for line in lines} == {record["model_info"]["id"]} == {"Qwen/Qwen2.5-VL-7B-Instruct"}
    assert all(line["evaluation_result_id"] in results for line in lines)
    assert all(results[line["evaluation_result_id"]]["evaluation_name"] == line["evaluation_name"] for line in lines)
    broken = dict(lines[0], interaction_type="multi_turn")  # multi_turn wants messages, not output
    assert list(validator.iter_errors(broken)) and eee.validate(broken, schema)


def test_a_line_carries_the_doc_its_response_target_and_the_per_doc_score_of_the_column_it_links(site):
    lines = {line["sample_id"]: line for line in _read(site, layout(site)["_samples.jsonl"])}
    assert sorted(lines) == sorted([f"cii_none/{d}" for d in range(12)] + ["cii_ctc/0", "cii_ctc/1"])
    first = lines["cii_none/0"]
    assert first["evaluation_result_id"] == "cii_none/acc"  # the ranking column first
    assert first["input"] == {"raw": "hanyi cii_none doc 0", "reference": ["A"]}
    assert first["output"] == {"raw": ["A"]} and first["evaluation"] == {"score": 1.0, "is_correct": True}
    assert first["metadata"]["doc_hash"] == "h0" and first["metadata"]["score.miss_rate"] == "0.0"
    assert first["metadata"]["category"] == "domain: art"
    assert lines["cii_none/4"]["evaluation"] == {"score": 0.0, "is_correct": False}
    unparsed = lines["cii_none/7"]  # no accuracy (unparsed): linked to the next column that scored it
    assert unparsed["evaluation_result_id"] == "cii_none/miss_rate"
    assert unparsed["evaluation"] == {"score": 1.0, "is_correct": False}  # lower is better: 0 is its best
    judged = lines["cii_ctc/1"]
    assert judged["evaluation_result_id"] == "cii_ctc/ctc_score" and judged["evaluation"]["score"] == 5.0
    assert judged["evaluation"]["is_correct"] is True  # the judge's best, 5 of 1-5
    assert judged["answer_attribution"][0]["extraction_method"] == "llm_judge"
    assert (
        judged["input"]["reference"] == ['{"meaning": "reading"}'] and judged["metadata"]["verdict"] == "ctc_score: 5"
    )
    assert lines["cii_ctc/0"]["evaluation"]["is_correct"] is False
    assert len({line["sample_hash"] for line in lines.values()}) == len(lines)


def test_no_path_of_the_submitter_s_machine_and_no_credential_in_the_jsonl(site):
    text = (site / layout(site)["_samples.jsonl"]).read_text(encoding="utf-8")
    assert "/home/alice" not in text and "LEAK9" not in text
    line = next(json.loads(t) for t in text.splitlines() if '"cii_none/3"' in t)
    assert line["output"]["raw"] == ["see \u2026/notes.txt, api_key=***"]


def test_a_credential_the_jsonl_composes_out_of_clean_parts_is_masked_too(tmp_path):
    path, _ = submission(tmp_path / "q_submission.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    # each part alone is no credential (the copy keeps it); joined, 'token: "..."' and '"api_key": "..."' are
    doc["tasks"]["cii_ctc"]["predictions"][1] |= {
        "verdicts": {"token": {"score": '"LEAK7"'}},
        "target": {"api_key": "LEAK8"},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    section = Section("cii", {}, list(COLUMNS), "cii_none/acc")
    section.rows = [Row("m", dict(COLUMNS), entry(path, digest, "pretrained=org/m"), rank=1)]
    out = tmp_path / "site"
    write_site(Board(sections=[section]), str(out))
    lines = {line["sample_id"]: line for line in _read(out, layout(out)["_samples.jsonl"])}
    assert "LEAK" not in json.dumps(lines, ensure_ascii=False)
    # the copy masks a secret-named member whole (hanyi.redact.redact_tree), so no verdict is left to compose
    assert "verdict" not in lines["cii_ctc/1"]["metadata"]
    assert lines["cii_ctc/1"]["input"]["reference"] == ['{"api_key": "***"}']


@pytest.mark.parametrize(
    "model_args, card, folder",
    [
        ("pretrained=Qwen/Qwen2.5-VL-7B-Instruct", {}, "Qwen/Qwen2.5-VL-7B-Instruct"),
        (f"pretrained={HOME}/ckpt/qwen7b", {"organisation": "Alibaba"}, "Alibaba/qwen7b"),  # a local folder: its name
        ("pretrained=qwen7b", {}, "unknown-developer/qwen7b"),  # no owner, no organisation
        ("pretrained=../../../etc/x", {}, "unknown-developer/etc_x"),  # never out of the layout
        ("pretrained=org/m:v1", {"organisation": "Basic AI"}, "org/m_v1"),  # the owner part wins, ':' -> '_'
        ("pretrained=m", {"organisation": "Lab 3"}, "Lab 3/m"),  # as that repository files it
    ],
)
def test_the_developer_and_model_folders(tmp_path, model_args, card, folder):
    out = tmp_path / "site"
    write_site(board(tmp_path, model_args, card=card), str(out))
    files = layout(out)
    assert files[".json"].startswith(f"eee/data/cii/{folder}/"), files
    record = _read(out, files[".json"])
    assert record["detailed_evaluation_results"]["file_path"] == files["_samples.jsonl"][len("eee/") :]
    assert eee.check(record, eee.SCHEMA_0_3_0_PATH) == []


def test_a_rebuild_names_the_files_the_same_and_one_without_the_row_removes_them_and_their_folders(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764000000")
    out = tmp_path / "site"
    write_site(board(tmp_path), str(out))
    first = {rel: (out / rel).read_bytes() for rel in layout(out).values()}
    write_site(board(tmp_path), str(out))
    assert {rel: (out / rel).read_bytes() for rel in layout(out).values()} == first
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert set(first) <= set(manifest)
    assert set(first) <= set(json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))["files"])
    write_site(Board(), str(out))
    assert layout(out) == {} and os.listdir(out / "eee" / "data") == []  # no empty model folder left behind


def test_a_submission_file_with_no_scored_doc_gets_no_jsonl_and_no_reference(tmp_path):
    b = board(tmp_path)
    b.sections[0].rows[0].entry.per_doc = {}
    out = tmp_path / "site"
    write_site(b, str(out))
    files = layout(out)
    assert set(files) == {".json"}  # that repository refuses an empty jsonl
    record = _read(out, files[".json"])
    assert "detailed_evaluation_results" not in record and eee.check(record, eee.SCHEMA_0_3_0_PATH) == []


def test_a_symlinked_layout_folder_is_never_written_through(tmp_path):
    from hanyi.outputs import UnsafeOutputError

    outside, out = tmp_path / "outside", tmp_path / "site"
    outside.mkdir()
    (out / "eee").mkdir(parents=True)
    os.symlink(outside, out / "eee" / "data")
    with pytest.raises(UnsafeOutputError):
        write_site(board(tmp_path), str(out))
    assert list(outside.iterdir()) == []


# ---- real submissions: hanyi submit files of replay runs through hanyi leaderboard build -----------------------


@pytest.fixture(scope="module")
def real_site(leaderboard_submissions, tmp_path_factory):
    from hanyi.cli import main

    site = tmp_path_factory.mktemp("eee-real") / "site"
    assert main(["leaderboard", "build", *leaderboard_submissions.values(), "--out", str(site)]) == 0
    return site


@pytest.mark.slow
def test_every_ranked_row_of_a_real_board_has_its_record_and_jsonl_in_the_layout_all_valid(
    real_site, leaderboard_submissions
):
    import jsonschema

    validator = jsonschema.Draft7Validator(eee.load_schema(eee.INSTANCE_SCHEMA_PATH))
    records = sorted((real_site / "eee" / "data").glob("*/*/*/*.json"))
    assert len(records) == 4  # alpha, beta, html, other_judge; tampered and limit are refused
    for path in records:
        rel = path.relative_to(real_site).as_posix()
        assert LAYOUT.fullmatch(rel), rel
        record = json.loads(path.read_text(encoding="utf-8"))
        assert eee.check(record) == [] and eee.check(record, eee.SCHEMA_0_3_0_PATH) == [], rel
        detail = record["detailed_evaluation_results"]
        assert detail["file_path"] == rel[len("eee/") : -len(".json")] + "_samples.jsonl"
        data = (real_site / "eee" / detail["file_path"]).read_bytes()
        assert detail["checksum"] == hashlib.sha256(data).hexdigest()
        lines = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        assert len(lines) == detail["total_rows"] == 14  # 12 cii_none docs and 2 cii_ctc docs, each once
        ids = {r["evaluation_result_id"] for r in record["evaluation_results"]}
        for line in lines:
            assert [e.message for e in validator.iter_errors(line)] == [], (rel, line["sample_id"])
            assert line["evaluation_id"] == record["evaluation_id"] and line["evaluation_result_id"] in ids
        text = data.decode("utf-8")
        assert os.path.dirname(leaderboard_submissions["alpha"]) not in text  # no path of the submitter's machine
