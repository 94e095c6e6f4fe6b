"""``hanyi``: the command line around the tasks.

* ``hanyi tasks``: our tasks and groups with their doc counts and where their data comes from.
* ``hanyi prepare <benchmark> ...``: build a benchmark's dataset from its official release (``hanyi.data.<benchmark>``).
* ``hanyi eval ...``: ``lmms-eval`` with hanyi's tasks registered explicitly (for when the start-up hook is off).
* ``hanyi report`` / ``hanyi submit``: readable reports and submission files from lmms-eval output directories.
* ``hanyi doctor [--deep] [--json]`` / ``hanyi setup``: which paper backbones (WordNet, scorer models, judge) are usable here,
  and getting the missing ones (``hanyi.doctor``).
* ``hanyi export lmms-eval --out DIR``: self-contained task folders for a pull request to lmms-eval (``docs/upstream.md``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

from hanyi import BENCHMARKS, TASKS_DIR, __version__, plain_doc


def _load_yaml(path: str, loader) -> dict:
    """A task YAML with its ``include`` chain merged (included first, the file's own keys win), like lmms-eval."""
    import yaml

    with open(path, encoding="utf-8") as f:
        cfg = yaml.load(f, Loader=loader) or {}
    includes = cfg.pop("include", None)
    merged: dict = {}
    for inc in [includes] if isinstance(includes, str) else includes or []:
        merged.update(_load_yaml(inc if os.path.isabs(inc) else os.path.join(os.path.dirname(path), inc), loader))
    merged.update(cfg)
    return merged


def _task_index():
    """``{name: {"type", "yaml_path", ...}}`` for hanyi's tasks, groups and tags (``tag:`` of a task YAML: ``cii``,
    ``cii_prompts``; ``"tasks"`` lists their tasks, as a group's), from YAML alone (no lmms-eval import, no data)."""
    import yaml

    class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml: 10x faster over ~350 files
        pass

    _Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")
    index = {}
    for root, dirs, files in os.walk(TASKS_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".yaml"):
                continue
            path = os.path.join(root, name)
            merged = _load_yaml(path, _Loader)
            if isinstance(merged.get("task"), list) and merged.get("group"):
                index[merged["group"]] = {"type": "group", "tasks": merged["task"], "yaml_path": path}
            elif isinstance(merged.get("task"), str):
                index[merged["task"]] = {"type": "task", "config": merged, "yaml_path": path}
    tags: dict[str, dict] = {}
    for name, entry in index.items():
        tag = entry.get("config", {}).get("tag") or []
        for t in [tag] if isinstance(tag, str) else tag:
            tags.setdefault(t, {"type": "tag", "tasks": [], "yaml_path": entry["yaml_path"]})["tasks"].append(name)
    return {**tags, **index}  # a task or group of the same name wins


def _benchmark_of(yaml_path: str) -> str:
    return os.path.relpath(yaml_path, TASKS_DIR).split(os.sep)[0]


def _resolve_function(ref: str, yaml_dir: str):
    """A ``!function mod.fn`` reference resolved as lmms-eval does: ``<yaml_dir>/mod.py`` first, then an import."""
    import importlib.util

    module_name, _, fn = ref.removeprefix("!function ").strip().rpartition(".")
    path = os.path.join(yaml_dir, *module_name.split(".")) + ".py"
    if os.path.isfile(path):
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, fn)


def _doc_count(entry: dict, source: str, cache: dict | None = None) -> str:
    """Docs the task evaluates: its split loaded like lmms-eval loads it, after ``process_docs``.

    No backbone is resolved (:func:`hanyi.backbones.deferred`): ``process_docs`` resolves the scoring models of a
    real run, which a count does not need (no model loaded, no hub asked). ``cache`` shares a loaded split between
    the tasks that read it.
    """
    if not os.path.isdir(source):
        return "?"
    config = entry["config"]
    try:
        import datasets

        from hanyi import backbones

        kwargs = {k: v for k, v in (config.get("dataset_kwargs") or {}).items() if k in ("data_files", "data_dir")}
        split = config.get("test_split") or config.get("validation_split") or "test"
        key = (source, config.get("dataset_name"), split, json.dumps(kwargs, sort_keys=True, default=str))
        cache = {} if cache is None else cache
        if key not in cache:
            cache[key] = datasets.load_dataset(source, name=config.get("dataset_name"), split=split, **kwargs)
        ds = cache[key]
        if isinstance(config.get("process_docs"), str):
            with backbones.deferred():
                ds = _resolve_function(config["process_docs"], os.path.dirname(entry["yaml_path"]))(ds)
        return str(len(ds))
    except Exception as exc:  # a count is informative only
        return f"? ({type(exc).__name__})"


