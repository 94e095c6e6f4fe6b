"""benchmarks/served_cost.py's pairing check: the closest built-in to UNPIE grounding, measured beside its target."""

import os


def test_the_closer_built_in_is_a_known_case_of_full_scale(bench_script):
    """Its task is loaded by name like the other built-ins (case_tasks, builtin_folder read BUILTIN_TASK)."""
    sc = bench_script("served_cost")
    fs = sc.full_scale()
    assert sc.CLOSER == {"unpie_grounding": "ocrbench"} and set(sc.CLOSER_BASE) == set(sc.CLOSER.values())
    assert fs.case_tasks("ocrbench@4", {"ocrbench@4": "/data"}) == [{"task": "ocrbench", "dataset_path": "/data"}]
    assert os.path.isfile(os.path.join(fs.builtin_folder("ocrbench@4"), "ocrbench.yaml"))


def test_the_closer_rows_are_in_ocrbench_s_schema_and_score(tmp_path, bench_script):
    """lmms-eval's own ocrbench hooks read the synthetic rows: one picture, the question, a list of answers."""
    import datasets
    from lmms_eval.tasks.ocrbench import utils as ocr

    path = bench_script("served_cost").build_closer(str(tmp_path), "ocrbench", 3)
    assert os.path.exists(os.path.join(path, ".done"))
    files = [os.path.join(root, f) for root, _, names in os.walk(path) for f in names if f.endswith(".parquet")]
    rows = datasets.load_dataset("parquet", data_files=files, split="train")
    assert rows.num_rows == 3 and {"dataset", "question", "question_type", "answer", "image"} <= set(rows.column_names)
    doc = rows[1]
    assert ocr.ocrbench_doc_to_visual(doc)[0].mode == "RGB"
    assert ocr.ocrbench_doc_to_text(doc, {}) == doc["question"]
    assert ocr.ocrbench_process_results(doc, ["word 1"])["ocrbench_accuracy"]["score"] == 1
    assert ocr.ocrbench_process_results(doc, ["B"])["ocrbench_accuracy"]["score"] == 0


def test_hook_cost_empties_every_prompt_cache_it_names(bench_script):
    """benchmarks/hook_cost.py empties the tasks' prompt caches before each round (a served run is a fresh process):
    a renamed cache would be kept silently and its second round would time cache hits only."""
    import importlib

    for name, attr in bench_script("hook_cost").PROMPT_CACHES:
        assert callable(getattr(getattr(importlib.import_module(name), attr), "cache_clear", None)), (name, attr)


def test_a_tests_own_load_of_full_scale_leaves_served_costs_closer_built_ins_in_place(bench_script, monkeypatch):
    """served_cost.full_scale() adds the closer built-ins only to a full_scale it loads itself: the tests' loader
    registers a script only while its body runs, so a test that loaded full_scale first does not hide them."""
    import sys

    import tests.conftest

    monkeypatch.setattr(tests.conftest, "_BENCH_SCRIPTS", {})  # a first load in this process, whatever ran before
    monkeypatch.delitem(sys.modules, "hanyi_bench_full_scale", raising=False)
    fs = bench_script("full_scale")
    assert "hanyi_bench_full_scale" not in sys.modules and "full_scale" not in sys.modules
    served = bench_script("served_cost").full_scale()
    assert served is not fs and "ocrbench" in served.BUILTIN_TASK
