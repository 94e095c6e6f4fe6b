"""UNPIE's scoring ahead (:class:`hanyi.tasks._ahead.ScoreAhead`): the response filter of the reconstruction and
disambiguation YAMLs sees every answer of the task at once, before ``process_results`` (utils.py) scores each doc."""

from hanyi.data import unpie as data
from hanyi.metrics import free_text
from hanyi.tasks import _ahead
from hanyi.tasks.unpie import scoring
from hanyi.tasks.unpie.constants import ANSWER_LABELS, LANGUAGE_NAMES
from hanyi.tasks.unpie.scoring import caption_count, judge_prompt, response_text

ScoreAhead = _ahead.ScoreAhead  # valid UTF-8 (as utils.ValidUtf8Responses), then the YAML's *_ahead below


def unpie_reconstruction_ahead(responses, docs):
    """Every answer's judge request announced at once (:class:`ScoreAhead`), sent at the judge's concurrency when
    ``process_results`` asks for the first, whatever ``--process_docs_parallel``; an empty answer is not sent."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client

    config = JudgeConfig.from_env()
    if config is None or docs is None:
        return
    labels = ANSWER_LABELS["reconstruction"]
    preds = [(d, free_text.extract_labelled_answer(response_text([r]), labels)) for d, r in zip(docs, responses)]
    prompts = [judge_prompt(d, p) for d, p in preds if p.strip() and not caption_count(d).get("caption_missing")]
    get_judge_client(config).expect(prompts)


def unpie_disambiguation_ahead(responses, docs):
    """Both extractions of every answer, and every target and distractor, encoded once for BERTScore, in batches
    (:class:`ScoreAhead`); ``process_results`` then decides each doc from the cached encodings."""
    scorer = scoring.bertscore_scorer() if docs is not None else None
    strings = []
    for doc, response in zip(docs if scorer is not None else (), map(response_text, ([r] for r in responses))):
        if "caption" in doc or doc["image_status"] == data.IMAGE_OK:  # else not scored (process_results)
            label = (dict(LANGUAGE_NAMES)[doc["lang"]],)
            answers = (
                free_text.extract_labelled_answer(response, label),
                free_text.extract_after_preamble(response, label),
            )
            strings += [*answers, doc["target"], doc["distractor"]]
    if strings:
        scorer.encode([s for s in strings if s.strip()])
