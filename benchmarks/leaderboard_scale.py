"""How long the board takes to rank and write 100 submissions of all five benchmarks at full size (under 60 s on 2
cores, cached re-scores excluded).

Synthesizes the intake's output, one :class:`hanyi.leaderboard.entries.Entry` per (model, benchmark), at the papers'
sizes (:data:`hanyi.data.build_samples.FULL_SIZES`) and with the metrics each default group emits, per-doc scores
included: Pun Rebus 3 x 1,011 docs (clusters: 375 stories; accuracy over the ~95 % parsed docs, S_Abs and S_Sim
continuous), CII-Bench 800 questions (acc and Table 1's nine domain / emotion columns over their docs), UNPIE 13,000
docs (grounding 1,000, disambiguation and reconstruction 3 x 2,000, clustered by pun; corpus BLEU with no per-doc
mean, METEOR x100), CVLUE 21,507 VQA docs on 7,169 images and 5,385 VG docs (mIoU continuous), VULCA 9 tasks x 12
paintings. Model skill, doc difficulty and a logistic link make the 0/1 scores realistic (neighbouring models are
close); continuous scores are Beta draws around the same skill. Every row shares one protocol, so every benchmark
has one section of 100 ranked rows and the overall mean rank is computed: the largest case.

Then times, in this process, :func:`hanyi.leaderboard.ranking.rank` (each benchmark alone, then all five cold:
every cell computed, then warm: each submission's cells from the cache ``rank(..., cache_dir=...)`` kept) and
:func:`hanyi.leaderboard.site.write_site`. Building the entries is not timed (the intake's cached re-scores).

Usage: ``python benchmarks/leaderboard_scale.py [--models 100] [--out DIR]``
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import tempfile
import time
import zlib

HUB = {"kind": "hub", "hub_id": "synthetic", "revision": "main"}


def _tasks() -> dict[str, list[tuple]]:
    """``{benchmark: [(task, n_docs, cluster_of(doc), {metric: kind})]}``; kind: ``01`` (0/1 over every doc),
    ``01p`` (over the parsed docs), ``cont`` (in [0, 1]), ``x100`` (continuous, printed x100), ``corpus`` (no
    per-doc mean), ``sub:<k>/<m>`` (0/1 over the docs of label k of m)."""
    cii = {"acc": "01", "acc_robust": "01"}
    cii.update({f"acc_domain_{d}": f"sub:{i}/6" for i, d in enumerate(("life", "art", "society", "politics",
                                                                       "environment", "ctc"))})  # fmt: skip
    cii.update({f"acc_emotion_{e}": f"sub:{i}/3" for i, e in enumerate(("positive", "negative", "neutral"))})
    story = lambda d: f"story{d % 375}"  # noqa: E731
    pun = lambda d: f"pun{d // 2}"  # noqa: E731
    out = {
        "punrebus": [
            ("punrebus_matching", 1011, story, {"accuracy": "01p", "accuracy_robust": "01"}),
            ("punrebus_elements", 1011, story, {"element_abs": "cont", "element_sim": "cont"}),
            ("punrebus_expression", 1011, story, {"accuracy": "01p", "accuracy_robust": "01"}),
        ],
        "cii": [("cii_none", 800, None, cii)],
        "unpie": [
            (
                "unpie_grounding",
                1000,
                None,
                {m: "01" for m in ("exact_match", "exact_match_robust", "exact_match_strict", "answer_rate")},
            )
        ],  # fmt: skip
        "cvlue": [
            ("cvlue_vqa", 21507, lambda d: f"img{d // 3}", {"accuracy": "01", "accuracy_robust": "01"}),
            ("cvlue_vg", 5385, lambda d: f"img{d * 7169 // 5385}", {"miou": "cont"}),
        ],
        "vulca": [
            (t, 12, lambda d: f"painting{d}", {"expert_alignment": "01", "json_valid_rate": "01"})
            for t in (
                "vulca_baseline",
                *(
                    f"vulca_persona_kb_{p}"
                    for p in (
                        "mama_zola",
                        "okakura_kakuzo",
                        "elena_petrova",
                        "brother_thomas",
                        "john_ruskin",
                        "su_shi",
                        "guo_xi",
                        "aris_thorne",
                    )
                ),
            )
        ],  # fmt: skip
    }
    for lang in ("de", "fr", "ko"):
        out["unpie"].append((f"unpie_disambiguation_{lang}", 2000, pun, {"disamb_acc_bertscore": "01",
                             "disamb_acc_bertscore_robust": "01", "answer_rate": "01"}))  # fmt: skip
        out["unpie"].append((f"unpie_reconstruction_{lang}", 2000, pun, {"bleu4": "corpus", "meteor": "x100",
                             "pun_word_recovered": "01", "answer_rate": "01"}))  # fmt: skip
    return out


def entries(n_models: int, seed: int = 0) -> list:
    import numpy as np

    from hanyi.leaderboard.entries import Entry

    rng = np.random.default_rng(seed)
    skills = np.sort(rng.normal(0.0, 0.6, n_models))[::-1]
    out = []
    for bench, tasks in _tasks().items():
        for m, skill in enumerate(skills):
            sha = hashlib.sha256(f"{bench}/{m}".encode()).hexdigest()
            e = Entry(sha, bench, f"model-{m:03d}", "pretrained=org/model", "2026-11-28", "0.8", "0.7.3")
            for task, n, cluster_of, metrics in tasks:
                difficulty = np.random.default_rng(zlib.crc32(task.encode())).normal(0.0, 1.0, n)
                p = 1 / (1 + np.exp(-(skill - difficulty)))
                parsed = rng.random(n) < 0.95
                e.values[task], e.per_doc[task], e.scales[task] = {}, {}, {}
                for metric, kind in metrics.items():
                    if kind == "corpus":
                        e.values[task][metric] = float(rng.uniform(20, 50))  # corpus BLEU: no per-doc mean
                        continue
                    if kind in ("cont", "x100"):
                        a = 1 + 4 * p
                        x = rng.beta(a, 6 - a)
                    else:
                        x = (rng.random(n) < p).astype(float)
                    keep = parsed if kind == "01p" or kind == "cont" else np.ones(n, dtype=bool)
                    if kind.startswith("sub:"):
                        k, of = map(int, kind[4:].split("/"))
                        keep = np.arange(n) % of == k
                    per = {d: float(x[d]) for d in range(n) if keep[d]}
                    scale = 100.0 if kind == "x100" else 1.0
                    e.per_doc[task][metric] = per
                    e.scales[task][metric] = scale
                    e.values[task][metric] = math.fsum(per.values()) / len(per) * scale
                if cluster_of is not None:
                    e.clusters[task] = {d: cluster_of(d) for d in range(n)}
                e.protocol[task] = {"task_version": "1.0", "prompt_variant": "default", "judge_model": "none",
                                    "judge_version": None, "backbones": "{}", "full_split": "yes",
                                    "data_fingerprint": f"sha256:{bench}"}  # fmt: skip
                e.provenance[task] = {"task": task, "data_source": HUB, "prompt_variant": "default", "limit": None,
                                      "n_effective": n, "generation_failures": 0, "scorer_backends": {}}  # fmt: skip
            out.append(e)
    return out


def synthetic_board(n_models: int, seed: int = 1, benchmarks: tuple[str, ...] | None = None):
    """A ranked :class:`~hanyi.leaderboard.entries.Board` of ``n_models`` rows per benchmark, built directly (no
    per-doc scores, no ranking): every column of :func:`_tasks` with a value and an interval, rank intervals, tiers,
    flips, a model card per model, and the papers' rows. What :func:`hanyi.leaderboard.site.write_site` needs to show
    a board of that many submissions."""
    import numpy as np

    from hanyi.leaderboard.entries import Board, Cell, Entry, Row, Section
    from hanyi.leaderboard.ranking import reference_rows
    from hanyi.results.anchors import ANCHORS_DIR

    rng = np.random.default_rng(seed)
    skills = np.sort(rng.uniform(0.2, 0.8, n_models))[::-1]
    board = Board()
    for bench, tasks in _tasks().items():
        if benchmarks is not None and bench not in benchmarks:
            continue
        columns = [f"{t}/{m}" for t, _, _, metrics in tasks for m in metrics]
        section = Section(bench, {"tasks": ", ".join(t for t, *_ in tasks)}, columns, columns[0])
        for m, skill in enumerate(skills):
            sha = hashlib.sha256(f"site/{bench}/{m}".encode()).hexdigest()
            e = Entry(sha, bench, "llava_hf", f"pretrained=org/model-{m:04d}", "2026-11-28T10:00:00", "0.8", "0.7.3")
            e.card = {"name": f"Model {m:04d} {int(skill * 100)}B", "organisation": f"Lab {m % 37}",
                      "parameters": int(1e9 * (1 + m % 70)), "open_weights": bool(m % 3)}  # fmt: skip
            cells = {}
            for col in columns:
                v = float(skill if col == columns[0] else np.clip(skill + rng.normal(0, 0.05), 0, 1))
                scale = 100.0 if col.rsplit("/", 1)[1] in ("bleu4", "meteor") else 1.0
                cells[col] = Cell(v * scale, max(0, v - 0.03) * scale, min(1, v + 0.03) * scale, 800, stderr=0.015)
            row = Row(e.model, cells, e, rank=m + 1, rank_low=max(1, m - 2), rank_high=min(n_models, m + 4),
                      tier=1 + m // 7, flip=int(rng.integers(1, 30)) if m else None, p_above=0.2 if m else None)  # fmt: skip
            section.rows.append(row)
        section.rows += reference_rows(bench, section, [r.entry for r in section.rows[:3]], ANCHORS_DIR)
        board.sections.append(section)
    board.overall_absent = "a synthetic board"
    return board


def site_scale(n_models: int, out: str | None = None) -> bool:
    """Time ``write_site`` on :func:`synthetic_board` and print its largest HTML page (target: none over 1 MB)."""
    from hanyi.leaderboard.site import write_site

    board = synthetic_board(n_models)
    with tempfile.TemporaryDirectory() as tmp:
        site = out or os.path.join(tmp, "site")
        t, cpu = time.perf_counter(), time.process_time()
        written = write_site(board, site)
        wall, cpu = time.perf_counter() - t, time.process_time() - cpu
        pages = [p for p in written if p.endswith(".html")]
        sizes = sorted((os.path.getsize(p), os.path.basename(p)) for p in pages)
        json_mb = os.path.getsize(os.path.join(site, "leaderboard.json")) / 1e6
    largest, name = sizes[-1]
    ok = largest <= 1_000_000
    print(f"write_site() of a synthetic board, {n_models} submissions x {len(board.sections)} benchmarks: {wall:.1f} s "
          f"({cpu:.1f} s CPU), {len(written)} files, {len(pages)} HTML pages; largest page {name} "
          f"{largest / 1e6:.2f} MB; leaderboard.json {json_mb:.1f} MB")  # fmt: skip
    print(f"{'PASS' if ok else 'FAIL'} no HTML page over 1 MB at {n_models} submissions")
    return ok


def hostile_files() -> bool:
    """Times the intake on two hostile files (target: each rejected in under 10 s on 2 cores): 100 MB of nothing
    (over the size cap: refused before reading) and 450,000 predictions of 12 docs (about 40 MB, under the cap:
    refused by the validation pass, in linear time, before any re-score)."""
    import json

    from hanyi.leaderboard.intake import check_file

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        huge = os.path.join(tmp, "huge_submission.json")
        with open(huge, "wb") as f:
            f.truncate(100 * 1024 * 1024)
        dupes = os.path.join(tmp, "dupes_submission.json")
        preds = [{"doc_id": i % 12, "doc_hash": "h" * 64, "response": "A" * 20} for i in range(450_000)]
        doc = {"format": "hanyi-submission", "version": 2, "benchmark": "cii", "model": "m", "hanyi_version": "0.7",
               "lmms_eval_version": "0.7.3", "tasks": {"cii_none": {"version": 2.2, "metrics": {"acc": 1.0},
               "data_fingerprint": "sha256:00", "predictions": preds}}}  # fmt: skip
        with open(dupes, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        from hanyi.leaderboard.intake import task_manager

        t = time.perf_counter()
        task_manager()  # once per board process: what the validation pass checks task names against
        print(f"intake: the installed task index loaded in {time.perf_counter() - t:.1f} s (once per process)")
        for label, path in (("100 MB file", huge), (f"{os.path.getsize(dupes) / 1e6:.0f} MB of duplicates", dupes)):
            t = time.perf_counter()
            found = check_file(path)
            took = time.perf_counter() - t
            ok &= took < 10 and getattr(found, "state", "") == "rejected"
            print(f"{'PASS' if took < 10 else 'FAIL'} hostile {label}: rejected in {took:.1f} s (target < 10 s): "
                  f"{found.reasons[0] if getattr(found, 'reasons', None) else 'ACCEPTED'}")  # fmt: skip
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--out", help="the site's folder (default: a temporary one)")
    parser.add_argument("--site-models", type=int, default=1000,
                        help="submissions per benchmark of the synthetic board whose site is timed (0: skip)")  # fmt: skip
    parser.add_argument("--site-only", action="store_true", help="only the synthetic board's site")
    args = parser.parse_args(argv)
    if args.site_only:
        return 0 if site_scale(args.site_models) else 1

    from hanyi.leaderboard import ranking

    t0 = time.perf_counter()
    built = entries(args.models)
    docs = {b: sum(n for _, n, _, _ in tasks) for b, tasks in _tasks().items()}
    print(f"entries: {len(built)} ({args.models} models x {len(docs)} benchmarks), built in "
          f"{time.perf_counter() - t0:.1f} s (not timed: the intake's cached re-scores)")  # fmt: skip
    print(f"cpus: {os.cpu_count()}; docs per submission: " + ", ".join(f"{b} {n:,}" for b, n in docs.items()))
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        per_bench = {}
        for bench in docs:  # cold, one benchmark at a time: where the time goes
            t = time.perf_counter()
            ranking.rank([e for e in built if e.benchmark == bench], [])
            per_bench[bench] = time.perf_counter() - t
        print("rank() cold, per benchmark alone: " + ", ".join(f"{b} {s:.1f} s" for b, s in per_bench.items()))
        timed = {}
        for case in ("cold", "warm"):  # cold: every cell computed (and cached); warm: cells from the cache
            t, cpu = time.perf_counter(), time.process_time()
            board = ranking.rank(built, [], cache_dir=cache)
            timed[case] = (time.perf_counter() - t, time.process_time() - cpu)
            print(f"rank() {case}: {timed[case][0]:.1f} s ({timed[case][1]:.1f} s CPU) for {len(board.sections)} "
                  f"sections, overall {'computed' if board.overall else board.overall_absent}")  # fmt: skip
        try:
            from hanyi.leaderboard.site import write_site
        except ImportError:
            print("site: hanyi.leaderboard.site not found: rank() only")
            write_site = None
        t_site = cpu_site = 0.0
        if write_site is not None:
            out = args.out or os.path.join(tmp, "site")
            t, cpu = time.perf_counter(), time.process_time()
            written = write_site(board, out)
            t_site, cpu_site = time.perf_counter() - t, time.process_time() - cpu
            size = sum(os.path.getsize(p if os.path.isabs(p) else os.path.join(out, p)) for p in written)
            print(f"write_site(): {t_site:.1f} s ({cpu_site:.1f} s CPU), {len(written)} files, {size / 1e6:.1f} MB")
    ok = hostile_files()
    for case, label in (("warm", "cells cached with the re-scores"), ("cold", "every cell computed")):
        total, cpu = timed[case][0] + t_site, timed[case][1] + cpu_site
        verdict = "PASS" if total < 60 else "FAIL"
        ok &= total < 60 or case == "cold"
        print(f"{verdict} rank + site, {label}: {total:.1f} s ({cpu:.1f} s CPU) for {args.models} submissions x "
              f"{len(docs)} benchmarks (target < 60 s)")  # fmt: skip
    if args.site_models:
        ok &= site_scale(args.site_models)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
