"""A VLM task never sends a request without an image.

llava_hf under transformers >= 5.17 stops the whole run at the first request with no image (IndexError in
``_get_device_from_images``); on older releases it logs a generation error per request. So every doc of every task
in the VLM groups must resolve at least one image: docs whose image cannot be resolved are left out at load, and
text-only tasks live in groups of their own (``punrebus_text``, ``unpie_text``, ``unpie_sm``).
"""

from __future__ import annotations

import pytest

#: The groups a VLM user runs, and the VLM tasks outside any group.
VLM_GROUPS = ("punrebus", "cvlue", "cvlue_ranking", "cii", "unpie", "vulca")
VLM_TASKS = ("punrebus_matching_5shot", "punrebus_elements_5shot", "punrebus_matching_circular", "cii_circular")


def _leaves(tree) -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out |= _leaves(value)
        else:
            out[getattr(key, "task_name", key) if not isinstance(key, str) else key] = value
    return out


@pytest.mark.parametrize("name", VLM_GROUPS + VLM_TASKS)
def test_every_doc_of_a_vlm_task_has_an_image(task_manager, name):
    from lmms_eval.tasks import get_task_dict

    leaves = _leaves(get_task_dict([name], task_manager))
    assert leaves
    for task_name, task in leaves.items():
        docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
        assert len(docs) > 0, task_name
        without = [i for i, doc in enumerate(docs) if not task.doc_to_visual(doc)]
        assert not without, f"{task_name}: docs {without[:5]} would be sent without an image"


def test_the_text_only_tasks_have_groups_of_their_own(task_manager):
    from lmms_eval.tasks import get_task_dict

    for name in VLM_GROUPS:
        assert "punrebus_textonly" not in _leaves(get_task_dict([name], task_manager))
    assert list(_leaves(get_task_dict(["punrebus_text"], task_manager))) == ["punrebus_textonly"]


def test_unpie_vlm_tasks_leave_out_a_doc_with_no_image_and_caption_tasks_keep_it(task_manager, caplog):
    """The UNPIE sample has one pun whose disambiguator image cannot be resolved."""
    from lmms_eval.tasks import get_task_dict

    tasks = get_task_dict(["unpie_disambiguation_de_hetero", "unpie_disambiguation_sm_de_hetero"], task_manager)
    vlm, sm = (tasks[n].test_docs() for n in ("unpie_disambiguation_de_hetero", "unpie_disambiguation_sm_de_hetero"))
    from hanyi.data.unpie import IMAGE_OK

    assert all(d["image_status"] == IMAGE_OK for d in vlm)
    left_out = [d for d in sm if d["image_status"] != IMAGE_OK]
    assert left_out and len(vlm) == len(sm) - len(left_out)
