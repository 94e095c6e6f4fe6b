"""UNPIE ``process_docs`` functions: hub rows -> task docs (hanyi.data.unpie.expand), one name per task YAML.

Both splits in one task (the tasks whose value is the paper's All, docs/unpie.md "Tasks"): lmms-eval and lm-eval
hand ``process_docs`` the ``test_split`` only, so those tasks say ``test_split: homographic`` and their functions
append the docs of ``datasets.load_dataset(<the same dataset_path>, "default", split="heterographic")``, which reads
what the harness has just loaded (a folder from disk, a hub id from the ``datasets`` cache: offline too). Neither
``dataset_kwargs: {split: "homographic+heterographic"}`` (one ``Dataset``, which lmms-eval indexes by split name) nor
``data_files`` globbing both parquet files into one split (each row's split lost) works.

The backbones a task's scoring needs are checked here, at task load, before any model call. The VLM
disambiguation tasks leave out docs whose disambiguator image cannot be resolved (a VLM task never sends a request
without its image); the caption (``_sm``) tasks keep them and attach each doc's caption (a doc without one is
counted in ``caption_missing`` and left out of every score).
"""

import contextlib
import functools
import os
import threading

import datasets

from hanyi.data import sources
from hanyi.data import unpie as data
from hanyi.tasks._common import memory_mapped, spill
from hanyi.tasks.unpie import scoring

_POOL_LOCK = threading.RLock()  # the default pool is the process's: one build switches it at a time


@contextlib.contextmanager
def _system_pool():
    """Arrow's allocations in the block (``datasets`` building the docs' parts: ``pa.array`` without a pool) from the
    system allocator, the pool before it back after. pyarrow 26's default, mimalloc, keeps the pages of freed buffers
    counted in the process's memory for the rest of the run (``release_unused`` marks them free; the kernel takes them
    only under pressure): UNPIE grounding's docs built part by part left 0.95 KB a doc counted, 0.20 from the system
    allocator. A buffer still alive when the block ends is freed by the pool it came from."""
    import pyarrow as pa

    with _POOL_LOCK:
        before = pa.default_memory_pool()
        pa.set_memory_pool(pa.system_memory_pool())
        try:
            yield
        finally:
            pa.set_memory_pool(before)


def _expand_checked(dataset, kind, lang=None, needs_image=False, captions=False, split=None, text_only=False):
    scoring.require_backbones(kind)  # at task load, before any model call, once per process
    split = split or str(dataset.split)  # the split lmms-eval hands over (its test_split), as ``datasets`` names it
    temporary = []  # the parts' files: the docs are built in memory, images too, and mapped like the rows
    try:
        with _system_pool():  # the parts' buffers go back to the OS when freed
            docs = data.expand(dataset, kind=kind, split=split, lang=lang, needs_image=needs_image, captions=captions,
                               text_only=text_only, store=lambda part: spill(part, dataset, temporary))  # fmt: skip
            return memory_mapped(docs, like=dataset)
    finally:
        for path in temporary:
            if os.path.exists(path):
                os.remove(path)


@functools.lru_cache(maxsize=4)
def _heterographic_files(path, cache):
    """The heterographic split's files and info, read once per process for all the tasks that score both splits
    (``cache``: lmms-eval's datasets cache ``$LMMS_EVAL_DATASETS_CACHE`` when set, else ``datasets``' default); the
    split itself where it has no file. Not the split: a mapped split kept here kept every page its docs' build
    touched (explanation images included) resident for the whole run; mapped anew per task, they go with it."""
    split = datasets.load_dataset(path, "default", split="heterographic", cache_dir=cache)
    if not split.cache_files or split._indices is not None:
        return split
    return tuple(f["filename"] for f in split.cache_files), split.info


def _heterographic(path, cache):
    found = _heterographic_files(path, cache)
    if isinstance(found, datasets.Dataset):
        return found
    files, info = found
    parts = [datasets.Dataset.from_file(f, info=info, split="heterographic") for f in files]
    return parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)


