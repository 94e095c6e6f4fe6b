"""No run thrown away after generation: an unforeseen scoring error in a hanyi task keeps what the model produced.

Generation costs GPU-hours; scoring is cheap and can be redone. lmms-eval 0.7.3 calls ``process_results`` per doc
(retrying a failing call 5 times, 2 s apart) and then the aggregation functions; an exception in either ends the
evaluation before the results and the sample log are written, and the CLI still exits 0. :func:`install` wraps both
for hanyi's tasks only (task names ``<benchmark>`` or ``<benchmark>_...``), so that instead:

* an exception in ``process_results`` logs one error naming the task, the doc and the task's metrics; that doc's
  metrics become NaN and its sample-log line gets ``"hanyi_error": "<exception>"`` (our functions are deterministic,
  so the call is not retried);
* an exception in one of our aggregation functions logs one error naming the task and the metric; that metric is
  NaN (never a number computed some other way);
* lmms-eval then writes the results and, with ``--log_samples``, every response to its sample log as usual, from
  which ``hanyi replay`` re-scores once the bug is fixed (``docs/when-things-go-wrong.md``).

Registered lmms-eval aggregations (``mean`` ...) are left as they are (their standard errors depend on identity);
given NaN items they give NaN. Installed from ``hanyi.discovery`` and on import of ``hanyi.tasks._common`` (which every
task's ``utils.py`` imports), only when lmms-eval's task module is already loaded; idempotent.
"""

from __future__ import annotations

import functools
import logging
import sys
import weakref

from hanyi import BENCHMARKS

log = logging.getLogger("hanyi.guard")
_MARKER = "_hanyi_guarded"
#: Per task (held weakly, nothing added to the task itself): {metric: (aggregation function, its wrapper)}.
_WRAPPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
ERROR_KEY = "hanyi_error"


class ScoringFailed(float):
    """NaN standing for a metric of a doc whose ``process_results`` raised (a plain NaN item stays a plain value)."""

    def __new__(cls, _value=None):  # copy/pickle pass the value back in: it is always NaN
        return super().__new__(cls, "nan")


def is_hanyi_task(name) -> bool:
    """True for a hanyi task or group name.

    >>> is_hanyi_task("cii_none"), is_hanyi_task("vulca"), is_hanyi_task("mmmu_val"), is_hanyi_task(None)
    (True, True, False, False)
    """
    return isinstance(name, str) and any(name == b or name.startswith(b + "_") for b in BENCHMARKS)


def _doc_hint(doc) -> str:
    """A label naming the doc in an error line: a known id field, else any ``*id``/``*_idx`` field, else the first
    short text or number field, else a hash of the doc; never ``?``.

    >>> _doc_hint({"image_id": "a.jpg"}), _doc_hint({"query_idx": 4, "q": "x"}), _doc_hint({"caption": "一只猫"})
    ('image_id=a.jpg', 'query_idx=4', 'caption=一只猫')
    >>> _doc_hint(["not", "a", "dict"])
    "doc ['not', 'a', 'dict']"
    """
    if not isinstance(doc, dict):
        return f"doc {str(doc)[:80]}"
    for key in ("doc_id", "id", "question_id", "ref_id", "image_id", "unpie_id", "story_pinyin"):
        if key in doc and isinstance(doc[key], (str, int)):
            return f"{key}={doc[key]}"
    scalars = [(k, v) for k, v in doc.items() if isinstance(v, (str, int)) and not isinstance(v, bool)]
    for key, value in scalars:
        if key.endswith(("id", "_idx")):
            return f"{key}={value}"
    for key, value in scalars:
        if len(str(value)) <= 80:
            return f"{key}={value}"
    import hashlib
    import json

    digest = hashlib.sha1(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"doc sha1={digest}"


def guarded_aggregation(task: str, metric: str, fn):
    """``fn`` wrapped so that an exception (or an item marked by a failed ``process_results``) gives NaN plus one
    logged error naming ``task`` and ``metric``.

    >>> agg = guarded_aggregation("cii_none", "acc", lambda items: 1 / 0)
    >>> import math
    >>> math.isnan(agg([1, 2]))
    True
    """
    if getattr(fn, _MARKER, False):
        return fn

    @functools.wraps(fn)
    def wrapper(items, *args, **kwargs):
        if any(isinstance(i, ScoringFailed) for i in items):
            log.error(
                "hanyi: task %s: metric %s is NaN: process_results failed on some docs (see the errors above and "
                "'%s' in the sample log)",
                task,
                metric,
                ERROR_KEY,
            )
            return float("nan")
        try:
            return fn(items, *args, **kwargs)
        except Exception as exc:
            log.error(
                "hanyi: task %s: aggregation of metric %s failed (%s: %s); the metric is NaN. The responses are kept "
                "(sample log with --log_samples); re-score them with the replay model once fixed.",
                task,
                metric,
                type(exc).__name__,
                exc,
            )
            return float("nan")

    setattr(wrapper, _MARKER, True)
    return wrapper


def install() -> bool:
    """Wrap ``ConfigurableTask.process_results`` / ``aggregation`` for hanyi tasks. Returns True if it patched now."""
    module = sys.modules.get("lmms_eval.api.task")
    cls = getattr(module, "ConfigurableTask", None)
    if cls is None or getattr(cls, _MARKER, False):
        return False
    retried = cls.process_results
    plain = getattr(retried, "__wrapped__", retried)  # without tenacity's 5 retries

    @functools.wraps(retried)
    def process_results(self, doc, results, *args, **kwargs):
        name = getattr(getattr(self, "config", None), "task", None)
        if not is_hanyi_task(name):
            return retried(self, doc, results, *args, **kwargs)
        try:
            return plain(self, doc, results, *args, **kwargs)
        except Exception as exc:
            metrics = list(getattr(self, "_metric_fn_list", {}) or {})
            log.error(
                "hanyi: task %s: process_results failed on doc %s (%s: %s); metrics %s of this doc are NaN and the "
                "response is kept in the sample log",
                name,
                _doc_hint(doc),
                type(exc).__name__,
                exc,
                ", ".join(metrics) or "-",
            )
            return {**{m: ScoringFailed() for m in metrics}, ERROR_KEY: f"{type(exc).__name__}: {exc}"}

    original_aggregation = cls.aggregation

    @functools.wraps(original_aggregation)
    def aggregation(self):
        table = original_aggregation(self)
        name = getattr(getattr(self, "config", None), "task", None)
        if not is_hanyi_task(name) or not isinstance(table, dict):
            return table
        # lmms-eval asks for the table twice per metric while aggregating (cii: 58 calls of 44 entries); each
        # metric's wrapper is made once per task and aggregation function and reused while the function is the same
        made = _WRAPPERS.setdefault(self, {})
        out = {}
        for metric, fn in table.items():
            custom = callable(fn) and not str(getattr(fn, "__module__", "")).startswith("lmms_eval")
            if not custom:
                out[metric] = fn
                continue
            cached = made.get(metric)
            if cached is None or cached[0] is not fn:
                cached = made[metric] = (fn, guarded_aggregation(name, metric, fn))
            out[metric] = cached[1]
        return out

    cls.process_results = process_results
    cls.aggregation = aggregation
    setattr(cls, _MARKER, True)
    return True
