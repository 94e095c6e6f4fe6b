"""Start-up hook that lets a plain ``lmms-eval --tasks punrebus`` / ``lm_eval --tasks cii_textonly`` find hanyi's tasks.

``_hanyi_autohook.pth`` (installed at the root of site-packages) imports this module at every interpreter
start-up. It must stay cheap: standard library only, no file access. It installs a meta-path finder that answers
once per target module and waits for ``lmms_eval.tasks`` to be imported, then appends :data:`hanyi.TASKS_DIR` to every
``TaskManager``'s include paths (see :func:`hanyi.host.discovery.patch_task_manager`); likewise, when
``lm_eval.tasks`` (lm-evaluation-harness) is imported, it adds :data:`hanyi.LM_EVAL_TASKS_DIR` and registers the
``replay`` model there (:func:`hanyi.host.discovery.patch_lm_eval_tasks_module`). Nothing else is touched: task
discovery is the only lmms-eval callable the hook replaces (``hanyi eval`` adds its own extras, :mod:`hanyi.host`).

Set ``HANYI_NO_AUTOHOOK=1`` to turn it off (both harnesses). ``docs/dev/discovery.md`` explains why it exists (lmms-eval
0.7.3 builds its task index before it reads ``LMMS_EVAL_PLUGINS``; lm-eval 0.4.13 has no plugin route at all) and
when it stands down by itself.
"""

import os
import sys

OPT_OUT_ENV = "HANYI_NO_AUTOHOOK"
_TARGET = "lmms_eval.tasks"
#: module -> patch function in hanyi.host.discovery, called with the freshly executed module.
_TARGETS = {
    _TARGET: "patch_lmms_eval_tasks_module",
    "lm_eval.tasks": "patch_lm_eval_tasks_module",
    "lm_eval._cli.harness": "patch_lm_eval_cli",  # `lm_eval --tasks list`, dropped in lm-eval 0.4.13
}


def _opted_out() -> bool:
    return os.environ.get(OPT_OUT_ENV, "").strip().lower() not in ("", "0", "false", "no")


class _TaskManagerHook:
    """Meta-path finder that answers only for the modules in ``_TARGETS``, once each, and leaves ``sys.meta_path``
    when none is pending. When ``lmms_eval.tasks`` loads in a process where lm-eval is not installed, the lm-eval
    targets are dropped, so it leaves then; with lm-eval installed it stays (one dict look-up per import) until
    ``lm_eval.tasks`` and ``lm_eval._cli.harness`` have loaded, which in an lmms-eval-only process is never."""

    def __init__(self, targets=None):
        self.pending = dict(_TARGETS if targets is None else targets)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.pending:
            return None
        import importlib.util

        patch_name = self.pending.pop(fullname)  # popped first: the find_spec calls below do not come back here
        if fullname == _TARGET and importlib.util.find_spec("lm_eval") is None:  # no lm-eval: nothing left to wait for
            self.pending = {k: v for k, v in self.pending.items() if not k.startswith("lm_eval.")}
        if not self.pending:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original_exec = spec.loader.exec_module

        def exec_module(module):
            original_exec(module)
            try:
                from hanyi.host import discovery

                getattr(discovery, patch_name)(module)
            except Exception as exc:  # never break lmms-eval / lm-eval because of us
                sys.stderr.write(f"hanyi: task discovery hook failed ({exc!r}); use --include_path instead\n")

        spec.loader.exec_module = exec_module
        return spec


def install() -> bool:
    """Install the hook for the task modules not imported yet, unless opted out. Returns True if installed."""
    pending = {name: fn for name, fn in _TARGETS.items() if name not in sys.modules}
    if _opted_out() or not pending:
        return False
    if any(isinstance(f, _TaskManagerHook) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _TaskManagerHook(pending))
    return True


install()
