"""The committed UNPIE YAMLs are exactly what hanyi/tasks/unpie/_generate_configs.py writes (no hand edits, no drift)."""

from __future__ import annotations

import os

from hanyi.tasks.unpie import _generate_configs as gen


def test_generated_yamls_match_the_committed_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "HERE", str(tmp_path))
    gen.main()
    generated = sorted(os.listdir(tmp_path))
    assert len(generated) > 40
    for name in generated:
        committed = os.path.join(os.path.dirname(gen.__file__), name)
        assert os.path.isfile(committed), f"{name} is generated but not committed"
        with open(committed, encoding="utf-8") as a, open(tmp_path / name, encoding="utf-8") as b:
            assert a.read() == b.read(), f"{name} differs from the generator's output; rerun _generate_configs"