#: The doc-count cell of a task whose benchmark has no data where the configuration points (footnote says why).
NOT_PREPARED = "not prepared"
#: The doc-count cell of a task whose prepared data is there but cannot be read (footnote: the file and why).
CORRUPT = "unreadable"


def hub_note(bench: str, hub_id: str) -> str:
    """The footnote of a ``?`` count: the benchmark is read from the hub, which ``hanyi tasks`` does not download."""
    return (
        f"{bench}: ? = not counted: the data is the hub dataset {hub_id}, which `hanyi tasks` does not download. "
        f"For counts: hanyi prepare {bench} (a local copy the tasks then read), or HANYI_DATA_ROOT=sample hanyi tasks "
        f"{bench} (the bundled sample)"
    )


def cmd_tasks(args) -> int:
    import logging

    from hanyi.data import sources

    if args.count:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
        logging.getLogger("hanyi").setLevel(logging.ERROR)

    index = _task_index()
    rows, loaded = [], {}
    notes: dict[str, str] = {}  # benchmark -> footnote, one per benchmark whose data is not prepared
    for name in sorted(index):
        entry = index[name]
        bench = _benchmark_of(entry["yaml_path"])
        if args.benchmark and bench not in args.benchmark:
            continue
        if entry["type"] in ("group", "tag"):
            n = len(entry["tasks"])
            rows.append(
                (name, entry["type"], f"{n} task" + ("s" if n != 1 else ""), ", ".join(map(str, entry["tasks"])))
            )
            continue
        config = entry["config"].get("dataset_name") or "default"
        try:
            source = sources.resolve(bench) if bench in sources.SOURCES else "?"
        except sources.DataCorruptError as exc:  # there, but broken: not "not prepared"
            notes.setdefault(bench, f"{bench}: prepared but unreadable: {exc}")
            where = notes[bench] if args.json else f"see [{list(notes).index(bench) + 1}] below"
            rows.append((name, "task", CORRUPT, f"{where}  [{config}]"))
            continue
        except sources.DataNotFoundError:
            notes.setdefault(bench, f"{bench}: not prepared. To get it: {sources.SOURCES[bench].how_to_get}")
            where = notes[bench] if args.json else f"see [{list(notes).index(bench) + 1}] below"
            rows.append((name, "task", NOT_PREPARED, f"{where}  [{config}]"))
            continue
        count = _doc_count(entry, source, loaded) if args.count else "-"
        if count == "?":  # a hub id: counting it would download the dataset
            notes.setdefault(bench, hub_note(bench, source))
            count = count if args.json else f"? [{list(notes).index(bench) + 1}]"
        rows.append((name, "task", count, f"{_shown_source(source, sources.SAMPLE_DIR)} [{config}]"))
    if args.json:
        print(
            json.dumps([dict(zip(("name", "type", "docs", "source"), r)) for r in rows], ensure_ascii=False, indent=1)
        )
        return 0
    import shutil
    import textwrap

    # Rows fit the terminal (100 columns when the output is not one): a group's member list is cut with a count of
    # the rest, and `--json` has every member in full.
    columns = max(shutil.get_terminal_size((100, 24)).columns, 60)
    width = max((len(r[0]) for r in rows), default=4)
    room = max(columns - (width + 2 + 5 + 2 + 12 + 2), 20)
    print(f"{'name':<{width}}  {'type':<5}  {'docs':>12}  source or members")
    for r in rows:
        shown = _fit(r[3], room) if r[1] in ("group", "tag") else r[3]
        print(f"{r[0]:<{width}}  {r[1]:<5}  {r[2]:>12}  {shown}")
    print()
    for line in TASKS_LEGEND + (("docs - = not counted (--no-count)",) if not args.count else ()):
        print(textwrap.fill(line, columns, subsequent_indent="    "))
    for i, note in enumerate(notes.values(), 1):
        # a path or hub id is never split across lines: it is something to copy
        print(
            textwrap.fill(
                f"[{i}] {note}", columns, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
            )
        )
    return 0


