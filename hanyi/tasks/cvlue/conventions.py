"""The per-model conventions of this process, as resolved from ``lmms_eval_specific_kwargs``.

lmms-eval passes ``lmms_eval_specific_kwargs`` to ``doc_to_text`` but not to ``process_results``. The prompt hook
records the resolved box format / loglikelihood kind here, and scoring reads it back (and logs it in every sample),
so the convention follows the model named on the command line, never the gold box. One model per process.
"""

import os

from hanyi.tasks.cvlue.constants import DEFAULT_COORD_FORMAT, DEFAULT_LOGLIK, LOGLIK_ENV

_seen = {"coord_format": DEFAULT_COORD_FORMAT, "loglik": DEFAULT_LOGLIK}


def record(kwargs: dict) -> None:
    for key in _seen:
        if key in kwargs:
            _seen[key] = kwargs[key]


def coord_format() -> str:
    return _seen["coord_format"]


def loglik_kind() -> str:
    return os.environ.get(LOGLIK_ENV, "").strip() or _seen["loglik"]
