"""hanyi.task_yaml: one reader of hanyi's task YAMLs for the lm-eval glue and the report (no ``!function`` run)."""

import os

import pytest

import hanyi
from hanyi import task_yaml
from hanyi.task_yaml import FunctionRef, read, resolve


def test_read_merges_includes_and_keeps_function_tags_unresolved():
    path = os.path.join(hanyi.TASKS_DIR, "cii", "cii_none.yaml")
    config = read(path)
    assert config["task"] == "cii_none" and "include" not in config
    assert isinstance(config["dataset_path"], FunctionRef)  # data source not touched: no data needed to read
    # from _table1_template_yaml, which includes _default_template_yaml (where dataset_path comes from)
    assert config["process_results"] == "utils.cii_table1_process_results"
    cot = read(os.path.join(hanyi.TASKS_DIR, "cii", "cii_cot.yaml"))
    assert cot["process_results"] == "utils.cii_process_results"  # from the included _default_template_yaml


def test_resolve_finds_the_package_module_beside_the_yaml_or_a_dotted_path():
    import hanyi.tasks.cii.utils as cii_utils
    import hanyi.tasks.vulca.aggregate as vulca_aggregate

    assert resolve("utils.cii_process_results", os.path.join(hanyi.TASKS_DIR, "cii")) is cii_utils.cii_process_results
    vulca = os.path.join(hanyi.TASKS_DIR, "vulca")
    assert resolve("aggregate.vulca_json_valid_rate", vulca) is vulca_aggregate.vulca_json_valid_rate
    assert resolve("hanyi.tasks.cii.utils.cii_acc", vulca) is cii_utils.cii_acc


def test_libyaml_reads_every_task_yaml_as_the_pure_python_reader_does():
    """the report read 117 task YAMLs with the pure-Python parser (0.56 s; libyaml 0.06 s)."""
    import glob
    import os

    import yaml

    from hanyi import LM_EVAL_TASKS_DIR, TASKS_DIR

    files = [
        f
        for root in (TASKS_DIR, LM_EVAL_TASKS_DIR)
        for f in glob.glob(os.path.join(root, "*", "*"))
        if f.endswith((".yaml", "_yaml"))
    ]
    assert len(files) > 100
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml: the pure-Python reader is used")
    assert task_yaml._Loader.__mro__[1] is yaml.CSafeLoader
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fast = yaml.load(text, Loader=task_yaml._Loader)  # noqa: S506 (safe loaders)
        pure = yaml.load(text, Loader=task_yaml._PureLoader)  # noqa: S506
        assert _shape(fast) == _shape(pure), path  # the same values, !function tags kept as references both ways


def _shape(value):
    """``value`` with each :class:`FunctionRef` marked, so a tag read as a plain string would not compare equal."""
    if isinstance(value, FunctionRef):
        return ("!function", str(value))
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return (type(value).__name__, value)
