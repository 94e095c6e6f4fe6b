"""CVLUE ITR stage 1 throughput at the real test-gallery size: encoding (images/s, captions/s) and block-wise top-K.

What it measures (``hanyi.data.cvlue_retrieval``, the code ``hanyi prepare cvlue --itr-retriever`` runs):

* **encoding** with a Chinese-CLIP, in batches, through ``ChineseClipRetriever.encode_images`` / ``encode_texts``
  (pre-processing + forward + normalisation; no disk, no cache): ``--images`` synthetic 640x480 RGB pictures (made
  per batch, outside the timer) and ``--captions`` synthetic Chinese captions of 19 characters (the paper's mean);
  the time for the whole gallery (8,973 images, 44,865 captions) is projected from the rates, so the run stays short.
  Models: the tiny random Chinese-CLIP (``hanyi.models.tiny_chinese_clip``, 224-px input like the real processors,
  1-layer towers of width 32), so its figures time the pipeline around the model, and any ``--model`` (e.g.
  ``OFA-Sys/chinese-clip-vit-base-patch16``) whose weights are already in the local Hugging Face cache (never
  downloaded: skipped with a line when absent).
* **top-K** both ways (``topk_blockwise``, depth ``max(K, 10)``) on random unit vectors of the real gallery size
  (8,973 images x 44,865 captions) and the real models' embedding width (``--dim``, 768 = ViT-L/14), once with the
  default 256 MiB block budget and once with the whole matrix in one block.

    .venv/bin/python benchmarks/cvlue_retrieval_throughput.py [--images 1024] [--captions 4096] [--k 16]
        [--model OFA-Sys/chinese-clip-vit-base-patch16] [--device cpu]
"""

import argparse
import tempfile
import time

GALLERY_IMAGES, GALLERY_CAPTIONS = 8973, 44865


def _pictures(start, n):
    from PIL import Image, ImageDraw

    out = []
    for i in range(start, start + n):
        img = Image.new("RGB", (640, 480), ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256))
        ImageDraw.Draw(img).rectangle([(i * 7) % 500, (i * 11) % 300, (i * 7) % 500 + 120, (i * 11) % 300 + 150])
        out.append(img)
    return out


def _captions(n):
    chars = "两个人在吹唢呐草地上站着三头牛鱼缸里游着四条鱼红白相间的花灯挂在门口桌子上放着一碗热腾腾的面条"
    return [(chars[i % 37 :] + chars)[:17] + f"{i % 100:02d}" for i in range(n)]


def time_encoding(retriever, n_images, n_captions, batch):
    t_images = 0.0
    for start in range(0, n_images, batch):
        pics = _pictures(start, min(batch, n_images - start))
        t = time.perf_counter()
        retriever.encode_images(pics)
        t_images += time.perf_counter() - t
    caps = _captions(n_captions)
    t = time.perf_counter()
    for start in range(0, n_captions, batch):
        retriever.encode_texts(caps[start : start + batch])
    t_captions = time.perf_counter() - t
    return n_images / t_images, n_captions / t_captions


def report_encoding(name, retriever, args):
    img_s, cap_s = time_encoding(retriever, args.images, args.captions, args.batch_size)
    full = GALLERY_IMAGES / img_s + GALLERY_CAPTIONS / cap_s
    print(
        f"{name} on {retriever.device}: {img_s:,.1f} images/s, {cap_s:,.1f} captions/s "
        f"({args.images:,} images, {args.captions:,} captions, batch {args.batch_size}); "
        f"whole gallery, projected: {full:,.0f} s to encode"
    )


def time_topk(args):
    import torch

    from hanyi.data.cvlue_retrieval import MAX_BLOCK_BYTES, SUBMISSION_N, topk_blockwise

    gen = torch.Generator().manual_seed(0)
    images = torch.nn.functional.normalize(torch.randn(GALLERY_IMAGES, args.dim, generator=gen), dim=-1)
    captions = torch.nn.functional.normalize(torch.randn(GALLERY_CAPTIONS, args.dim, generator=gen), dim=-1)
    depth = max(args.k, SUBMISSION_N)
    for label, budget in (("256 MiB blocks", MAX_BLOCK_BYTES), ("one block (full matrix)", 1 << 34)):
        t = time.perf_counter()
        topk_blockwise(images, captions, depth, budget)
        t_i2t = time.perf_counter() - t
        t = time.perf_counter()
        topk_blockwise(captions, images, depth, budget)
        t_t2i = time.perf_counter() - t
        rows_i2t = max(1, budget // (4 * GALLERY_CAPTIONS))
        print(
            f"top-{depth}, {label}: i2t {t_i2t:.2f} s ({min(rows_i2t, GALLERY_IMAGES):,} query rows/block), "
            f"t2i {t_t2i:.2f} s; {GALLERY_IMAGES:,} x {GALLERY_CAPTIONS:,} x {args.dim}, {torch.get_num_threads()} threads"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=1024, help=f"images to time (the gallery has {GALLERY_IMAGES:,})")
    ap.add_argument("--captions", type=int, default=4096, help=f"captions to time ({GALLERY_CAPTIONS:,})")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--dim", type=int, default=768, help="embedding width for top-K (768 = ViT-L/14, 512 = base)")
    ap.add_argument("--model", action="append", default=[], help="a cached Chinese-CLIP to time too (repeatable)")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    from hanyi.data.cvlue_retrieval import ChineseClipRetriever
    from hanyi.models.tiny_chinese_clip import build_tiny_chinese_clip

    with tempfile.TemporaryDirectory() as tmp:
        tiny = ChineseClipRetriever(build_tiny_chinese_clip(tmp, image_size=224), device=args.device)
        report_encoding("tiny random Chinese-CLIP (224 px)", tiny, args)
    for model in args.model:
        try:  # cached weights only: never a download
            retriever = ChineseClipRetriever(model, device=args.device, local_files_only=True)
        except (OSError, ValueError) as exc:
            print(f"{model}: weights not in the local cache, skipped ({type(exc).__name__})")
            continue
        report_encoding(model, retriever, args)
    time_topk(args)


if __name__ == "__main__":
    main()
