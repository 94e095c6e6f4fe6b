"""Write datasets in the layout of a Hugging Face dataset repository.

``<out>/README.md`` holds a YAML ``configs:`` block and ``<out>/<config>/<split>-<hash>.parquet`` the rows, with
image columns embedded as ``datasets.Image`` bytes. ``datasets.load_dataset(<out>, name=<config>)`` then yields
exactly the schema a hub copy yields, offline, so prepared data, the bundled sample and the hub share one loading
path.

The ``<hash>`` (first 12 hex digits of the file's SHA-256) is not decoration: ``datasets`` keys its cache on the
data-file paths, so a dataset rewritten in place under the same name is served stale from the cache. A new content
hash means a new path and a fresh load; identical content keeps its name.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections.abc import Mapping

from hanyi.data.safepath import no_link


def _write_split(ds, directory: str, split: str) -> str:
    """Write ``ds`` as ``<directory>/<split>-<hash>.parquet`` and remove other versions of that split; return the name."""
    os.makedirs(no_link(directory, "dataset folder"), exist_ok=True)
    tmp = no_link(os.path.join(directory, f".{split}.parquet.tmp"), "dataset file")
    ds.to_parquet(tmp)
    with open(tmp, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    name = f"{split}-{digest}.parquet"
    for old in glob.glob(os.path.join(directory, f"{glob.escape(split)}-*.parquet")) + [
        os.path.join(directory, f"{split}.parquet")
    ]:
        if os.path.basename(old) != name and os.path.isfile(old):
            os.remove(old)
    os.replace(tmp, no_link(os.path.join(directory, name), "dataset file"))
    return name


def write_hub_dataset(
    out_dir: str,
    configs: Mapping[str, Mapping[str, object]],
    card: str = "",
    info: dict | None = None,
    config_dirs: Mapping[str, str] | None = None,
) -> dict:
    """Write ``configs`` = ``{config_name: {split_name: datasets.Dataset}}`` under ``out_dir``.

    ``config_dirs`` maps a config to its folder (default: the config name; the hub's single-config layout is
    ``{"default": "data"}``). ``card`` is free Markdown placed after the YAML header; ``info`` (counts, source
    commit, builder version) is written to ``hanyi_build.json`` beside it. Returns ``{config: {split: num_rows}}``.
    Output is deterministic for deterministic input (rows are written in the order given).
    """
    os.makedirs(no_link(out_dir, "dataset folder"), exist_ok=True)
    readme, build = (no_link(os.path.join(out_dir, n), "dataset card") for n in ("README.md", "hanyi_build.json"))
    for config_name in configs:  # every folder checked before anything is written
        no_link(os.path.join(out_dir, (config_dirs or {}).get(config_name, config_name)), "dataset folder")
    counts: dict[str, dict[str, int]] = {}
    lines = ["---", "configs:"]
    for config_name in sorted(configs):
        folder = (config_dirs or {}).get(config_name, config_name)
        lines.append(f"- config_name: {config_name}")
        lines.append("  data_files:")
        counts[config_name] = {}
        for split in sorted(configs[config_name]):
            ds = configs[config_name][split]
            name = _write_split(ds, os.path.join(out_dir, folder), split)
            lines.append(f"  - split: {split}")
            lines.append(f"    path: {folder}/{name}")
            counts[config_name][split] = len(ds)
    lines.append("---")
    with open(readme, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n" + card.strip() + "\n")
    with open(build, "w", encoding="utf-8") as f:
        json.dump({"counts": counts, **(info or {})}, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    return counts
