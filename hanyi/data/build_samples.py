"""Regenerate the bundled sample datasets: ``python -m hanyi.data.build_samples [benchmark ...]``.

Each benchmark module ``hanyi.data.<benchmark>_sample`` (else ``hanyi.data.<benchmark>``) that defines
``build_sample(out_dir)`` writes its sample (small,
synthetic images, the real schema) into ``hanyi/data/sample/<benchmark>/``. Builders are deterministic.

``build_sample(out_dir, size=N)`` scales the same synthetic data to ``N`` primary docs; :func:`build_full` builds
every benchmark at the paper's size (``FULL_SIZES``) into a cache directory, on demand, for
``benchmarks/full_scale.py`` (never committed)::

    python -m hanyi.data.build_samples --full [--root DIR] [benchmark ...]
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys

from hanyi import BENCHMARKS
from hanyi.data.sources import SAMPLE_DIR

#: The paper's sizes, as ``build_sample``'s ``size`` (its primary doc unit): Pun Rebus images (1,011 of 375 stories),
#: CII-Bench questions (800), UNPIE puns per split (500), CVLUE test VQA images (7,169; VG and VD scaled with it),
#: VULCA paintings (12), VULCA-Bench artworks (7,408, in the release's culture counts).
FULL_SIZES = {"punrebus": 1011, "cii": 800, "unpie": 500, "cvlue": 7169, "vulca": 12, "vulca_bench": 7408}


def full_root() -> str:
    """``$HANYI_FULL_SCALE_DIR``, else ``<hanyi cache>/full_scale``."""
    cache = os.environ.get("HANYI_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "hanyi")
    return os.environ.get("HANYI_FULL_SCALE_DIR") or os.path.join(cache, "full_scale")


def build_full(benchmarks=BENCHMARKS, root: str | None = None, sizes: dict | None = None) -> dict:
    """Build each benchmark at ``sizes`` (default ``FULL_SIZES``) under ``root/<bench>-<size>/``, unless already
    built there (a ``.done`` marker). Returns ``{bench: directory}``."""
    root, sizes = root or full_root(), {**FULL_SIZES, **(sizes or {})}
    out = {}
    for bench in benchmarks:
        path = os.path.join(root, f"{bench}-{sizes[bench]}")
        if not os.path.exists(os.path.join(path, ".done")):
            build((bench,), root=root, size=sizes[bench], dirname=os.path.basename(path))
            open(os.path.join(path, ".done"), "w").close()
        out[bench] = path
    return out


def build(benchmarks=BENCHMARKS, root: str = SAMPLE_DIR, size: int | None = None, dirname: str | None = None) -> dict:
    done = {}
    for bench in benchmarks:
        # A benchmark whose sample builder needs the loader's constants keeps it in hanyi.data.<bench>_sample, which
        # imports hanyi.data.<bench> and not the other way round (no import cycle between the two).
        module = None
        for name in (f"hanyi.data.{bench}_sample", f"hanyi.data.{bench}"):
            try:
                found = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    raise
                continue
            if hasattr(found, "build_sample"):
                module = found
                break
        if module is None:
            continue
        out = os.path.join(root, dirname or bench)
        shutil.rmtree(out, ignore_errors=True)
        done[bench] = module.build_sample(out) if size is None else module.build_sample(out, size=size)
    return done


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--full" in args:
        args.remove("--full")
        root = None
        if "--root" in args:
            i = args.index("--root")
            root = args[i + 1]
            del args[i : i + 2]
        for bench, path in build_full(tuple(args) or BENCHMARKS, root).items():
            print(f"{bench}: {path}")
    else:
        for bench, counts in build(tuple(args) or BENCHMARKS).items():
            print(f"{bench}: {counts}")
