"""What the discovery hook costs: interpreter start-up, and the finder on every later import.

The target is <= 5 ms at start-up. Three figures, all measured here in fresh interpreters:

1. ``-X importtime`` self+cumulative time of ``hanyi._autohook`` (which includes ``hanyi/__init__``), as imported by
   ``_hanyi_autohook.pth``; median over ``--runs`` interpreters.
2. Wall time of ``python -c pass`` with the hook active vs ``HANYI_NO_AUTOHOOK=1`` (the .pth still runs, so this
   difference is the finder only), median over ``--runs``.
3. The finder's cost per unrelated import (it returns None for every module but ``lmms_eval.tasks``), times the
   number of modules importing lmms-eval's evaluator loads.

    .venv/bin/python benchmarks/discovery_overhead.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import timeit


def importtime_us(runs: int, env: dict | None = None) -> list[int]:
    values = []
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True, env=env
        ).stderr
        m = re.search(r"import time:\s+\d+ \|\s+(\d+) \|\s+hanyi\._autohook$", err, flags=re.M)
        if m is None:
            raise SystemExit("hanyi._autohook was not imported at start-up: is hanyi installed (with its .pth)?")
        values.append(int(m.group(1)))
    return values


def startup_ms(runs: int, env_extra: dict) -> list[float]:
    env = {**os.environ, **env_extra}
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        out.append(1000 * (time.perf_counter() - t))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    imp = importtime_us(args.runs)
    # pip byte-compiles installed packages; PYTHONDONTWRITEBYTECODE=1 (set on some machines) forces a recompile of
    # both modules at every start-up, so measure the installed-as-usual case too.
    import compileall

    import hanyi

    for name in ("__init__.py", "_autohook.py"):
        compileall.compile_file(os.path.join(os.path.dirname(hanyi.__file__), name), quiet=1)
    env_bc = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    imp_bc = importtime_us(args.runs, env_bc)
    on = startup_ms(args.runs, {"HANYI_NO_AUTOHOOK": "0"})
    off = startup_ms(args.runs, {"HANYI_NO_AUTOHOOK": "1"})
    from hanyi._autohook import _TaskManagerHook

    finder = _TaskManagerHook()
    per_call_ns = min(timeit.repeat(lambda: finder.find_spec("json.decoder"), number=100_000, repeat=5)) / 100_000 * 1e9
    code = "import sys, lmms_eval.evaluator; print(len(sys.modules))"
    n_modules = int(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[-1]
    )
    print(f"python {sys.version.split()[0]}, {args.runs} interpreters per figure")
    print(
        f"1. import of hanyi._autohook at start-up (cumulative, -X importtime): median {statistics.median(imp) / 1000:.3f} ms, "
        f"max {max(imp) / 1000:.3f} ms as run here (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}); "
        f"with bytecode as pip installs it: median {statistics.median(imp_bc) / 1000:.3f} ms"
    )
    print(
        f"2. python -c pass, hook on: median {statistics.median(on):.1f} ms; hook off: {statistics.median(off):.1f} ms; "
        f"difference {statistics.median(on) - statistics.median(off):+.1f} ms (noise of a process start is ~1 ms)"
    )
    print(
        f"3. finder per unrelated import: {per_call_ns:.0f} ns; x {n_modules} modules loaded by lmms_eval.evaluator = "
        f"{per_call_ns * n_modules / 1e6:.3f} ms in total"
    )
    total = statistics.median(imp) / 1000 + per_call_ns * n_modules / 1e6
    print(f"total attributable cost: {total:.3f} ms (target <= 5 ms): {'OK' if total <= 5 else 'OVER'}")


if __name__ == "__main__":
    main()
