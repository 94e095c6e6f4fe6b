"""The float rule: how hanyi compares a number from one run with the same number from another (docs/dev/contributing.md,
"Floats: one rule").

A value that passes through a neural backbone (all-MiniLM-L6-v2, BERTScore's mBERT, the VULCA NLI model and embedder)
depends on the CPU's or GPU's kernels, the thread count and the shape of the batch it was encoded in: the same
strings give float32 outputs a few units in the last place apart. So:

* within one process on one machine, same inputs in the same order: bit for bit (``==``);
* across machines, thread counts, batchings, orders or processes: within :data:`RTOL` and :data:`ATOL` (:func:`close`);
* every other number (counts, shares of 0/1 scores, BLEU, chrF, METEOR, IoU) is arithmetic on the same inputs and is
  compared exactly everywhere.

Measured (docs/dev/contributing.md): all-MiniLM-L6-v2 cosines move by at most 3.6e-7 (3 float32 units at 1.0) between 1
and 2 threads and between one string per call and batches of 7 to 128; the mean S_Sim of the plain-run fixture by
1.3e-7 relative between an Intel and an AMD CPU. The tolerance leaves room for deeper models and for GPUs.

>>> close(0.19028734674470293, 0.19028732139203283)  # the same element_sim on two CPUs
True
>>> close(0.19028734674470293, 0.19028734674470293 * (1 + 1e-4))
False
>>> passes_through_backbone("element_sim"), passes_through_backbone("element_abs"), passes_through_backbone("sem_zh_stderr")
(True, False, True)
"""

from __future__ import annotations

import math
import re

#: Relative tolerance for a backbone value compared across machines, batchings, orders or processes.
RTOL = 1e-6
#: Absolute tolerance, for values near 0 (a cosine or probability of 0.01 carries the same absolute float32 noise as
#: one of 0.9): backbone metrics are on a unit scale (scores, shares, cosines in [-1, 1]).
ATOL = 1e-6

#: Metric keys whose value passes through a neural backbone (the paper key, its ``_custom_model`` twin, the report's
#: breakdowns of it). A decision that thresholds a backbone value (UNPIE's BERTScore choice, VULCA's primary
#: profile) can flip at a near tie; its share then moves by 1/n, which no tolerance covers and none of our fixtures has.
BACKBONE_METRIC = re.compile(
    r"^(element_sim|disamb_acc_bertscore|disamb_acc_custom_model|profile_|primary_profile|feat_|qual_"
    r"|expert_alignment|sem_)"
)


def passes_through_backbone(metric: str) -> bool:
    """Whether lmms-eval metric key ``metric`` (``name``, ``name,filter`` or ``name_stderr...``) is a backbone value."""
    return bool(BACKBONE_METRIC.match(metric.split(",")[0]))


def close(a: float, b: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """``|a - b| <= atol + rtol * max(|a|, |b|)``, NaN equal to NaN (the rule for backbone values across runs)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def same_value(metric: str, a, b) -> bool:
    """Whether two runs' values of ``metric`` agree under the rule: :func:`close` for a backbone value, exactly
    (NaN equal to NaN) for everything else.

    >>> same_value("element_sim,none", 0.5, 0.5 + 1e-9), same_value("accuracy,none", 0.5, 0.5 + 1e-9)
    (True, False)
    """
    if a == b:
        return True
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if passes_through_backbone(metric):
            return close(float(a), float(b))
        return math.isnan(a) and math.isnan(b) if isinstance(a, float) and isinstance(b, float) else False
    return False


def differences(found: dict, expected: dict, stderr_rtol: float = 0.0) -> list[str]:
    """Every number of two runs' ``{task: {"metric,filter": value}}`` that does not agree under the rule
    (:func:`same_value`), as ``"task/key: found != expected"``; a task or key on one side only is a difference too.
    A standard error (``*_stderr*`` key) may be allowed ``stderr_rtol`` (lmms-eval sums it in the order ranks hand
    the values over).

    >>> differences({"t": {"acc,none": 0.5, "element_sim,none": 0.25}}, {"t": {"acc,none": 0.5, "element_sim,none": 0.2500001}})
    []
    >>> differences({"t": {"acc,none": 0.5}}, {"t": {"acc,none": 0.6, "f1,none": 1.0}})
    ['t/acc,none: 0.5 != 0.6', "t/f1,none: '<absent>' != 1.0"]
    """
    out = []
    for task in sorted(set(found) | set(expected)):
        a, b = found.get(task, {}), expected.get(task, {})
        for key in sorted(set(a) | set(b)):
            va, vb = a.get(key, "<absent>"), b.get(key, "<absent>")
            same = same_value(key, va, vb)
            if not same and stderr_rtol and "_stderr" in key.split(",")[0]:
                same = isinstance(va, float) and isinstance(vb, float) and math.isclose(va, vb, rel_tol=stderr_rtol)
            if not same:
                out.append(f"{task}/{key}: {va!r} != {vb!r}")
    return out
