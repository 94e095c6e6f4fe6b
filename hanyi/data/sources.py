"""Where each benchmark's data comes from, resolved every time a task YAML is loaded.

Task YAMLs say ``dataset_path: !function dataset.path``: the ``dataset.py`` beside them binds ``path`` to
:func:`dataset_path` of its benchmark, executed afresh by lmms-eval for every ``!function`` tag, so the choice
follows the environment at the moment the task is built:

1. ``HANYI_<BENCHMARK>_DATA`` (e.g. ``HANYI_CII_DATA``): a prepared directory or a hub id, for that benchmark only.
2. ``HANYI_DATA_ROOT=sample``: the small synthetic sample bundled in the package (the demo and the tests).
3. ``HANYI_DATA_ROOT=<dir>``: ``<dir>/<benchmark>/`` as written by ``hanyi prepare``. A ``<dir>`` that is missing or
   holds no prepared benchmark at all raises :class:`DataNotFoundError` (one line; never a silent switch to the hub).
   Otherwise a benchmark that is on the hub falls back to its hub id, with a warning, when its folder is not
   there; the others raise :class:`DataNotFoundError`.
4. Unset: the hub id where the benchmark is on the hub, otherwise :func:`default_data_root` / ``<benchmark>``.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass

log = logging.getLogger(__name__)

DATA_ROOT_ENV = "HANYI_DATA_ROOT"
SAMPLE = "sample"
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")
MANIFEST = "README.md"


class DataNotFoundError(FileNotFoundError):
    """A benchmark's data is not where the configuration says. The message says what to run."""


class DataCorruptError(DataNotFoundError):
    """A prepared folder cannot be loaded: its README's ``configs`` block is broken, or names a parquet file that is
    missing, unreadable (truncated) or empty. The message names the file; it is checked before ``datasets`` is asked
    (which would retry and end in a ``RetryError`` naming nothing)."""


