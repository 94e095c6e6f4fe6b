"""1 process against 2 processes: the same replay run under ``lmms-eval``, ``torchrun`` and ``accelerate launch``.

Usage::

    python benchmarks/multiprocess_parity.py [--groups punrebus,cii] [--launchers single,torchrun,accelerate] [--nproc 2]

Every launch runs ``-m lmms_eval --model replay`` on the bundled sample data (``HANYI_DATA_ROOT=sample``, offline,
CPU, gloo) with one deterministic record per (task, doc) written by :func:`write_records`. Prints the wall time of
each launch, whether every metric of every task is identical to the single-process run, and the number of logged
samples per task (nothing duplicated or lost).

On a 2-core machine, 2 processes are not faster: both ranks pay lmms-eval's ~25 s import, and the cores are shared.
The point of this script is the parity check and the overhead figure, not a speed-up.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HANYI_DATA_ROOT": "sample",
    # torchrun sets 1 thread per rank; model-based metrics (NLI, BERTScore) change in the ~10th digit with the
    # thread count (float reduction order in matmuls), so every launch gets the same count to compare like with like.
    "OMP_NUM_THREADS": "1",
}
#: Answers a replay record cycles through: letters, a box, free text in the benchmarks' languages, an empty answer.
RESPONSES = (
    "A",
    "B",
    "C",
    "D",
    "[12, 30, 180, 210]",
    "这幅画用蝙蝠表示福，寓意福到了。",
    "The pun plays on two meanings of the word.",
    "Le jeu de mots joue sur deux sens.",
    "",
)


def leaf_tasks(names) -> list[str]:
    """The task ids under ``names`` (groups expanded recursively), from the YAMLs alone."""
    from hanyi.cli import _task_index

    index = _task_index()
    out: list[str] = []

    def walk(name):
        entry = index.get(name)
        if entry is None:
            raise SystemExit(f"unknown task or group {name!r}")
        if entry["type"] in ("group", "tag"):  # a tag (CII's `cii`) runs its tasks, as a group does
            for sub in entry["tasks"]:
                walk(sub)
        elif name not in out:
            out.append(name)

    for name in names:
        walk(name)
    return out


def write_records(path: str, tasks, docs_per_task: int = 64) -> str:
    """One record per (task, doc_id < docs_per_task): a response and 32 log-likelihoods, all fixed by (task, doc)."""
    with open(path, "w", encoding="utf-8") as f:
        for task in tasks:
            seed = zlib.crc32(task.encode())
            for doc_id in range(docs_per_task):
                k = (seed + 7 * doc_id) % 1009
                lls = [[-float((k + 3 * i) % 11) - 0.25 * i, (k + i) % 5 == 0] for i in range(32)]
                rec = {"task": task, "doc_id": doc_id, "response": RESPONSES[k % len(RESPONSES)], "loglikelihoods": lls}
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_command(launcher: str, nproc: int, python: str = sys.executable) -> list[str]:
    """The launcher prefix a researcher types, run from this interpreter's environment."""
    if launcher == "single":
        return [python, "-m", "lmms_eval"]
    if launcher == "torchrun":
        return [python, "-m", "torch.distributed.run", "--nproc_per_node", str(nproc), "--master_port",
                str(free_port()), "-m", "lmms_eval"]  # fmt: skip
    if launcher == "accelerate":
        accelerate = os.path.join(os.path.dirname(python), "accelerate")
        return [accelerate, "launch", "--cpu", "--num_processes", str(nproc), "--num_machines", "1",
                "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(free_port()),
                "-m", "lmms_eval"]  # fmt: skip
    raise ValueError(f"unknown launcher {launcher!r}")


def run_replay(
    launcher: str, tasks, records: str, out_dir: str, nproc: int = 2, limit=None, env=None, plain: bool = False
):
    """One replay launch of ``tasks``; returns what :func:`run_command` returns. ``plain``: hanyi's start-up hook off
    and the tasks found through ``--include_path`` (nothing of lmms-eval replaced)."""
    cmd = launch_command(launcher, nproc) + [
        "--model", "replay", "--model_args", f"path={records}", "--tasks", ",".join(tasks),
        "--output_path", out_dir, "--log_samples", "--verbosity", "DEBUG",
    ]  # fmt: skip
    if plain:
        import hanyi

        cmd += ["--include_path", hanyi.TASKS_DIR]
        env = {**(env or {}), "HANYI_NO_AUTOHOOK": "1"}
    if limit:
        cmd += ["--limit", str(limit)]
    return run_command(cmd, out_dir, env)


