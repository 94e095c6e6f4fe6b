"""VULCA glue: prompts from templates/, per-critique items for hanyi.metrics.critique_*; the aggregations the YAMLs
name are in aggregate.py. See docs/vulca.md."""

from hanyi import backbones, settings
from hanyi.data.images import ImageUnavailableError, to_pil
from hanyi.data.vulca_embed_reference import load_embed_reference
from hanyi.metrics.critique_embed import (
    EMBED_METRICS,
    REFERENCE_METRICS,
    EmbedConfig,
    EmbedItem,
    load_embedder,
    reference_mismatch,
    warn_once,
)
from hanyi.metrics.critique_json import split_critique
from hanyi.metrics.critique_rubric import RUBRIC_METRICS, RubricItem
from hanyi.metrics.critique_scoring import NLI_METRICS, CritiqueItem
from hanyi.metrics.zeroshot_nli import NLIConfig, try_logits_fn
from hanyi.tasks import _common
from hanyi.tasks._common import doc_label, prompt_kwargs, render, require_images, visuals

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names

#: Key suffix when the NLI model or template, or the embedder, is not the paper's (``hanyi.backbones``;
#: docs/backbones.md).
CUSTOM = "_custom_model"
_PROMPT_DEFAULTS = {"persona": "", "knowledge_base": True, "prompt": "core_prompt_en.md", "images": "whole"}


def vulca_process_docs(dataset):
    """Every painting present, and the NLI model, embedder and judge resolved, at load time before any model call."""
    backbones.require("vulca_nli", "vulca_embedder", "judge")
    return require_images(dataset, "image", "doc_id", "Rebuild the data with `hanyi prepare vulca --images <dir>`.")


def vulca_doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    if prompt_kwargs(lmms_eval_specific_kwargs, **_PROMPT_DEFAULTS)["images"] == "slices":
        hint = doc_label(doc, "title_zh")
        if not doc.get("image_slices"):
            raise ImageUnavailableError(
                f"{hint}: images=slices needs the 'slices' config (hanyi prepare vulca --slices)"
            )
        return [to_pil(s, doc_hint=hint) for s in doc["image_slices"]]
    return visuals(doc, "image", id_fields=("title_zh",))


def vulca_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, **_PROMPT_DEFAULTS)
    return render(
        "vulca", "vulca_prompt.jinja", persona=kw["persona"], prompt=kw["prompt"], knowledge_base=kw["knowledge_base"]
    )


def vulca_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """One user turn, text first and then the image(s), as the research scripts sent it (spec §3.1)."""
    images = [{"type": "image", "url": img} for img in vulca_doc_to_visual(doc, lmms_eval_specific_kwargs)]
    return [
        {
            "role": "user",
            "content": [{"type": "text", "text": vulca_doc_to_text(doc, lmms_eval_specific_kwargs)}, *images],
        }
    ]


def vulca_process_results(doc, results):
    response = results[0] if results and isinstance(results[0], str) else ""
    split = split_critique(response)
    out = {
        "json_valid_rate": float(split["json_valid"]),
        "empty_response_rate": float(not response.strip()),
        "vulca_evidence": {
            "doc": doc_label(doc, "title_zh"),
            "chars": len(response),
            "json_error": split["json_error"],
        },
    }
    out.update(_rubric_items(doc, response))
    out.update(_embed_items(doc, response))
    nli = NLIConfig.from_env()
    if try_logits_fn(nli) is None:  # warned once; NLI metrics are not emitted
        return out
    commentary = settings.value("HANYI_VULCA_SCORE_TEXT") == "commentary"  # validated, lower case
    text = split["commentary"] if commentary else response.strip()
    suffix = "" if backbones.resolve("vulca_nli").paper else CUSTOM
    out.update({m + suffix: CritiqueItem(m, str(doc["doc_id"]), text, nli) for m in NLI_METRICS})
    return out


def _rubric_items(doc, response):
    """Optional rubric-judge items (judged in batch at aggregation); none, after one warning, without a judge."""
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    if JudgeConfig.from_env() is None:
        warn_judge_disabled(list(RUBRIC_METRICS))
        return {}
    title = doc.get("title_zh") or str(doc["doc_id"])
    return {m: RubricItem(m, str(doc["doc_id"]), title, response.strip()) for m in RUBRIC_METRICS}


def _embed_items(doc, response):
    """Optional sem_* items: none when the embedder does not load; no human-reference metrics when the configured
    embedder differs from the shipped reference's (one warning each)."""
    config = EmbedConfig.from_env()
    if load_embedder(config) is None:
        return {}
    metrics = EMBED_METRICS
    why = reference_mismatch(config, load_embed_reference())
    if why:
        warn_once(f"hanyi vulca: {', '.join(REFERENCE_METRICS)} not emitted: {why}.")
        metrics = [m for m in EMBED_METRICS if m not in REFERENCE_METRICS]
    suffix = "" if backbones.resolve("vulca_embedder").paper else CUSTOM  # not bge-large-zh-v1.5: its own keys
    return {m + suffix: EmbedItem(m, str(doc["doc_id"]), response.strip(), config) for m in metrics}
