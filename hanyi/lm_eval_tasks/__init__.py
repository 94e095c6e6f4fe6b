"""lm-evaluation-harness (``lm_eval`` 0.4.13) YAMLs for the text-only tasks, one folder per benchmark.

The same task names as the lmms-eval text-only tasks (``punrebus_textonly``, ``cii_textonly``, ``unpie_text`` and
its subtasks), so one replay file serves both harnesses, plus log-likelihood variants (``*_mc``). Prompts, doc
processing and scoring are *not* here: the YAMLs point at ``hanyi.tasks.<benchmark>.utils`` and ``hanyi.metrics``
through the thin adapters of :mod:`hanyi.lm_eval_tasks._glue`. See ``docs/lm-eval.md``.
"""
