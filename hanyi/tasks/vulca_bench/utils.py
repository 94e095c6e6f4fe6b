"""VULCA-Bench glue: the release's critique prompt (templates/critique.jinja) with the artwork's image; each critique
scored here (:mod:`hanyi.metrics.vulca_bench`) into plain numbers the sample log keeps. See docs/vulca_bench.md."""

from hanyi.metrics import vulca_bench as vb
from hanyi.metrics.vulca_bench_bilingual import dcr_bilingual
from hanyi.tasks import _common
from hanyi.tasks._common import render, require_images, visuals
from hanyi.tasks.vulca_bench.constants import JUDGE_METRIC

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names
_FIX = "Rebuild the data with `hanyi prepare vulca_bench --jsonl <release jsonl> --images <dir>`."


def _culture_docs(dataset, culture: str):
    """The rows of ``culture``, every one checked before any model call: dimension ids of the culture's prefix, a
    unique ``pair_id``, an image that decodes; and no row of the data has a culture outside the eight (in the
    release's lower case). A culture with no rows raises (the release's subsets at hand lack Chinese and Western)."""
    unknown = sorted({str(c) for c in dataset["culture"]} - set(vb.CULTURES))
    if unknown:  # a row no culture task would keep is lost silently otherwise
        raise ValueError(f"vulca_bench_{culture}: the data has rows of unknown culture(s) {unknown[:5]}. {_FIX}")
    rows = dataset.filter(lambda c: c == culture, input_columns=["culture"])
    if len(rows) == 0:
        raise ValueError(f"vulca_bench_{culture}: the data has no {culture} rows. {_FIX}")
    seen = set()
    for pair_id, dims in zip(rows["pair_id"], rows["covered_dimensions"]):
        try:
            bad = vb.bad_dimensions(vb.parse_dimensions(dims), culture)
        except ValueError as exc:
            raise ValueError(f"vulca_bench_{culture}: pair_id {pair_id}: covered_dimensions: {exc}. {_FIX}") from None
        if bad or pair_id in seen or not pair_id:
            why = f"dimension id(s) {bad[:5]}" if bad else "a duplicate or empty pair_id"
            raise ValueError(f"vulca_bench_{culture}: pair_id {pair_id!r}: {why}. {_FIX}")
        seen.add(pair_id)
    return require_images(rows, "image", "pair_id", _FIX)


def vulca_bench_chinese_docs(dataset):
    return _culture_docs(dataset, "chinese")


def vulca_bench_western_docs(dataset):
    return _culture_docs(dataset, "western")


def vulca_bench_japanese_docs(dataset):
    return _culture_docs(dataset, "japanese")


def vulca_bench_korean_docs(dataset):
    return _culture_docs(dataset, "korean")


def vulca_bench_islamic_docs(dataset):
    return _culture_docs(dataset, "islamic")


def vulca_bench_indian_docs(dataset):
    return _culture_docs(dataset, "indian")


def vulca_bench_hermitage_docs(dataset):
    return _culture_docs(dataset, "hermitage")


def vulca_bench_mural_docs(dataset):
    return _culture_docs(dataset, "mural")


def vulca_bench_doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    return visuals(doc, "image", id_fields=("pair_id",))


def vulca_bench_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return render("vulca_bench", "critique.jinja")


def _text(response) -> str:
    """The answer as valid text: a non-string is no answer (scored as the empty critique, as the release scores a
    missing one); a lone surrogate becomes U+FFFD, as the response filter does."""
    if not isinstance(response, str):
        return ""
    return response.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def vulca_bench_process_results(doc, results):
    """One critique's per-doc result, plain JSON; nothing raises. ``dcr`` and ``layer_score`` are the release's
    per-critique numbers (``score``) with their per-layer parts and evidence (the answer's length, the keywords that
    matched); ``dcr_bilingual_robust`` is ours; each item carries the artwork (its image's sha256, the
    ``cluster_key``: two rows of the release can show one artwork)."""
    text = _text(results[0] if isinstance(results, (list, tuple)) and results else None)
    culture = str(doc.get("culture") or "").strip().lower()
    artwork = doc.get("image_sha256") or doc.get("image_path")  # the sha256 whenever the task loaded the docs
    tag = {"artwork": artwork, "pair_id": doc.get("pair_id"), "culture": culture}
    d, layers = vb.dcr(text, culture), vb.layer_scores(text)
    out = {
        "dcr": {
            "score": d["dcr"],
            "layers": d["layer_scores"],
            "bonus": d["cultural_bonus"],
            "chars": len(text),
            "empty": not text.strip(),
            "image_sha256": doc.get("image_sha256"),  # the image's bytes: paired runs are matched on them
            **tag,
        },
        "layer_score": {
            "score": layers["overall_score"],
            "layers": {k: v["score"] for k, v in layers["layers"].items()},
            "inverted": float(layers["pyramid_inverted"]),
            "evidence": {k: v["evidence"] for k, v in layers["layers"].items()},  # the keywords that matched
            **tag,
        },
        "dcr_bilingual_robust": {"score": dcr_bilingual(text, culture), **tag},
    }
    out.update(_judge(doc, text, tag))
    return out


def _judge(doc, text, tag) -> dict:
    """Our uncalibrated judge score (1-5) when a judge is configured; none, after one warning, otherwise. The
    release's calibrated judge has no released parameters: nothing here is named as the paper's."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client, parse_integer_score, warn_judge_disabled

    config = JudgeConfig.from_env()
    if config is None:
        warn_judge_disabled([JUDGE_METRIC])
        return {}
    prompt = render("vulca_bench", "judge.jinja", critique=text.strip(), culture=tag["culture"], title=doc.get("title"))
    (result,) = get_judge_client(config).judge_many([prompt], lambda t: parse_integer_score(t, 1, 5))
    score = float("nan") if result.value is None else float(result.value)
    return {JUDGE_METRIC: {"score": score, "error": result.error, "judge_model": config.model, **tag}}