def run_command(cmd, out_dir: str, env=None):
    """Run a launch offline on the sample data; ``(metrics, samples {task: sorted doc ids}, wall_s, log)``."""
    full_env = {**os.environ, **OFFLINE, **(env or {})}
    for var in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        full_env.pop(var, None)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        hint = ""
        if "import timm" in log and "No module named 'torchvision'" in log:
            hint = "\n(accelerate imports timm, which needs torchvision: `pip uninstall -y timm`, docs/install.md)"
        raise RuntimeError(f"{' '.join(cmd[:3])} exited {proc.returncode}:\n{log[-4000:]}{hint}")
    found = sorted(glob.glob(os.path.join(out_dir, "**", "*_results.json"), recursive=True))
    if not found:
        raise RuntimeError(f"no results file under {out_dir}:\n{log[-4000:]}")
    with open(found[-1], encoding="utf-8") as f:
        results = json.load(f)
    samples = {}
    for path in glob.glob(os.path.join(os.path.dirname(found[-1]), "*_samples_*.jsonl")):
        task = os.path.basename(path).split("_samples_", 1)[1].rsplit(".", 1)[0]
        with open(path, encoding="utf-8") as f:
            samples[task] = sorted(json.loads(line)["doc_id"] for line in f if line.strip())
    return metrics_of(results), samples, wall, log


def metrics_of(results: dict) -> dict:
    """``{task: {metric: value}}`` without the run-specific entries (aliases, sample counts)."""
    return {
        task: {k: v for k, v in sorted(values.items()) if k != "alias" and not k.startswith("samples")}
        for task, values in results["results"].items()
    }


def differences(a: dict, b: dict) -> list[str]:
    """Every metric that is absent on one side or does not agree under the float rule (:mod:`hanyi.floats`,
    docs/dev/contributing.md): a value that passes through a neural backbone (S_Sim, BERTScore, the VULCA models) within
    its tolerance, since each process has its own thread pool and batches; every other metric value exactly (NaN
    equals NaN).

    A standard error (``*_stderr*`` key) is lmms-eval's own computation (``mean_stderr`` of its registered ``mean``),
    which sums the per-doc values in the order ranks hand them over: it is compared to 1e-12 relative (a backbone
    metric's to the float rule)."""
    from hanyi import floats

    return floats.differences(a, b, stderr_rtol=1e-12)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default="punrebus,cii", help="comma-separated groups or tasks")
    ap.add_argument("--launchers", default="single,torchrun,accelerate")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    tasks = leaf_tasks(args.groups.split(","))
    tmp = tempfile.mkdtemp(prefix="hanyi-multiprocess-")
    records = write_records(os.path.join(tmp, "records.jsonl"), tasks)
    print(f"{len(tasks)} tasks from {args.groups}; records {records}")
    baseline = None
    for launcher in args.launchers.split(","):
        nproc = 1 if launcher == "single" else args.nproc
        metrics, samples, wall, _ = run_replay(
            launcher, args.groups.split(","), records, os.path.join(tmp, launcher), nproc, args.limit
        )
        n_samples = sum(len(v) for v in samples.values())
        dupes = sum(len(v) - len(set(v)) for v in samples.values())
        line = f"{launcher:<11} nproc={nproc}  wall {wall:6.1f} s  tasks {len(metrics)}  samples {n_samples} (dupes {dupes})"
        if baseline is None:
            baseline = (metrics, samples)
        else:
            diff = differences(baseline[0], metrics)
            lost = sum(len(set(baseline[1].get(t, [])) - set(v)) for t, v in samples.items())
            line += f"  metrics identical: {not diff}  lost samples: {lost}"
            for d in diff[:10]:
                line += f"\n    {d}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
