"""Per-model ``lmms_eval_specific_kwargs`` blocks are merged over the task's ``default`` block (issue 12, item 11).

lmms-eval 0.7.3 *replaces* the ``default`` block with the block named by ``--model``. Each test builds a real
``ConfigurableTask`` from one of our task YAMLs with ``model_name`` set, adds a model block that changes one key,
and checks that the prompt equals the one built from the default block with that key changed (every other task key
kept). Before the fix these raised ``KeyError: 'template'`` (UNPIE) or silently fell back to the benchmark-wide
defaults (VULCA persona and KB, CVLUE VG template, Pun Rebus expression prompt, CII CoT template).
"""

from __future__ import annotations

import copy
import os

import pytest

import hanyi

MODEL = "hanyi_test_model"

# (task yaml, key changed by the model block, its new value); None = a block that only adds an unrelated key.
CASES = {
    "punrebus": ("punrebus/punrebus_expression.yaml", "prompt_variant", "code_exact"),
    "cvlue": ("cvlue/cvlue_vg.yaml", None, None),
    "cii": ("cii/cii_cot.yaml", None, None),
    "unpie": ("unpie/unpie_disambiguation_de_homo.yaml", "image_slot", "<image>"),
    "vulca": ("vulca/vulca_persona_kb_su_shi.yaml", "images", "whole"),
}


def _task(yaml_rel: str, blocks: dict, model_name: str | None):
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask
    from lmms_eval.utils import load_yaml_config

    config = load_yaml_config(yaml_path=os.path.join(hanyi.TASKS_DIR, yaml_rel))
    if blocks is not None:
        config["lmms_eval_specific_kwargs"] = copy.deepcopy(blocks)
    # chat models get the messages task (TaskManager task_type="chat"), which calls doc_to_messages
    task_class = ConfigurableMessagesTask if callable(config.get("doc_to_messages")) else ConfigurableTask
    return task_class(config=config, model_name=model_name)


def _prompt(task, doc):
    text = task.doc_to_text(doc)
    if hasattr(task, "doc_to_messages") and callable(task.config.doc_to_messages):
        messages = task.doc_to_messages(doc)
        text += "\n" + "\n".join(part["text"] for m in messages for part in m["content"] if part["type"] == "text")
    return text


@pytest.mark.parametrize("bench", sorted(CASES))
def test_model_block_is_merged_over_task_default(bench):
    from lmms_eval.utils import load_yaml_config

    yaml_rel, key, value = CASES[bench]
    default = load_yaml_config(yaml_path=os.path.join(hanyi.TASKS_DIR, yaml_rel))["lmms_eval_specific_kwargs"][
        "default"
    ]
    override = {key: value} if key else {"hanyi_unused_note": "model block that sets nothing the prompt reads"}
    expected_task = _task(yaml_rel, {"default": {**default, **override}}, None)
    merged_task = _task(yaml_rel, {"default": dict(default), MODEL: override}, MODEL)
    assert merged_task.lmms_eval_specific_kwargs == override  # lmms-eval really handed us the model block alone
    doc = expected_task.test_docs()[0]
    expected = _prompt(expected_task, doc)
    assert _prompt(merged_task, doc) == expected
    assert len(merged_task.doc_to_visual(doc)) == len(expected_task.doc_to_visual(doc))


def test_model_block_changes_what_it_sets():
    """The merge keeps the model's key: UNPIE's image slot reaches the prompt only through the model block."""
    yaml_rel = "unpie/unpie_reconstruction_de_homo.yaml"
    from lmms_eval.utils import load_yaml_config

    default = load_yaml_config(yaml_path=os.path.join(hanyi.TASKS_DIR, yaml_rel))["lmms_eval_specific_kwargs"][
        "default"
    ]
    plain = _task(yaml_rel, {"default": dict(default)}, MODEL)
    slotted = _task(yaml_rel, {"default": dict(default), MODEL: {"image_slot": "<IMG-SLOT>"}}, MODEL)
    doc = plain.test_docs()[0]
    assert "<IMG-SLOT>" not in plain.doc_to_text(doc)
    assert "<IMG-SLOT>" in slotted.doc_to_text(doc)


def test_vulca_model_block_keeps_persona_and_kb():
    yaml_rel = "vulca/vulca_persona_kb_su_shi.yaml"
    default = {"persona": "su_shi", "knowledge_base": True, "prompt": "core_prompt_en.md", "images": "whole"}
    baseline = _task("vulca/vulca_baseline.yaml", None, None)
    persona = _task(yaml_rel, {"default": default, MODEL: {"images": "whole"}}, MODEL)
    doc = persona.test_docs()[0]
    assert persona.doc_to_text(doc) != baseline.doc_to_text(doc)
    assert persona.doc_to_text(doc) == _task(yaml_rel, {"default": default}, None).doc_to_text(doc)
