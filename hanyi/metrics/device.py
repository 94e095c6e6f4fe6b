"""Where the scoring backbones run: one rule for all of them.

The backbones (Pun Rebus's all-MiniLM-L6-v2, UNPIE's BERTScore model, VULCA's NLI model and embedder) run on
``$HANYI_SCORER_DEVICE``: ``auto`` (the default) is CUDA when torch sees a GPU, else the CPU; ``cpu``, ``cuda``,
``cuda:N`` or ``mps`` name the device. ``HANYI_VULCA_NLI_DEVICE`` and ``HANYI_VULCA_EMBED_DEVICE`` override it for
one backbone. The scores do not depend on it beyond float rounding: on an H200 every replayed metric equalled the
CPU run's to within 2.5e-9 (docs/backbones.md, "Device").
"""

from __future__ import annotations

import os
import re

ENV = "HANYI_SCORER_DEVICE"
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")


def problem(value: str) -> str | None:
    """What is wrong with a device setting, or ``None``.

    >>> problem("CUDA:1"), problem("gpu")
    (None, 'expected auto, cpu, cuda, cuda:N or mps')
    """
    return None if _DEVICE.fullmatch(value.strip().lower()) else "expected auto, cpu, cuda, cuda:N or mps"


def scorer_device(override: str | None = None) -> str:
    """The device for a scoring backbone: ``override`` (a per-backbone setting) else ``$HANYI_SCORER_DEVICE``, with
    ``auto`` resolved to ``cuda`` when torch sees a GPU and ``cpu`` otherwise.

    >>> scorer_device("CPU")
    'cpu'
    """
    value = (override or os.environ.get(ENV) or "auto").strip().lower()
    if value != "auto":
        return value
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"
