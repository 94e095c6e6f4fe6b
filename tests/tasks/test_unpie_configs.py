"""The committed UNPIE YAMLs are exactly what hanyi/tasks/unpie/_generate_configs.py writes (no hand edits, no drift)."""

from __future__ import annotations

import os

from hanyi.tasks.unpie import _generate_configs as gen


def test_generated_yamls_match_the_committed_ones(tmp_path, monkeypatch):
    lm_eval_out = tmp_path / "lm_eval"
    lm_eval_out.mkdir()
    committed_lm_eval = gen.LM_EVAL_DIR
    monkeypatch.setattr(gen, "HERE", str(tmp_path))
    monkeypatch.setattr(gen, "LM_EVAL_DIR", str(lm_eval_out))
    gen.main()
    # the text-only groups are lm-eval groups too, identical in both harnesses
    lm_eval_groups = sorted(os.listdir(lm_eval_out))
    assert lm_eval_groups == ["unpie_text.yaml"]  # its members score both splits: tasks, not groups
    for name in lm_eval_groups:
        with open(os.path.join(committed_lm_eval, name), encoding="utf-8") as a:
            assert a.read() == (lm_eval_out / name).read_text(encoding="utf-8"), f"lm_eval_tasks/unpie/{name} drifted"
    generated = sorted(n for n in os.listdir(tmp_path) if n.endswith(".yaml"))
    assert len(generated) > 40
    for name in generated:
        committed = os.path.join(os.path.dirname(gen.__file__), name)
        assert os.path.isfile(committed), f"{name} is generated but not committed"
        with open(committed, encoding="utf-8") as a, open(tmp_path / name, encoding="utf-8") as b:
            assert a.read() == b.read(), f"{name} differs from the generator's output; rerun _generate_configs"
