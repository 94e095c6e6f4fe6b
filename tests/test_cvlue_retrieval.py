"""CVLUE ITR stage 1 with a tiny random Chinese-CLIP built here: brute-force checks of encoding, top-K, the cache, bad
images, provenance, and the path from the release to lmms-eval's R@k (``hanyi prepare cvlue --itr-retriever``)."""

import hashlib
import json
import os

import pytest

from hanyi.data import cvlue_retrieval as ret
from hanyi.data.cvlue_categories import SLUGS
from hanyi.data.cvlue_sample import SIZE, write_synthetic_release
from hanyi.data.images import synthetic_image

torch = pytest.importorskip("torch")

N_IMAGES = 24
#: Words the synthetic captions are made of (CJK, so the tiny WordPiece vocabulary tokenises them).
WORDS = "红黄蓝绿白黑大小高低新旧两三四五个只条张人牛鱼猫狗花树灯碗琴"


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    from hanyi.models.tiny_chinese_clip import build_tiny_chinese_clip

    return build_tiny_chinese_clip(str(tmp_path_factory.mktemp("tiny_chinese_clip")))


def _caption(n: int) -> str:
    h = hashlib.sha256(str(n).encode()).digest()
    return "".join(WORDS[b % len(WORDS)] for b in h[: 6 + h[31] % 6])


def write_gallery_release(root: str, n_images: int = N_IMAGES) -> list[dict]:
    """The synthetic sample release with a larger ITR test gallery: ``n_images`` images over 8 categories, 2-3
    captions each (about 60), one caption string shared by two images (two golds in IR). Returns the IC items."""
    write_synthetic_release(root)
    items = []
    for n in range(n_images):
        slug = SLUGS[(n * 11) % len(SLUGS)]
        rel = f"images/test/A/{slug}/A-{slug.split('-')[0]}-{n + 1}.png"
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        synthetic_image(rel, SIZE).save(os.path.join(root, rel))
        items.append({"image": rel, "caption": [_caption(100 * n + j) for j in range(2 + n % 2)]})
    items[1]["caption"].append(items[0]["caption"][0])
    with open(os.path.join(root, "IC", "test.json"), "w", encoding="utf-8") as f:
        json.dump(items, f, ensure_ascii=False)
    return items


def _open(root, rel):
    from PIL import Image

    with Image.open(os.path.join(root, rel)) as im:
        return im.convert("RGB")


def _fresh_embeddings(model_dir, root, gallery):
    """Every image and caption encoded one at a time, straight through transformers (not through the module)."""
    from transformers import ChineseCLIPModel, ChineseCLIPProcessor

    model, proc = ChineseCLIPModel.from_pretrained(model_dir).eval(), ChineseCLIPProcessor.from_pretrained(model_dir)

    def unit(out):
        v = out.pooler_output[0].double()
        return v / v.norm()

    with torch.inference_mode():
        images = {
            rel: unit(model.get_image_features(**proc(images=[_open(root, rel)], return_tensors="pt")))
            for rel in gallery.images
        }
        captions = {
            c: unit(model.get_text_features(**proc.tokenizer([c], return_tensors="pt", truncation=True, max_length=52)))
            for c in gallery.captions
        }
    return images, captions


def _assert_is_topk(listed, scores: dict, k: int, tol: float = 1e-5):
    """``listed`` is a best-first top-``k`` of ``scores`` (up to float noise between batched and single encoding)."""
    assert len(listed) == min(k, len(scores)) and len(set(listed)) == len(listed)
    values = [scores[x] for x in listed]
    assert all(a >= b - tol for a, b in zip(values, values[1:])), "not sorted by similarity"
    rest = [v for x, v in scores.items() if x not in set(listed)]
    assert not rest or min(values) >= max(rest) - tol, "an item outside the list scores higher than one inside"


@pytest.fixture(scope="module")
def computed(tiny_clip, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("release"))
    items = write_gallery_release(root)
    out, cache = str(tmp_path_factory.mktemp("out")), str(tmp_path_factory.mktemp("cache"))
    shortlist, record = ret.compute_shortlist(items, root, out, model=tiny_clip, k=4, cache_dir=cache, batch_size=7)
    return {"root": root, "items": items, "out": out, "cache": cache, "shortlist": shortlist, "record": record}


