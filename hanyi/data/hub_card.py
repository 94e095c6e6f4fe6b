"""``hanyi prepare BENCH --hub-folder DIR``: the prepared dataset as a folder ready to upload to the Hugging Face hub.

The builder writes its usual hub-format folder (``README.md`` with ``configs:``, parquet shards with embedded images);
:func:`finish` then gives the card what a hub dataset card carries: ``license``, ``pretty_name`` and, below the header,
the official release it was built from, its terms as the authors state them, and the citation. ``datasets.load_dataset
(DIR)`` loads the folder, and so do the exported tasks when ``dataset_path`` names it (``docs/upstream.md``).

The terms below are the releases' own statements (the papers, the repositories' READMEs and the hub cards);
where they forbid redistributing a converted copy (CVLUE: CC BY-NC-ND 4.0), the card says so and gives the official
request path, and the folder is for private use only.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Release:
    name: str  # pretty_name
    licence: str  # the hub's licence id ("other" when none is stated)
    official: str  # where the release comes from
    terms: str  # what the authors state, and what it means for re-hosting
    redistribute: bool  # whether a converted copy may be uploaded publicly


RELEASES = {
    "punrebus": Release(
        "Pun Rebus Art",
        "cc0-1.0",
        "github.com/zhang-tuo-pdf/Pun-Rebus-Art-Benchmark @ 61c497f (answer sheet) and the authors' Dropbox image zip "
        "linked from its README",
        "The paper (§3.1, App. A.1): the images and their annotation are under CC0 1.0; the repository's code is "
        "Apache-2.0. The images come from museums, auction houses and books, and CC0 is the authors' claim: check it "
        "before hosting the images publicly.",
        True,
    ),
    "cvlue": Release(
        "CVLUE",
        "cc-by-nc-nd-4.0",
        "on request from the authors: the Google Form linked from github.com/WangYuxuan93/CVLUE",
        "CC BY-NC-ND 4.0 (paper, Ethical Statement; repository README: free upon request). No derivatives: a converted "
        "copy must not be redistributed. Keep a converted copy private (your own evaluation); each user requests the "
        "release through the form.",
        False,
    ),
    "cii": Release(
        "CII-Bench",
        "apache-2.0",
        "the hub dataset m-a-p/CII-Bench (github.com/MING-ZCH/CII-Bench @ ba8e995)",
        "Apache-2.0 (the hub card's licence tag; the paper states none). Already on the hub: use m-a-p/CII-Bench.",
        True,
    ),
    "unpie": Release(
        "UNPIE",
        "other",
        "the hub dataset jiwan-chung/VisualPun_UNPIE (github.com/JiwanChung/VisualPun_UNPIE @ c6d7481)",
        "No licence is stated (no licence tag on the hub card, none in the paper). Already on the hub: use "
        "jiwan-chung/VisualPun_UNPIE rather than a copy.",
        False,
    ),
    "vulca": Release(
        "VULCA-Bench (Twelve Months)",
        "cc-by-4.0",
        "the 12 paintings of the Twelve Months series from the National Palace Museum (Taipei) open data; texts and "
        "code: github.com/yha9806/VULCA-EMNLP2025 @ 25951bc (MIT)",
        "The paper (App. D): the images were accessed from the National Palace Museum digital archives under CC BY "
        "4.0; attribute the National Palace Museum. The repository's code is MIT.",
        True,
    ),
    "vulca_bench": Release(
        "VULCA-Bench",
        "cc-by-4.0",
        "github.com/yha9806/VULCA-Bench @ cfb0a8c (the JSONL files; images matched by file name from a local folder); "
        "the hub dataset harryHURRY/vulca-bench",
        "CC BY 4.0 since the release's commit 8552527 (README and LICENSE, Copyright (c) 2026 Haorui Yu and "
        "contributors): credit the authors, link the licence and say what was changed. The release ships no images: "
        "check the terms of the images you add before hosting them publicly. Already on the hub: "
        "harryHURRY/vulca-bench.",
        True,
    ),
}


def _bibtex(bench: str) -> str:
    """The BibTeX of ``docs/<bench>.md`` (a checkout) or ``hanyi/docs/<bench>.md`` (the wheel), or ``""``."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for docs in (os.path.join(os.path.dirname(here), "docs"), os.path.join(here, "docs")):
        path = os.path.join(docs, f"{bench}.md")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                m = re.search(r"```bibtex\n(.*?)```", f.read(), flags=re.S)
            return m.group(1).strip() if m else ""
    return ""


def finish(bench: str, folder: str) -> dict:
    """Give ``folder`` (a prepared ``bench``) a hub dataset card; local paths in ``hanyi_build.json`` become their
    base names (the folder is to be uploaded). Returns the licence facts written."""
    release = RELEASES[bench]
    readme = os.path.join(folder, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    header, body = text[3:].split("\n---", 1)
    meta = {"license": release.licence, "pretty_name": release.name, **yaml.safe_load(header)}
    card = [
        f"# {release.name}",
        "",
        f"Built with `hanyi prepare {bench} --hub-folder` from the official release: {release.official}.",
        "",
        "## Licence and terms",
        "",
        release.terms,
        "",
        *(["**Do not upload this folder publicly** (see above).", ""] if not release.redistribute else []),
        "## Citation",
        "",
        "```bibtex",
        _bibtex(bench) or f"% see docs/{bench}.md",
        "```",
        "",
        body.strip(),
    ]
    with open(readme, "w", encoding="utf-8") as f:
        f.write("---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n\n")
        f.write("\n".join(card) + "\n")
    build = os.path.join(folder, "hanyi_build.json")
    if os.path.isfile(build):
        with open(build, encoding="utf-8") as f:
            info = json.load(f)
        info = {k: os.path.basename(v) if isinstance(v, str) and os.path.isabs(v) else v for k, v in info.items()}
        with open(build, "w", encoding="utf-8") as f:
            json.dump(info, f, ensure_ascii=False, indent=1, sort_keys=True)
            f.write("\n")
    return {"license": release.licence, "redistribute": release.redistribute}
