"""Report sections beyond the papers: answer-position bias of every multiple-choice task, and CII prompt sensitivity.

Both read the per-sample logs (``--log_samples``) beside the results files; nothing is re-scored.

* **Position bias**, per task whose samples hold letter answers: the distribution of answered letters (parsed answers)
  against the distribution of gold letters, the total-variation distance between them and Pearson's chi-square of the
  answered letters against the gold shares (:mod:`hanyi.metrics.circular`). Circular tasks count *displayed* letters
  (the position the model picked), plain tasks their only letters.
* **Prompt sensitivity** (CII-Bench): min, max and spread of ``acc`` across the prompt configurations present in a
  run (``cii_none``, ``cii_cot``, ``cii_domain``, ``cii_emotion``, ``cii_rhetoric``: the ``cii_prompts`` tag), with a
  seeded paired bootstrap CI of the spread over the questions they share.

:func:`add_sections` is the one hook :func:`hanyi.report.build.build_sections` calls; it appends (table, plot) pairs.
"""

from __future__ import annotations

import math
import string

from hanyi.metrics.circular import bootstrap_spread, chi_square, letter_distribution, total_variation
from hanyi.results.samples import SamplesFileError, read_samples

#: Sample-log keys tried first for the letter evidence (circular tasks, CII, Pun Rebus); then any other key.
PREFERRED_KEYS = ("circular_acc", "acc", "accuracy")
#: CII-Bench prompt configurations scored on the same questions (the ``cii_prompts`` tag), in the paper's order.
CII_PROMPT_TASKS = ("cii_none", "cii_cot", "cii_domain", "cii_emotion", "cii_rhetoric")
BOOTSTRAP_ITERS = 1000
BOOTSTRAP_SEED = 0


def _letters(value) -> list[str] | None:
    values = value if isinstance(value, list) else [value]
    ok = values and all(isinstance(v, str) and len(v) == 1 and v in string.ascii_uppercase for v in values)
    return list(values) if ok else None


def choice_evidence(line: dict) -> tuple[str | None, list[str]] | None:
    """``(answered letter or None, gold letters)`` from one sample-log line, or ``None`` if it holds no letter answer.

    >>> choice_evidence({"acc": {"pred": "B", "answer": "C"}})
    ('B', ['C'])
    >>> choice_evidence({"circular_acc": {"pred": "A", "pred_shown": "C", "gold_shown": ["B"], "gold": ["C"]}})
    ('C', ['B'])
    >>> choice_evidence({"exact_match": 1.0, "x": {"pred": "年年有余", "gold": "年年有余"}}) is None
    True
    """
    keys = [k for k in PREFERRED_KEYS if k in line] + [k for k in line if k not in PREFERRED_KEYS]
    for key in keys:
        item = line[key]
        if not isinstance(item, dict):
            continue
        pred = item.get("pred_shown", item.get("pred"))
        gold = _letters(item.get("gold_shown", item.get("gold", item.get("answer"))))
        if gold and (pred is None or isinstance(pred, str)):
            return pred, gold
    return None


def position_bias(lines: list[dict]) -> dict | None:
    """Answered vs gold letter counts of one task's samples, with total variation and chi-square; ``None`` if no MCQ."""
    pairs = [e for e in map(choice_evidence, lines) if e is not None]
    if not pairs:
        return None
    top = max(g for _, gold in pairs for g in gold)
    letters = string.ascii_uppercase[: string.ascii_uppercase.index(top) + 1]
    dist = letter_distribution([p for p, _ in pairs], [g for _, g in pairs], letters)
    chi, df, p = chi_square(dist["answered"], dist["gold"])
    tv = total_variation(dist["answered"], dist["gold"])
    return {**dist, "letters": letters, "n": len(pairs), "tv": None if math.isnan(tv) else tv,
            "chi2": None if math.isnan(chi) else chi, "df": df, "p": p}  # fmt: skip


def _shares(counts: dict, letters: str) -> list[float | None]:
    total = sum(counts.values())
    return [100 * counts.get(x, 0) / total if total else None for x in letters]


def _chi_cell(b: dict) -> str:
    if b["chi2"] is None:
        return "-"
    p = "-" if b["p"] is None else f"{b['p']:.3g}"
    return f"{b['chi2']:.1f} (df {b['df']}, p {p})"


