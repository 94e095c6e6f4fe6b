"""Regenerate the bundled sample datasets: ``python -m hanyi.data.build_samples [benchmark ...]``.

Each benchmark module ``hanyi.data.<benchmark>`` that defines ``build_sample(out_dir)`` writes its sample (small,
synthetic images, the real schema) into ``hanyi/data/sample/<benchmark>/``. Builders are deterministic.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys

from hanyi import BENCHMARKS
from hanyi.data.sources import SAMPLE_DIR


def build(benchmarks=BENCHMARKS, root: str = SAMPLE_DIR) -> dict:
    done = {}
    for bench in benchmarks:
        try:
            module = importlib.import_module(f"hanyi.data.{bench}")
        except ModuleNotFoundError:
            continue
        if not hasattr(module, "build_sample"):
            continue
        out = os.path.join(root, bench)
        shutil.rmtree(out, ignore_errors=True)
        done[bench] = module.build_sample(out)
    return done


if __name__ == "__main__":
    for bench, counts in build(tuple(sys.argv[1:]) or BENCHMARKS).items():
        print(f"{bench}: {counts}")
