"""The task code's loggers: ``get_logger(name)`` is :func:`logging.getLogger` in the source tree and in the lm-eval export (as
lm-eval's tasks log), lmms-eval's ``eval_logger`` (loguru) in the lmms-eval export.

Callers use :mod:`logging`'s ``%``-style arguments (``log.warning("%d docs left out", n)``); the lmms-eval exporter
binds ``get_logger`` to :class:`EvalLogger`, which takes the same calls (``overrides`` in
``hanyi/export/lmms_eval_tasks.py``), the logger lmms-eval's own tasks use.
"""

import functools
import logging

from loguru import logger as eval_logger


class EvalLogger:
    """lmms-eval's ``eval_logger`` (loguru) for ``%``-style calls: loguru would format the message with ``str.format``
    (a ``%s`` printed as is, ``{`` an error), so it is %-formatted here, as :mod:`logging` does, and handed over whole.

    >>> seen = []
    >>> sink = eval_logger.add(lambda m: seen.append(m.record["message"]), format="{message}")
    >>> EvalLogger("hanyi.cii").warning("%d of %s: {x} %r", 2, "docs", 100 * "%")
    >>> eval_logger.remove(sink)
    >>> seen == ["2 of docs: {x} " + repr(100 * "%")]
    True
    """

    def __init__(self, name: str):
        self.name = name  # as logging.Logger's; loguru records the calling module itself

    def log(self, level: str, msg, *args) -> None:
        eval_logger.opt(depth=1).log(level, str(msg) % args if args else str(msg))

    debug, info = functools.partialmethod(log, "DEBUG"), functools.partialmethod(log, "INFO")
    warning, error = functools.partialmethod(log, "WARNING"), functools.partialmethod(log, "ERROR")


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` (:func:`logging.getLogger`; :class:`EvalLogger` in the lmms-eval export)."""
    return logging.getLogger(name)
