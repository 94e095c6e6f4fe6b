"""CII-Bench glue: prompts from templates/, scoring from hanyi.metrics.cii_extract / cii_ctc. See docs/cii.md."""

import logging
import os

from hanyi.data.cii import check_rows, hint_text, label_zh, parse_multilabel
from hanyi.metrics.cii_ctc import ctc_group_mean, ctc_human_answer, ctc_mean
from hanyi.metrics.cii_extract import accuracy_percent, category_accuracy, score_response
from hanyi.tasks._common import missing_image_ids, prompt_kwargs, render, require_images
from hanyi.tasks.cii import ctc, fewshot
from hanyi.tasks.cii.constants import CATEGORY_METRICS, CTC_DOMAIN, CTC_METRICS, LETTERS, OPTION_FIELDS

log = logging.getLogger("hanyi.cii")
OPTIONS = tuple(zip(LETTERS, OPTION_FIELDS))
CTC_FAILURES = "ctc_judge_failures"


def _checked(dataset):
    """Drop rows that cannot be scored and log every anomaly (images are not decoded here)."""
    rows = dataset.select_columns([c for c in dataset.column_names if c != "image"]).to_list()
    _, report = check_rows([{**row, "image": True} for row in rows])
    if report:
        log.warning("hanyi cii: data anomalies (first ids) %s", {k: v[:10] for k, v in report.items()})
    dropped = set(report.get("dropped_unscorable", ()))
    return dataset.filter(lambda rid: rid not in dropped, input_columns="id") if dropped else dataset


_IMAGE_FIX = (
    "Set HANYI_CII_IMAGE_ROOT to a clone of github.com/MING-ZCH/CII-Bench, or run "
    "`hanyi prepare cii --source github --github-root <clone>`"
)


def _with_images(dataset):
    """Image tasks: every doc must have its picture, checked before inference.

    Sources, in order: the embedded image; ``$HANYI_CII_IMAGE_ROOT/<local_path>`` (a GitHub clone); for a hub
    source, ``<local_path>`` fetched from the hub dataset repository (whose ``images/`` folder holds the pictures the
    parquet may lack, e.g. the dev split's) into the hub cache. What none of them serves is an error naming the ids.
    """
    root = os.environ.get("HANYI_CII_IMAGE_ROOT")
    if root:
        paths = dict(zip(dataset["id"], dataset["local_path"])) if "local_path" in dataset.column_names else {}
        fallback = lambda rid: bool(paths.get(rid)) and os.path.isfile(os.path.join(root, paths[rid]))  # noqa: E731
        return require_images(dataset, "image", "id", _IMAGE_FIX, fallback)
    return require_images(_fill_from_hub(dataset), "image", "id", _IMAGE_FIX)


def _fill_from_hub(dataset):
    """Fill missing images from the hub repository by ``local_path`` (only when the source is a hub id)."""
    from hanyi.data.sources import resolve

    source = resolve("cii")
    missing = set(missing_image_ids(dataset, "image", "id"))
    if not missing or os.path.isdir(source) or "local_path" not in dataset.column_names:
        return dataset
    import datasets
    import huggingface_hub

    fetched = {}
    for rid, rel in zip(dataset["id"], dataset["local_path"]):
        if rid in missing and rel:
            try:
                fetched[rid] = huggingface_hub.hf_hub_download(source, rel, repo_type="dataset")
            except Exception as exc:  # offline, or not in the repo: require_images names what is left
                log.warning("hanyi cii: could not fetch %s from %s: %s", rel, source, exc)
                break
    if not fetched:
        return dataset
    log.info("hanyi cii: %d image(s) not embedded in %s were fetched by local_path", len(fetched), source)
    raw = dataset.cast_column("image", datasets.Image(decode=False))
    raw = raw.map(
        lambda row: {"image": {"bytes": None, "path": fetched[row["id"]]} if row["id"] in fetched else row["image"]}
    )
    return raw.cast_column("image", datasets.Image())


def cii_process_docs(dataset):
    return _with_images(_checked(dataset))


def cii_textonly_process_docs(dataset):
    return _checked(dataset)


def cii_fewshot_process_docs(dataset):
    return fewshot.split_exemplars(_with_images(_checked(dataset)))


def cii_ctc_process_docs(dataset):
    """One doc per distinct CTC image: domain 中华传统文化, first question per ``explanation`` (spec §4.1)."""
    seen, keep = set(), []
    for i, (domain, expl) in enumerate(zip(dataset["domain"], dataset["explanation"])):
        if domain == CTC_DOMAIN and expl not in seen:
            seen.add(expl)
            keep.append(i)
    return _with_images(dataset.select(keep))