#: What the columns of ``hanyi tasks`` mean, printed under the table.
TASKS_LEGEND = (
    "group = members scored together, with an aggregate row; tag = a name that runs its members, no aggregate.",
    "[name] after a source = the dataset configuration the task reads (its YAML's dataset_name: e.g. [images] for "
    "Pun Rebus's image questions, [vg] for CVLUE grounding, [whole] for VULCA's whole critiques); [default] = the "
    "dataset's only configuration.",
    "[N] in the docs column = footnote N below; `hanyi tasks --json` gives every row in full.",
)


def _shown_source(source: str, sample_dir: str) -> str:
    """A task's data source as the table shows it: ``sample/<bench>`` for the package's own samples, ``~`` for the
    home folder; a hub id or any other path as it is (never cut: it is where the numbers come from)."""
    if os.path.isabs(source):
        if os.path.commonpath([os.path.abspath(source), os.path.abspath(sample_dir)]) == os.path.abspath(sample_dir):
            return os.path.join("sample", os.path.relpath(source, sample_dir))
        home = os.path.expanduser("~")
        if home not in ("", "/") and source.startswith(home + os.sep):
            return "~" + source[len(home) :]
    return source


def _fit(text: str, room: int) -> str:
    """A member list cut to ``room`` characters at a comma, saying how many members were left out.

    >>> _fit("a, b, c, d", 9), _fit("a, b", 9), _fit("abcdefghijk, l", 9)
    ('a, … (+3)', 'a, b', 'abcdefgh…')
    """
    if len(text) <= room:
        return text
    parts = text.split(", ")
    for keep in range(len(parts) - 1, 0, -1):
        line = ", ".join(parts[:keep]) + f", … (+{len(parts) - keep})"
        if len(line) <= room:
            return line
    return text[: max(room - 1, 1)] + "…"


def _benchmark_module(bench: str, purpose: str):
    try:
        module = importlib.import_module(f"hanyi.data.{bench}")
    except ModuleNotFoundError:
        module = None
    if module is None or not hasattr(module, "add_prepare_arguments"):
        raise SystemExit(f"hanyi {purpose}: no builder for {bench!r} yet")
    return module


def _expected_prepare_errors() -> tuple[type[BaseException], ...]:
    import csv
    import zipfile

    return (OSError, ValueError, KeyError, RuntimeError, AssertionError, zipfile.BadZipFile, csv.Error)


#: What a builder raises on bad input (paths, network, file contents): one line and exit 2, no traceback.
EXPECTED_PREPARE_ERRORS = _expected_prepare_errors()


def _prepare_failure(bench: str, exc: BaseException) -> str:
    """One line: what went wrong, and the fix. ``HANYI_DEBUG=1`` shows the traceback instead."""
    import socket
    import urllib.error

    message = " ".join(str(exc).split()) or type(exc).__name__
    chain, cause = [], exc
    while cause is not None and len(chain) < 8:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    network = (urllib.error.URLError, ConnectionError, TimeoutError, socket.timeout, socket.gaierror)
    if any(isinstance(e, network) for e in chain) or "cannot download" in message:
        fix = "no network? Download the release by hand and pass its local path"
    elif isinstance(exc, PermissionError):
        fix = "choose a writable --out"
    elif isinstance(exc, (FileNotFoundError, NotADirectoryError, IsADirectoryError)):
        fix = "check the paths you passed"
    elif isinstance(exc, OSError):
        fix = "check the paths and the disk"
    else:
        fix = "the input does not look like the official release; re-download it (docs/data.md)"
    return f"hanyi prepare {bench}: {type(exc).__name__}: {message}. Fix: {fix} (hanyi prepare {bench} --help)."


