"""Shared fixtures: offline environment, one lmms-eval TaskManager, the tiny LLaVA, and evaluator runs.

lmms-eval's import costs ~25 s, so every test module shares this process's evaluator. Benchmarks add their own
end-to-end checks through :func:`evaluate` / :func:`replay` (a replay-model run of their tasks) and read the one
shared tiny-LLaVA run of all five benchmark groups from the ``llava_run`` fixture.
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest

_SESSION_TMP = tempfile.mkdtemp(prefix="hanyi-tests-")
os.environ.update(
    HF_HUB_OFFLINE="1",
    HF_DATASETS_OFFLINE="1",
    TRANSFORMERS_OFFLINE="1",
    TOKENIZERS_PARALLELISM="false",
    HANYI_DATA_ROOT="sample",
    HANYI_CACHE_DIR=os.path.join(_SESSION_TMP, "hanyi-cache"),
    LMMS_EVAL_DATASETS_CACHE=os.path.join(_SESSION_TMP, "datasets"),
    HF_DATASETS_CACHE=os.path.join(_SESSION_TMP, "datasets"),
)
for _var in ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL", "HANYI_NO_AUTOHOOK"):
    os.environ.pop(_var, None)

#: The five benchmark groups, run together once per session with the tiny LLaVA (the main job's task list).
DEMO_GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")


@pytest.fixture(autouse=True)
def _hanyi_log_level():
    """Restore the ``hanyi`` logger's level after each test: ``hanyi tasks --count`` run in-process lowers it to ERROR
    for its own output, and a later test that checks a warning would then see nothing (order-dependent)."""
    import logging

    logger = logging.getLogger("hanyi")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture(scope="session")
def session_tmp() -> str:
    return _SESSION_TMP


@pytest.fixture(scope="session")
def task_manager():
    """A TaskManager over hanyi's tasks only (0.07 s instead of ~20 s with lmms-eval's 2,000 built-ins)."""
    from lmms_eval.tasks import TaskManager

    import hanyi

    return TaskManager("WARNING", include_path=hanyi.TASKS_DIR, include_defaults=False)


@pytest.fixture(scope="session")
def tiny_llava(session_tmp) -> str:
    from hanyi.models.tiny_llava import build_tiny_llava

    return build_tiny_llava(os.path.join(session_tmp, "tiny_llava"))


class EvaluationFailed(AssertionError):
    pass


@pytest.fixture(scope="session")
def evaluate(task_manager):
    """``evaluate(tasks, model, **simple_evaluate_kwargs) -> results`` through the real lmms-eval evaluator.

    Fails loudly: unlike the CLI without ``--verbosity DEBUG``, exceptions propagate, and a task that produced
    no results is an error.
    """
    from lmms_eval import evaluator

    def run(tasks, model, **kwargs):
        kwargs.setdefault("log_samples", True)
        kwargs.setdefault("bootstrap_iters", 0)
        results = evaluator.simple_evaluate(model=model, tasks=list(tasks), task_manager=task_manager, **kwargs)
        if not results or not results.get("results"):
            raise EvaluationFailed(f"lmms-eval returned no results for {tasks}")
        return results

    return run


@pytest.fixture(scope="session")
def replay(evaluate, session_tmp):
    """``replay(records, tasks, **kwargs)``: write ``records`` to a JSONL file and evaluate with ``--model replay``."""
    from hanyi.models.replay import ReplayModel

    counter = iter(range(10**6))

    def run(records, tasks, on_missing="error", **kwargs):
        path = os.path.join(session_tmp, f"replay-{next(counter)}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return evaluate(tasks, ReplayModel(path=path, on_missing=on_missing), **kwargs)

    return run


@pytest.fixture(scope="session")
def fake_judge():
    """``serve_fake_judge(**opts)`` from tests/judge_server.py: a local OpenAI-compatible judge on 127.0.0.1."""
    import importlib.util
    import sys

    name = "hanyi_tests_judge_server"  # the same module object tests/metrics/judge/helpers.py loads
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__), "judge_server.py"))
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name].serve_fake_judge


_BENCH_SCRIPTS: dict = {}


def load_bench_script(name: str):
    """``benchmarks/<name>.py`` as a module, loaded by path once per session under the key ``hanyi_bench_<name>``.

    Not under the bare name: a module registered as ``full_scale`` would pass for an installed package of that name
    (tests/test_benchmark_commands.py checks that no script shadows one). The module stands in ``sys.modules`` only
    while its body runs, which a dataclass under ``from __future__ import annotations`` needs (upstream_venvs.py);
    left there, it would be the instance a script's own loader reuses (``served_cost.full_scale()`` adds its built-ins
    only to a module it loads itself), so a test's load would change what another test sees. One instance serves
    every test: tests change a script's globals only through ``monkeypatch``, which restores them.
    """
    import importlib.util
    import sys

    if name not in _BENCH_SCRIPTS:
        key = f"hanyi_bench_{name}"
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", f"{name}.py")
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        before = sys.modules.get(key)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        finally:
            if before is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = before
        _BENCH_SCRIPTS[name] = module
    return _BENCH_SCRIPTS[name]


@pytest.fixture(scope="session")
def bench_script():
    """``load(name) -> module``: a script of benchmarks/ (see :func:`load_bench_script`)."""
    return load_bench_script


@pytest.fixture(scope="session")
def llava_run(evaluate, task_manager, tiny_llava):
    """One tiny-LLaVA run (lmms-eval's own ``llava_hf``, chat path) of every benchmark group that exists."""
    groups = [g for g in DEMO_GROUPS if g in task_manager.all_tasks]
    assert groups, "no hanyi benchmark group is registered"
    return evaluate(
        groups,
        "llava_hf",
        model_args=f"pretrained={tiny_llava},device_map=cpu,dtype=float32",
        device="cpu",
        gen_kwargs="max_new_tokens=8",
    )


#: The slowest test files (multi-process launches, subprocess runs of the harnesses), collected first so that
#: ``make test``'s two processes (pytest-xdist, ``--dist loadfile``) do not end with one of them alone.
SLOW_FILES = (
    "test_multiprocess.py",
    "test_plain_run.py",
    "test_lm_eval.py",
    "test_export.py",
    "test_discovery.py",
    "test_served_models.py",
    "test_qwen2_5_vl_wrapper.py",
)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        name = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
        return SLOW_FILES.index(name) if name in SLOW_FILES else len(SLOW_FILES)

    items.sort(key=rank)  # stable: the order within a file, and of the other files, is kept


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots", action="store_true", help="rewrite tests/snapshots/* from the current prompts"
    )


@pytest.fixture
def snapshot(request):
    """``snapshot(name, text)``: compare ``text`` with ``tests/snapshots/<name>.txt`` (write it with --update-snapshots)."""
    root = os.path.join(os.path.dirname(__file__), "snapshots")

    def check(name: str, text: str) -> None:
        path = os.path.join(root, f"{name}.txt")
        if request.config.getoption("--update-snapshots") or not os.path.exists(path):
            if not request.config.getoption("--update-snapshots") and os.environ.get("CI"):
                raise AssertionError(f"missing snapshot {path}; run pytest --update-snapshots locally and commit it")
            os.makedirs(root, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return
        with open(path, encoding="utf-8") as f:
            expected = f.read()
        assert text == expected, (
            f"prompt drifted from {path}; if intended, bump metadata.version and run --update-snapshots"
        )

    return check


# --- WordNet on / off (hanyi.backbones keys its decision by NLTK's search path, so each switch resolves afresh) ---


def wordnet_off(monkeypatch, empty_dir: str) -> None:
    """Hide every NLTK data directory: the ``wordnet`` backbone resolves as missing (the fallback path)."""
    import nltk

    os.makedirs(empty_dir, exist_ok=True)
    monkeypatch.setattr(nltk.data, "path", [empty_dir])


def wordnet_dir(session_tmp: str) -> str | None:
    """An NLTK data directory holding WordNet 3.0: the one NLTK already finds, or Debian's copy installed into the
    session's temporary directory by ``hanyi setup``'s own function; ``None`` when neither is available."""
    import nltk

    for root in nltk.data.path:
        if os.path.isfile(os.path.join(root, "corpora", "wordnet", "lexnames")):
            return root
    from hanyi import doctor

    if not os.path.isfile(os.path.join(doctor.DEBIAN_WORDNET, "index.sense")):
        return None
    root = os.path.join(session_tmp, "nltk_data")
    if not os.path.isdir(os.path.join(root, "corpora", "wordnet")):
        doctor.install_wordnet_from_debian(root)
    return root


@pytest.fixture
def no_wordnet(monkeypatch, tmp_path):
    wordnet_off(monkeypatch, str(tmp_path / "empty_nltk_data"))


@pytest.fixture
def with_wordnet(monkeypatch, session_tmp):
    """NLTK's real WordNet (skips when neither NLTK data nor Debian's wordnet-base + wordnet-sense-index is here)."""
    import nltk

    root = wordnet_dir(session_tmp)
    if root is None:
        pytest.skip("no WordNet: apt-get install wordnet-base wordnet-sense-index (CI does), or hanyi setup")
    monkeypatch.setattr(nltk.data, "path", [root])
    return root
