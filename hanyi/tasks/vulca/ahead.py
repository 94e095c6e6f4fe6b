"""VULCA's scoring ahead (:class:`hanyi.tasks._ahead.ScoreAhead`): the response filter of _default_template_yaml sees
every critique of the task at once, before ``process_results`` (utils.py) scores each doc."""

from hanyi.metrics.critique_embed import EmbedConfig, embed_texts, load_embedder
from hanyi.metrics.critique_json import split_critique
from hanyi.metrics.critique_scoring import critique_features
from hanyi.metrics.zeroshot_nli import NLIConfig, try_logits_fn
from hanyi.tasks import _ahead
from hanyi.tasks.vulca.scoring import critique_text, nli_text, rubric_prompts

ScoreAhead = _ahead.ScoreAhead  # valid UTF-8 (as utils.ValidUtf8Responses), then vulca_ahead below


def vulca_ahead(responses, docs):
    """Every critique of the task at once (:class:`ScoreAhead`): each distinct text embedded and NLI-scored once, in
    batches, into the caches ``process_results`` reads; the judge's rubric requests announced (docs known)."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client

    texts = [critique_text(r) for r in responses]
    config = JudgeConfig.from_env()
    if config is not None and docs is not None:
        get_judge_client(config).expect([p for d, t in zip(docs, texts) for p in rubric_prompts(d, t).values()])
    embed = EmbedConfig.from_env()
    if load_embedder(embed) is not None:
        embed_texts([t.strip() for t in texts], embed)
    nli = NLIConfig.from_env()
    if try_logits_fn(nli) is not None:
        critique_features([nli_text(t, split_critique(t)) for t in texts], nli)