def cii_doc_to_visual(doc):
    from hanyi.data.images import ImageUnavailableError, to_pil

    root = os.environ.get("HANYI_CII_IMAGE_ROOT")
    value = doc.get("image") if doc.get("image") is not None or not root else doc.get("local_path")
    try:
        return [to_pil(value, doc_hint=f"CII-Bench id={doc.get('id')}", base_dir=root)]
    except ImageUnavailableError as exc:
        raise ImageUnavailableError(f"{exc}. {_IMAGE_FIX}") from None


def cii_doc_to_visual_none(doc):
    return []


def cii_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, template="none.jinja", hint_field=None)
    hint = hint_text(doc[kw["hint_field"]]) if kw["hint_field"] else None
    return render("cii", kw["template"], doc=doc, options=OPTIONS, hint=hint)


def _shots(kwargs):
    return int(prompt_kwargs(kwargs, shots=1)["shots"])


def cii_fewshot_doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    exemplars = fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs))
    return [img for ex in exemplars for img in cii_doc_to_visual(ex)] + cii_doc_to_visual(doc)


def cii_fewshot_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    exemplars = fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs))
    return render("cii", "fewshot_single.jinja", exemplars=exemplars, target=doc, options=OPTIONS)


def _user_turn(doc):
    text = render("cii", "none.jinja", doc=doc, options=OPTIONS)
    return {
        "role": "user",
        "content": [{"type": "image", "url": cii_doc_to_visual(doc)[0]}, {"type": "text", "text": text}],
    }


def cii_fewshot_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """Official multi-turn few-shot: per exemplar a user turn (image, none prompt) and the bare answer letter."""
    messages = []
    for ex in fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs)):
        messages += [_user_turn(ex), {"role": "assistant", "content": [{"type": "text", "text": ex["answer"]}]}]
    return messages + [_user_turn(doc)]


def cii_process_results(doc, results):
    response = results[0] if results else ""
    scored = score_response(response, [doc[f] for f in OPTION_FIELDS], doc["answer"])
    labels = {
        "domain": doc["domain"],
        "emotion": doc["emotion"],
        "difficulty": doc["difficulty"],
        "image_types": [label_zh(x) for x in parse_multilabel(doc["image_type"])],
        "rhetorics": parse_multilabel(doc["rhetoric"]),
    }
    item = {"id": doc["id"], "answer": doc["answer"], "response": response, **scored, **labels}
    per_category = {}
    for name, (field, label) in CATEGORY_METRICS.items():
        member = label in labels[field] if isinstance(labels[field], list) else labels[field] == label
        per_category[name] = {"correct": scored["correct"], field: labels[field]} if member else None
    return {"acc": item, "acc_robust": item, "miss_rate": item, **per_category}


# Accuracies and rates are fractions in [0, 1], hanyi's one unit for every benchmark (docs/reading-results.md,
# "Units"); the report converts to the paper's percent.
def cii_acc(items):
    return accuracy_percent(items, "correct") / 100


def cii_acc_robust(items):
    return accuracy_percent(items, "correct_robust") / 100


def cii_miss_rate(items):
    return accuracy_percent(items, "miss") / 100


def cii_ctc_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, ctc_prompt=None)
    return kw["ctc_prompt"] or render("cii", "ctc_describe.jinja")


def cii_ctc_process_results(doc, results):
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    description = results[0] if results else ""
    out = {"ctc_blank_rate": float(not str(description).strip())}
    judge = JudgeConfig.from_env()
    if judge is None:
        warn_judge_disabled([*CTC_METRICS, CTC_FAILURES])
        return out
    human = ctc_human_answer(doc["explanation"], doc["metaphorical_meaning"], doc.get("title", ""))
    user = render("cii", "ctc_judge_user.jinja", human_answer=human, description=description)
    item = {"id": doc["id"], "difficulty": doc["difficulty"], "emotion": doc["emotion"], "judge_user": user}
    item["judge_model"] = judge.model  # provenance: the report compares it with the paper's judge
    return {**out, **dict.fromkeys([*CTC_METRICS, CTC_FAILURES], item)}


def _aggregation(name):
    if name in CATEGORY_METRICS:
        field, label = CATEGORY_METRICS[name]

        def agg(items):
            return category_accuracy([it for it in items if it is not None], field, label) / 100

    elif name in CTC_METRICS or name == CTC_FAILURES:
        field, label = CTC_METRICS.get(name, (None, None))

        def agg(items):
            judged = ctc.judge_batch(items, render("cii", "ctc_judge_system.jinja"))
            if name == CTC_FAILURES:
                return float(judged["failures"])
            scores = judged["scores"]
            return ctc_mean(scores) if field is None else ctc_group_mean(scores, [it[field] for it in items], label)

    else:
        raise AttributeError(name)
    agg.__name__ = agg.__qualname__ = f"cii_{name}"
    return agg


def __getattr__(name):
    """``utils.cii_acc_domain_life`` etc.: one aggregation per category metric (names in constants.py)."""
    if name.startswith("cii_"):
        return _aggregation(name[len("cii_") :])
    raise AttributeError(name)
