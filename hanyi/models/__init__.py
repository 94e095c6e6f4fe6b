"""lmms-eval model plugins shipped with hanyi.

Registered through the ``lmms_eval.models`` entry-point group (``pyproject.toml``), so ``--model replay`` works after
``pip install hanyi``. ``AVAILABLE_MODELS`` serves lmms-eval's older ``LMMS_EVAL_PLUGINS=hanyi`` route.
"""

#: model id -> class name inside ``hanyi.models.<model id>`` (the LMMS_EVAL_PLUGINS convention).
AVAILABLE_MODELS = {"replay": "ReplayModel"}


def model_manifests():
    """Entry point for ``lmms_eval.models``: one ``ModelManifest`` per hanyi model."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return [
        ModelManifest(model_id=name, simple_class_path=f"hanyi.models.{name}.{cls}", aliases=(f"hanyi_{name}",))
        for name, cls in AVAILABLE_MODELS.items()
    ]
