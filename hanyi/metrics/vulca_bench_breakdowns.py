"""VULCA-Bench numbers computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

Each task is one culture, so the report's rows already break the benchmark down by culture; these add the per-layer
parts the release prints beside its totals (``calculate_dcr.py``'s ``layer_scores`` and ``cultural_bonus``,
``layer_scorer.py``'s per-layer 1-5 scores and its inverted-pyramid count), each with a 95 % interval resampled on
the artworks (the tasks' ``cluster_key``): ``dcr_l1``..``dcr_l5``, ``cultural_bonus``, ``layer_score_l1``..
``layer_score_l5``, ``pyramid_inverted_rate`` (lower is better: L5 above the L1-L4 mean by more than 0.5, the
release's sign of pseudo-understanding).
"""

from __future__ import annotations

from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.resample import decomposed, nan_mean, sum_mean
from hanyi.metrics.vulca_bench import LAYERS

TASKS = r"vulca_bench_.*"


def _field_mean(name: str, *path: str, combine=sum_mean):
    """A decomposed mean of ``item[path[0]][path[1]]...`` registered as ``name`` (the report's interval); the 1-5
    layer scores combine with ``nan_mean``, never read as a share of 0/1 values."""

    @decomposed(combine, light=True, name=name)
    def per_doc(items):
        out = []
        for item in items:
            for key in path:
                item = item[key]
            out.append(float(item))
        return out

    return per_doc


DCR_PARTS = {
    f"dcr_{layer.lower()}": _field_mean(f"vulca_bench_dcr_{layer.lower()}", "layers", layer) for layer in LAYERS
}
DCR_PARTS["cultural_bonus"] = _field_mean("vulca_bench_cultural_bonus", "bonus")
LAYER_PARTS = {
    f"layer_score_{layer.lower()}": _field_mean(
        f"vulca_bench_layer_score_{layer.lower()}", "layers", layer, combine=nan_mean
    )
    for layer in LAYERS
}
LAYER_PARTS["pyramid_inverted_rate"] = _field_mean("vulca_bench_pyramid_inverted_rate", "inverted")
#: Every name these breakdowns can give (the anchors' upkeep check reads it).
METRICS = (*DCR_PARTS, *LAYER_PARTS)


@breakdown(TASKS, "dcr", intervals=DCR_PARTS)
def dcr_parts(items):
    """The DCR's per-layer coverage and cultural bonus, averaged over the critiques.

    >>> dcr_parts([{"layers": dict.fromkeys(LAYERS, 0.5), "bonus": 0.04}])["dcr_l3"]
    0.5
    """
    return {name: fn(items) for name, fn in DCR_PARTS.items()}


@breakdown(TASKS, "layer_score", lower_is_better=["pyramid_inverted_rate"], intervals=LAYER_PARTS)
def layer_parts(items):
    """The per-layer 1-5 scores and the share of inverted pyramids, averaged over the critiques.

    >>> layer_parts([{"layers": dict.fromkeys(LAYERS, 2.0), "inverted": 1.0}])["pyramid_inverted_rate"]
    1.0
    """
    return {name: fn(items) for name, fn in LAYER_PARTS.items()}
