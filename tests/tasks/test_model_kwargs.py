"""Per-model ``lmms_eval_specific_kwargs`` blocks (item 11).

lmms-eval 0.7.3 *replaces* the ``default`` block with the block named by ``--model``, so a per-model block is complete
by construction: it repeats every key of the default block. Each test builds a real ``ConfigurableTask`` from one of
our task YAMLs with ``model_name`` set: a complete block that changes one key gives the prompt of the default block
with that key changed; an incomplete block is refused naming the missing keys (these once raised
``KeyError: 'template'`` or silently fell back to the benchmark-wide defaults; the default block was once
recovered by walking the call stack). Every block the package ships is complete.
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
def test_complete_model_block_sets_what_it_changes(bench):
    from lmms_eval.utils import load_yaml_config

    yaml_rel, key, value = CASES[bench]
    default = load_yaml_config(yaml_path=os.path.join(hanyi.TASKS_DIR, yaml_rel))["lmms_eval_specific_kwargs"][
        "default"
    ]
    override = {key: value} if key else {"hanyi_unused_note": "model block that sets nothing the prompt reads"}
    block = {**default, **override}
    expected_task = _task(yaml_rel, {"default": block}, None)
    merged_task = _task(yaml_rel, {"default": dict(default), MODEL: dict(block)}, MODEL)
    assert merged_task.lmms_eval_specific_kwargs == block  # lmms-eval really handed us the model block alone
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
    slotted = _task(yaml_rel, {"default": dict(default), MODEL: {**default, "image_slot": "<IMG-SLOT>"}}, MODEL)
    doc = plain.test_docs()[0]
    assert "<IMG-SLOT>" not in plain.doc_to_text(doc)
    assert "<IMG-SLOT>" in slotted.doc_to_text(doc)


@pytest.mark.parametrize("bench", sorted(CASES))
def test_incomplete_model_block_is_refused_naming_the_keys(bench):
    from hanyi.tasks._common import IncompleteModelBlock

    yaml_rel = CASES[bench][0]
    with pytest.raises(IncompleteModelBlock, match="block lacks .*repeat every key of the default block"):
        # lmms-eval may build a prompt while it sets the task up: the error comes at load time or at the first doc
        task = _task(yaml_rel, {"default": {"hanyi_unused_note": "x"}, MODEL: {"hanyi_unused_note": "y"}}, MODEL)
        _prompt(task, task.test_docs()[0])


def _task_yamls():
    import glob

    return sorted(glob.glob(os.path.join(hanyi.TASKS_DIR, "*", "*.yaml")))


def test_every_shipped_model_block_is_complete():
    """A block for a named model holds every key of its task's default block (lmms-eval uses it instead)."""
    from lmms_eval.utils import load_yaml_config

    checked = 0
    for path in _task_yamls():
        config = load_yaml_config(yaml_path=path, mode="simple")
        blocks = config.get("lmms_eval_specific_kwargs") or {}
        default = blocks.get("default") or {}
        for model, block in blocks.items():
            if model == "default" or not isinstance(block, dict):
                continue
            assert set(default) <= set(block), (
                f"{os.path.relpath(path, hanyi.TASKS_DIR)}: {model} lacks {set(default) - set(block)}"
            )
            checked += 1
    assert checked >= 1  # cvlue_vqa's qwen_vl block at least


def test_no_stack_inspection_in_the_package():
    import pathlib
    import re

    root = pathlib.Path(hanyi.__file__).parent
    found = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if re.search(r"sys\._getframe|inspect\.(stack|currentframe)|f_back|f_locals", p.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.slow
def test_every_default_block_copied_as_a_model_block_builds_the_prompts():
    """Copying a task's default block under a model's name is always enough: the default blocks are complete."""
    from lmms_eval.utils import load_yaml_config

    from hanyi.tasks._common import IncompleteModelBlock

    incomplete = []
    for path in _task_yamls():
        config = load_yaml_config(yaml_path=path, mode="simple")
        if "group" in config or "task" not in config:
            continue  # a group
        rel = os.path.relpath(path, hanyi.TASKS_DIR)
        default = load_yaml_config(yaml_path=path)["lmms_eval_specific_kwargs"]["default"]
        task = _task(rel, {"default": dict(default), MODEL: dict(default)}, MODEL)
        doc = task.test_docs()[0]
        try:
            _prompt(task, doc)
            task.doc_to_visual(doc)
        except IncompleteModelBlock as exc:
            incomplete.append(f"{rel}: {exc}")
    assert incomplete == []
