"""``build_sample(out_dir, size=N)``: the requested counts, in the same schema as the bundled sample."""

from __future__ import annotations

import os

import datasets
import pytest

from hanyi.data.build_samples import FULL_SIZES, build
from hanyi.data.sources import SAMPLE_DIR

#: (benchmark, size, {(config or None, split): expected rows}) at small sizes, so the test stays fast.
CASES = [
    ("punrebus", 30, {("images", "test"): 30, ("textonly", "test"): round(30 * 375 / 1011)}),
    ("cii", 40, {(None, "test"): 38, (None, "dev"): 2}),
    ("unpie", 7, {("default", "homographic"): 7, ("default", "heterographic"): 7}),
    ("vulca", 3, {("whole", "test"): 3}),
    ("cvlue", 20, {("vqa", "test"): 60, ("vg", "test"): 15, ("vd", "test"): 6}),
    ("vulca_bench", 20, {("default", "test"): 20}),
]


def _load(path, config, split, cache):
    return datasets.load_dataset(path, name=config, split=split, cache_dir=str(cache))


@pytest.mark.parametrize("bench,size,expected", CASES, ids=[c[0] for c in CASES])
def test_size_gives_requested_counts_in_sample_schema(tmp_path, bench, size, expected):
    build((bench,), root=str(tmp_path), size=size)
    for (config, split), n in expected.items():
        got = _load(str(tmp_path / bench), config, split, tmp_path / "cache")
        assert len(got) == n, (bench, config, split)
        sample = _load(os.path.join(SAMPLE_DIR, bench), config, split, tmp_path / "cache")
        assert got.features == sample.features, (bench, config, split)
    if bench == "cvlue":  # the paper's 100 candidates per visual-dialog question
        vd = _load(str(tmp_path / bench), "vd", "test", tmp_path / "cache")
        assert {len(o) for o in vd["answer_options"]} == {100}
        assert all(0 <= g < 100 for g in vd["gold_index"])  # every gold answer is among the candidates


def test_same_size_builds_identical_files(tmp_path):
    for root in ("a", "b"):
        build(("cii",), root=str(tmp_path / root), size=12)
    names = sorted(os.listdir(tmp_path / "a" / "cii" / "data"))
    assert names == sorted(os.listdir(tmp_path / "b" / "cii" / "data"))  # content-hashed parquet names


def test_full_sizes_are_the_papers():
    assert FULL_SIZES == {"punrebus": 1011, "cii": 800, "unpie": 500, "cvlue": 7169, "vulca": 12, "vulca_bench": 7408}


def test_bad_size_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="vulca: size must be 1..12"):
        build(("vulca",), root=str(tmp_path), size=13)