def _refuse_bundled_samples(out_dir: str, given: bool) -> str | None:
    """Why ``out_dir`` must not be written (it is, or is inside, the package's bundled samples), or ``None``."""
    from hanyi.data.sources import SAMPLE_DIR

    real, samples = os.path.realpath(out_dir), os.path.realpath(SAMPLE_DIR)
    if real == samples or real.startswith(samples + os.sep):
        how = "--out points" if given else "HANYI_DATA_ROOT=sample (with no --out) points"
        return (
            f"refusing to write {out_dir}: {how} into the samples bundled with hanyi, which tests and the demo use. "
            "Pass --out <your data folder> (samples are rebuilt with: python -m hanyi.data.build_samples)."
        )
    return None


def cmd_prepare(args, parser) -> int:
    from hanyi.data.safepath import UnsafePathError
    from hanyi.data.sources import data_root

    module = _benchmark_module(args.benchmark, "prepare")
    sub = argparse.ArgumentParser(
        prog=f"hanyi prepare {args.benchmark}",
        description=plain_doc(module.__doc__) or None,
    )
    sub.add_argument(
        "--out",
        default=None,
        help="data root; the dataset goes to <out>/<benchmark>/ (default: $HANYI_DATA_ROOT or ~/.cache/hanyi/data)",
    )
    sub.add_argument("--hub-folder", help="write the dataset to this folder itself, with a hub dataset card (licence, "
                     "citation, official release), ready to upload; docs/upstream.md")  # fmt: skip
    module.add_prepare_arguments(sub)
    sub_args = sub.parse_args(args.rest)
    root = sub_args.out or data_root()
    sub_args.out_dir = os.path.join(os.path.abspath(os.path.expanduser(root)), args.benchmark)
    if sub_args.hub_folder:
        sub_args.out_dir = os.path.abspath(os.path.expanduser(sub_args.hub_folder))
    refusal = _refuse_bundled_samples(sub_args.out_dir, given=sub_args.out is not None)
    if refusal:
        print(f"hanyi prepare {args.benchmark}: {refusal}", file=sys.stderr)
        return 2
    try:
        counts = module.run_prepare(sub_args)
    except UnsafePathError as exc:
        print(
            f"hanyi prepare {args.benchmark}: {exc} (nothing was written outside {sub_args.out_dir})", file=sys.stderr
        )
        return 2
    except EXPECTED_PREPARE_ERRORS as exc:
        if os.environ.get("HANYI_DEBUG", "").strip() not in ("", "0"):
            raise
        print(_prepare_failure(args.benchmark, exc), file=sys.stderr)
        return 2
    counts = dict(counts or {})
    if sub_args.hub_folder:
        from hanyi.data import hub_card

        counts["hub_card"] = hub_card.finish(args.benchmark, sub_args.out_dir)
    cannot_run = counts.pop("cannot_run", None)  # a builder's reason why the written data cannot run its tasks
    print(json.dumps({"benchmark": args.benchmark, "out": sub_args.out_dir, **counts}, ensure_ascii=False, indent=1))
    if cannot_run:
        print(f"hanyi prepare {args.benchmark}: written, but the data cannot run: {cannot_run}.", file=sys.stderr)
        return 1
    if sub_args.hub_folder:
        print(f"\nUpload it (huggingface-cli upload ORG/NAME {sub_args.out_dir} --repo-type dataset), then: hanyi export "
              f"lmms-eval --dataset-repo {args.benchmark}=ORG/NAME")  # fmt: skip
        return 0
    print(f"\nUse it with: HANYI_DATA_ROOT={root} lmms-eval --tasks {args.benchmark} ...")
    return 0