def test_shortlist_equals_a_brute_force_top_k_of_freshly_encoded_items(tiny_clip, computed):
    gallery = ret.Gallery(computed["items"])
    images, captions = _fresh_embeddings(tiny_clip, computed["root"], gallery)
    shortlist, depth = computed["shortlist"], computed["record"]["depth"]
    assert depth == 10 and set(shortlist["i2t"]) == set(gallery.images) and set(shortlist["t2i"]) == set(captions)
    for image, listed in shortlist["i2t"].items():
        _assert_is_topk(listed, {c: float(images[image] @ v) for c, v in captions.items()}, depth)
    for caption, listed in shortlist["t2i"].items():
        _assert_is_topk(listed, {im: float(captions[caption] @ v) for im, v in images.items()}, depth)
    # the images are not all alike to the random model: the lists differ between queries
    assert len({tuple(v) for v in shortlist["t2i"].values()}) > 1


def test_stage1_recall_is_the_official_rule_recomputed_by_hand(computed):
    sl, gold, k = computed["shortlist"], ret.Gallery(computed["items"]), computed["record"]["k"]
    for direction, key, golds in (("tr", "i2t", gold.i2t_gold), ("ir", "t2i", gold.t2i_gold)):
        ranks = [next((i for i, x in enumerate(sl[key][q]) if x in golds[q]), None) for q in golds]
        expected = {f"r{n}": sum(r is not None and r < n for r in ranks) / len(golds) for n in (1, 5, 10)}
        expected["stage1_ceiling"] = sum(r is not None and r < k for r in ranks) / len(golds)
        got = computed["record"]["metrics"][direction]
        assert got["n"] == len(golds) and {m: got[m] for m in expected} == pytest.approx(expected)
    assert len(gold.t2i_gold[computed["items"][0]["caption"][0]]) == 2  # a caption with two gold images


@pytest.mark.parametrize("budget", [1, 4 * 24 * 3, 4 * 24 * 7 + 5])
def test_blockwise_topk_equals_the_full_matrix_topk_ties_by_index(budget):
    gen = torch.Generator().manual_seed(0)
    queries = torch.nn.functional.normalize(torch.randn(23, 8, generator=gen), dim=-1)
    gallery = torch.nn.functional.normalize(torch.randn(24, 8, generator=gen), dim=-1)
    gallery[5] = gallery[17] = gallery[2]  # exact ties: lower index first
    full = queries @ gallery.T
    want = [sorted(range(24), key=lambda j: (-float(row[j]), j))[:6] for row in full]
    scores, indices = ret.topk_blockwise(queries, gallery, 6, max_block_bytes=budget)
    assert indices.tolist() == want
    assert torch.allclose(scores, full.gather(1, indices), atol=1e-6)  # a 1-row product may differ in the last bit
    _, all_at_once = ret.topk_blockwise(queries, gallery, 6, max_block_bytes=1 << 30)
    assert torch.equal(all_at_once, indices)


def test_blocks_never_hold_more_scores_than_the_budget(monkeypatch):
    seen = []
    real_topk = torch.topk
    monkeypatch.setattr(torch, "topk", lambda x, k, dim: seen.append(tuple(x.shape)) or real_topk(x, k, dim=dim))
    q, g = torch.randn(50, 4), torch.randn(40, 4)
    ret.topk_blockwise(q, g, 3, max_block_bytes=4 * 40 * 8)
    assert seen == [(8, 40)] * 6 + [(2, 40)]


def test_a_resumed_run_re_encodes_nothing_and_a_changed_image_only_itself(tiny_clip, computed, tmp_path):
    args = {"model": tiny_clip, "k": 4, "cache_dir": computed["cache"], "batch_size": 7}
    assert computed["record"]["encoded_now"] == {"image": N_IMAGES, "caption": computed["record"]["captions"]}
    again_sl, again = ret.compute_shortlist(computed["items"], computed["root"], str(tmp_path / "a"), **args)
    assert again["encoded_now"] == {"image": 0, "caption": 0}
    assert again_sl == computed["shortlist"] and again["embedding_hash"] == computed["record"]["embedding_hash"]
    changed = computed["items"][3]["image"]
    synthetic_image("other picture", SIZE).save(os.path.join(computed["root"], changed))
    try:
        _, third = ret.compute_shortlist(computed["items"], computed["root"], str(tmp_path / "b"), **args)
    finally:
        synthetic_image(changed, SIZE).save(os.path.join(computed["root"], changed))
    assert third["encoded_now"] == {"image": 1, "caption": 0}
    assert third["embedding_hash"] != computed["record"]["embedding_hash"]


