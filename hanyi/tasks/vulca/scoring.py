"""VULCA per-critique scoring helpers called by ``process_results`` (utils.py) and the scoring ahead (ahead.py): the
answer as text, what the NLI model reads, the judge's rubric prompts and levels, and the critique's embedding record.
See docs/vulca.md."""

from hanyi import backbones, settings
from hanyi.data.vulca_embed_reference import load_embed_reference
from hanyi.metrics import critique_embed, critique_rubric
from hanyi.metrics.critique_embed import REFERENCE_METRICS, EmbedConfig, load_embedder, reference_mismatch, warn_once
from hanyi.metrics.critique_rubric import RUBRICS, rubric_template_vars
from hanyi.tasks._common import render
from hanyi.tasks.vulca.constants import CUSTOM


def nli_text(response, split) -> str:
    """What the NLI model reads: the critique, or its commentary part (``HANYI_VULCA_SCORE_TEXT=commentary``)."""
    commentary = settings.value("HANYI_VULCA_SCORE_TEXT") == "commentary"  # validated, lower case
    return split["commentary"] if commentary else response.strip()


def critique_text(response) -> str:
    """The answer as valid text: a non-string is no answer; a lone surrogate (half a UTF-16 pair) becomes U+FFFD, as
    the task's response filter does, so the NLI tokenizer and the JSON log accept it."""
    if not isinstance(response, str):
        return ""
    return response.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def rubric_levels(doc, response):
    """Optional judge levels of the three rubrics (one request per rubric); none, after one warning, without a judge."""
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    config = JudgeConfig.from_env()
    if config is None:
        warn_judge_disabled([*RUBRICS, critique_rubric.UNSCORED])
        return {}
    levels = critique_rubric.doc_levels(rubric_prompts(doc, response), config)
    return {"vulca_rubric": levels | {"judge_model": config.model}}  # the judge: provenance (report, leaderboard)


def rubric_prompts(doc, response) -> dict:
    title = doc.get("title_zh") or str(doc["doc_id"])
    return {
        m: render("vulca", "rubric_judge.jinja", title=title, critique=response.strip(), **rubric_template_vars(m))
        for m in RUBRICS
    }


def embed_record(response):
    """Optional embedding of the critique; none when the embedder does not load; no similarity to the human texts
    when the configured embedder differs from the shipped reference's (one warning each)."""
    config = EmbedConfig.from_env()
    if load_embedder(config) is None:
        return {}
    reference = load_embed_reference()
    why = reference_mismatch(config, reference)
    if why:
        warn_once(f"hanyi vulca: {', '.join(REFERENCE_METRICS)} not computed: {why}.")
    suffix = "" if backbones.resolve("vulca_embedder").paper else CUSTOM  # not bge-large-zh-v1.5: its own keys
    return {"vulca_embed" + suffix: critique_embed.doc_record(response.strip(), config, reference)}
