"""Data-source resolution: env overrides, the bundled sample, prepared roots, hub fallback, clear errors."""

from __future__ import annotations

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


def test_module_attribute_is_resolved_on_every_access(env, tmp_path):
    env.setenv("HANYI_DATA_ROOT", "sample")
    first = sources.punrebus
    env.setenv("HANYI_PUNREBUS_DATA", _prepare(tmp_path / "p"))
    assert sources.punrebus != first
    with pytest.raises(AttributeError):
        sources.not_a_benchmark  # noqa: B018


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
