"""benchmarks/served_cost.py's pairing check: the closest built-in to UNPIE grounding, measured beside its target."""

import importlib.util
import os

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "served_cost.py")


def _served_cost():
    spec = importlib.util.spec_from_file_location("hanyi_bench_served_cost_pairing", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_closer_built_in_is_a_known_case_of_full_scale():
    """Its task is loaded by name like the other built-ins (case_tasks, builtin_folder read BUILTIN_TASK)."""
    sc = _served_cost()
    fs = sc.full_scale()
    assert sc.CLOSER == {"unpie_grounding": "ocrbench"} and set(sc.CLOSER_BASE) == set(sc.CLOSER.values())
    assert fs.case_tasks("ocrbench@4", {"ocrbench@4": "/data"}) == [{"task": "ocrbench", "dataset_path": "/data"}]
    assert os.path.isfile(os.path.join(fs.builtin_folder("ocrbench@4"), "ocrbench.yaml"))


def test_the_closer_rows_are_in_ocrbench_s_schema_and_score(tmp_path):
    """lmms-eval's own ocrbench hooks read the synthetic rows: one picture, the question, a list of answers."""
    import datasets
    from lmms_eval.tasks.ocrbench import utils as ocr

    path = _served_cost().build_closer(str(tmp_path), "ocrbench", 3)
    assert os.path.exists(os.path.join(path, ".done"))
    files = [os.path.join(root, f) for root, _, names in os.walk(path) for f in names if f.endswith(".parquet")]
    rows = datasets.load_dataset("parquet", data_files=files, split="train")
    assert rows.num_rows == 3 and {"dataset", "question", "question_type", "answer", "image"} <= set(rows.column_names)
    doc = rows[1]
    assert ocr.ocrbench_doc_to_visual(doc)[0].mode == "RGB"
    assert ocr.ocrbench_doc_to_text(doc, {}) == doc["question"]
    assert ocr.ocrbench_process_results(doc, ["word 1"])["ocrbench_accuracy"]["score"] == 1
    assert ocr.ocrbench_process_results(doc, ["B"])["ocrbench_accuracy"]["score"] == 0


def test_hook_cost_empties_every_prompt_cache_it_names():
    """benchmarks/hook_cost.py empties the tasks' prompt caches before each round (a served run is a fresh process):
    a renamed cache would be kept silently and its second round would time cache hits only."""
    import importlib

    spec = importlib.util.spec_from_file_location("hanyi_bench_hook_cost", SCRIPT.replace("served_cost", "hook_cost"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, attr in module.PROMPT_CACHES:
        assert callable(getattr(getattr(importlib.import_module(name), attr), "cache_clear", None)), (name, attr)
