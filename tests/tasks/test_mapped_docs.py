"""Docs a ``process_docs`` builds are memory-mapped from the datasets cache, as the harness's own splits are.

A table built in memory stays in Arrow's pool for the whole run (UNPIE's docs with their explanation images, a column
of image digests); these tests check that the docs are the same as built in memory, that nothing of them is left in
memory, that the same docs map the same file run after run, and that a failed or impossible write leaves no file
behind and the docs as they were. The memory itself is measured in benchmarks/served_memory.py, not asserted here.
"""

import logging
import os

import datasets
import pytest
from datasets.table import ConcatenationTable, InMemoryTable

from hanyi.data import unpie as data
from hanyi.data.unpie_sample import build_sample
from hanyi.tasks import _common
from hanyi.tasks.unpie import loading


def in_memory_bytes(ds) -> int:
    """Bytes of ``ds``'s table held in memory (0: every block is a memory-mapped file)."""
    table = ds.data
    blocks = [b for row in table.blocks for b in row] if isinstance(table, ConcatenationTable) else [table]
    return sum(b.nbytes for b in blocks if isinstance(b, InMemoryTable))


def files(folder, prefix):
    return sorted(f for f in os.listdir(folder) if f.startswith(prefix))


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("unpie_mapped")
    build_sample(str(root / "data"), size=10)
    return root


@pytest.fixture
def split(hub, tmp_path, monkeypatch):
    """The homographic split loaded from the hub folder into a fresh datasets cache (a file, as lmms-eval loads it)."""
    monkeypatch.setenv("HANYI_UNPIE_CAPTIONS", str(hub / "data" / "captions.json"))
    ds = datasets.load_dataset(str(hub / "data"), "default", split="homographic", cache_dir=str(tmp_path / "cache"))
    assert ds.cache_files
    return ds


def folder_of(ds):
    return os.path.dirname(ds.cache_files[0]["filename"])


def as_rows(ds):
    return (
        ds.cast_column("pun_exp_image", datasets.Image(decode=False)).to_list()
        if "pun_exp_image" in ds.features
        else ds.to_list()
    )


@pytest.mark.parametrize(
    "kind, lang, kw",
    [
        ("grounding", None, {}),
        ("grounding", None, {"captions": True}),
        ("disambiguation", "de", {"needs_image": True}),
        ("reconstruction", "fr", {}),
        ("reconstruction", "ko", {"text_only": True}),
    ],
)
def test_docs_built_part_by_part_are_the_docs_built_at_once(split, monkeypatch, caplog, kind, lang, kw):
    def build(part_rows):
        monkeypatch.setattr(data, "PART_ROWS", part_rows)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            docs = data.expand(split, kind, "homographic", lang, **kw)
        return docs, [r.getMessage() for r in caplog.records]

    whole, whole_log = build(10_000)
    parts, parts_log = build(3)  # 10 rows: four parts, the last of one row
    assert len(whole) >= 10 and as_rows(parts) == as_rows(whole)
    assert parts.features == whole.features
    assert parts_log == whole_log  # every message once, over the whole split


def test_messages_cover_the_whole_split_once(monkeypatch, caplog):
    rows = [
        {"pun_sentence": f"s{i}", "pun_phrase": "p", "translation1": {"de": "a"}, "translation2": {"de": "b"}}
        for i in range(7)
    ]
    rows[1]["translation2"] = rows[5]["translation2"] = None  # corrupt rows in two parts
    monkeypatch.setattr(data, "PART_ROWS", 2)
    with caplog.at_level(logging.WARNING):
        docs = data.expand(datasets.Dataset.from_list(rows), "reconstruction", "homographic", "de", text_only=True)
    assert len(docs) == 10  # two docs a pun, five puns kept
    skipped = [r.getMessage() for r in caplog.records if "corrupt" in r.getMessage()]
    assert skipped == [
        "unpie reconstruction homographic/de: skipped 2 corrupt row(s): homographic-1: translation2 missing; "
        "homographic-5: translation2 missing"
    ]


def test_unpie_docs_are_mapped_from_one_file_reused_run_after_run(split):
    folder = folder_of(split)
    in_memory = data.expand(split, "grounding", "homographic")
    assert in_memory_bytes(in_memory) > 0  # what the task held before
    docs = loading.unpie_grounding_split_docs(split)
    assert in_memory_bytes(docs) == 0 and as_rows(docs) == as_rows(in_memory)
    assert [os.path.basename(f["filename"]) for f in docs.cache_files] == files(folder, "cache-hanyi-")
    assert files(folder, "tmp-hanyi-") == []  # the parts' files are gone
    again = loading.unpie_grounding_split_docs(split)
    assert again.cache_files == docs.cache_files and len(files(folder, "cache-hanyi-")) == 1
    other = loading.unpie_reconstruction_de_split_docs(split)
    assert other.cache_files != docs.cache_files  # other docs, another file: never a stale one


def test_a_failed_build_leaves_no_file_behind(split, monkeypatch):
    monkeypatch.setattr(data, "PART_ROWS", 3)
    monkeypatch.setattr(data, "check_images", lambda cells, threads, sha: [(cells[0][0], "damaged")] if cells else [])
    with pytest.raises(data.ImageUnavailableError, match="explanation image"):
        loading.unpie_grounding_split_docs(split)
    assert files(folder_of(split), "tmp-hanyi-") == [] and files(folder_of(split), "cache-hanyi-") == []


