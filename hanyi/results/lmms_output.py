"""Write a ``simple_evaluate`` results dict to disk exactly as the ``lmms-eval`` CLI does (its own tracker).

For Python-API users (and our tests) who want ``hanyi report`` on a run they did not start from the CLI::

    results = lmms_eval.evaluator.simple_evaluate(model=..., tasks=[...], log_samples=True)
    save_like_cli(results, "out/", model_args="pretrained=my/model")
"""

from __future__ import annotations

import copy
import datetime


def save_like_cli(
    results: dict, output_path: str, model_args: str | None = None, model_source: str | None = None
) -> str:
    """Save ``results`` (and its ``samples``) under ``output_path`` with lmms-eval's ``EvaluationTracker``.

    ``results`` is not modified. Returns the model sub-directory written to.
    """
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    results = copy.deepcopy(results)
    samples = results.pop("samples", None)
    config = results.get("config") or {}
    tracker = EvaluationTracker(output_path=output_path)
    tracker.general_config_tracker.log_experiment_args(
        model_source=model_source or str(config.get("model", "")),
        model_args=model_args if model_args is not None else str(config.get("model_args") or ""),
        system_instruction=None,
        chat_template=None,
        fewshot_as_multiturn=False,
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
    tracker.save_results_aggregated(results=results, samples=samples, datetime_str=stamp)
    for task_name in results.get("configs", {}):
        if samples and task_name in samples:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    import os

    return os.path.join(output_path, tracker.general_config_tracker.model_name_sanitized)
