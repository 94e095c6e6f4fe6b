"""The hub-format writer: loadable offline by name, deterministic names, and never served stale after a rewrite."""

from __future__ import annotations

import os

import datasets
import pytest

from hanyi.data.hubformat import write_hub_dataset


def _load(path, cache):
    return datasets.load_dataset(str(path), name="c", split="test", cache_dir=str(cache))


def test_rewrite_in_place_is_not_served_from_a_stale_cache(tmp_path):
    out, cache = tmp_path / "ds", tmp_path / "cache"
    write_hub_dataset(str(out), {"c": {"test": datasets.Dataset.from_dict({"x": [1, 2, 3]})}})
    assert _load(out, cache)["x"] == [1, 2, 3]
    write_hub_dataset(str(out), {"c": {"test": datasets.Dataset.from_dict({"x": [7, 8, 9, 10]})}})
    assert _load(out, cache)["x"] == [7, 8, 9, 10]
    assert len(os.listdir(out / "c")) == 1  # the old version is removed


def test_same_content_keeps_its_file_name_and_counts(tmp_path):
    ds = datasets.Dataset.from_dict({"x": ["甲", "乙"]})
    counts = write_hub_dataset(str(tmp_path / "a"), {"c": {"test": ds}}, info={"source": "t"})
    write_hub_dataset(str(tmp_path / "b"), {"c": {"test": ds}})
    assert counts == {"c": {"test": 2}}
    assert os.listdir(tmp_path / "a" / "c") == os.listdir(tmp_path / "b" / "c")


def test_config_dirs_give_the_hub_single_config_layout(tmp_path):
    ds = datasets.Dataset.from_dict({"x": [1]})
    write_hub_dataset(str(tmp_path), {"default": {"test": ds, "dev": ds}}, config_dirs={"default": "data"})
    names = sorted(os.listdir(tmp_path / "data"))
    assert [n.split("-")[0] for n in names] == ["dev", "test"]
    loaded = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == {"dev", "test"}


@pytest.mark.parametrize("link", ["README.md", "hanyi_build.json", "default"])
def test_a_symlink_where_a_file_is_written_is_refused_and_its_target_untouched(tmp_path, link):
    """`hanyi prepare vulca` wrote through a symlinked <out>/vulca/README.md, outside --out."""
    from hanyi.data.safepath import UnsafePathError

    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "victim"
    target.write_text("keep me", encoding="utf-8")
    out = tmp_path / "out" / "vulca"
    out.mkdir(parents=True)
    (out / link).symlink_to(outside if link == "default" else target)
    ds = datasets.Dataset.from_dict({"x": [1, 2]})
    with pytest.raises(UnsafePathError, match=f"{link} is a symbolic link"):
        write_hub_dataset(str(out), {"default": {"test": ds}})
    assert target.read_text(encoding="utf-8") == "keep me" and sorted(os.listdir(outside)) == ["victim"]
    assert not list(out.glob("default*/*.parquet"))  # nothing written before the check