def bias_table(task: str, per_run: list[tuple[str, dict]]):
    """One compact table (letters x runs) and one grouped bar plot for ``task``; ``per_run`` = [(label, bias)]."""
    from hanyi.report.tables import BarPlot, Table, fmt

    letters = max((b["letters"] for _, b in per_run), key=len)
    gold = {label: _shares(b["gold"], letters) for label, b in per_run}
    answered = {label: _shares(b["answered"], letters) for label, b in per_run}
    header = ["letter"] + [f"{label} {what} %" for label, _ in per_run for what in ("gold", "answered")]
    rows = [
        [x, *[fmt(v[i], 1) for label, _ in per_run for v in (gold[label], answered[label])]]
        for i, x in enumerate(letters)
    ]
    for name, cell in (
        ("unparsed (n)", lambda b: str(b["unparsed"])),
        ("total variation", lambda b: fmt(b["tv"], 3)),
        ("chi-square", _chi_cell),
    ):
        rows.append([name, *[c for _, b in per_run for c in ("", cell(b))]])
    caption = (
        "Share of answered letters (parsed answers) against the share of gold letters (a k-label gold counts 1/k per "
        "label); circular tasks count the displayed letter. Total variation = 1/2 sum |answered - gold| (0: no "
        "preference for a position beyond the gold's); chi-square: answered counts against the gold shares."
    )
    first = per_run[0][0]
    plot = BarPlot(
        name=f"{task}__position_bias",
        title=f"{task}: answered vs gold letter",
        categories=list(letters),
        series=[(f"gold ({first})", gold[first], False)]
        + [(f"{lb} answered", answered[lb], True) for lb, _ in per_run],
        ylabel="% of answers",
    )
    return Table(f"{task} · answer position bias", header, rows, caption), plot


def _acc_value(run, task: str) -> float | None:
    t = run.tasks.get(task)
    m = t.metrics.get("acc") if t else None
    return m.value if m is not None and isinstance(m.value, (int, float)) else None


def _correct_by_id(path: str) -> dict:
    out = {}
    for line in read_samples(path):
        item = line.get("acc")
        if isinstance(item, dict) and "id" in item:
            out[item["id"]] = bool(item.get("correct"))
    return out


def prompt_sensitivity(runs: list) -> tuple | None:
    """CII prompt-spread table and plot, or ``None`` when no run holds two prompt configurations."""
    from hanyi.report.tables import BarPlot, Table, fmt

    rows, series, notes = [], [], []
    configs = [t for t in CII_PROMPT_TASKS if any(_acc_value(r, t) is not None for r in runs)]
    for run in runs:
        # results hold fractions (docs/reading-results.md, "Units"); the table is in the paper's percent
        accs = {t: 100 * _acc_value(run, t) for t in configs if _acc_value(run, t) is not None}
        if len(accs) < 2:
            continue
        series.append((run.label, [accs.get(t) for t in configs], True))
        lo, hi = min(accs, key=accs.get), max(accs, key=accs.get)
        files = {t: run.tasks[t].samples_file for t in accs}
        ci = "-"
        if all(files.values()):
            res = bootstrap_spread({t: _correct_by_id(f) for t, f in files.items()}, BOOTSTRAP_ITERS, BOOTSTRAP_SEED)
            ci = f"[{100 * res['ci'][0]:.2f}, {100 * res['ci'][1]:.2f}] (n={res['n_shared']})" if res["ci"] else "-"
        else:
            notes.append(f"{run.label}: no sample logs for every configuration (--log_samples), so no CI.")
        rows.append([run.label, str(len(accs)), f"{fmt(accs[lo], 2)} ({lo})", f"{fmt(accs[hi], 2)} ({hi})",
                     fmt(accs[hi] - accs[lo], 2), ci])  # fmt: skip
    if not rows:
        return None
    caption = (
        f"acc (%) across the CII prompt configurations present ({', '.join(configs)}). CI: 95% percentile bootstrap "
        f"of the spread, {BOOTSTRAP_ITERS} paired resamples of the shared questions, seed {BOOTSTRAP_SEED}. "
        + " ".join(notes)
    )
    header = ["run", "configs", "min (config)", "max (config)", "spread (max - min)", "95% CI of spread"]
    plot = BarPlot("cii__prompt_sensitivity", "cii: acc by prompt configuration", configs, series, ylabel="acc (%)")
    return Table("cii · prompt sensitivity (acc across prompt configurations)", header, rows, caption.strip()), plot


def add_sections(section, runs: list, tasks: list[str]) -> None:
    """Append position-bias tables (every MCQ task with sample logs) and, for CII, the prompt-sensitivity table."""
    if section.benchmark == "cii":
        try:
            found = prompt_sensitivity(runs)
        except SamplesFileError as exc:
            found = None
            section.notes.append(f"Prompt sensitivity skipped: {exc}")
        if found is not None:
            _add(section, *found)
    no_samples = []
    for task in tasks:
        per_run = []
        for run in runs:
            t = run.tasks.get(task)
            if t is None or t.is_group:
                continue
            if not t.samples_file:
                no_samples.append(task)
                continue
            try:
                bias = position_bias(read_samples(t.samples_file))
            except SamplesFileError as exc:
                section.notes.append(f"Position bias of {task} ({run.label}) skipped: {exc}")
                continue
            if bias is not None:
                per_run.append((run.label, bias))
        if per_run:
            _add(section, *bias_table(task, per_run))
    if no_samples:
        shown = ", ".join(sorted(set(no_samples)))
        section.notes.append(f"No per-sample logs (--log_samples), so no position bias, for: {shown}.")


def _add(section, table, plot) -> None:
    """Append ``table`` with its ``plot`` (the renderer pairs them by ``table.plot``)."""
    table.plot = plot.name
    section.tables.append(table)
    section.plots.append(plot)
