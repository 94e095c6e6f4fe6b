"""the report pairs two runs' docs on the images' content, not only their ids and paths. Each image task logs
the sha256 of the image bytes its load-time check read (``image_sha256``); ``hanyi report`` hashes it into the doc's
content hash, and a log without it is paired by ids and paths only, with a note saying so."""

from __future__ import annotations

import hashlib
import io

import datasets
from PIL import Image

from hanyi.tasks.cvlue import utils as cvlue_utils
from hanyi.tasks.punrebus import utils as punrebus_utils
from tests.test_report_honest import choice_samples, report, section, write_run


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), colour).save(buf, "PNG")
    return buf.getvalue()


def _punrebus_docs(images: list[bytes]):
    rows = {
        "image": [{"bytes": b, "path": "same/path.png"} for b in images],
        "image_id": [f"img{i}.png" for i in range(len(images))],
        "story_zh": [f"story {i}" for i in range(len(images))],
        "categories": [["A"]] * len(images),
        "category_rows": [["A"]] * len(images),
        "elements_en": [["fish"]] * len(images),
    }
    features = datasets.Features(
        {
            "image": datasets.Image(),
            "image_id": datasets.Value("string"),
            "story_zh": datasets.Value("string"),
            "categories": datasets.Sequence(datasets.Value("string")),
            "category_rows": datasets.Sequence(datasets.Value("string")),
            "elements_en": datasets.Sequence(datasets.Value("string")),
        }
    )
    return datasets.Dataset.from_dict(rows, features=features)


def test_each_doc_logs_the_sha256_of_the_image_bytes_its_load_check_read():
    red, blue = _png("red"), _png("blue")
    docs = punrebus_utils.punrebus_process_docs(_punrebus_docs([red, blue]))
    logged = [punrebus_utils.punrebus_matching_process_results(doc, ["A"]) for doc in docs]
    assert [item["accuracy"]["image_sha256"] for item in logged] == [hashlib.sha256(b).hexdigest() for b in (red, blue)]


def test_pun_rebus_element_items_carry_the_digest_too(monkeypatch):
    from hanyi import backbones

    monkeypatch.setattr(backbones, "metric_key", lambda backend, key: key if backend == "wordnet" else None)
    monkeypatch.setattr(punrebus_utils.el, "element_abs", lambda gold, pred: 1.0)
    monkeypatch.setattr(punrebus_utils.el, "element_abs_capped", lambda gold, pred: 1.0)
    red = _png("red")
    (doc,) = punrebus_utils.punrebus_process_docs(_punrebus_docs([red]))
    item = punrebus_utils.punrebus_elements_process_results(doc, ["fish"])["element_abs"]
    assert item["image_sha256"] == hashlib.sha256(red).hexdigest() and item["story"] == "story 0"


def test_cvlue_items_carry_the_digest_too():
    doc = {"category": "c", "culture_group": "g", "image_sha256": "ab" * 32}
    assert cvlue_utils._tags(doc, 1.0)["image_sha256"] == "ab" * 32


def _run(tmp_path, name, digests):
    samples = choice_samples([i % 2 == 0 for i in range(len(digests))])
    for line, digest in zip(samples, digests):
        line.update(input_media=["same/path.png"], doc_hash="same-prompt")  # lmms-eval 0.7.3's: one for all docs
        if digest is not None:
            line["accuracy"]["image_sha256"] = digest
    return write_run(
        tmp_path / name, "pretrained=m", {"punrebus_matching": {"accuracy,none": 0.5}}, {"punrebus_matching": samples}
    )


def _paired(sec):
    return [p for p in sec["paired"] if p["task"] == "punrebus_matching"]


def test_runs_whose_image_under_one_path_differs_are_not_paired(tmp_path):
    """Before: only ids and paths were hashed, so other pixels under the same path paired as the same doc."""
    same = [hashlib.sha256(bytes([i])).hexdigest() for i in range(10)]
    other = [*same[:9], hashlib.sha256(b"another picture").hexdigest()]
    sec = section(report(tmp_path, _run(tmp_path, "a", same), _run(tmp_path, "b", other)), "punrebus")
    assert _paired(sec) == []
    assert any("1 of the 10 doc ids" in n and "not paired doc by doc" in n for n in sec["notes"]), sec["notes"]


def test_runs_on_identical_images_are_paired(tmp_path):
    same = [hashlib.sha256(bytes([i])).hexdigest() for i in range(10)]
    sec = section(report(tmp_path, _run(tmp_path, "a", same), _run(tmp_path, "b", same)), "punrebus")
    assert _paired(sec) and not any("punrebus_matching: paired by doc ids" in n for n in sec["notes"])


def test_a_log_without_digests_is_paired_by_ids_and_paths_and_the_report_says_so(tmp_path):
    """A log written before the digests were logged (or a text-only task): pairing falls back to ids and paths, and
    a run with digests beside one without is not 'different data'."""
    same = [hashlib.sha256(bytes([i])).hexdigest() for i in range(10)]
    sec = section(report(tmp_path, _run(tmp_path, "a", same), _run(tmp_path, "b", [None] * 10)), "punrebus")
    assert _paired(sec)
    assert any(
        "punrebus_matching: paired by doc ids and logged doc fields only: one sample log" in n for n in sec["notes"]
    )
    sec = section(report(tmp_path, _run(tmp_path, "c", [None] * 10), _run(tmp_path, "d", [None] * 10)), "punrebus")
    assert _paired(sec) and any(
        "punrebus_matching: paired by doc ids and logged doc fields only: no sample" in n for n in sec["notes"]
    )


def test_unpie_disambiguation_docs_log_the_digest_of_their_disambiguator_image():
    import base64

    from hanyi.data import unpie as data
    from hanyi.tasks.unpie import utils as unpie_utils

    red, blue = _png("red"), _png("blue")
    uri = [f"data:image/png;base64,{base64.b64encode(b).decode()}" for b in (red, blue)]
    row = {"pun_sentence": "s", "pun_phrase": "p", "translation1": {"de": "a"}, "translation2": {"de": "b"}}
    docs, _ = data.expand_rows(
        [{**row, "disamb_image1": uri[0], "disamb_image2": uri[1]}], "disambiguation", "homographic", "de"
    )
    assert [d["image_sha256"] for d in docs] == [hashlib.sha256(b).hexdigest() for b in (red, blue)]
    assert unpie_utils._evidence(docs[0], "a", "a")["image_sha256"] == hashlib.sha256(red).hexdigest()


def test_cvlue_retrieval_docs_log_the_digest_of_their_image_file(tmp_path, monkeypatch):
    from hanyi.data import sources

    red, blue = _png("red"), _png("blue")
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(red)
    (tmp_path / "img" / "b.png").write_bytes(blue)
    monkeypatch.setattr(sources, "resolve", lambda bench: str(tmp_path))
    rows = {"image_path": ["img/a.png", "img/b.png", "img/a.png"], "query": ["q"] * 3, "caption": ["c"] * 3}
    rows |= {"stage1_rank": [1, 2, 3], "is_gold": [True, False, False], "protocol": ["p"] * 3}
    rows |= {"category": ["x"] * 3, "culture_group": ["g"] * 3}
    docs = cvlue_utils.cvlue_process_docs(datasets.Dataset.from_dict(rows))
    want = [hashlib.sha256(b).hexdigest() for b in (red, blue, red)]
    assert docs["image_sha256"] == want
    item = cvlue_utils.cvlue_itr_process_results(docs[1], [(-1.0, False)])["r1"]
    assert item["image_sha256"] == want[1]
