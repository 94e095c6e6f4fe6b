"""Write datasets in the layout of a Hugging Face dataset repository.

``<out>/README.md`` holds a YAML ``configs:`` block and ``<out>/<config>/<split>.parquet`` the rows, with image
columns embedded as ``datasets.Image`` bytes. ``datasets.load_dataset(<out>, name=<config>)`` then yields exactly the
schema a hub copy yields, offline, so prepared data, the bundled sample and the hub share one loading path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping


def write_hub_dataset(
    out_dir: str, configs: Mapping[str, Mapping[str, object]], card: str = "", info: dict | None = None
) -> dict:
    """Write ``configs`` = ``{config_name: {split_name: datasets.Dataset}}`` under ``out_dir``.

    ``card`` is free Markdown placed after the YAML header; ``info`` (counts, source commit, builder version) is
    written to ``hanyi_build.json`` beside it. Returns ``{config: {split: num_rows}}``. Output is deterministic for
    deterministic input (rows are written in the order given).
    """
    os.makedirs(out_dir, exist_ok=True)
    counts: dict[str, dict[str, int]] = {}
    lines = ["---", "configs:"]
    for config_name in sorted(configs):
        splits = configs[config_name]
        lines.append(f"- config_name: {config_name}")
        lines.append("  data_files:")
        counts[config_name] = {}
        os.makedirs(os.path.join(out_dir, config_name), exist_ok=True)
        for split in sorted(splits):
            ds = splits[split]
            rel = f"{config_name}/{split}.parquet"
            ds.to_parquet(os.path.join(out_dir, rel))
            lines.append(f"  - split: {split}")
            lines.append(f"    path: {rel}")
            counts[config_name][split] = len(ds)
    lines.append("---")
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n" + card.strip() + "\n")
    with open(os.path.join(out_dir, "hanyi_build.json"), "w", encoding="utf-8") as f:
        json.dump({"counts": counts, **(info or {})}, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    return counts
