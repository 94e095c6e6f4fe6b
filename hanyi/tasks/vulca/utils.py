"""VULCA glue: prompts from templates/; each critique scored here (hanyi.metrics.critique_*) into plain numbers that
the sample log keeps; the aggregations the YAMLs name are in aggregate.py. See docs/vulca.md."""

from hanyi import backbones, settings
from hanyi.data.images import ImageUnavailableError, to_pil
from hanyi.data.vulca_embed_reference import load_embed_reference
from hanyi.data.vulca_reference import load_reference
from hanyi.metrics import critique_embed, critique_rubric
from hanyi.metrics.critique_embed import (
    REFERENCE_METRICS,
    EmbedConfig,
    load_embedder,
    reference_mismatch,
    warn_once,
)
from hanyi.metrics.critique_json import split_critique
from hanyi.metrics.critique_rubric import RUBRICS, rubric_template_vars
from hanyi.metrics.critique_scoring import chance, critique_features, doc_matched
from hanyi.metrics.zeroshot_nli import NLIConfig, try_logits_fn
from hanyi.tasks import _common
from hanyi.tasks._common import doc_label, prompt_kwargs, render, require_images, visuals

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names

#: Key suffix when the NLI model or template, or the embedder, is not the paper's (``hanyi.backbones``;
#: docs/backbones.md).
CUSTOM = "_custom_model"
_PROMPT_DEFAULTS = {"persona": "", "knowledge_base": True, "prompt": "core_prompt_en.md", "images": "whole"}


def vulca_process_docs(dataset):
    """Every painting present once, and the NLI model, embedder and judge resolved, at load time before any model
    call."""
    backbones.require("vulca_nli", "vulca_embedder", "judge")
    fix = "Rebuild the data with `hanyi prepare vulca --images <dir>`."
    ids = [str(d) for d in dataset["doc_id"]]
    twice = sorted({d for d in ids if ids.count(d) > 1})
    if twice:  # a painting given twice would be scored twice and weigh double in its cluster
        raise ValueError(f"vulca: doc_id(s) in more than one row: {', '.join(twice)}. {fix}")
    if "image_slices" in dataset.column_names:  # every slice too (issue 40)
        require_images(dataset, "image_slices", "doc_id", fix)
    return require_images(dataset, "image", "doc_id", fix)


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
    """One critique's per-doc result, plain JSON: the emitted metrics' items (``json_valid_rate``: ``score`` 1.0 when
    the answer's JSON is valid, and its ``empty`` flag; ``expert_alignment``: ``score`` 1.0 when the critique matches a
    human profile, and the ``chance`` level) and, for ``hanyi report``'s breakdowns, the critique's zero-shot scores (``vulca_nli``), embedding
    (``vulca_embed``) and judge levels (``vulca_rubric``). An unusable answer (None, not text, empty) is scored as the
    empty text, as the released code would; nothing raises.
    """
    response = _text(results[0] if isinstance(results, (list, tuple)) and results else None)
    split, painting = split_critique(response), {"painting": doc.get("doc_id")}  # the cluster_key (all conditions)
    out = {
        # "score": lmms-eval's name for a dict item's per-doc value (its CLT standard error; hanyi report's paired test)
        "json_valid_rate": {"score": float(split["json_valid"]), "empty": float(not response.strip()), **painting},
        "vulca_evidence": {
            "doc": doc_label(doc, "title_zh"),
            "chars": len(response),
            "json_error": split["json_error"],
            "image_sha256": doc.get("image_sha256"),  # the painting's bytes: hanyi report pairs runs on them
        },
    }
    out.update(_rubric_levels(doc, response))
    out.update(_embed_record(response))
    nli = NLIConfig.from_env()
    if try_logits_fn(nli) is None:  # warned once; NLI metrics are not emitted
        return out
    feats = critique_features([_nli_text(response, split)], nli)[0]  # cached (ahead.py), else this doc's 38 pairs
    reference = load_reference()
    suffix = "" if backbones.resolve("vulca_nli").paper else CUSTOM
    out["expert_alignment" + suffix] = {"score": doc_matched(feats, reference), "chance": chance(reference), **painting}
    out["vulca_nli" + suffix] = feats
    return out


def _nli_text(response, split) -> str:
    """What the NLI model reads: the critique, or its commentary part (``HANYI_VULCA_SCORE_TEXT=commentary``)."""
    commentary = settings.value("HANYI_VULCA_SCORE_TEXT") == "commentary"  # validated, lower case
    return split["commentary"] if commentary else response.strip()


def _text(response) -> str:
    """The answer as valid text: a non-string is no answer; a lone surrogate (half a UTF-16 pair) becomes U+FFFD, as
    the task's response filter does, so the NLI tokenizer and the JSON log accept it."""
    if not isinstance(response, str):
        return ""
    return response.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _rubric_levels(doc, response):
    """Optional judge levels of the three rubrics (one request per rubric); none, after one warning, without a judge."""
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    config = JudgeConfig.from_env()
    if config is None:
        warn_judge_disabled([*RUBRICS, critique_rubric.UNSCORED])
        return {}
    levels = critique_rubric.doc_levels(_rubric_prompts(doc, response), config)
    return {"vulca_rubric": levels | {"judge_model": config.model}}  # the judge: provenance (report, leaderboard)


def _rubric_prompts(doc, response) -> dict:
    title = doc.get("title_zh") or str(doc["doc_id"])
    return {
        m: render("vulca", "rubric_judge.jinja", title=title, critique=response.strip(), **rubric_template_vars(m))
        for m in RUBRICS
    }


def _embed_record(response):
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