EVAL_USAGE = """\
usage: hanyi eval [--allow_errors] LMMS_EVAL_ARGUMENTS ...

Run lmms-eval with hanyi's tasks registered (for when the start-up hook is off). Every argument except
--allow_errors goes to lmms-eval unchanged: `lmms-eval --help` lists them (it takes a while: it imports lmms-eval).

What hanyi eval adds:
  exit status 1 when anything was logged at ERROR level during the run (a task that failed to load, a generation
  error a model wrapper caught and logged, an aborted evaluation), with the count and the first error on the last
  line. lmms-eval 0.7.3 logs these and exits 0, with or without --verbosity DEBUG (DEBUG re-raises only an
  exception that aborts the whole evaluation, not the per-request errors a model wrapper logs).
  exit status 3 when, under --use_cache, an API model's requests got no answer (lmms-eval's openai / async_openai
  clients give up after their retries on 5xx, timeouts or dropped connections and answer a failure text): those
  answers are kept out of the cache, so the same command asks for them only (docs/run-at-scale.md).
  --allow_errors    exit 0 all the same (the errors are still logged)

example:
  hanyi eval --model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf --tasks punrebus --log_samples \\
             --output_path out/
"""


def cmd_eval(argv) -> int:
    """``lmms-eval`` with hanyi's tasks registered, exiting 1 when anything was logged as an error.

    lmms-eval 0.7.3 exits 0 when a task fails to load, a generation raises, or the evaluation aborts: it only logs an
    ERROR line (``--verbosity DEBUG`` re-raises only an exception that aborts the whole evaluation). Every ERROR
    record of lmms-eval's logger is counted here (a loguru patcher, which survives the handler reset lmms-eval does
    at start-up); ``--allow_errors`` keeps exit 0. ``-h``/``--help`` print :data:`EVAL_USAGE` without importing
    lmms-eval.
    """
    if "-h" in argv or "--help" in argv:
        print(EVAL_USAGE, end="")
        return 0
    import lmms_eval.tasks
    from loguru import logger

    from hanyi.host import eval_extras
    from hanyi.host.discovery import patch_lmms_eval_tasks_module

    patch_lmms_eval_tasks_module(lmms_eval.tasks)
    from lmms_eval.cli.dispatch import main as lmms_main

    allow_errors = "--allow_errors" in argv
    errors: list[str] = []

    def count_errors(record) -> None:
        if record["level"].no >= 40:  # ERROR and CRITICAL
            errors.append(str(record["message"]))

    out = next((v for k, v in zip(argv, argv[1:]) if k == "--output_path"), None)
    out = next((a.partition("=")[2] for a in argv if a.startswith("--output_path=")), out)
    from hanyi.outputs import claim_run_folder, empty_outputs, failure_line

    try:  # writable, and no other hanyi eval writing into it: two runs never merge
        release = claim_run_folder(out) if out else (lambda: None)
    except OSError as exc:
        print(failure_line("hanyi eval", exc), file=sys.stderr)
        return 1
    logger.configure(patcher=count_errors)
    sys.argv = ["lmms-eval", *(a for a in argv if a != "--allow_errors")]
    started = time.time()
    try:
        with eval_extras():  # hanyi eval's own run-time extras (docs/dev/discovery.md), lmms-eval's put back after
            status = lmms_main() or 0
    except OSError as exc:  # a full disk while writing results or sample logs
        print(failure_line("hanyi eval", exc), file=sys.stderr)
        return 1
    finally:
        logger.configure(patcher=None)
        release()
    empty = empty_outputs(out, started) if out else []
    if empty:  # lmms-eval wrote nothing into them (a full disk) and exited 0
        print(f"hanyi eval: {len(empty)} output file(s) are empty (first: {empty[0]}): the disk may be full; "
              "exit status 1", file=sys.stderr)  # fmt: skip
        return 1
    from hanyi.host.cache_chunks import unanswered

    if unanswered() and not status and not allow_errors:  # an API model's server failed: 5xx, timeouts, dropped
        (task, doc_id, text), n = unanswered()[0], len(unanswered())
        print(
            f"hanyi eval: {n} request(s) got no answer from the model (first: {task} doc {doc_id}: "
            f"{' '.join(text.split())[:160]}); they are scored as that failure text and kept out of the response "
            "cache: the same command asks the model for them only; exit status 3.",
            file=sys.stderr,
        )
        return 3
    if errors and not status and not allow_errors:
        first = " ".join(errors[0].split())[:200]
        print(
            f"hanyi eval: {len(errors)} error(s) were logged during the run (first: {first}); exit status 1. "
            "Results may be missing or scored on empty answers: see the log above (--allow_errors to exit 0).",
            file=sys.stderr,
        )
        return 1
    return status


