"""Cost of the load-time image check beside one plain decode of the same images.

    python benchmarks/image_load_check.py [--n 800] [--size 640x480]

Builds ``n`` synthetic images per format (JPEG, PNG) at ``size`` in a ``datasets.Dataset``, as a prepared hub-format
set holds them, then times, in the same process:

* ``check``: ``hanyi.tasks._common.undecodable_images`` (PNG chunk CRCs, JPEG at 1/8 scale, threads);
* ``decode``: what a model call costs at least, ``PIL.Image.open(...).convert("RGB")`` for every image, once.

Full sizes for reference: CII-Bench 800 images, Pun Rebus 1,011, CVLUE 7,169 (VQA + VG test images), VULCA 12.
"""

from __future__ import annotations

import argparse
import io
import time


def build(n: int, size: tuple[int, int], fmt: str):
    import datasets
    from PIL import Image

    from hanyi.data.images import synthetic_image

    rows = []
    for i in range(n):
        buf = io.BytesIO()
        synthetic_image(f"{fmt}-{i}", size=max(size)).resize(size, Image.BILINEAR).save(buf, format=fmt)
        rows.append({"id": i, "image": {"bytes": buf.getvalue(), "path": None}})
    features = datasets.Features({"id": datasets.Value("int64"), "image": datasets.Image()})
    return datasets.Dataset.from_list(rows, features=features)


def decode_all(ds) -> None:
    from PIL import Image

    for cell in ds.with_format("arrow")[:].column("image").to_pylist():
        Image.open(io.BytesIO(cell["bytes"])).convert("RGB")


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--size", default="640x480")
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))
    from hanyi.tasks._common import undecodable_images

    print(f"{args.n} images of {size[0]}x{size[1]} per format; fastest of 3")
    print(f"{'format':<6} {'check (s)':>10} {'ms/image':>9} {'decode (s)':>11} {'ms/image':>9} {'check/decode':>13}")
    for fmt in ("JPEG", "PNG"):
        ds = build(args.n, size, fmt)
        check = best_of(lambda ds=ds: undecodable_images(ds, "image", "id"))
        decode = best_of(lambda ds=ds: decode_all(ds))
        print(
            f"{fmt:<6} {check:>10.3f} {1000 * check / args.n:>9.2f} {decode:>11.3f} {1000 * decode / args.n:>9.2f} "
            f"{check / decode:>13.2f}"
        )


if __name__ == "__main__":
    main()
