"""UNPIE ``process_docs`` functions: hub rows -> task docs (hanyi.data.unpie.expand), one name per task YAML.

Both splits in one task. The paper reports Homo, Hetero and All = their unweighted mean (§4), and the tasks
``unpie_grounding``, ``unpie_disambiguation_<lang>`` and ``unpie_reconstruction_<lang>`` (and their ``_sm`` / ``_text``
twins) score the docs of both splits, homographic then heterographic, each doc naming its split (``category``,
``unpie_id``). lmms-eval 0.7.3 (and lm-eval) evaluate ``dataset[test_split]`` and hand ``process_docs`` that one
split only, so these tasks say ``test_split: homographic`` and their ``process_docs`` (``unpie_<kind>[_<lang>]_docs``
below) appends the ``heterographic`` split of the same data, read with ``datasets.load_dataset(<the same
dataset_path>, "default", split="heterographic")`` (:func:`hanyi.data.unpie.load_split`). The alternatives do not
work: ``dataset_kwargs: {split: "homographic+heterographic"}`` makes ``load_dataset`` return one ``Dataset``, which
lmms-eval then indexes by split name; ``data_files`` globbing both parquet files into one split loses which row came
from which split. The second read is offline-safe wherever the task's own load is: lmms-eval has just loaded the
whole ``DatasetDict`` (both splits) from that path, so a local directory (``hanyi prepare``, the bundled sample) is
read again from disk and the hub id is served from the ``datasets`` cache (``HF_DATASETS_OFFLINE=1`` works). It uses
``datasets``' default cache (``HF_DATASETS_CACHE``): with ``LMMS_EVAL_DATASETS_CACHE`` set to another folder, the hub
copy is read (downloaded once) into the default one as well. ``--limit N`` takes the first N docs, i.e. homographic
ones first. The one-split tasks (``..._homo`` / ``..._hetero``) read their own split only.

The backbones a task's scoring needs are checked here, at task load, before any model call. The VLM
disambiguation tasks leave out docs whose disambiguator image cannot be resolved (a VLM task never sends a request
without its image); the caption (``_sm``) tasks keep them and attach each doc's caption (a doc without one is
counted in ``caption_missing`` and left out of every score).
"""

import functools

from hanyi.data import unpie as data
from hanyi.tasks.unpie import scoring


def _expand_checked(dataset, kind, split, lang, needs_image=False, captions=False):
    scoring.require_backbones(kind)  # at task load, before any model call, once per process
    return data.expand(dataset, kind=kind, split=split, lang=lang, needs_image=needs_image, captions=captions)


def _both_checked(homographic, kind, lang=None, needs_image=False, captions=False):
    scoring.require_backbones(kind)
    parts = [(homographic, "homographic"), (data.load_split("heterographic"), "heterographic")]
    return data.expand_splits(parts, kind=kind, lang=lang, needs_image=needs_image, captions=captions)


def _both(kind, lang=None, needs_image=False, captions=False):
    """``process_docs`` of a task that scores both splits: its ``test_split`` (homographic) + the heterographic one."""
    return functools.partial(_both_checked, kind=kind, lang=lang, needs_image=needs_image, captions=captions)


def _docs(kind, split, lang=None, needs_image=False, captions=False):
    kw = dict(kind=kind, split=split, lang=lang, needs_image=needs_image, captions=captions)
    return functools.partial(_expand_checked, **kw)


unpie_grounding_homo_docs = _docs("grounding", "homographic")
unpie_grounding_hetero_docs = _docs("grounding", "heterographic")
unpie_grounding_sm_homo_docs = _docs("grounding", "homographic", captions=True)
unpie_grounding_sm_hetero_docs = _docs("grounding", "heterographic", captions=True)
unpie_disambiguation_de_homo_docs = _docs("disambiguation", "homographic", "de", needs_image=True)
unpie_disambiguation_de_hetero_docs = _docs("disambiguation", "heterographic", "de", needs_image=True)
unpie_disambiguation_fr_homo_docs = _docs("disambiguation", "homographic", "fr", needs_image=True)
unpie_disambiguation_fr_hetero_docs = _docs("disambiguation", "heterographic", "fr", needs_image=True)
unpie_disambiguation_ko_homo_docs = _docs("disambiguation", "homographic", "ko", needs_image=True)
unpie_disambiguation_ko_hetero_docs = _docs("disambiguation", "heterographic", "ko", needs_image=True)
unpie_disambiguation_sm_de_homo_docs = _docs("disambiguation", "homographic", "de", captions=True)
unpie_disambiguation_sm_de_hetero_docs = _docs("disambiguation", "heterographic", "de", captions=True)
unpie_disambiguation_sm_fr_homo_docs = _docs("disambiguation", "homographic", "fr", captions=True)
unpie_disambiguation_sm_fr_hetero_docs = _docs("disambiguation", "heterographic", "fr", captions=True)
unpie_disambiguation_sm_ko_homo_docs = _docs("disambiguation", "homographic", "ko", captions=True)
unpie_disambiguation_sm_ko_hetero_docs = _docs("disambiguation", "heterographic", "ko", captions=True)
unpie_reconstruction_de_homo_docs = _docs("reconstruction", "homographic", "de")
unpie_reconstruction_de_hetero_docs = _docs("reconstruction", "heterographic", "de")
unpie_reconstruction_fr_homo_docs = _docs("reconstruction", "homographic", "fr")
unpie_reconstruction_fr_hetero_docs = _docs("reconstruction", "heterographic", "fr")
unpie_reconstruction_ko_homo_docs = _docs("reconstruction", "homographic", "ko")
unpie_reconstruction_ko_hetero_docs = _docs("reconstruction", "heterographic", "ko")
unpie_reconstruction_sm_de_homo_docs = _docs("reconstruction", "homographic", "de", captions=True)
unpie_reconstruction_sm_de_hetero_docs = _docs("reconstruction", "heterographic", "de", captions=True)
unpie_reconstruction_sm_fr_homo_docs = _docs("reconstruction", "homographic", "fr", captions=True)
unpie_reconstruction_sm_fr_hetero_docs = _docs("reconstruction", "heterographic", "fr", captions=True)
unpie_reconstruction_sm_ko_homo_docs = _docs("reconstruction", "homographic", "ko", captions=True)
unpie_reconstruction_sm_ko_hetero_docs = _docs("reconstruction", "heterographic", "ko", captions=True)

# Both splits (homographic docs, then heterographic): the tasks whose score is the paper's All.
unpie_grounding_docs = _both("grounding")
unpie_grounding_sm_docs = _both("grounding", captions=True)
unpie_disambiguation_de_docs = _both("disambiguation", "de", needs_image=True)
unpie_disambiguation_fr_docs = _both("disambiguation", "fr", needs_image=True)
unpie_disambiguation_ko_docs = _both("disambiguation", "ko", needs_image=True)
unpie_disambiguation_sm_de_docs = _both("disambiguation", "de", captions=True)
unpie_disambiguation_sm_fr_docs = _both("disambiguation", "fr", captions=True)
unpie_disambiguation_sm_ko_docs = _both("disambiguation", "ko", captions=True)
unpie_reconstruction_de_docs = _both("reconstruction", "de")
unpie_reconstruction_fr_docs = _both("reconstruction", "fr")
unpie_reconstruction_ko_docs = _both("reconstruction", "ko")
unpie_reconstruction_sm_de_docs = _both("reconstruction", "de", captions=True)
unpie_reconstruction_sm_fr_docs = _both("reconstruction", "fr", captions=True)
unpie_reconstruction_sm_ko_docs = _both("reconstruction", "ko", captions=True)
