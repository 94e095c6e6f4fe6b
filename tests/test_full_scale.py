"""benchmarks/full_scale.py: runs as a script next to benchmarks/multiprocess_parity.py, and its N-process comparison."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "benchmarks", "full_scale.py")


def _full_scale():
    spec = importlib.util.spec_from_file_location("hanyi_bench_full_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def test_launch_helpers_come_from_benchmarks_multiprocess_under_their_own_name():
    fs = _full_scale()
    mp = fs.launch_helpers()
    assert mp.__file__ == os.path.join(REPO, "benchmarks", "multiprocess_parity.py")
    assert sys.modules.get("multiprocess") is not mp
    assert mp.launch_command("torchrun", 2)[1:3] == ["-m", "torch.distributed.run"]


def test_processes_env_points_the_launch_at_the_full_size_data(monkeypatch):
    fs = _full_scale()
    monkeypatch.setenv("LMMS_EVAL_DATASETS_CACHE", "/tmp/hf-cache")
    env = fs.processes_env("cii", {"cii": "/data/cii-800"})
    assert env == {"HANYI_CII_DATA": "/data/cii-800", "LMMS_EVAL_DATASETS_CACHE": "/tmp/hf-cache"}


def test_compare_processes_reports_differences_lost_and_duplicated_samples():
    fs = _full_scale()
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
