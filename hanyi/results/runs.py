"""Read lmms-eval 0.7.3 output directories into plain :class:`Run` objects (no lmms-eval import).

``lmms-eval --output_path OUT`` writes ``OUT/<sanitized model>/<date>_results.json`` and, with ``--log_samples``,
``<date>_samples_<task>.jsonl`` beside it. A directory given to ``hanyi report`` may be ``OUT``, a model sub-directory
or one ``*_results.json`` file. Several results files of the same model (e.g. one run per benchmark) are merged into
one run; for a task present in more than one file the newest file wins.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field

from hanyi import BENCHMARKS
from hanyi.redact import redact_text

#: Suffixes lmms-eval appends to a metric name for its standard errors, in order of preference.
STDERR_SUFFIXES = ("_stderr", "_stderr_clt")
_SKIP_SUFFIXES = ("_stderr", "_stderr_clt", "_stderr_clustered")


class NoResultsError(FileNotFoundError):
    """A path holds no lmms-eval results file."""


@dataclass
class Metric:
    """One aggregated value of one task: ``name`` is the metric (with ``,filter`` unless the filter is ``none``)."""

    name: str
    value: float | dict | None
    stderr: float | None = None
    higher_is_better: bool | None = None
    #: The run reported NaN or an infinity (a failed computation), as opposed to "N/A" or no value.
    nan: bool = False
    #: Computed by the report from the sample log (:mod:`hanyi.metrics.from_samples`), not emitted by the task.
    from_samples: bool = False
    #: What the run reported when ``nan``: ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (as JSON writes them).
    reported: str = ""


def non_finite(value) -> str:
    """``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` for a non-finite float, as JSON spells it; ``""`` otherwise.

    >>> non_finite(float("nan")), non_finite(float("-inf")), non_finite(0.5), non_finite("N/A")
    ('NaN', '-Infinity', '', '')
    """
    if not isinstance(value, float) or math.isfinite(value):
        return ""
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


@dataclass
class TaskResult:
    name: str
    metrics: dict[str, Metric]
    n: int | None = None
    version: object = None
    is_group: bool = False
    subtasks: list[str] = field(default_factory=list)
    samples_file: str | None = None
    prompt_variant: str | None = None
    #: Where the numbers come from (:func:`hanyi.results.provenance.task_provenance`).
    provenance: dict = field(default_factory=dict)
    #: The sample log's lines (``--log_samples``), or ``None`` when there is none.
    samples: list | None = field(default=None, repr=False)
    n_original: int | None = None  # docs in the dataset split (``n-samples[task].original``), before ``--limit``


@dataclass
class Run:
    """The merged results of one model: ``label`` names it in tables and plots."""

    label: str
    model: str
    model_args: str
    tasks: dict[str, TaskResult]
    files: list[str]
    lmms_eval_version: str = ""
    date: str = ""
    limit: object = None
    raw: dict = field(default_factory=dict, repr=False)


def split_metric_key(key: str) -> tuple[str, str] | None:
    """``"accuracy,none"`` -> ``("accuracy", "none")``; ``None`` for bookkeeping keys such as ``alias``.

    >>> split_metric_key("acc_domain_life,none")
    ('acc_domain_life', 'none')
    >>> split_metric_key("alias") is None
    True
    """
    if "," not in key:
        return None
    metric, _, filt = key.partition(",")
    return metric, filt


def as_number(value) -> float | None:
    """A finite float, or ``None`` for ``"N/A"``, ``None``, NaN and non-numbers.

    >>> as_number(0.25), as_number("N/A"), as_number(float("nan")), as_number(True)
    (0.25, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def task_metrics(entry: dict, higher: dict | None = None) -> dict[str, Metric]:
    """The metrics of one ``results[task]`` entry, standard errors attached, bookkeeping keys dropped.

    >>> m = task_metrics({"alias": "t", "acc,none": 0.5, "acc_stderr,none": 0.1, "acc_stderr_clt,none": "N/A"})
    >>> list(m), m["acc"].value, m["acc"].stderr
    (['acc'], 0.5, 0.1)
    """
    higher = higher or {}
    values, errors = {}, {}
    for key, value in entry.items():
        parts = split_metric_key(key)
        if parts is None:
            continue
        metric, filt = parts
        suffix = next((s for s in _SKIP_SUFFIXES if metric.endswith(s)), None)
        if suffix is not None:
            errors[(metric[: -len(suffix)], filt, suffix)] = value
            continue
        values[(metric, filt)] = value
    out = {}
    for (metric, filt), value in values.items():
        name = metric if filt == "none" else f"{metric},{filt}"
        reported = non_finite(value)
        if not isinstance(value, dict):
            value = as_number(value)
        stderr = next(
            (e for s in STDERR_SUFFIXES if (e := as_number(errors.get((metric, filt, s)))) is not None),
            None,
        )
        out[name] = Metric(name, value, stderr, higher.get(metric), bool(reported), reported=reported)
    return out


def benchmark_of(task: str, parents: dict[str, str] | None = None) -> str | None:
    """The hanyi benchmark a task or group belongs to: by name prefix, else by its enclosing group.

    >>> benchmark_of("cii_bench_cot"), benchmark_of("unpie"), benchmark_of("mmmu_val"), benchmark_of("ciibench")
    ('cii', 'unpie', None, None)
    >>> benchmark_of("my_subtask", {"my_subtask": "vulca"})
    'vulca'
    >>> benchmark_of("vulca_bench_korean"), benchmark_of("vulca_baseline")  # the longest name that is a prefix
    ('vulca_bench', 'vulca')
    """
    for bench in sorted(BENCHMARKS, key=len, reverse=True):
        if task == bench or task.startswith(bench + "_"):
            return bench
    parent = (parents or {}).get(task)
    return benchmark_of(parent) if parent and parent != task else None


def find_results_files(path: str) -> list[str]:
    """Every ``*_results.json`` at or below ``path`` (a file is returned as is), sorted."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise NoResultsError(f"{path}: no such file or directory")
    # os.walk, not glob: lmms-eval names the model folder after the model path, so a model under ".cache/x"
    # writes to a hidden "<out>/.cache__x/", which glob's "**" skips.
    files = sorted(
        os.path.join(root, name)
        for root, _dirs, names in os.walk(path)
        for name in names
        if name.endswith("_results.json")
    )
    if not files:
        raise NoResultsError(f"{path}: no lmms-eval results file (*_results.json) in it or below it")
    return files


def _samples_file(results_file: str, task: str) -> str | None:
    stem = os.path.basename(results_file)[: -len("_results.json")]
    candidate = os.path.join(os.path.dirname(results_file), f"{stem}_samples_{task}.jsonl")
    return candidate if os.path.exists(candidate) else None


def _run_key(data: dict) -> tuple[str, str]:
    config = data.get("config") or {}
    return str(config.get("model", "")), str(config.get("model_args", ""))


def read_results_file(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise NoResultsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except UnicodeDecodeError as exc:  # e.g. a UTF-16 file: one line naming it, no traceback
            raise NoResultsError(f"{path}: not UTF-8 text (byte {exc.start}); lmms-eval writes UTF-8") from None
        except RecursionError:
            raise NoResultsError(f"{path}: JSON nested too deep to be an lmms-eval results file") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise NoResultsError(f"{path}: not an lmms-eval results file (no 'results' object)")
    check_field_types(path, data)
    return data


#: Top-level fields of an lmms-eval results file that hanyi reads, with the JSON type each must have when present.
_FIELD_TYPES = {
    "config": dict,
    "n-samples": dict,
    "versions": dict,
    "group_subtasks": dict,
    "higher_is_better": dict,
    "configs": dict,
    "model_name": str,
    "date": (str, int, float),
    "lmms_eval_version": str,
}


def check_field_types(path: str, data: dict) -> None:
    """Raise one :class:`NoResultsError` line naming ``path`` and the field when a field hanyi reads has the wrong
    JSON type (instead of an ``AttributeError`` deep in the report).

    >>> check_field_types("r.json", {"results": {}, "config": ["x"]})
    Traceback (most recent call last):
    ...
    hanyi.results.runs.NoResultsError: r.json: field 'config' is a list, expected an object
    """
    names = {dict: "an object", list: "a list", str: "a string"}

    def bad(where: str, value, expected) -> NoResultsError:
        want = " or ".join(names.get(t, t.__name__) for t in (expected if isinstance(expected, tuple) else (expected,)))
        got = "null" if value is None else type(value).__name__.replace("dict", "object").replace("str", "string")
        return NoResultsError(f"{path}: field {where!r} is {'a ' if value is not None else ''}{got}, expected {want}")

    for key, expected in _FIELD_TYPES.items():
        if key in data and data[key] is not None and not isinstance(data[key], expected):
            raise bad(key, data[key], expected)
    for key in ("n-samples", "versions", "group_subtasks", "higher_is_better"):
        for task, value in (data.get(key) or {}).items():
            if key == "n-samples" and value is not None and not isinstance(value, dict):
                raise bad(f"{key}.{task}", value, dict)
            if key == "group_subtasks" and value is not None and not isinstance(value, list):
                raise bad(f"{key}.{task}", value, list)
            if key == "higher_is_better" and value is not None and not isinstance(value, dict):
                raise bad(f"{key}.{task}", value, dict)
    config = data.get("config") or {}
    for key in ("model", "model_args"):
        if config.get(key) is not None and not isinstance(config[key], (str, dict)):
            raise bad(f"config.{key}", config[key], str)


def one_line(text: str) -> str:
    """``text`` with every control or line-breaking character written as its escape (``\\r``, ``\\n``, ``\\x1b``): a
    CR in ``model_args`` or a newline in a model name broke report.md's table and heading.

    >>> one_line("pretrained=m\\rx"), one_line("a\\nb\\u2028c")
    ('pretrained=m\\\\rx', 'a\\\\nb\\\\u2028c')
    """
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", lambda m: m.group().encode("unicode_escape").decode(), text)


def _label(data: dict) -> str:
    name = data.get("model_name") or _run_key(data)[1] or _run_key(data)[0] or "model"
    name = str(name).rstrip("/")
    return os.path.basename(name) or name


def add_from_samples(metrics: dict[str, Metric], task: str, samples: list | None) -> None:
    """Add the breakdowns of ``task`` computed from its sample log (:func:`hanyi.metrics.from_samples.derive`) to
    ``metrics``, each marked ``from_samples``; metrics the results file has are kept as they are."""
    from hanyi.metrics.from_samples import derive

    for name, (value, higher) in derive(task, samples, emitted=set(metrics)).items():
        reported = non_finite(value)
        value = value if isinstance(value, dict) else as_number(value)
        metrics[name] = Metric(name, value, None, higher, bool(reported), True, reported)


def load_runs(paths: list[str]) -> list[Run]:
    """Load and merge every results file under ``paths`` into one :class:`Run` per (path, model, model_args).

    Files of one model below one path are merged; the same model under two paths gives two runs (``hanyi report
    RUN_A RUN_B`` compares them).
    """
    from hanyi.results.provenance import read_samples, task_provenance

    by_key: dict[tuple[int, str, str], list[tuple[str, dict]]] = {}
    for index, path in enumerate(paths):
        for file in find_results_files(path):
            data = read_results_file(file)
            by_key.setdefault((index, *_run_key(data)), []).append((file, data))
    runs = []
    for (_index, model, model_args), items in by_key.items():
        items.sort(key=lambda item: (str(item[1].get("date", "")), item[0]))
        tasks: dict[str, TaskResult] = {}
        for file, data in items:  # oldest first: newer files overwrite
            groups = {g: list(s) for g, s in (data.get("group_subtasks") or {}).items() if s}
            n_samples = data.get("n-samples") or {}
            for name, entry in data["results"].items():
                if not isinstance(entry, dict):
                    continue
                n = (n_samples.get(name) or {}).get("effective")
                samples_file = _samples_file(file, name)
                samples = read_samples(samples_file)
                n_original = (n_samples.get(name) or {}).get("original")
                metrics = task_metrics(entry, (data.get("higher_is_better") or {}).get(name))
                if name not in groups:
                    add_from_samples(metrics, name, samples)
                tasks[name] = TaskResult(
                    name=name,
                    metrics=metrics,
                    n=n if isinstance(n, int) else None,
                    version=(data.get("versions") or {}).get(name),
                    is_group=name in groups,
                    subtasks=groups.get(name, []),
                    samples_file=samples_file,
                    provenance=task_provenance(data, name, samples) if name not in groups else {},
                    samples=samples,
                    prompt_variant=prompt_variant((data.get("configs") or {}).get(name), model),
                    n_original=n_original if isinstance(n_original, int) else None,
                )
        last = items[-1][1]
        runs.append(
            Run(
                label=one_line(redact_text(_label(last))),
                model=one_line(redact_text(model)),
                model_args=one_line(redact_text(model_args)),
                tasks=tasks,
                files=[f for f, _ in items],
                lmms_eval_version=str(last.get("lmms_eval_version", "")),
                date=str(last.get("date", "")),
                limit=None if (limit := (last.get("config") or {}).get("limit")) == -1 else limit,  # -1: no limit
                raw=last,
            )
        )
    _disambiguate(runs)
    return runs


def prompt_variant(config: dict | None, model: str = "") -> str | None:
    """The ``prompt_variant`` a task ran with, from its resolved config in the results file; ``None`` if unknown.

    lmms-eval stores the resolved ``lmms_eval_specific_kwargs``: the ``default`` block merged at top level, or only
    the model's own block when one is named after ``--model``.

    >>> prompt_variant({"lmms_eval_specific_kwargs": {"default": {"prompt_variant": "paper"}, "prompt_variant": "paper"}})
    'paper'
    >>> prompt_variant({"lmms_eval_specific_kwargs": {"prompt_variant": "code_exact"}}), prompt_variant(None)
    ('code_exact', None)
    """
    kwargs = (config or {}).get("lmms_eval_specific_kwargs")
    if not isinstance(kwargs, dict):
        return None
    for block in (kwargs, kwargs.get(model), kwargs.get("default")):
        if isinstance(block, dict) and isinstance(block.get("prompt_variant"), str):
            return block["prompt_variant"]
    return None


def _disambiguate(runs: list[Run]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    counts: dict[str, int] = {}
    for run in runs:
        if seen[run.label] > 1:
            counts[run.label] = counts.get(run.label, 0) + 1
            run.label = f"{run.label} #{counts[run.label]}"


def parents_of(run: Run) -> dict[str, str]:
    """``{subtask: group}`` for the groups of a run."""
    return {sub: task.name for task in run.tasks.values() for sub in task.subtasks}