def test_an_in_memory_source_or_a_folder_that_cannot_be_written_leaves_the_docs_in_memory(split, monkeypatch):
    docs = datasets.Dataset.from_list([{"a": 1}, {"a": 2}])
    assert _common.memory_mapped(docs, like=docs) is docs  # nowhere to write beside
    monkeypatch.setattr(_common, "_write_arrow", lambda ds, path: (_ for _ in ()).throw(PermissionError(path)))
    assert _common.memory_mapped(docs, like=split) is docs
    kept = loading.unpie_grounding_split_docs(split)
    assert in_memory_bytes(kept) > 0 and len(kept) == 10
    assert files(folder_of(split), "tmp-hanyi-") == [] and files(folder_of(split), "cache-hanyi-") == []


def test_a_digest_column_is_mapped_alone_and_equals_add_column(split):
    values = [f"{i:064x}" for i in range(len(split))]
    mapped = _common.add_mapped_column(split, "image_sha256", values)
    plain = split.add_column("image_sha256", values)
    assert in_memory_bytes(mapped) == 0 and in_memory_bytes(plain) > 0
    assert mapped.features == plain.features and mapped["image_sha256"] == plain["image_sha256"]
    assert mapped.select_columns(["pun_sentence"]).to_list() == plain.select_columns(["pun_sentence"]).to_list()
    written = [f for f in mapped.cache_files if "cache-hanyi-" in f["filename"]]
    assert len(written) == 1 and os.path.getsize(written[0]["filename"]) < 64 * len(split) * 2  # not the images


def test_the_docs_are_built_from_the_system_allocator_and_the_default_pool_comes_back(split, monkeypatch):
    """mimalloc, pyarrow's default pool, keeps freed pages counted in the process's memory; the parts of a docs
    table are built from the system allocator (loading._system_pool), the pool before it back after, a failure too."""
    import pyarrow as pa

    before, seen = pa.default_memory_pool().backend_name, []
    expand = data.expand
    monkeypatch.setattr(
        data, "expand", lambda *a, **k: seen.append(pa.default_memory_pool().backend_name) or expand(*a, **k)
    )
    docs = loading.unpie_grounding_split_docs(split)
    assert seen == ["system"] and pa.default_memory_pool().backend_name == before and len(docs) == 10
    monkeypatch.setattr(data, "expand", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a failed build")))
    with pytest.raises(RuntimeError, match="a failed build"):
        loading.unpie_grounding_split_docs(split)
    assert pa.default_memory_pool().backend_name == before
    with loading._system_pool():
        table = pa.table({"a": list(range(1000))})  # built in the block, freed after it: by the pool it came from
    assert table.column("a").to_pylist()[-1] == 999 and pa.default_memory_pool().backend_name == before


def test_builds_in_several_threads_leave_the_default_pool_as_it_was():
    """The default pool is the process's: without the lock a second build saved the first's system pool as "before"
    and put it back last, leaving the whole run on it."""
    import threading
    import time

    import pyarrow as pa

    before, inside = pa.default_memory_pool().backend_name, []

    def build():
        with loading._system_pool():
            inside.append(pa.default_memory_pool().backend_name)
            time.sleep(0.02)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inside == ["system"] * 4 and pa.default_memory_pool().backend_name == before


def test_the_heterographic_split_is_remembered_by_its_files_not_held(hub, split, tmp_path, monkeypatch):
    """The both-splits tasks read the heterographic split once per process; what is kept is its files, mapped anew
    per task, so that the pages a build touched go with its docs (a kept split held them for the whole run)."""
    from hanyi.data import sources

    monkeypatch.setattr(sources, "resolve", lambda bench: str(hub / "data"))
    monkeypatch.setenv("LMMS_EVAL_DATASETS_CACHE", str(tmp_path / "cache"))
    loading._heterographic_files.cache_clear()
    docs = loading.unpie_grounding_docs(split)
    kept = loading._heterographic_files(str(hub / "data"), str(tmp_path / "cache"))
    hetero = datasets.load_dataset(
        str(hub / "data"), "default", split="heterographic", cache_dir=str(tmp_path / "cache")
    )
    assert kept[0] == tuple(f["filename"] for f in hetero.cache_files) and kept[1] == hetero.info
    assert loading._heterographic_files.cache_info().currsize == 1
    expected = [data.expand(s, "grounding", name) for s, name in ((split, "homographic"), (hetero, "heterographic"))]
    assert as_rows(docs) == as_rows(expected[0]) + as_rows(expected[1])
    loading._heterographic_files.cache_clear()
    halves = [hetero.select(range(0, 4)).flatten_indices(), hetero.select(range(4, len(hetero))).flatten_indices()]
    for i, half in enumerate(halves):  # a split of several shards (a large one, as datasets writes it)
        half.save_to_disk(str(tmp_path / f"shard{i}"))
    sharded = datasets.concatenate_datasets([datasets.load_from_disk(str(tmp_path / f"shard{i}")) for i in (0, 1)])
    assert len(sharded.cache_files) == 2
    monkeypatch.setattr(loading.datasets, "load_dataset", lambda *a, **k: sharded)
    assert as_rows(loading._heterographic("y", None)) == as_rows(hetero)
    loading._heterographic_files.cache_clear()
    in_memory = datasets.Dataset.from_list(hetero.to_list(), features=hetero.features)  # no file to map anew
    monkeypatch.setattr(loading.datasets, "load_dataset", lambda *a, **k: in_memory)
    assert loading._heterographic("x", None) is in_memory
    loading._heterographic_files.cache_clear()
