"""UNPIE ``process_docs`` functions: hub rows -> task docs (hanyi.data.unpie.expand), one name per task YAML.

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
