"""VULCA glue: prompts from templates/; each critique scored here (the critique_* metric modules) into plain numbers that
the sample log keeps; the aggregations the YAMLs name are in aggregate.py. See docs/vulca.md."""

from hanyi import backbones
from hanyi.data.images import ImageUnavailableError, to_pil
from hanyi.data.vulca_reference import load_reference
from hanyi.metrics.critique_json import split_critique
from hanyi.metrics.critique_scoring import chance, critique_features, doc_matched
from hanyi.metrics.zeroshot_nli import NLIConfig, try_logits_fn
from hanyi.tasks import _common
from hanyi.tasks._common import doc_label, prompt_kwargs, render, require_images, visuals
from hanyi.tasks.vulca.constants import CUSTOM
from hanyi.tasks.vulca.scoring import critique_text, embed_record, nli_text, rubric_levels

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names

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
    if "image_slices" in dataset.column_names:  # every slice too, not just the whole painting
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
    human profile, and the ``chance`` level) and, for the sample-log breakdowns, the critique's zero-shot scores (``vulca_nli``), embedding
    (``vulca_embed``) and judge levels (``vulca_rubric``). An unusable answer (None, not text, empty) is scored as the
    empty text, as the released code would; nothing raises.
    """
    response = critique_text(results[0] if isinstance(results, (list, tuple)) and results else None)
    split, painting = split_critique(response), {"painting": doc.get("doc_id")}  # the cluster_key (all conditions)
    out = {
        # "score": lmms-eval's name for a dict item's per-doc value (its CLT standard error; the paired test)
        "json_valid_rate": {"score": float(split["json_valid"]), "empty": float(not response.strip()), **painting},
        "vulca_evidence": {
            "doc": doc_label(doc, "title_zh"),
            "chars": len(response),
            "json_error": split["json_error"],
            "image_sha256": doc.get("image_sha256"),  # the painting's bytes: paired runs are matched on them
        },
    }
    out.update(rubric_levels(doc, response))
    out.update(embed_record(response))
    nli = NLIConfig.from_env()
    if try_logits_fn(nli) is None:  # warned once; NLI metrics are not emitted
        return out
    feats = critique_features([nli_text(response, split)], nli)[0]  # cached (ahead.py), else this doc's 38 pairs
    reference = load_reference()
    suffix = "" if backbones.resolve("vulca_nli").paper else CUSTOM
    out["expert_alignment" + suffix] = {"score": doc_matched(feats, reference), "chance": chance(reference), **painting}
    out["vulca_nli" + suffix] = feats
    return out
