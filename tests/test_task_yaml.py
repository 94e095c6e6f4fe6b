"""hanyi.task_yaml: one reader of hanyi's task YAMLs for the lm-eval glue and the report (no ``!function`` run)."""

import os

import hanyi
from hanyi.task_yaml import FunctionRef, read, resolve


def test_read_merges_includes_and_keeps_function_tags_unresolved():
    path = os.path.join(hanyi.TASKS_DIR, "cii", "cii_none.yaml")
    config = read(path)
    assert config["task"] == "cii_none" and "include" not in config
    assert isinstance(config["dataset_path"], FunctionRef)  # data source not touched: no data needed to read
    assert config["process_results"] == "utils.cii_process_results"  # from the included _default_template_yaml


def test_resolve_finds_the_package_module_beside_the_yaml_or_a_dotted_path():
    import hanyi.tasks.cii.utils as cii_utils
    import hanyi.tasks.vulca.aggregate as vulca_aggregate

    assert resolve("utils.cii_process_results", os.path.join(hanyi.TASKS_DIR, "cii")) is cii_utils.cii_process_results
    vulca = os.path.join(hanyi.TASKS_DIR, "vulca")
    assert resolve("aggregate.vulca_aggregate", vulca) is vulca_aggregate.vulca_aggregate
    assert resolve("hanyi.tasks.cii.utils.cii_acc", vulca) is cii_utils.cii_acc
