"""Data-source resolution: env overrides, the bundled sample, prepared roots, hub fallback, clear errors."""

from __future__ import annotations

import os

import pytest

from hanyi.data import sources


@pytest.fixture
def env(monkeypatch, tmp_path):
    for var in ("HANYI_DATA_ROOT", "HANYI_CII_DATA", "HANYI_PUNREBUS_DATA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HANYI_CACHE_DIR", str(tmp_path / "cache"))
    return monkeypatch


def _prepare(path):
    path.mkdir(parents=True)
    (path / "README.md").write_text("---\nconfigs: []\n---\n")
    return str(path)


def test_sample_selects_bundled_dir(env):
    env.setenv("HANYI_DATA_ROOT", "sample")
    assert sources.resolve("punrebus") == f"{sources.SAMPLE_DIR}/punrebus"


def test_unset_hub_benchmark_uses_hub_id(env):
    assert sources.resolve("cii") == "m-a-p/CII-Bench"
    assert sources.resolve("unpie") == "jiwan-chung/VisualPun_UNPIE"


def test_unset_non_hub_benchmark_says_what_to_run(env):
    with pytest.raises(sources.DataNotFoundError, match=r"hanyi prepare punrebus.*HANYI_DATA_ROOT=sample"):
        sources.resolve("punrebus")


def test_default_root_is_where_prepare_writes(env, tmp_path):
    prepared = _prepare(tmp_path / "cache" / "data" / "vulca")
    assert sources.resolve("vulca") == prepared


def test_data_root_dir(env, tmp_path):
    env.setenv("HANYI_DATA_ROOT", str(tmp_path / "root"))
    prepared = _prepare(tmp_path / "root" / "cvlue")
    assert sources.resolve("cvlue") == prepared
    assert sources.resolve("cii") == "m-a-p/CII-Bench"  # not prepared there: hub
    with pytest.raises(sources.DataNotFoundError, match="request the CVLUE release|hanyi prepare vulca"):
        sources.resolve("vulca")


def test_per_benchmark_override_path_or_hub_id(env, tmp_path):
    env.setenv("HANYI_CII_DATA", "my-org/CII-Bench-mirror")
    assert sources.resolve("cii") == "my-org/CII-Bench-mirror"
    env.setenv("HANYI_CII_DATA", _prepare(tmp_path / "mine"))
    assert sources.resolve("cii") == str(tmp_path / "mine")
    env.setenv("HANYI_PUNREBUS_DATA", str(tmp_path))  # exists but not prepared
    with pytest.raises(sources.DataNotFoundError, match="not a prepared punrebus dataset"):
        sources.resolve("punrebus")


def test_each_task_folders_dataset_file_resolves_when_it_is_executed(env, tmp_path):
    """``dataset_path: !function dataset.path``: the harness executes ``dataset.py`` afresh for each tag, so the path
    follows the environment when a task is built; ``hanyi.data.sources`` has no module ``__getattr__``."""
    import importlib.util

    import hanyi

    def execute(folder):
        spec = importlib.util.spec_from_file_location("dataset", os.path.join(folder, "dataset.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # what lmms-eval's and lm-eval's import_function do
        return module.path

    folder = os.path.join(hanyi.TASKS_DIR, "punrebus")
    env.setenv("HANYI_DATA_ROOT", "sample")
    first = execute(folder)
    env.setenv("HANYI_PUNREBUS_DATA", _prepare(tmp_path / "p"))
    assert execute(folder) == str(tmp_path / "p") != first
    assert not hasattr(sources, "__getattr__")
    for root in (hanyi.TASKS_DIR, hanyi.LM_EVAL_TASKS_DIR):
        for bench in os.listdir(root):
            yaml_file = os.path.join(root, bench, "_default_template_yaml")
            if os.path.isfile(yaml_file):
                with open(yaml_file, encoding="utf-8") as f:
                    assert "dataset_path: !function dataset.path" in f.read(), yaml_file
                assert os.path.isfile(os.path.join(root, bench, "dataset.py"))


def test_describe_never_raises(env):
    assert sources.describe("punrebus").startswith("missing (run: hanyi prepare punrebus")


@pytest.mark.parametrize("bench", ["cii", "unpie", "vulca"])
def test_an_empty_data_root_is_one_clear_error_never_the_hub(env, tmp_path, bench):
    (tmp_path / "empty").mkdir()
    env.setenv("HANYI_DATA_ROOT", str(tmp_path / "empty"))
    with pytest.raises(sources.DataNotFoundError, match=r"HANYI_DATA_ROOT=.*empty' holds no prepared benchmark") as e:
        sources.resolve(bench)
    assert "\n" not in str(e.value)
    env.setenv("HANYI_DATA_ROOT", str(tmp_path / "missing"))
    with pytest.raises(sources.DataNotFoundError, match="does not exist"):
        sources.resolve(bench)


def test_a_hub_fallback_under_a_data_root_is_a_warning(env, tmp_path, caplog):
    env.setenv("HANYI_DATA_ROOT", str(tmp_path / "root"))
    _prepare(tmp_path / "root" / "cvlue")
    with caplog.at_level("WARNING", logger="hanyi.data.sources"):
        assert sources.resolve("unpie") == "jiwan-chung/VisualPun_UNPIE"
    assert "loading jiwan-chung/VisualPun_UNPIE from the hub instead" in caplog.text


def _copy_sample(tmp_path, bench="cii"):
    import shutil

    target = tmp_path / "root" / bench
    shutil.copytree(f"{sources.SAMPLE_DIR}/{bench}", target)
    return target


def _break(target, how):
    parquet = sorted((target / "data").glob("test-*.parquet"))[0]
    readme = target / "README.md"
    if how == "truncated":
        parquet.write_bytes(parquet.read_bytes()[:200])
        return parquet.name, "not a readable parquet file"
    if how == "empty":
        import pyarrow.parquet as pq

        table = pq.read_table(parquet)
        pq.write_table(table.slice(0, 0), parquet)
        return parquet.name, "0 rows"
    if how == "missing":
        parquet.unlink()
        return parquet.name, "which does not exist"
    readme.write_text(readme.read_text(encoding="utf-8").replace("  - split: dev", "  - split: [dev"), encoding="utf-8")
    return "README.md", "YAML header does not parse"


@pytest.mark.parametrize("how", ["truncated", "empty", "missing", "yaml"])
def test_a_broken_prepared_folder_is_one_line_naming_the_file(env, tmp_path, how):
    """a truncated or 0-row parquet, a README naming a missing file, or a broken YAML header gave
    lmms-eval's RetryError, naming nothing."""
    target = _copy_sample(tmp_path)
    env.setenv("HANYI_CII_DATA", str(target))
    assert sources.resolve("cii") == str(target)  # intact: accepted
    name, why = _break(target, how)
    with pytest.raises(sources.DataCorruptError) as err:
        sources.resolve("cii")
    message = str(err.value)
    assert "\n" not in message and name in message and why in message


def test_a_broken_prepared_folder_stops_the_task_at_load(env, tmp_path, task_manager):
    from lmms_eval.tasks import get_task_dict

    target = _copy_sample(tmp_path)
    env.setenv("HANYI_CII_DATA", str(target))
    _break(target, "truncated")
    with pytest.raises(Exception) as err:
        get_task_dict(["cii_none"], task_manager)
    chain, exc = [], err.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(e, sources.DataCorruptError) for e in chain)
    assert "RetryError" not in " ".join(type(e).__name__ for e in chain)
