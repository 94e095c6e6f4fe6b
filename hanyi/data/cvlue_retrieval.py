"""CVLUE ITR stage 1: a Chinese-CLIP shortlist over the whole test gallery (``hanyi prepare cvlue --itr-retriever``).

rerank@K (spec §6.1) re-ranks a fixed top-K per query. This module computes that top-K from the release itself:

1. the gallery = every image of ``IC/test.json`` and every distinct caption string (sorted, as the rerank configs);
2. each image and caption is encoded once, in batches (GPU when there is one), by a transformers Chinese-CLIP
   (``ChineseCLIPModel``; default :data:`DEFAULT_RETRIEVER`), L2-normalised; embeddings are cached on disk per
   item, keyed by the retriever's weights fingerprint, the item's name and its content hash (:class:`EmbeddingCache`),
   so an interrupted or repeated run re-encodes nothing it has seen;
3. top-K both ways by cosine similarity, one matrix product and ``torch.topk`` per block of queries
   (:func:`topk_blockwise`), the block sized so that no more than ``max_block_bytes`` of scores exist at once;
4. the shortlist is written in the official submission format (``{"i2t": {image: [captions]}, "t2i": {caption:
   [images]}}``, top ``max(K, 10)`` each, so it is also a valid ``eval_itr.py`` submission) to ``itr_shortlist.json``,
   and stage 1's own result (CLIP alone: R@1/5/10 both ways by the official rule over the full gallery, and
   ``stage1_ceiling`` = recall@K) with the retriever's provenance to ``itr_stage1.json``, beside the dataset.

An image that does not decode is named, skipped and counted (``skipped_images``): it is no candidate, and as a query
it has an empty list (a miss, still in the denominator). Nothing here imports torch or transformers at import time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os

from hanyi.metrics.ranking import first_gold_rank, itr_recall_official

logger = logging.getLogger(__name__)

DEFAULT_RETRIEVER = "OFA-Sys/chinese-clip-vit-large-patch14"
#: Token budget per caption: cn_clip's ``context_length`` default (CVLUE captions average 19.2 characters).
TEXT_MAX_LENGTH = 52
#: Depth of the written lists: the official submission's N (readme: N=10), or K when K is larger.
SUBMISSION_N = 10
SHORTLIST_FILE = "itr_shortlist.json"
STAGE1_FILE = "itr_stage1.json"
#: Bumped when the encoding recipe changes (pre-processing, pooling, normalisation): old cache entries go unused.
ENCODING_VERSION = 1
#: Scores allowed in memory at once by default (256 MiB: 8,973 x 44.9k float32 scores are 1.6 GB).
MAX_BLOCK_BYTES = 256 << 20


class Gallery:
    """The ITR test gallery of one ``IC/<split>.json`` list: sorted images, sorted distinct captions, gold both ways."""

    def __init__(self, items: list[dict]):
        self.i2t_gold = {it["image"]: list(it["caption"]) for it in items}
        self.t2i_gold: dict[str, list[str]] = {}
        for image, captions in self.i2t_gold.items():
            for caption in captions:
                self.t2i_gold.setdefault(caption, []).append(image)
        self.images = sorted(self.i2t_gold)
        self.captions = sorted(self.t2i_gold)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shortlist_hash(shortlist: dict) -> str:
    """``sha256:<hex>`` of a shortlist's content (canonical JSON), the same for a computed and a supplied file."""
    text = json.dumps(shortlist, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "sha256:" + sha256_bytes(text.encode("utf-8"))


def item_key(fingerprint: str, kind: str, name: str, content_hash: str) -> str:
    """Cache key of one embedding: retriever fingerprint, ``image``/``caption``, file name and content hash."""
    return sha256_bytes(f"{ENCODING_VERSION}\0{fingerprint}\0{kind}\0{name}\0{content_hash}".encode())


class EmbeddingCache:
    """Embeddings on disk, one ``.pt`` shard per encoded batch (written atomically), so a run resumes where it stopped.

    ``<root>/<fingerprint[:16]>/shard-<n>.pt`` holds ``{"keys": [...], "embeddings": float32 tensor}``. A torn or
    unreadable shard is ignored (its items are encoded again).
    """

    def __init__(self, root: str, fingerprint: str):
        self.dir = os.path.join(root, fingerprint[:16])
        os.makedirs(self.dir, exist_ok=True)
        self.vectors: dict = {}
        import torch

        for name in sorted(os.listdir(self.dir)):
            if not (name.startswith("shard-") and name.endswith(".pt")):
                continue
            try:
                shard = torch.load(os.path.join(self.dir, name), map_location="cpu", weights_only=True)
                self.vectors.update(zip(shard["keys"], shard["embeddings"]))
            except Exception as exc:  # a torn write: re-encode those items
                logger.warning("embedding cache: %s unreadable (%s); its items are encoded again", name, exc)
        self._next = len(os.listdir(self.dir))

    def put(self, keys: list[str], embeddings) -> None:
        import torch

        while os.path.exists(os.path.join(self.dir, f"shard-{self._next:06d}.pt")):
            self._next += 1
        path = os.path.join(self.dir, f"shard-{self._next:06d}.pt")
        tmp = path + ".tmp"
        torch.save({"keys": list(keys), "embeddings": embeddings.float().cpu()}, tmp)
        os.replace(tmp, path)
        self.vectors.update(zip(keys, embeddings.float().cpu()))


class ChineseClipRetriever:
    """A transformers Chinese-CLIP (hub id or local path) encoding images and captions into normalised vectors."""

    def __init__(
        self,
        model: str = DEFAULT_RETRIEVER,
        device: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
    ):
        import torch
        from transformers import ChineseCLIPModel, ChineseCLIPProcessor

        self.model_id = model
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        kwargs: dict = {"revision": revision} if revision else {}
        if local_files_only:
            kwargs["local_files_only"] = True
        self.model = ChineseCLIPModel.from_pretrained(model, **kwargs).to(self.device).eval()
        self.processor = ChineseCLIPProcessor.from_pretrained(model, **kwargs)
        self.revision = revision or getattr(self.model.config, "_commit_hash", None) or _local_revision(model)
        self.fingerprint = self._fingerprint()
        self.encoded = {"image": 0, "caption": 0}  # items encoded by this object (0 on a fully cached rerun)

    def _fingerprint(self) -> str:
        """sha256 over the weights (names and bytes, any dtype) and the pre-processing: what the embeddings depend on."""
        import torch

        digest = hashlib.sha256()
        for name, tensor in sorted(self.model.state_dict().items()):
            digest.update(name.encode() + b"\0")
            digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        digest.update(self.processor.image_processor.to_json_string().encode())
        digest.update(json.dumps(sorted(self.processor.tokenizer.get_vocab().items())).encode())
        digest.update(f"max_length={TEXT_MAX_LENGTH}".encode())
        return digest.hexdigest()

    def _features(self, out):
        return out if hasattr(out, "norm") else out.pooler_output  # transformers 5 returns a model output

    def encode_images(self, images: list) -> object:
        import torch

        with torch.inference_mode():
            pixels = self.processor(images=images, return_tensors="pt")["pixel_values"].to(self.device)
            feats = self._features(self.model.get_image_features(pixel_values=pixels)).float()
        self.encoded["image"] += len(images)
        return torch.nn.functional.normalize(feats, dim=-1).cpu()

    def encode_texts(self, texts: list[str]) -> object:
        import torch

        tok = self.processor.tokenizer(
            texts, padding=True, truncation=True, max_length=TEXT_MAX_LENGTH, return_tensors="pt"
        )
        with torch.inference_mode():
            feats = self._features(self.model.get_text_features(**{k: v.to(self.device) for k, v in tok.items()}))
        self.encoded["caption"] += len(texts)
        return torch.nn.functional.normalize(feats.float(), dim=-1).cpu()


def _local_revision(model: str) -> str | None:
    """A local checkpoint's ``config.json`` sha256 (``local:<hex12>``); for a hub id, the commit of the snapshot in
    the local cache that was loaded (``.../snapshots/<commit>/config.json``); None when neither is known."""
    path = os.path.join(model, "config.json")
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return "local:" + sha256_bytes(f.read())[:12]
    try:
        from transformers.utils import cached_file

        cached = cached_file(model, "config.json", local_files_only=True, _raise_exceptions_for_missing_entries=False)
    except Exception:  # an unusual cache layout: the revision is unknown, not an error
        return None
    parts = os.path.normpath(cached or "").split(os.sep)
    return parts[-2] if len(parts) > 2 and parts[-3] == "snapshots" else None


def default_cache_dir() -> str:
    """``<hanyi cache>/cvlue_itr_embeddings`` (beside the default data root; ``HANYI_CACHE_DIR`` moves both)."""
    from hanyi.data.sources import default_data_root

    return os.path.join(os.path.dirname(default_data_root()), "cvlue_itr_embeddings")


def _batches(seq, size):
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


def encode_gallery(retriever, gallery: Gallery, root: str, cache: EmbeddingCache, batch_size: int, skipped: list):
    """``(image_names, image_matrix, caption_matrix)``: every decodable image and every caption, encoded once.

    Cached items are read back; the rest are encoded in batches with a tqdm bar and cached after each batch. An image
    that does not decode is appended to ``skipped`` as ``"<path>: <reason>"`` and left out of ``image_names``.
    """
    import torch
    from PIL import Image
    from tqdm import tqdm

    fp = retriever.fingerprint
    image_keys = {}
    for rel in gallery.images:
        with open(os.path.join(root, rel), "rb") as f:
            image_keys[rel] = item_key(fp, "image", rel, sha256_bytes(f.read()))
    todo = [rel for rel in gallery.images if image_keys[rel] not in cache.vectors]
    for batch in tqdm(list(_batches(todo, batch_size)), desc="CVLUE ITR: encoding images", unit="batch"):
        pictures, names = [], []
        for rel in batch:
            try:
                with Image.open(os.path.join(root, rel)) as im:
                    pictures.append(im.convert("RGB"))
                names.append(rel)
            except Exception as exc:  # a corrupt file: named, skipped, counted; never a crash
                skipped.append(f"{rel}: {type(exc).__name__}: {exc}")
                logger.warning("CVLUE ITR: skipping image %s (does not decode: %s)", rel, exc)
        if pictures:
            cache.put([image_keys[n] for n in names], retriever.encode_images(pictures))
    kept = [rel for rel in gallery.images if image_keys[rel] in cache.vectors]
    caption_keys = [item_key(fp, "caption", "", sha256_bytes(c.encode("utf-8"))) for c in gallery.captions]
    todo_caps = [(k, c) for k, c in zip(caption_keys, gallery.captions) if k not in cache.vectors]
    for batch in tqdm(list(_batches(todo_caps, batch_size)), desc="CVLUE ITR: encoding captions", unit="batch"):
        cache.put([k for k, _ in batch], retriever.encode_texts([c for _, c in batch]))
    dim = next(iter(cache.vectors.values())).shape[-1] if cache.vectors else 1
    image_matrix = torch.stack([cache.vectors[image_keys[r]] for r in kept]) if kept else torch.zeros(0, dim)
    caption_matrix = torch.stack([cache.vectors[k] for k in caption_keys]) if caption_keys else torch.zeros(0, dim)
    return kept, image_matrix, caption_matrix


def topk_blockwise(queries, gallery, k: int, max_block_bytes: int = MAX_BLOCK_BYTES):
    """Top-``k`` gallery indices per query by dot product, ``(scores, indices)``, best first, equal scores by index.

    One matrix product and one ``torch.topk`` per block of query rows; a block holds at most ``max_block_bytes`` of
    float32 scores (at least one row), so the full query x gallery matrix never exists when it would not fit.
    """
    import torch

    k = min(k, gallery.shape[0])
    rows = max(1, int(max_block_bytes) // (4 * max(1, gallery.shape[0])))
    scores_out, index_out = [], []
    for start in range(0, queries.shape[0], rows):
        sims = queries[start : start + rows] @ gallery.T
        values, indices = torch.topk(sims, k, dim=1)
        # A tie across the k-th place: topk picks any of the tied items; a stable sort of that row picks the lowest
        # indices (rare: exact duplicates, e.g. one picture at two paths).
        for row in ((sims >= values[:, -1:]).sum(dim=1) > k).nonzero().flatten().tolist():
            indices[row] = torch.sort(sims[row], descending=True, stable=True).indices[:k]
            values[row] = sims[row][indices[row]]
        order = torch.argsort(indices, dim=1)  # ties: lower gallery index first (topk leaves them unordered)
        values, indices = values.gather(1, order), indices.gather(1, order)
        order = torch.argsort(values, dim=1, descending=True, stable=True)
        scores_out.append(values.gather(1, order))
        index_out.append(indices.gather(1, order))
    if not index_out:
        return torch.zeros(0, k), torch.zeros(0, k, dtype=torch.long)
    return torch.cat(scores_out), torch.cat(index_out)


def stage1_metrics(shortlist: dict, gallery: Gallery, k: int) -> dict:
    """Stage 1's own result: official ``eval_itr.py`` R@1/5/10 per direction over every gallery query, and
    ``stage1_ceiling`` (share of queries with a gold item in the top ``k``), as ``{"tr": {...}, "ir": {...}}``."""
    out = {}
    for direction, key, gold in (("tr", "i2t", gallery.i2t_gold), ("ir", "t2i", gallery.t2i_gold)):
        submission = {q: shortlist[key].get(q, []) for q in sorted(gold)}
        ranks = [first_gold_rank(submission[q][:k], gold[q]) for q in submission]
        out[direction] = {
            **itr_recall_official(submission, gold),
            "stage1_ceiling": sum(r is not None for r in ranks) / len(ranks) if ranks else 0.0,
        }
    return out


def embedding_hash(image_names: list[str], image_matrix, captions: list[str], caption_matrix) -> str:
    """``sha256:<hex>`` over the gallery's names and float32 embeddings, in gallery order."""
    digest = hashlib.sha256()
    for names, matrix in ((image_names, image_matrix), (captions, caption_matrix)):
        digest.update(json.dumps(names, ensure_ascii=False).encode("utf-8"))
        digest.update(matrix.float().contiguous().numpy().tobytes())
    return "sha256:" + digest.hexdigest()


def compute_shortlist(
    items: list[dict],
    root: str,
    out_dir: str,
    *,
    model: str = DEFAULT_RETRIEVER,
    k: int = 16,
    cache_dir: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    revision: str | None = None,
    max_block_bytes: int = MAX_BLOCK_BYTES,
    retriever=None,
) -> tuple[dict, dict]:
    """Stage 1 for one ``IC`` gallery: ``(shortlist, stage1_record)``; both are written to ``out_dir`` too.

    ``retriever`` (a :class:`ChineseClipRetriever`) is loaded from ``model`` when not given.
    """
    gallery = Gallery(items)
    retriever = retriever or ChineseClipRetriever(model, device=device, revision=revision)
    cache = EmbeddingCache(cache_dir or default_cache_dir(), retriever.fingerprint)
    skipped: list[str] = []
    names, image_m, caption_m = encode_gallery(retriever, gallery, root, cache, batch_size, skipped)
    depth = max(k, SUBMISSION_N)
    on_device = image_m.to(retriever.device), caption_m.to(retriever.device)  # top-K where the encoder ran
    i2t = topk_blockwise(on_device[0], on_device[1], depth, max_block_bytes)[1].cpu()
    t2i = topk_blockwise(on_device[1], on_device[0], depth, max_block_bytes)[1].cpu()
    shortlist = {
        "i2t": {img: [gallery.captions[j] for j in row] for img, row in zip(names, i2t.tolist())},
        "t2i": {cap: [names[j] for j in row] for cap, row in zip(gallery.captions, t2i.tolist())},
    }
    for img in gallery.images:
        shortlist["i2t"].setdefault(img, [])  # a skipped image: an empty list, a miss in every denominator
    shortlist["i2t"] = dict(sorted(shortlist["i2t"].items()))
    text = json.dumps(shortlist, ensure_ascii=False, indent=0, sort_keys=True)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, SHORTLIST_FILE), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    record = {
        "retriever": retriever.model_id,
        "revision": retriever.revision,
        "weights_fingerprint": retriever.fingerprint,
        "k": k,
        "depth": depth,
        "embedding_hash": embedding_hash(names, image_m, gallery.captions, caption_m),
        "shortlist_sha256": shortlist_hash(shortlist),
        "images": len(gallery.images),
        "captions": len(gallery.captions),
        "skipped_images": skipped,
        "encoded_now": dict(retriever.encoded),
        "device": retriever.device,
        "metrics": stage1_metrics(shortlist, gallery, k),
        "rule": "official eval_itr.py over the full gallery (CLIP alone; not the VLM's R@k)",
    }
    with open(os.path.join(out_dir, STAGE1_FILE), "w", encoding="utf-8") as f:
        json.dump(record, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    return shortlist, record


def stage1_info(stage1: dict | None, shortlist: dict | None, origin: dict | None, k: int) -> dict:
    """``hanyi_build.json`` keys of stage 1: ``rerank_k`` (None without a shortlist) and ``itr_retriever``, the
    provenance of the shortlist (:func:`retriever_manifest`; absent without one)."""
    manifest = retriever_manifest(stage1, shortlist, origin, k)
    return {"rerank_k": k if manifest else None, **({"itr_retriever": manifest} if manifest else {})}


def stage1_summary(stage1: dict | None, retriever: str | None) -> dict:
    """What ``hanyi prepare cvlue`` prints about stage 1: the retriever's own R@k both ways, skipped images."""
    if stage1 is not None:
        metrics = {"retriever": stage1["retriever"], "k": stage1["k"], **stage1["metrics"]}
        return {"itr_stage1": metrics, "itr_skipped_images": len(stage1["skipped_images"])}
    return {"itr_stage1": "no IC test split with gold: nothing retrieved"} if retriever else {}


def retriever_manifest(stage1: dict | None, shortlist: dict | None, origin: dict | None, k: int) -> dict | None:
    """The stage-1 provenance kept in ``hanyi_build.json`` (``itr_retriever``): what made the shortlist, or None."""
    if stage1 is not None:
        keep = ("retriever", "revision", "k", "embedding_hash", "shortlist_sha256", "weights_fingerprint", "metrics")
        return {
            "origin": "computed",
            **{key: stage1[key] for key in keep},
            "skipped_images": len(stage1["skipped_images"]),
        }
    if shortlist is None:
        return None
    return {
        "origin": "file",
        "k": k,
        "retriever": (origin or {}).get("retriever"),
        "path": (origin or {}).get("path"),
        "shortlist_sha256": shortlist_hash(shortlist),
    }


def add_retriever_arguments(parser) -> None:
    """The stage-1 options of ``hanyi prepare cvlue`` (``--itr-shortlist`` and ``--itr-retriever`` exclude each other)."""
    stage1 = parser.add_mutually_exclusive_group()
    stage1.add_argument(
        "--itr-shortlist",
        default=None,
        help='stage-1 ITR shortlist JSON {"i2t": {image: [captions]}, "t2i": {caption: [images]}} (official '
        "submission format), computed elsewhere",
    )
    stage1.add_argument(
        "--itr-retriever",
        nargs="?",
        const=DEFAULT_RETRIEVER,
        default=None,
        metavar="MODEL",
        help="compute the stage-1 shortlist from IC/test.json with a transformers Chinese-CLIP (hub id or local "
        f"path; bare flag: {DEFAULT_RETRIEVER})",
    )
    parser.add_argument("--itr-revision", default=None, help="hub revision (commit) of --itr-retriever")
    parser.add_argument("--itr-device", default=None, help="torch device for encoding (default: cuda if visible)")
    parser.add_argument("--itr-batch-size", type=int, default=64, help="images or captions per forward (64)")
    parser.add_argument(
        "--itr-cache",
        default=None,
        help="embedding cache directory (default <HANYI_CACHE_DIR or ~/.cache/hanyi>/cvlue_itr_embeddings)",
    )
    parser.add_argument(
        "--itr-max-block-mb",
        type=int,
        default=MAX_BLOCK_BYTES >> 20,
        help="similarity scores held in memory at once, MiB (default %(default)s; the full matrix is 1.6 GB)",
    )


def retriever_step(args, k: int):
    """``retrieve(ic_test_items) -> (shortlist, stage1_record)`` for ``convert_release``, from the parsed options."""
    if getattr(args, "itr_batch_size", 64) < 1 or (getattr(args, "itr_max_block_mb", 1) or 1) < 1:
        raise ValueError("--itr-batch-size and --itr-max-block-mb must be at least 1")

    def retrieve(items):
        return compute_shortlist(
            items,
            args.root,
            args.out_dir,
            model=args.itr_retriever,
            k=k,
            cache_dir=getattr(args, "itr_cache", None),
            batch_size=getattr(args, "itr_batch_size", 64),
            device=getattr(args, "itr_device", None),
            revision=getattr(args, "itr_revision", None),
            max_block_bytes=(getattr(args, "itr_max_block_mb", None) or MAX_BLOCK_BYTES >> 20) << 20,
        )

    return retrieve