def _both_checked(homographic, kind, lang=None, needs_image=False, captions=False, text_only=False):
    heterographic = _heterographic(sources.resolve("unpie"), os.environ.get("LMMS_EVAL_DATASETS_CACHE"))
    parts = [(homographic, "homographic"), (heterographic, "heterographic")]
    return datasets.concatenate_datasets(
        [_expand_checked(d, kind, lang, needs_image, captions, s, text_only) for d, s in parts]
    )


def _docs(kind, lang=None, both=False, **kw):  # the docs of the split lmms-eval hands over, or of both splits
    return functools.partial(_both_checked if both else _expand_checked, kind=kind, lang=lang, **kw)


unpie_grounding_split_docs = _docs("grounding")
unpie_grounding_sm_split_docs = _docs("grounding", captions=True)
unpie_disambiguation_de_split_docs = _docs("disambiguation", "de", needs_image=True)
unpie_disambiguation_fr_split_docs = _docs("disambiguation", "fr", needs_image=True)
unpie_disambiguation_ko_split_docs = _docs("disambiguation", "ko", needs_image=True)
unpie_disambiguation_sm_de_split_docs = _docs("disambiguation", "de", captions=True)
unpie_disambiguation_sm_fr_split_docs = _docs("disambiguation", "fr", captions=True)
unpie_disambiguation_sm_ko_split_docs = _docs("disambiguation", "ko", captions=True)
unpie_reconstruction_de_split_docs = _docs("reconstruction", "de")
unpie_reconstruction_fr_split_docs = _docs("reconstruction", "fr")
unpie_reconstruction_ko_split_docs = _docs("reconstruction", "ko")
unpie_reconstruction_sm_de_split_docs = _docs("reconstruction", "de", captions=True)
unpie_reconstruction_sm_fr_split_docs = _docs("reconstruction", "fr", captions=True)
unpie_reconstruction_sm_ko_split_docs = _docs("reconstruction", "ko", captions=True)
# The text-only tasks: no explanation image in their docs (no image library at load).
unpie_grounding_text_split_docs = _docs("grounding", text_only=True)
unpie_reconstruction_text_de_split_docs = _docs("reconstruction", "de", text_only=True)
unpie_reconstruction_text_fr_split_docs = _docs("reconstruction", "fr", text_only=True)
unpie_reconstruction_text_ko_split_docs = _docs("reconstruction", "ko", text_only=True)
# Both splits, homographic docs then heterographic ones: the tasks whose value is the paper's All.
unpie_grounding_docs = _docs("grounding", both=True)
unpie_grounding_sm_docs = _docs("grounding", both=True, captions=True)
unpie_disambiguation_de_docs = _docs("disambiguation", "de", both=True, needs_image=True)
unpie_disambiguation_fr_docs = _docs("disambiguation", "fr", both=True, needs_image=True)
unpie_disambiguation_ko_docs = _docs("disambiguation", "ko", both=True, needs_image=True)
unpie_disambiguation_sm_de_docs = _docs("disambiguation", "de", both=True, captions=True)
unpie_disambiguation_sm_fr_docs = _docs("disambiguation", "fr", both=True, captions=True)
unpie_disambiguation_sm_ko_docs = _docs("disambiguation", "ko", both=True, captions=True)
unpie_reconstruction_de_docs = _docs("reconstruction", "de", both=True)
unpie_reconstruction_fr_docs = _docs("reconstruction", "fr", both=True)
unpie_reconstruction_ko_docs = _docs("reconstruction", "ko", both=True)
unpie_reconstruction_sm_de_docs = _docs("reconstruction", "de", both=True, captions=True)
unpie_reconstruction_sm_fr_docs = _docs("reconstruction", "fr", both=True, captions=True)
unpie_reconstruction_sm_ko_docs = _docs("reconstruction", "ko", both=True, captions=True)
unpie_grounding_text_docs = _docs("grounding", both=True, text_only=True)
unpie_reconstruction_text_de_docs = _docs("reconstruction", "de", both=True, text_only=True)
unpie_reconstruction_text_fr_docs = _docs("reconstruction", "fr", both=True, text_only=True)
unpie_reconstruction_text_ko_docs = _docs("reconstruction", "ko", both=True, text_only=True)
