"""Task discovery: the start-up hook, the TaskManager patch, its opt-out and stand-down, and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

import hanyi
from hanyi import _autohook
from hanyi.host.discovery import patch_lmms_eval_tasks_module, patch_task_manager, with_hanyi_tasks


class _FakeTaskManager:
    def __init__(self, verbosity="INFO", include_path=None, include_defaults=True, model_name=None):
        self.args = (verbosity, include_path, include_defaults, model_name)


def test_patch_appends_tasks_dir_after_user_paths_once():
    cls = type("TM", (_FakeTaskManager,), {})
    assert patch_task_manager(cls, "/pkg/tasks") is True
    assert patch_task_manager(cls, "/pkg/tasks") is False  # idempotent
    tm = cls("DEBUG", "/user/tasks", False, "llava_hf")
    assert tm.args == ("DEBUG", ["/user/tasks", "/pkg/tasks"], False, "llava_hf")
    assert cls(include_path=["/pkg/tasks/"]).args[1] == ["/pkg/tasks/"]


def test_with_hanyi_tasks_does_not_mutate_caller_list():
    paths = ["/a"]
    assert with_hanyi_tasks(paths, "/b") == ["/a", "/b"]
    assert paths == ["/a"]


def test_stands_down_when_upstream_reads_plugins():
    cls = type("TM", (_FakeTaskManager,), {})
    module = types.SimpleNamespace(TaskManager=cls, TASK_ENTRY_POINT_GROUP="lmms_eval.tasks")
    assert patch_lmms_eval_tasks_module(module) is False
    assert cls().args[1] is None


def test_hook_patched_lmms_eval_in_this_process():
    import lmms_eval.tasks

    assert getattr(lmms_eval.tasks.TaskManager, "_hanyi_tasks_dir_patched", False)
    tm = lmms_eval.tasks.TaskManager("WARNING", include_defaults=False)
    assert "punrebus_matching" in tm.all_tasks


def test_install_refuses_once_lmms_eval_tasks_is_imported():
    import lmms_eval.tasks  # noqa: F401

    assert _autohook.install() is False


def _hook_installed(env_extra: dict) -> bool:
    env = {**os.environ, **env_extra}
    code = "import sys; print(any(type(f).__name__ == '_TaskManagerHook' for f in sys.meta_path))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


@pytest.mark.parametrize(("value", "installed"), [("", True), ("0", True), ("1", False), ("true", False)])
def test_opt_out_env_var(value, installed):
    assert _hook_installed({_autohook.OPT_OUT_ENV: value}) is installed


_PENDING = """
import sys
{hide}
import lmms_eval.tasks
hooks = [f for f in sys.meta_path if type(f).__name__ == "_TaskManagerHook"]
print(sorted(hooks[0].pending) if hooks else "gone")
"""


@pytest.mark.parametrize(
    ("hide", "expected"),
    [
        ("", "['lm_eval._cli.harness', 'lm_eval.tasks']"),  # lm-eval installed: it stays, waiting for lm-eval
        ("sys.modules['lm_eval'] = None  # as if lm-eval were not installed", "gone"),
    ],
)
def test_finder_leaves_meta_path_when_nothing_is_left_to_wait_for(hide, expected):
    """docs/dev/discovery.md said the finder removes itself when lmms_eval.tasks loads; it stayed in
    every lmms-eval process. Now it leaves where lm-eval is absent, and the doc says it stays where lm-eval is here."""
    pytest.importorskip("lm_eval")
    env = {k: v for k, v in os.environ.items() if k != _autohook.OPT_OUT_ENV}
    code = _PENDING.format(hide=hide)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == expected
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "dev", "discovery.md"), encoding="utf-8") as f:
        doc = " ".join(f.read().split())
    assert "When lmms-eval imports that module, the finder removes itself" not in doc
    assert "Where lm-eval is not installed, that is the moment `lmms_eval.tasks` loads" in doc


# --- the real CLI, in a subprocess, exactly as a user runs it -------------------------------------------------------

REPLAY = [
    {"task": "punrebus_matching", "key": {"image_id": "mashangfenghou_1.jpg"}, "response": "C. Prestige, Promotion"},
    {"task": "punrebus_matching", "key": {"image_id": "mashangfenghou_2.jpg"}, "response": "A. Longevity"},
    {"task": "punrebus_matching", "key": {"image_id": "jiqingshuangyu_1.jpg"}, "response": "**B**"},
]


def _run_cli(tmp_path, env_extra: dict, extra_args=()):
    replay_file = tmp_path / "replay.jsonl"
    replay_file.write_text("\n".join(json.dumps(r) for r in REPLAY) + "\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    lmms_eval = os.path.join(os.path.dirname(sys.executable), "lmms-eval")
    cmd = [
        lmms_eval,
        "--model",
        "replay",
        "--model_args",
        f"path={replay_file},on_missing=empty",
        "--tasks",
        "punrebus_matching",
        "--output_path",
        str(out_dir),
        "--log_samples",
        "--verbosity",
        "DEBUG",
        *extra_args,
    ]
    proc = subprocess.run(cmd, env={**os.environ, **env_extra}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [p for p in out_dir.rglob("*_results.json")]
    assert len(results) == 1, f"no results file; stderr tail: {proc.stderr[-2000:]}"
    data = json.loads(results[0].read_text())
    samples = list(out_dir.rglob("*_samples_punrebus_matching.jsonl"))
    return data, samples, proc


@pytest.mark.slow
def test_plain_lmms_eval_cli_finds_hanyi_tasks_and_replay_model(tmp_path):
    data, samples, _ = _run_cli(tmp_path, {})
    res = data["results"]["punrebus_matching"]
    n = data["n-samples"]["punrebus_matching"]["effective"]
    # mashangfenghou_1 "C" correct; mashangfenghou_2 "A" wrong (gold C); jiqingshuangyu_1 "**B**" unparsed by the
    # paper's first-character rule but B (correct) for the robust parser; every other doc answers "" (unparsed)
    assert res["accuracy,none"] == pytest.approx(0.5)
    assert "parse_rate,none" not in res  # hanyi report computes it from the sample log
    assert res["accuracy_robust,none"] == pytest.approx(2 / n)
    assert len(samples) == 1 and len(samples[0].read_text().splitlines()) == n >= 3


@pytest.mark.slow
def test_include_path_works_with_the_hook_off(tmp_path):
    data, _, _ = _run_cli(tmp_path, {_autohook.OPT_OUT_ENV: "1"}, ("--include_path", hanyi.TASKS_DIR))
    assert data["results"]["punrebus_matching"]["accuracy,none"] == pytest.approx(0.5)


@pytest.mark.slow
def test_lmms_eval_plugins_env_works(tmp_path):
    data, _, _ = _run_cli(tmp_path, {"LMMS_EVAL_PLUGINS": "hanyi"})
    assert data["results"]["punrebus_matching"]["accuracy,none"] == pytest.approx(0.5)


def test_upstream_patch_applies_finds_our_tasks_and_makes_the_hook_stand_down(tmp_path):
    """docs/upstream/0001 applies to the installed lmms-eval; with it, our entry point is read and we stand down."""
    import importlib.util
    import shutil

    import lmms_eval

    root = os.path.dirname(lmms_eval.__file__)
    work = tmp_path / "lmms_eval"
    (work / "tasks").mkdir(parents=True)
    shutil.copy(os.path.join(root, "__main__.py"), work / "__main__.py")
    shutil.copy(os.path.join(root, "tasks", "__init__.py"), work / "tasks" / "__init__.py")
    patch_file = os.path.join(
        os.path.dirname(__file__), "..", "docs", "upstream", "0001-read-task-plugins-before-indexing.patch"
    )
    subprocess.run(["patch", "-p1", "-s", "-i", os.path.abspath(patch_file)], cwd=tmp_path, check=True)
    spec = importlib.util.spec_from_file_location("patched_lmms_eval_tasks", work / "tasks" / "__init__.py")
    patched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patched)
    assert hanyi.TASKS_DIR in patched.entry_point_task_dirs()
    assert patch_lmms_eval_tasks_module(patched) is False
    main_src = (work / "__main__.py").read_text()
    assert main_src.index('os.environ.get("LMMS_EVAL_PLUGINS"') < main_src.index("task_manager = TaskManager(")


@pytest.mark.slow
def test_hanyi_eval_registers_the_tasks_itself(tmp_path):
    """``hanyi eval`` (explicit route) works with the start-up hook off and passes lmms-eval's flags through."""
    replay_file = tmp_path / "replay.jsonl"
    replay_file.write_text("\n".join(json.dumps(r) for r in REPLAY) + "\n", encoding="utf-8")
    hanyi_cli = os.path.join(os.path.dirname(sys.executable), "hanyi")
    cmd = [hanyi_cli, "eval", "--model", "replay", "--model_args", f"path={replay_file},on_missing=empty",
           "--tasks", "punrebus_matching", "--output_path", str(tmp_path / "out"), "--verbosity", "DEBUG"]  # fmt: skip
    env = {**os.environ, _autohook.OPT_OUT_ENV: "1"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (results,) = list((tmp_path / "out").rglob("*_results.json"))
    assert json.loads(results.read_text())["results"]["punrebus_matching"]["accuracy,none"] == pytest.approx(0.5)


def test_with_the_hook_off_a_python_start_imports_nothing_of_hanyi():
    """the .pth imported hanyi and hanyi._autohook at every start, HANYI_NO_AUTOHOOK=1 or not."""
    code = "import sys; print(sorted(m for m in sys.modules if m == 'hanyi' or m.startswith('hanyi.')))"
    env = {k: v for k, v in os.environ.items() if k != _autohook.OPT_OUT_ENV}
    off = subprocess.run(
        [sys.executable, "-c", code], env={**env, _autohook.OPT_OUT_ENV: "1"}, capture_output=True, text=True
    )
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert off.stdout.strip() == "[]", off.stderr
    assert "hanyi._autohook" in on.stdout
