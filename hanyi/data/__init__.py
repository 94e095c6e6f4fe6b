"""Dataset builders: official releases -> hub-format directories that ``datasets.load_dataset`` reads.

Every benchmark resolves its data through :mod:`hanyi.data.sources`. A prepared directory has the layout of a
Hugging Face dataset repository (``README.md`` with a ``configs:`` block, parquet files with embedded images), so a
local copy, the bundled sample and a hub id are loaded by the same code path.
"""