def test_an_interrupted_run_resumes_from_its_last_batch(tiny_clip, computed, tmp_path, monkeypatch):
    calls = []
    real = ret.ChineseClipRetriever.encode_texts

    def failing(self, texts):
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, texts)

    monkeypatch.setattr(ret.ChineseClipRetriever, "encode_texts", failing)
    args = {"model": tiny_clip, "k": 4, "cache_dir": str(tmp_path / "cache"), "batch_size": 7}
    with pytest.raises(KeyboardInterrupt):
        ret.compute_shortlist(computed["items"], computed["root"], str(tmp_path / "a"), **args)
    monkeypatch.setattr(ret.ChineseClipRetriever, "encode_texts", real)
    sl, rec = ret.compute_shortlist(computed["items"], computed["root"], str(tmp_path / "b"), **args)
    assert rec["encoded_now"] == {"image": 0, "caption": rec["captions"] - 14}
    assert sl == computed["shortlist"]


def test_a_corrupt_gallery_image_is_named_skipped_and_counted_as_a_miss(tiny_clip, tmp_path, capsys):
    root = str(tmp_path / "rel")
    items = write_gallery_release(root, n_images=10)
    bad = items[4]["image"]
    with open(os.path.join(root, bad), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n not really a png")
    argv = ["--release", root, "--itr-retriever", tiny_clip, "--rerank-k", "3", "--out", str(tmp_path / "data")]
    assert _prepare(*argv, "--itr-cache", str(tmp_path / "cache")) == 0
    assert json.loads(capsys.readouterr().out.split("\n\nUse it with")[0])["itr_skipped_images"] == 1
    data = tmp_path / "data" / "cvlue"
    rec = json.loads((data / ret.STAGE1_FILE).read_text(encoding="utf-8"))
    sl = json.loads((data / ret.SHORTLIST_FILE).read_text(encoding="utf-8"))
    assert len(rec["skipped_images"]) == 1 and rec["skipped_images"][0].startswith(bad + ": ")
    assert sl["i2t"][bad] == [] and all(bad not in listed for listed in sl["t2i"].values())
    assert rec["metrics"]["tr"]["n"] == 10  # still in the denominator: a miss
    assert rec["metrics"]["tr"]["r10"] <= 0.9
    build = json.loads((data / "hanyi_build.json").read_text(encoding="utf-8"))
    assert f"ITR stage 1: skipped image {rec['skipped_images'][0]}" in build["anomalies"]
    assert build["itr_retriever"]["skipped_images"] == 1
    import datasets

    tr = datasets.load_dataset(str(data), "itr_tr_rerank", split="test").to_list()
    assert [r["stage1_rank"] for r in tr if r["query"] == bad] == [0]  # the placeholder: a miss, still counted


def _prepare(*argv):
    from hanyi.cli import main

    return main(["prepare", "cvlue", *argv])


def test_prepare_writes_shortlist_stage1_and_manifest_and_the_run_matches_brute_force(
    tiny_clip, computed, tmp_path, monkeypatch, evaluate, capsys
):
    """The done-when: ``hanyi prepare cvlue --itr-retriever <tiny>`` then ``cvlue_ranking`` with replayed
    loglikelihoods gives the R@k of a brute-force re-ranking of a brute-force top-K from the cached embeddings."""
    from hanyi.models.replay import ReplayModel

    k, root = 4, computed["root"]
    argv = ["--release", root, "--itr-retriever", tiny_clip, "--rerank-k", str(k), "--out", str(tmp_path / "data")]
    assert _prepare(*argv, "--itr-cache", computed["cache"], "--itr-max-block-mb", "1") == 0
    printed = json.loads(capsys.readouterr().out.split("\n\nUse it with")[0])
    data = tmp_path / "data" / "cvlue"
    stage1 = json.loads((data / ret.STAGE1_FILE).read_text(encoding="utf-8"))
    manifest = json.loads((data / "hanyi_build.json").read_text(encoding="utf-8"))["itr_retriever"]
    assert stage1["encoded_now"] == {"image": 0, "caption": 0}  # the module fixture's cache served every item
    assert printed["itr_stage1"]["tr"] == stage1["metrics"]["tr"]
    assert manifest["origin"] == "computed" and manifest["retriever"] == tiny_clip and manifest["k"] == k
    assert manifest["embedding_hash"] == stage1["embedding_hash"] and manifest["revision"].startswith("local:")

    # brute force from the cached embeddings: top-K by cosine, then re-ranked by the replayed scores
    gallery = ret.Gallery(computed["items"])
    cache = ret.EmbeddingCache(computed["cache"], stage1["weights_fingerprint"])

    def vec(kind, name):
        content = open(os.path.join(root, name), "rb").read() if kind == "image" else name.encode("utf-8")
        return cache.vectors[ret.item_key(stage1["weights_fingerprint"], kind, name if kind == "image" else "",
                                          ret.sha256_bytes(content))].double()  # fmt: skip

    iv, cv = {i: vec("image", i) for i in gallery.images}, {c: vec("caption", c) for c in gallery.captions}

    def value(query, cand):  # the replayed mean NLL of one pair (lower = better)
        return 0.1 + hashlib.sha256(f"{query}|{cand}".encode()).digest()[0] / 50

    expected = {}
    for task, queries, cands, gold in (
        ("cvlue_tr_rerank", iv, cv, gallery.i2t_gold),
        ("cvlue_ir_rerank", cv, iv, gallery.t2i_gold),
    ):
        hits = {1: 0, 5: 0, 10: 0, "ceiling": 0}
        for q, qv in queries.items():
            top = sorted(cands, key=lambda c: (-float(qv @ cands[c]), sorted(cands).index(c)))[:k]
            hits["ceiling"] += any(c in gold[q] for c in top)
            reranked = sorted(top, key=lambda c: value(q, c))
            rank = next((i + 1 for i, c in enumerate(reranked) if c in gold[q]), None)
            for n in (1, 5, 10):
                hits[n] += rank is not None and rank <= n
        expected[task] = {key: v / len(queries) for key, v in hits.items()}

    records = [
        {"task": "cvlue_tr_rerank", "key": {"query": q, "caption": c}, "loglikelihoods": [[value(q, c), False]]}
        for q in gallery.images
        for c in gallery.captions
    ] + [
        {"task": "cvlue_ir_rerank", "key": {"query": q, "image_path": i}, "loglikelihoods": [[value(q, i), False]]}
        for q in gallery.captions
        for i in gallery.images
    ]
    path = tmp_path / "replay.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    monkeypatch.setenv("HANYI_DATA_ROOT", str(tmp_path / "data"))
    out = evaluate(["cvlue_ranking"], ReplayModel(path=str(path), on_missing="empty"))
    for task, want in expected.items():
        got = {m.split(",")[0]: v for m, v in out["results"][task].items()}
        assert got["parse_failure_rate"] == 0.0
        assert {n: got[f"r{n}"] for n in (1, 5, 10)} == pytest.approx({n: want[n] for n in (1, 5, 10)})
        assert got["stage1_ceiling"] == pytest.approx(want["ceiling"])
        direction = task.split("_")[1]
        assert got["stage1_ceiling"] == pytest.approx(stage1["metrics"][direction]["stage1_ceiling"])
    assert len(out["samples"]["cvlue_tr_rerank"]) == N_IMAGES * k


def test_bare_retriever_flag_means_the_default_chinese_clip():
    import argparse

    from hanyi.data.cvlue import add_prepare_arguments

    parser = argparse.ArgumentParser()
    add_prepare_arguments(parser)
    args = parser.parse_args(["--release", "r", "--itr-retriever"])
    assert (args.root, args.itr_retriever) == ("r", "OFA-Sys/chinese-clip-vit-large-patch14")
    assert parser.parse_args(["--root", "r"]).itr_retriever is None


def test_prepare_refuses_both_shortlist_sources_and_a_bad_k(tmp_path, capsys):
    with pytest.raises(SystemExit):
        _prepare("--release", str(tmp_path), "--itr-shortlist", "x.json", "--itr-retriever", "m")
    assert "not allowed with argument" in capsys.readouterr().err
    write_synthetic_release(str(tmp_path / "rel"))
    assert _prepare("--release", str(tmp_path / "rel"), "--itr-retriever", "m", "--rerank-k", "0",
                    "--out", str(tmp_path / "o")) == 2  # fmt: skip
    assert "--rerank-k must be at least 1" in capsys.readouterr().err


# ---- the report: stage 1 as its own row, runs with different shortlists not comparable --------------------------------
def _prepared(directory, shortlist_hash, k=16, r1=0.25):
    os.makedirs(directory)
    open(os.path.join(directory, "README.md"), "w").close()
    metrics = {d: {"n": 8, "r1": r1, "r5": 0.5, "r10": 0.75, "stage1_ceiling": 0.875} for d in ("tr", "ir")}
    record = {"origin": "computed", "retriever": "OFA-Sys/chinese-clip-vit-large-patch14", "revision": "abc123",
              "k": k, "embedding_hash": "sha256:ee", "shortlist_sha256": shortlist_hash, "metrics": metrics}  # fmt: skip
    with open(os.path.join(directory, "hanyi_build.json"), "w", encoding="utf-8") as f:
        json.dump({"counts": {}, "itr_retriever": record}, f)
    return directory


def _results(directory, name, data_dir, r1):
    tasks = ("cvlue_tr_rerank", "cvlue_ir_rerank")
    os.makedirs(directory)
    data = {
        "results": {t: {"alias": t, "r1,none": r1, "stage1_ceiling,none": 0.875} for t in tasks},
        "group_subtasks": {t: [] for t in tasks},
        "higher_is_better": {t: {"r1": True, "stage1_ceiling": True} for t in tasks},
        "n-samples": {t: {"original": 8, "effective": 8} for t in tasks},
        "configs": {t: {"task": t, "dataset_path": data_dir, "dataset_name": f"itr_{t[6:8]}_rerank"} for t in tasks},
        "config": {"model": "replay", "model_args": f"pretrained=org/{name}", "limit": None},
        "model_name": name,
        "date": "20260101_000000",
        "lmms_eval_version": "0.7.3",
    }
    with open(os.path.join(directory, "20260101_000000_results.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)
    return directory


@pytest.mark.parametrize("same", [True, False])
def test_report_shows_the_retriever_row_and_marks_runs_with_other_shortlists(tmp_path, same):
    from hanyi.report import main as report_main
    from hanyi.results.comparability import shortlists_differ as differ
    from hanyi.results.runs import load_runs

    a = _prepared(str(tmp_path / "data_a"), "sha256:" + "a" * 64)
    b = a if same else _prepared(str(tmp_path / "data_b"), "sha256:" + "b" * 64, r1=0.5)
    runs = [_results(str(tmp_path / "run_a"), "vlm-a", a, 0.5), _results(str(tmp_path / "run_b"), "vlm-b", b, 0.625)]
    assert report_main([*runs, "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    rep = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    section = next(s for s in rep["sections"] if s["benchmark"] == "cvlue")
    stage1 = next(t for t in section["tables"] if t["title"].startswith("ITR stage 1"))
    assert len(stage1["rows"]) == (1 if same else 2)
    row = stage1["rows"][0]
    assert row[0] == "OFA-Sys/chinese-clip-vit-large-patch14 (stage 1 alone)" and row[3] == "16"
    assert row[5:9] == ["0.2500", "0.5000", "0.7500", "0.8750"]
    assert row[-1] == ("vlm-a, vlm-b" if same else "vlm-a")
    head = next(t for t in section["tables"] if t["title"] == "Headline metrics")
    assert not any("stage 1" in r[0] for r in head["rows"])  # the VLM's rows stay the VLM's
    notes = [n for n in section["notes"] if "different stage-1 shortlists" in n]
    assert len(notes) == (0 if same else 2) and (same or "not comparable with each other" in notes[0])
    assert differ(load_runs(runs), "cvlue_tr_rerank") is (not same)
    prov = rep["runs"][0]["provenance"]["cvlue_tr_rerank"]["shortlist"]
    assert (prov["retriever"], prov["revision"], prov["k"], prov["embedding_hash"]) == (
        "OFA-Sys/chinese-clip-vit-large-patch14", "abc123", 16, "sha256:ee")  # fmt: skip
