"""benchmarks/full_scale.py: runs as a script next to benchmarks/multiprocess_parity.py, and its N-process comparison."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "benchmarks", "full_scale.py")


def test_script_folder_does_not_shadow_the_multiprocess_package():
    # `python benchmarks/full_scale.py` puts benchmarks/ first on sys.path, where multiprocess.py stood in for the
    # `multiprocess` package that `datasets` imports: the script died with "'multiprocess' is not a package".
    code = (
        "import sys, runpy; sys.path.insert(0, sys.argv[1]); runpy.run_path(sys.argv[2], run_name='fs'); "
        "import multiprocess.pool, datasets; print(multiprocess.__file__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, os.path.dirname(SCRIPT), SCRIPT], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "benchmarks" not in proc.stdout


def test_launch_helpers_come_from_benchmarks_multiprocess_under_their_own_name(bench_script):
    fs = bench_script("full_scale")
    mp = fs.launch_helpers()
    assert mp.__file__ == os.path.join(REPO, "benchmarks", "multiprocess_parity.py")
    assert sys.modules.get("multiprocess") is not mp
    assert mp.launch_command("torchrun", 2)[1:3] == ["-m", "torch.distributed.run"]


def test_processes_env_points_the_launch_at_the_full_size_data(monkeypatch, bench_script):
    fs = bench_script("full_scale")
    monkeypatch.setenv("LMMS_EVAL_DATASETS_CACHE", "/tmp/hf-cache")
    env = fs.processes_env("cii", {"cii": "/data/cii-800"})
    assert env == {"HANYI_CII_DATA": "/data/cii-800", "LMMS_EVAL_DATASETS_CACHE": "/tmp/hf-cache"}


def test_compare_processes_reports_differences_lost_and_duplicated_samples(bench_script):
    fs = bench_script("full_scale")
    one = ({"cii_none": {"acc,none": 0.6, "miss_rate,none": 0.1}}, {"cii_none": [0, 1, 2]}, 30.0)
    same = fs.compare_processes(
        one, ({"cii_none": {"acc,none": 0.6, "miss_rate,none": 0.1}}, {"cii_none": [0, 1, 2]}, 40.0)
    )
    assert same == {
        "one_s": 30.0,
        "many_s": 40.0,
        "identical": True,
        "differences": [],
        "lost": 0,
        "dupes": 0,
        "samples": 3,
    }
    other = fs.compare_processes(one, ({"cii_none": {"acc,none": 0.5}}, {"cii_none": [0, 0, 1]}, 41.0))
    assert not other["identical"]
    assert other["differences"] == ["cii_none/acc,none: 0.6 != 0.5", "cii_none/miss_rate,none: 0.1 != '<absent>'"]
    assert (other["lost"], other["dupes"], other["samples"]) == (1, 1, 3)


def test_slope_is_the_least_squares_line_over_the_fastest_run_at_each_size(bench_script):
    fs = bench_script("full_scale")
    assert fs.least_squares([(100, 1.5), (200, 2.5), (400, 4.5)]) == (0.01, 0.5)
    # round 0 ran at 100 and 400 docs, round 1 too, slower at 400 (noise only adds time): the fastest at each size
    # gives 1.5 s and 4.5 s, a slope of 10 s per 1,000 docs; each round alone gives its own slope for the spread
    runs = [
        {"round": 0, "docs": 100, "evaluate_s": 1.5},
        {"round": 0, "docs": 400, "evaluate_s": 4.5},
        {"round": 1, "docs": 100, "evaluate_s": 2.0},
        {"round": 1, "docs": 400, "evaluate_s": 5.9},
    ]
    s = fs.slope_summary(runs)
    assert round(s["per_1k"], 9) == 10.0 and round(s["fixed_s"], 9) == 0.5
    assert [round(x, 9) for x in s["rounds_per_1k"]] == [10.0, 13.0]
    assert s["whole_per_1k"] == 1000 * 4.5 / 400 and s["sizes"] == [100, 400]
    # a built-in with half the marginal cost and a larger fixed cost: slope ratio 2, whole-run ratio below it
    builtin = fs.slope_summary(
        [{"round": 0, "docs": 100, "evaluate_s": 2.0}, {"round": 0, "docs": 400, "evaluate_s": 3.5},
         {"round": 1, "docs": 100, "evaluate_s": 2.0}, {"round": 1, "docs": 400, "evaluate_s": 3.5}]
    )  # fmt: skip
    r = fs.slope_ratio(s, builtin)
    assert round(r["slope"], 9) == 2.0 and [round(x, 9) for x in r["rounds"]] == [2.0, 2.6]
    assert round(r["whole"], 9) == round(4.5 / 3.5, 9)
    with pytest.raises(ValueError):
        fs.least_squares([(100, 1.0), (100, 2.0)])


def test_slope_cases_pair_ours_with_the_built_ins_at_each_size(bench_script):
    fs = bench_script("full_scale")
    cases = fs.slope_cases([1, 4], only={"cii", "mmstar"})
    assert cases == {"mcq": [("cii@800", "cii", 800), ("mmstar@800", "mmstar", 800), ("cii@3200", "cii", 3200),
                             ("mmstar@3200", "mmstar", 3200)]}  # fmt: skip
    assert fs.slope_cases([1, 4], only={"cii"}) == {}  # nothing to compare with
    assert fs.case_bench("cvlue_vqa@700") == "cvlue" and fs.case_tasks("cvlue_vqa@700", {}) == ["cvlue_vqa"]
    assert fs.case_tasks("mmstar@800", {"mmstar@800": "/d"}) == [{"task": "mmstar", "dataset_path": "/d"}]


def test_each_judged_pair_decodes_the_same_kind_of_image_on_both_sides(tmp_path, bench_script):
    """The replay model decodes every image: a built-in with PNGs against Pun Rebus's JPEGs (3.5 times the decode at
    48 px) would count a codec as task code. Each target's built-in gets the image format of the case it judges."""
    import datasets

    fs = bench_script("full_scale")
    assert fs.SLOPE_TARGET["punrebus_matching"] == "mmstar_jpeg" and fs.SLOPE_TARGET["cii"] == "mmstar"
    assert fs.case_tasks("mmstar_jpeg@8", {"mmstar_jpeg@8": "/d"}) == [{"task": "mmstar", "dataset_path": "/d"}]
    assert fs.builtin_folder("mmstar_jpeg@8") == fs.builtin_folder("mmstar@8")
    formats = {}
    for name in ("mmstar", "mmstar_jpeg"):
        path = fs.build_builtin_one(str(tmp_path), name, 4)
        split = datasets.load_dataset(path, "default", split="val", cache_dir=str(tmp_path / "c"))
        formats[name] = {
            split.cast_column("image", datasets.Image(decode=False))[i]["image"]["bytes"][:3] for i in range(4)
        }
        assert sorted(split.column_names) == sorted(
            ["index", "question", "image", "answer", "category", "l2_category", "meta_info", "bench"]
        )
    assert formats == {"mmstar": {b"\x89PN"}, "mmstar_jpeg": {b"\xff\xd8\xff"}}


