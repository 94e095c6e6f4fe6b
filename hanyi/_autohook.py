"""Start-up hook that lets a plain ``lmms-eval --tasks punrebus`` find hanyi's tasks.

``_hanyi_autohook.pth`` (installed at the root of site-packages) imports this module at every interpreter
start-up. It must stay cheap: standard library only, no file access. It installs a one-shot meta-path finder
that waits for ``lmms_eval.tasks`` to be imported and then appends :data:`hanyi.TASKS_DIR` to every
``TaskManager``'s include paths (see :func:`hanyi.discovery.patch_task_manager`), and wraps ``make_table`` so the
printed table keeps hanyi's headline rows (:mod:`hanyi.printed_table`). Nothing else is touched.

Set ``HANYI_NO_AUTOHOOK=1`` to turn it off. ``docs/discovery.md`` explains why it exists (lmms-eval 0.7.3 builds its
task index before it reads ``LMMS_EVAL_PLUGINS``) and when it stands down by itself.
"""

import os
import sys

OPT_OUT_ENV = "HANYI_NO_AUTOHOOK"
_TARGET = "lmms_eval.tasks"


def _opted_out() -> bool:
    return os.environ.get(OPT_OUT_ENV, "").strip().lower() not in ("", "0", "false", "no")


class _TaskManagerHook:
    """Meta-path finder that answers only for ``lmms_eval.tasks``, once, then removes itself."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original_exec = spec.loader.exec_module

        def exec_module(module):
            original_exec(module)
            try:
                from hanyi.discovery import patch_lmms_eval_tasks_module

                patch_lmms_eval_tasks_module(module)
            except Exception as exc:  # never break lmms-eval because of us
                sys.stderr.write(f"hanyi: task discovery hook failed ({exc!r}); use --include_path instead\n")
            try:
                from hanyi.printed_table import install as install_headline_table

                install_headline_table()  # the printed table keeps hanyi's headline rows (HANYI_FULL_TABLE=1: all)
            except Exception as exc:  # never break lmms-eval because of us
                sys.stderr.write(f"hanyi: headline table hook failed ({exc!r}); lmms-eval prints its full table\n")

        spec.loader.exec_module = exec_module
        return spec


def install() -> bool:
    """Install the hook unless opted out or lmms-eval's task module is already imported. Returns True if installed."""
    if _opted_out() or _TARGET in sys.modules:
        return False
    if any(isinstance(f, _TaskManagerHook) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _TaskManagerHook())
    return True


install()