def _front_matter(readme: str) -> dict:
    import yaml

    try:
        with open(readme, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise DataCorruptError(f"{readme}: not UTF-8 text (byte {exc.start}); re-run hanyi prepare") from None
    if not text.startswith("---"):
        raise DataCorruptError(f"{readme}: no YAML header (---) with a configs block; re-run hanyi prepare")
    header = text[3:].split("\n---", 1)[0]
    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise DataCorruptError(
            f"{readme}: its YAML header does not parse{where}: {getattr(exc, 'problem', exc)}"
        ) from None
    if not isinstance(meta, dict) or not isinstance(meta.get("configs"), list):
        raise DataCorruptError(f"{readme}: its YAML header has no configs list; re-run hanyi prepare")
    return meta


@functools.lru_cache(maxsize=64)
def _checked(path: str, stamp: tuple) -> None:
    """Check a prepared folder once per content stamp (see :func:`check_prepared`)."""
    import pyarrow.parquet as pq

    readme = os.path.join(path, MANIFEST)
    for config in _front_matter(readme)["configs"]:
        columns: dict[str, set] = {}  # parquet file -> its columns: the splits of one config must agree
        files = (config or {}).get("data_files") or []
        for entry in files if isinstance(files, list) else [files]:
            rel = entry.get("path") if isinstance(entry, dict) else entry
            for name in rel if isinstance(rel, list) else [rel]:
                if not isinstance(name, str) or not name.endswith(".parquet") or any(c in name for c in "*?["):
                    continue  # globs and other formats: datasets resolves them
                file = os.path.join(path, name)
                if not os.path.isfile(file):
                    raise DataCorruptError(f"{readme} names {name}, which does not exist; re-run hanyi prepare")
                try:
                    rows = pq.read_metadata(file).num_rows
                except Exception as exc:
                    raise DataCorruptError(f"{file}: not a readable parquet file (truncated?): {exc}") from None
                if rows == 0:
                    raise DataCorruptError(f"{file}: 0 rows; re-run hanyi prepare")
                columns[file] = set(pq.read_schema(file).names) - {"__index_level_0__"}
        every = set().union(*columns.values()) if columns else set()
        for file, names in columns.items():  # else datasets retried a cast error 5 times, naming nothing
            if names != every:
                raise DataCorruptError(f"{file}: lacks column(s) {sorted(every - names)}; re-run hanyi prepare")


def check_prepared(path: str) -> str:
    """``path``, after checking that its README's ``configs`` block parses and names readable, non-empty parquet
    files; raises :class:`DataCorruptError` naming the file otherwise. Cached per folder and file state."""
    readme = os.path.join(path, MANIFEST)
    import glob

    stamp = []
    for file in [readme, *glob.glob(os.path.join(glob.escape(path), "*.parquet"))]:
        stamp += [(file, os.stat(file).st_mtime_ns, os.stat(file).st_size)] if os.path.isfile(file) else []
    for file in glob.glob(os.path.join(glob.escape(path), "*", "*.parquet")):  # hanyi prepare: <config>/<split>
        stamp.append((file, os.stat(file).st_mtime_ns, os.stat(file).st_size))
    if not os.path.isfile(readme):
        raise DataCorruptError(f"{path}: no {MANIFEST}")
    _checked(path, tuple(sorted(stamp)))
    return path


@dataclass(frozen=True)
class Source:
    benchmark: str
    hub_id: str | None
    how_to_get: str


SOURCES = {
    "punrebus": Source(
        "punrebus", None, "hanyi prepare punrebus --out <dir> (downloads the official answer sheet and image zip)"
    ),
    "cvlue": Source(
        "cvlue",
        None,
        "request the CVLUE release from its authors (CC BY-NC-ND), then: hanyi prepare cvlue --root <release dir> --out <dir>",
    ),
    "cii": Source(
        "cii", "m-a-p/CII-Bench", "it loads from the hub (m-a-p/CII-Bench); offline: hanyi prepare cii --out <dir>"
    ),
    "unpie": Source(
        "unpie",
        "jiwan-chung/VisualPun_UNPIE",
        "it loads from the hub (jiwan-chung/VisualPun_UNPIE); offline: hanyi prepare unpie --out <dir>",
    ),
    "vulca": Source("vulca", None, "hanyi prepare vulca --images <dir with the 12 paintings> --out <dir>"),
    "vulca_bench": Source(
        "vulca_bench",
        "harryHURRY/vulca-bench",
        "it loads from the hub (harryHURRY/vulca-bench); offline: hanyi prepare vulca_bench --jsonl <release jsonl> "
        "--images <dir> --out <dir>",
    ),
}


def default_data_root() -> str:
    """Where ``hanyi prepare`` writes and tasks read when ``HANYI_DATA_ROOT`` is unset."""
    cache = os.environ.get("HANYI_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "hanyi")
    return os.path.join(cache, "data")


def data_root() -> str:
    """The root selected by ``HANYI_DATA_ROOT`` (or the default); ``sample`` maps to the bundled sample dir."""
    root = os.environ.get(DATA_ROOT_ENV, "").strip()
    if root == SAMPLE:
        return SAMPLE_DIR
    return os.path.abspath(os.path.expanduser(root)) if root else default_data_root()


def _is_prepared(path: str) -> bool:
    return os.path.isfile(os.path.join(path, MANIFEST))


def _holds_a_prepared_benchmark(root: str) -> bool:
    return any(_is_prepared(os.path.join(root, name)) for name in SOURCES)


def resolve(benchmark: str) -> str:
    """Return the ``dataset_path`` for ``benchmark``: a prepared directory or a hub id.

    Raises :class:`DataNotFoundError` with the command to run when nothing usable is configured.
    """
    if benchmark not in SOURCES:
        raise KeyError(f"unknown hanyi benchmark {benchmark!r}; known: {', '.join(SOURCES)}")
    src = SOURCES[benchmark]
    override = os.environ.get(f"HANYI_{benchmark.upper()}_DATA", "").strip()
    if override:
        path = os.path.abspath(os.path.expanduser(override))
        if _is_prepared(path):
            return check_prepared(path)
        if os.path.exists(path) or src.hub_id is None:
            raise DataNotFoundError(
                f"HANYI_{benchmark.upper()}_DATA={override!r} is not a prepared {benchmark} dataset "
                f"(no {MANIFEST} with a configs block). To get the data: {src.how_to_get}"
            )
        return override  # a hub id
    env_root = os.environ.get(DATA_ROOT_ENV, "").strip()
    root = data_root()
    path = os.path.join(root, benchmark)
    if _is_prepared(path):
        return check_prepared(path)
    if env_root and env_root != SAMPLE and not _holds_a_prepared_benchmark(root):
        state = "does not exist" if not os.path.exists(root) else "holds no prepared benchmark"
        hub = f", or unset it to load {benchmark} from the hub ({src.hub_id})" if src.hub_id else ""
        raise DataNotFoundError(
            f"{DATA_ROOT_ENV}={env_root!r} {state}: prepare {benchmark} there (to get the data: {src.how_to_get}){hub}."
        )
    if src.hub_id is not None and env_root != SAMPLE:
        if env_root:  # never silently: the user pointed at local data
            log.warning(
                "hanyi: %s is not prepared under %s=%s; loading %s from the hub instead (set HANYI_%s_DATA to choose)",
                benchmark,
                DATA_ROOT_ENV,
                root,
                src.hub_id,
                benchmark.upper(),
            )
        return src.hub_id
    where = f"{DATA_ROOT_ENV}={env_root!r}" if env_root else f"the default data root {root}"
    raise DataNotFoundError(
        f"No {benchmark} data under {path} ({where}). To get the data: {src.how_to_get}. "
        f"To try hanyi on the bundled synthetic sample instead, set {DATA_ROOT_ENV}=sample."
    )


def describe(benchmark: str) -> str:
    """One line saying where ``benchmark`` would load from now, without raising."""
    try:
        return resolve(benchmark)
    except DataNotFoundError:
        return f"missing (run: {SOURCES[benchmark].how_to_get})"


def dataset_path(benchmark: str) -> str:
    """The ``dataset_path`` of ``benchmark``'s tasks, checked: every ``HANYI_*`` setting is validated first
    (:func:`hanyi.settings.validate`), since this runs when each task loads, before any model call, and a missing
    dataset is logged on its own line before it is raised (lmms-eval re-raises it as "Failed to import function",
    with ours only in the chained traceback).

    Each task folder has a ``dataset.py`` whose one statement is ``path = dataset_path("<benchmark>")``, and the YAMLs
    say ``dataset_path: !function dataset.path``. lmms-eval and lm-eval execute that file afresh for every ``!function``
    tag they read, so the path follows the environment each time a task is built.
    """
    from hanyi import settings

    settings.validate()  # every HANYI_* value, before any model call (logged on one line, then raised)
    try:
        return resolve(benchmark)
    except DataNotFoundError as exc:
        log.error("hanyi: %s", exc)
        raise