def test_help_is_fast_and_imports_no_harness():
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", SCRIPT, "--help"], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert proc.returncode == 0 and "--slope-scales" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert not {"lmms_eval", "torch", "datasets", "hanyi.data"} & imported


def test_ii_bench_reads_cii_benchs_own_rows_so_the_pair_compares_task_code(tmp_path, bench_script):
    """The cii / ii_bench slope pair: both sides decode the same 19 fields and pictures (ii_bench adds its target
    column, ``answers``), in the order cii_none reads them (test, then dev)."""
    import datasets

    from hanyi.data.build_samples import build_full

    fs = bench_script("full_scale")
    rows = fs.ii_bench_rows_of_cii(str(tmp_path), 40)
    cii = build_full(("cii",), str(tmp_path), {"cii": 40})["cii"]
    ours = datasets.load_dataset(
        "parquet", data_files={"t": [os.path.join(cii, "data", f"{s}-*.parquet") for s in ("test", "dev")]}
    )["t"]
    assert rows.column_names == [*ours.column_names, "answers"]
    assert rows.remove_columns("answers").to_list() == ours.to_list()
    assert rows["answers"] == ours["answer"]
    assert [r["id"].split("-")[0] for r in rows][-1] == "dev"


def test_cpu_seconds_slope_is_judged_beside_the_wall_one_on_the_same_rows_pair(bench_script):
    fs = bench_script("full_scale")
    assert fs.SAME_ROWS_BOUND == {("cii", "ii_bench"): 1.10}
    assert ("cii", "ii_bench") in fs.RELEASE_SLOPES  # still named by the slope rule; judged against the fixed bound
