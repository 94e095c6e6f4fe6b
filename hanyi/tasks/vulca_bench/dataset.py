"""Where VULCA-Bench's data comes from: ``dataset_path: !function dataset.path`` in the task YAMLs.

The harness executes this file afresh for each ``!function`` tag it reads, so ``path`` follows the environment when a
task is built (``HANYI_VULCA_BENCH_DATA``, ``HANYI_DATA_ROOT``, the hub id: :func:`hanyi.data.sources.resolve`).
"""

from hanyi.data.sources import dataset_path

path = dataset_path("vulca_bench")