def _delegate(module_name: str, argv, prog: str) -> int:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise SystemExit(f"{prog}: not available in this version") from None
    try:
        return module.main(argv, prog=prog) or 0
    except OSError as exc:  # a full disk, a read-only folder, a symlink refused: one line, exit 1
        if os.environ.get("HANYI_DEBUG", "").strip() not in ("", "0"):
            raise
        from hanyi.outputs import failure_line

        print(failure_line(prog, exc), file=sys.stderr)
        return 1


def _prepare_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``prepare`` sub-parser (it has no ``-h`` of its own: ``prepare <benchmark> --help`` goes to the builder)."""
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subs.choices["prepare"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hanyi", description=plain_doc(__doc__))
    parser.add_argument("--version", action="version", version=f"hanyi {__version__}")
    subs = parser.add_subparsers(dest="command", required=True)
    p = subs.add_parser("tasks", help="list hanyi tasks and groups with doc counts and data source")
    p.add_argument(
        "benchmark",
        nargs="*",
        metavar="BENCHMARK",  # checked in main(): choices= would print "{[],punrebus,...}"
        help="only these benchmarks (default: all): " + ", ".join(BENCHMARKS),
    )
    p.add_argument("--no-count", dest="count", action="store_false", help="skip loading data to count docs")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (name, type, docs, source)")
    p = subs.add_parser(
        "prepare",
        help="build a benchmark's dataset from its official release",
        add_help=False,
        description="Build a benchmark's dataset from its official release into <out>/<benchmark>/. "
        "`hanyi prepare <benchmark> --help` lists that benchmark's options.",
    )
    p.add_argument("benchmark", choices=BENCHMARKS, help="one of: " + ", ".join(BENCHMARKS))
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the benchmark's own options (see its --help)")
    subs.add_parser(
        "eval", help="run lmms-eval with hanyi's tasks registered (all lmms-eval flags pass through)", add_help=False
    )
    subs.add_parser("report", help="Markdown/HTML report from lmms-eval output dirs", add_help=False)
    subs.add_parser("submit", help="submission files from an lmms-eval output dir", add_help=False)
    subs.add_parser(
        "leaderboard", help="build a validated, ranked leaderboard from submissions; check one", add_help=False
    )
    subs.add_parser("doctor", help="which paper backbones (WordNet, models, judge) are usable here", add_help=False)
    subs.add_parser("setup", help="get the missing paper backbones (WordNet offline from Debian)", add_help=False)
    subs.add_parser(
        "export", help="export lmms-eval task folders that need no hanyi (see docs/upstream.md)", add_help=False
    )
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":
        return cmd_eval(argv[1:])
    if argv and argv[0] in ("report", "submit", "export", "leaderboard"):
        return _delegate(f"hanyi.{argv[0]}", argv[1:], prog=f"hanyi {argv[0]}")
    if argv and argv[0] in ("doctor", "setup"):
        from hanyi import doctor

        main_fn = doctor.main_doctor if argv[0] == "doctor" else doctor.main_setup
        return main_fn(argv[1:], prog=f"hanyi {argv[0]}")
    parser = build_parser()
    if argv[:1] == ["prepare"] and argv[1:2] in (["-h"], ["--help"]):
        _prepare_parser(parser).print_help()
        return 0
    args = parser.parse_args(argv)
    if args.command == "tasks":
        unknown = [b for b in args.benchmark if b not in BENCHMARKS]
        if unknown:
            parser.error(f"hanyi tasks: unknown benchmark {unknown[0]!r} (choose from {', '.join(BENCHMARKS)})")
        return cmd_tasks(args)
    if args.command == "prepare":
        return cmd_prepare(args, parser)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
