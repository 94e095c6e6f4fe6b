"""Host package ranges: the lock, the metadata bounds, `hanyi doctor` and the stop at task load."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from hanyi import doctor, versions

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, which the lock pins there
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pins(lock: str, python: str = "3.11") -> dict[str, str]:
    """``{package: version}`` of a uv lock file, for one Python (markers evaluated there, on Linux x86_64)."""
    env = {"python_full_version": f"{python}.0", "python_version": python, "sys_platform": "linux"}
    env |= {"platform_machine": "x86_64", "platform_system": "Linux"}
    pins = {}
    with open(os.path.join(ROOT, lock), encoding="utf-8") as f:
        for line in f:
            if not line[:1].isalpha():
                continue
            spec, _, marker = line.split(" \\")[0].partition(" ; ")
            if marker and not Marker(marker).evaluate(env):
                continue
            name, version = spec.split("==")
            pins[name] = version
    return pins


def _dependencies() -> dict[str, Requirement]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)["project"]
    reqs = meta["dependencies"] + [r for extra in meta["optional-dependencies"].values() for r in extra]
    return {Requirement(r).name: Requirement(r) for r in reqs}


def test_tested_releases_are_what_the_lock_pins_for_ci():
    pins = _pins("requirements/lock.txt")
    assert {p: pins.get(p) for p in versions.TESTED if p != "torch"} == {
        p: v for p, v in versions.TESTED.items() if p != "torch"
    }
    assert "torch" not in pins  # the CPU wheel, installed on its own from constraints.txt
    with open(os.path.join(ROOT, "constraints.txt"), encoding="utf-8") as f:
        assert f"torch=={versions.TESTED['torch']}" in f.read().split()


@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12"])
def test_the_documented_install_pins_the_tested_host_releases(python):
    """`pip install -c constraints.txt .` (the README's install) gave filelock and transformers releases newer than the
    tested ones, so `hanyi doctor` said UNTESTED right after it; constraints.txt now pins what the lock pins."""
    env = {"python_version": python, "python_full_version": f"{python}.0"}
    with open(os.path.join(ROOT, "constraints.txt"), encoding="utf-8") as f:
        lines = [line.split("#")[0].strip() for line in f]
    pins = {}
    for line in filter(None, lines):
        spec, _, marker = line.partition(";")
        if not marker or Marker(marker).evaluate(env):
            name, version = spec.strip().split("==")
            pins[name] = version
    locked = _pins("requirements/lock.txt", python)
    major, minor = map(int, python.split("."))
    for package in ("filelock", "transformers", "datasets"):
        assert pins[package] == locked[package] == versions.release_tested(package, (major, minor)), package


def test_the_lock_covers_python_3_10_to_3_12_and_holds_no_cuda_wheel():
    for python in ("3.10", "3.11", "3.12"):
        pins = _pins("requirements/lock.txt", python)
        assert {"lmms-eval", "lm-eval", "filelock", "transformers", "datasets", "pytest"} <= set(pins), python
        assert not [p for p in pins if p.startswith(("nvidia-", "triton", "torch"))], python
        assert pins["filelock"] in SpecifierSet("<4.3"), python
    with open(os.path.join(ROOT, "requirements/lock.txt"), encoding="utf-8") as f:
        entries = re.split(r"\n(?=[A-Za-z])", f.read().split("\n", 2)[2])  # past the two header lines
    assert len(entries) > 150 and all("==" in e and "--hash=sha256:" in e for e in entries)


def test_every_known_bad_range_is_excluded_by_the_package_metadata():
    deps = _dependencies()
    for bad in versions.KNOWN_BAD:
        spec = deps[bad.package].specifier
        edge = SpecifierSet(bad.specifier)
        probes = [v for v in ("3.15.1", "3.15.2", "4.2.12", "4.3.0", "4.3.1", "5.0.0") if v in edge]
        assert probes and not [v for v in probes if v in spec], (bad, str(spec))
    assert "4.2.12" in deps["filelock"].specifier and "3.15.2" in deps["filelock"].specifier


def test_no_blanket_upper_bounds_in_the_metadata():
    """Only a release known to break gets an upper bound (filelock); pins (==) are the harness releases."""
    upper = {n for n, r in _dependencies().items() for s in r.specifier if s.operator in ("<", "<=", "~=")}
    assert upper == {b.package for b in versions.KNOWN_BAD if b.specifier.startswith(">")} == {"filelock"}


def test_the_oldest_transformers_is_declared_once_and_locked():
    assert f">={versions.TRANSFORMERS_OLDEST}" in str(_dependencies()["transformers"].specifier)
    with open(os.path.join(ROOT, "requirements/oldest.in"), encoding="utf-8") as f:
        assert f"transformers=={versions.TRANSFORMERS_OLDEST}" in f.read().split()
    assert _pins("requirements/lock-oldest.txt")["transformers"] == versions.TRANSFORMERS_OLDEST


@pytest.mark.parametrize(
    "package, installed, state",
    [
        ("filelock", "4.3.1", "bad"),
        ("filelock", "3.15.1", "bad"),
        ("filelock", "4.2.12", "ok"),
        ("filelock", "4.1.0", "untested"),
        ("transformers", "4.57.6", "unsupported"),
        ("transformers", "5.0.0", "untested"),
        ("lmms-eval", "0.7.4", "unsupported"),
        ("torch", "2.13.0+cpu", "ok"),
        ("lm-eval", None, "missing"),
    ],
)
def test_status_of_a_release(package, installed, state):
    got = versions.status(package, installed)
    assert got.state == state
    assert (got.fix is not None) == (state in ("bad", "unsupported"))
    assert "\n" not in got.line() and (got.fix is None or got.fix in got.line())


def _fake_installed(monkeypatch, **fake):
    real = versions.installed_version
    monkeypatch.setattr(versions, "installed_version", lambda p: fake.get(p.replace("-", "_"), real(p)))


def test_doctor_names_a_known_bad_filelock_and_its_fix(monkeypatch, capsys):
    _fake_installed(monkeypatch, filelock="4.3.1")
    monkeypatch.setattr(doctor, "_quiet_hub_when_offline", lambda: None)
    from hanyi import backbones

    monkeypatch.setattr(backbones, "check_all", lambda names=None: [])
    assert doctor.main_doctor([]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "filelock" in ln]
    assert lines == [
        "BAD     filelock 4.3.1: lmms_eval/evaluator.py:134 (_enable_reentrant_filelocks) imports filelock._api, "
        "which 4.3 removed; fix: pip install 'filelock>=3.15.2,<4.3'"
    ]
    assert doctor.main_doctor(["--json"]) == 1
    found = {v["package"]: v for v in json.loads(capsys.readouterr().out)["versions"]}
    assert found["filelock"]["state"] == "bad" and found["filelock"]["fix"] == "pip install 'filelock>=3.15.2,<4.3'"
    assert found["lmms-eval"]["state"] == "ok"


def test_fail_fast_is_one_line_naming_package_version_and_fix(monkeypatch):
    _fake_installed(monkeypatch, filelock="4.3.1")
    with pytest.raises(SystemExit) as stop:
        versions.fail_fast()
    message = str(stop.value)
    assert "\n" not in message and "filelock 4.3.1" in message and "pip install 'filelock>=3.15.2,<4.3'" in message
    _fake_installed(monkeypatch, filelock="4.2.12", transformers="4.57.6")  # unsupported, not known to break: no stop
    versions.fail_fast()


@pytest.mark.slow
def test_lmms_eval_stops_at_task_load_with_a_known_bad_filelock(tmp_path):
    """filelock 4.3.1's metadata first on the path (the module itself stays 4.2.12): one line, before any model."""
    fake = tmp_path / "site" / "filelock-4.3.1.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: filelock\nVersion: 4.3.1\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "HANYI_DATA_ROOT": "sample"}
    lmms_eval = os.path.join(os.path.dirname(sys.executable), "lmms-eval")
    cmd = [lmms_eval, "--model", "replay", "--model_args", f"path={tmp_path / 'none.jsonl'},on_missing=empty"]
    cmd += ["--tasks", "cii", "--output_path", str(tmp_path / "out")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("hanyi: cannot run with filelock 4.3.1") and "pip install 'filelock>=3.15.2,<4.3'" in last
    assert "Traceback" not in proc.stderr
    assert "none.jsonl" not in proc.stderr  # replay was never created (it would fail on the missing file)
    assert not (tmp_path / "out").exists()
