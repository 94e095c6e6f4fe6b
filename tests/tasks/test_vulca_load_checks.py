"""VULCA load-time checks on the docs themselves (before any model call)."""

import os

import pytest


def test_a_duplicated_doc_id_stops_the_task_at_load_time(tmp_path):
    import datasets

    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.vulca import utils

    ds = datasets.load_dataset(os.path.join(SAMPLE_DIR, "vulca"), split="test", cache_dir=str(tmp_path))
    assert len(utils.vulca_process_docs(ds)) == len(ds)  # the sample: each painting once
    twice = datasets.concatenate_datasets([ds, ds.select([0])])  # the first painting given again
    with pytest.raises(
        ValueError, match=rf"vulca: doc_id\(s\) in more than one row: {ds[0]['doc_id']}\..*hanyi prepare"
    ):
        utils.vulca_process_docs(twice)
