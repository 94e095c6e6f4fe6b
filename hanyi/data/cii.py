"""CII-Bench (Zhang et al., 2024): the ``m-a-p/CII-Bench`` schema, its multi-label strings, and local copies.

Every source is written in the hub's own layout (``data/test-*.parquet``, ``data/dev-*.parquet``, config
``default``), so the task YAMLs load the hub, a prepared copy and the bundled sample the same way:

* ``hanyi prepare cii`` (default ``--source hub``) re-saves ``m-a-p/CII-Bench`` with embedded images, for offline use;
* ``--source github --github-root <clone of MING-ZCH/CII-Bench>`` converts ``data/{test,dev}.json`` + ``images/``
  (the JSON's multi-label objects become the hub's Python-repr strings);
* :func:`build_sample` writes the synthetic sample (invented questions, real schema, ids ``dev-33..35`` present).

Rows that cannot be scored (a gold answer naming no letter A-F, an empty option) are dropped and reported; a gold
answer spelling one letter otherwise (``" c "``, full-width ``Ｃ``) is that letter, reported; other anomalies
(``correct_option`` not equal to the answer's option, duplicate ids, missing images) are reported only. The tasks'
load stops at a gold answer naming no letter (``hanyi.tasks.cii.loading``).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import unicodedata

from hanyi.data.safepath import inside

HUB_ID = "m-a-p/CII-Bench"
SPLITS = ("test", "dev")
OPTION_FIELDS = tuple(f"option{i}" for i in range(1, 7))
COLUMNS = ("id", "image", "question", *OPTION_FIELDS, "correct_option", "answer", "image_type", "difficulty",
           "domain", "emotion", "rhetoric", "explanation", "metaphorical_meaning", "local_path")  # fmt: skip


def parse_multilabel(value) -> list[str]:
    """Labels of a (possibly multi-valued) ``image_type`` / ``rhetoric`` cell, in stored order.

    The hub stores multi-valued cells as a Python repr string; the GitHub JSON as a real ``{"choices": [...]}``
    object. Parsed with ``ast.literal_eval`` (never ``eval``); a malformed cell raises ``ValueError``.

    >>> parse_multilabel("{'choices': ['隐喻', '象征']}")
    ['隐喻', '象征']
    >>> parse_multilabel("隐喻"), parse_multilabel({"choices": ["夸张"]}), parse_multilabel(None)
    (['隐喻'], ['夸张'], [])
    """
    if value is None:
        return []
    if isinstance(value, str):
        return list(_parse_cell(value))  # a fresh list: callers may change it
    if isinstance(value, dict) and isinstance(value.get("choices"), (list, tuple)):
        return [str(v).strip() for v in value["choices"]]
    raise ValueError(f"malformed multi-label cell {value!r}")


@functools.lru_cache(maxsize=4096)
def _parse_cell(value: str) -> tuple[str, ...]:
    """A string cell's labels; cached, since the 800 questions share a few dozen distinct cells (the repr is parsed
    with ``ast.literal_eval`` once per distinct cell, at load time and again in ``process_results``)."""
    s = value.strip()
    if not s.startswith("{"):
        return (s,) if s else ()
    try:
        parsed = ast.literal_eval(s)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"malformed multi-label cell {s[:80]!r}: {exc}") from None
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), (list, tuple)):
        return tuple(str(v).strip() for v in parsed["choices"])
    raise ValueError(f"malformed multi-label cell {parsed!r}")


def hint_text(value) -> str:
    """The official keyword hint: the stored Chinese labels joined by an ASCII comma, no space (spec §3.4).

    >>> hint_text("{'choices': ['隐喻', '夸张', '象征']}"), hint_text("消极")
    ('隐喻,夸张,象征', '消极')
    """
    return ",".join(parse_multilabel(value))


def label_zh(label: str) -> str:
    """The Chinese part of an image-type label: ``'插画(Illustration)'`` -> ``'插画'``.

    >>> label_zh("单格漫画(Single-panel Comic)")
    '单格漫画'
    """
    return label.split("(", 1)[0].strip()


def to_hub_cell(value) -> str:
    """A GitHub-JSON label (string or ``{"choices": [...]}``) as the hub stores it (Python repr for dicts).

    >>> to_hub_cell({"choices": ["隐喻", "象征"]})
    "{'choices': ['隐喻', '象征']}"
    """
    return repr(value) if isinstance(value, dict) else str(value)


def _features():
    import datasets

    return datasets.Features({c: datasets.Image() if c == "image" else datasets.Value("string") for c in COLUMNS})


#: The fields :func:`check_rows` reads (besides ``image``): load-time checks need only these columns.
CHECKED_FIELDS = ("id", "answer", "correct_option", *OPTION_FIELDS, "image_type", "rhetoric")


def gold_letter(answer) -> str | None:
    """The option letter a gold ``answer`` names without doubt: NFKC-normalised (full-width letters), stripped and
    upper-cased, one of A-F; ``None`` for anything else (``"C,E"``, ``"X"``, ``"3"``, empty, not a string).

    >>> gold_letter("C"), gold_letter(" c "), gold_letter("Ｃ"), gold_letter("C,E"), gold_letter("3")
    ('C', 'C', 'C', None, None)
    """
    if not isinstance(answer, str):
        return None
    letter = unicodedata.normalize("NFKC", answer).strip().upper()
    return letter if len(letter) == 1 and letter in "ABCDEF" else None


def check_rows(rows: list[dict]) -> tuple[list[dict], dict]:
    """Split ``rows`` into scorable rows and an anomaly report ``{kind: [ids]}`` (nothing is dropped silently).
    Reads :data:`CHECKED_FIELDS` and ``image``. A gold answer that names one letter in another spelling (``" c "``)
    is that letter (``normalised_answer``); one that names none (``bad_answer``) or an empty option
    (``dropped_unscorable``) leaves the row out."""
    kept, report, seen = [], {}, set()
    for row in rows:
        rid = str(row.get("id"))
        options = [row.get(f) for f in OPTION_FIELDS]
        letter = gold_letter(row.get("answer"))
        if letter is None:
            report.setdefault("bad_answer", []).append(rid)
            continue
        if letter != row.get("answer"):
            report.setdefault("normalised_answer", []).append(rid)
            row = {**row, "answer": letter}
        if any(not isinstance(o, str) or not o.strip() for o in options):
            report.setdefault("dropped_unscorable", []).append(rid)
            continue
        if (
            row.get("correct_option") not in (None, "")
            and options["ABCDEF".index(row["answer"])] != row["correct_option"]
        ):
            report.setdefault("correct_option_mismatch", []).append(rid)
        if rid in seen:
            report.setdefault("duplicate_id", []).append(rid)
        if row.get("image") is None:
            report.setdefault("missing_image", []).append(rid)
        for field in ("image_type", "rhetoric"):
            try:
                parse_multilabel(row.get(field))
            except ValueError:
                report.setdefault(f"malformed_{field}", []).append(rid)
        seen.add(rid)
        kept.append(row)
    return kept, report


def write_cii_dataset(out_dir: str, splits: dict, card: str, info: dict | None = None) -> dict:
    """Write ``{split: rows}`` in the hub's single-config layout (``data/<split>-<hash>.parquet``); returns ``{split: n}``."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    tables = {}
    for split in SPLITS:
        rows = sorted(splits.get(split, []), key=lambda r: _id_key(r["id"]))
        tables[split] = datasets.Dataset.from_list([{c: r.get(c) for c in COLUMNS} for r in rows], features=_features())
    counts = write_hub_dataset(out_dir, {"default": tables}, card, info, config_dirs={"default": "data"})
    return counts["default"]


def _id_key(rid: str):
    split, _, num = str(rid).partition("-")
    return (split, int(num) if num.isdigit() else 0, str(rid))


def rows_from_github(root: str, split: str) -> list[dict]:
    """Hub-schema rows from a clone of MING-ZCH/CII-Bench: ``data/<split>.json`` plus ``images/<split>/*.jpg``."""
    with open(os.path.join(root, "data", f"{split}.json"), encoding="utf-8") as f:
        records = json.load(f)
    rows = []
    for rec in records:
        meta = rec.get("meta_data", {})
        local = rec.get("local_path")
        image_path = inside(root, local, f"{split}.json record id={rec.get('id')!r} local_path") if local else ""
        image = {"bytes": open(image_path, "rb").read(), "path": None} if os.path.isfile(image_path) else None
        for q in rec.get("questions", []):
            options = list(q.get("options") or [])
            rows.append(
                {
                    "id": q.get("id"),
                    "image": image,
                    "question": q.get("question"),
                    **{f: (options[i] if i < len(options) else None) for i, f in enumerate(OPTION_FIELDS)},
                    "correct_option": q.get("correct_option"),
                    "answer": q.get("answer"),
                    **{
                        k: to_hub_cell(meta.get(k, ""))
                        for k in ("image_type", "difficulty", "domain", "emotion", "rhetoric")
                    },
                    "explanation": meta.get("explanation"),
                    "metaphorical_meaning": meta.get("metaphorical_meaning"),
                    "local_path": rec.get("local_path"),
                }
            )
    return rows


def rows_from_hub(hub_id: str, split: str) -> list[dict]:
    """Hub-schema rows of ``hub_id`` (needs network or a warm datasets cache); images kept as stored."""
    import datasets

    ds = datasets.load_dataset(hub_id, split=split).cast_column("image", datasets.Image(decode=False))
    return [dict(row) for row in ds]


def ctc_titles(path: str) -> dict[str, str]:
    """``{explanation: title}`` from the release's CTC records (``CTC_Evaluation/exp_CTC.json``, a JSON list).

    The hub dataset has no painting titles; the official judge's human answer starts with one. Records are matched
    to CII-Bench by ``explanation`` (all 130 match one distinct CTC image, spec §4.1). A file that is not a list of
    records raises ``ValueError`` naming it.
    """
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError(f"{path}: expected the JSON list of CTC records of CTC_Evaluation/exp_CTC.json")
    return {r["explanation"]: str(r.get("title") or "") for r in records if r.get("explanation")}


def add_prepare_arguments(parser) -> None:
    """Options of ``hanyi prepare cii``."""
    parser.add_argument("--source", choices=("hub", "github"), default="hub", help="where to read CII-Bench from")
    parser.add_argument("--hub-id", default=HUB_ID, help="hub dataset id (--source hub)")
    parser.add_argument("--github-root", help="a clone of github.com/MING-ZCH/CII-Bench (--source github)")


def run_prepare(args) -> dict:
    """Write CII-Bench to ``args.out_dir`` in the hub layout; returns counts and the anomaly report."""
    if args.source == "github":
        if not args.github_root or not os.path.isdir(os.path.join(args.github_root, "data")):
            raise FileNotFoundError(f"--github-root {args.github_root!r} is not a CII-Bench clone (no data/ folder)")
        raw = {s: rows_from_github(args.github_root, s) for s in SPLITS}
        source = f"github:{os.path.abspath(args.github_root)}"
    else:
        raw = {s: rows_from_hub(args.hub_id, s) for s in SPLITS}
        source = f"hub:{args.hub_id}"
    kept, anomalies = {}, {}
    for split, rows in raw.items():
        kept[split], report = check_rows(rows)
        for kind, ids in report.items():
            anomalies.setdefault(kind, []).extend(ids)
    card = f"# CII-Bench (prepared by hanyi)\n\nSource: {source}. See docs/cii.md."
    counts = write_cii_dataset(args.out_dir, kept, card, {"source": source, "anomalies": anomalies})
    out = {"counts": counts, "anomalies": {k: len(v) for k, v in anomalies.items()}}
    problem = unrunnable_images([row for rows in kept.values() for row in rows], args)
    return out | ({"cannot_run": problem} if problem else {})


def unrunnable_images(rows: list[dict], args=None) -> str | None:
    """Why the image tasks cannot run on ``rows`` (questions with no image that ``$HANYI_CII_IMAGE_ROOT`` does not
    serve either), or ``None``. Every image task scores all 800 questions and stops at load on a missing image."""
    root = os.environ.get("HANYI_CII_IMAGE_ROOT")
    missing = [
        row
        for row in rows
        if row.get("image") is None
        and not (root and row.get("local_path") and os.path.isfile(os.path.join(root, row["local_path"])))
    ]
    if not missing:
        return None
    first = ", ".join(f"{r['id']} ({r.get('local_path') or 'no local_path'})" for r in missing[:5])
    where = getattr(args, "github_root", None) if getattr(args, "source", None) == "github" else None
    fix = (
        f"put the images at {where}/<local_path> (the clone's images/ folder) and prepare again"
        if where
        else "prepare from a GitHub clone with its images/ folder (--source github --github-root <clone>)"
    )
    return (
        f"{len(missing)} of {len(rows)} questions have no image (first: {first}), so every image task stops at load "
        f"(only cii_textonly can run). Fix: {fix}, or set HANYI_CII_IMAGE_ROOT to a folder that holds them"
    )


#: Synthetic sample: (id, question, six options, answer, image_type, difficulty, domain, emotion, rhetoric,
#: explanation). Invented content in the real schema; three CTC rows share one image (explanation) to exercise dedupe.
_Q = "这张图片有什么隐喻？"
_OPTS = ("努力终有回报。", "时间一去不复返。", "团结就是力量。", "贪婪会带来灾祸。", "保护环境人人有责。", "知足常乐。")
SAMPLE_ROWS = (
    ("test-1", _Q, 2, "海报(Poster)", "简单", "生活", "中性", "视觉错位", "一只钟表被折成纸船。"),
    (
        "test-2",
        _Q,
        4,
        "插画(Illustration)",
        "中等",
        "艺术",
        "消极",
        "{'choices': ['隐喻', '象征']}",
        "鲜花包围着孤独的人。",
    ),
    ("test-3", _Q, 1, "绘画(Painting)", "困难", "中华传统文化", "积极", "隐喻", "松下老人抚琴，远山如黛。"),
    (
        "test-4",
        "图中的松树象征什么？",
        0,
        "绘画(Painting)",
        "困难",
        "中华传统文化",
        "积极",
        "象征",
        "松下老人抚琴，远山如黛。",
    ),
    (
        "test-5",
        _Q,
        3,
        "{'choices': ['插画(Illustration)', '单格漫画(Single-panel Comic)']}",
        "简单",
        "社会",
        "消极",
        "{'choices': ['隐喻', '夸张']}",
        "一个人抱着金币沉入海底。",
    ),
    (
        "test-6",
        _Q,
        4,
        "单格漫画(Single-panel Comic)",
        "简单",
        "环境",
        "消极",
        "{'choices': ['隐喻', '对比']}",
        "一半是森林，一半是烟囱。",
    ),
    ("test-7", _Q, 5, "梗图(Meme)", "中等", "政治", "中性", "拟人", "一只猫端坐在会议桌前。"),
    (
        "test-8",
        _Q,
        0,
        "多格漫画(Multi-panel Comic)",
        "中等",
        "中华传统文化",
        "中性",
        "{'choices': ['类比', '对立']}",
        "四格画中梅花从含苞到盛开。",
    ),
    ("dev-1", _Q, 5, "单格漫画(Single-panel Comic)", "简单", "社会", "中性", "隐喻", "司机头顶冒出三个信号灯。"),
    ("dev-33", _Q, 0, "插画(Illustration)", "中等", "艺术", "消极", "隐喻", "一个人睁大眼睛、竖起耳朵。"),
    ("dev-34", _Q, 3, "单格漫画(Single-panel Comic)", "中等", "社会", "中性", "隐喻", "官员嫌钱少。"),
    ("dev-35", "图片中的迷宫象征什么？", 1, "海报(Poster)", "简单", "艺术", "中性", "象征", "锦绣织成的迷宫。"),
)


#: The paper's size: 800 questions, 765 test + 35 dev (spec; Table 5).
FULL_SIZE = 800
FULL_DEV = 35


def scaled_rows(size: int) -> list[tuple]:
    """``size`` questions cycling the sample rows (new ids, answer letters rotated), split test/dev as the release.

    Deterministic; the dev share is the release's 35/800 (at least the sample's 4 dev rows when ``size`` allows).
    """
    if size < 2:
        raise ValueError(f"cii: size must be at least 2 questions (test and dev), got {size}")
    n_dev = max(1, min(size - 1, round(size * FULL_DEV / FULL_SIZE) or 1))
    rows = []
    for i in range(size):
        _, question, ans, *rest = SAMPLE_ROWS[i % len(SAMPLE_ROWS)]
        split, n = ("dev", i - (size - n_dev)) if i >= size - n_dev else ("test", i)
        expl = f"{rest[-1]}（{i}）"
        rows.append((f"{split}-{n}", question, (ans + i // len(SAMPLE_ROWS)) % 6, *rest[:-1], expl))
    return rows


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """Write the synthetic sample (8 test + 4 dev questions, synthetic images) in the hub layout.

    ``size``: total questions (``FULL_SIZE`` for the paper's 800), built by :func:`scaled_rows`.
    """
    from hanyi.data.images import synthetic_image

    splits: dict[str, list[dict]] = {}
    for rid, question, ans, itype, diff, domain, emo, rhet, expl in SAMPLE_ROWS if size is None else scaled_rows(size):
        opts = _OPTS[-ans:] + _OPTS[:-ans] if ans else _OPTS  # rotate: the first text sits at the answer letter
        splits.setdefault(rid.split("-")[0], []).append(
            {
                "id": rid,
                "image": synthetic_image(expl),
                "question": question,
                **dict(zip(OPTION_FIELDS, opts)),
                "correct_option": opts[ans],
                "answer": "ABCDEF"[ans],
                "image_type": itype,
                "difficulty": diff,
                "domain": domain,
                "emotion": emo,
                "rhetoric": rhet,
                "explanation": expl,
                "metaphorical_meaning": f"{expl}的深层含义。",
                "local_path": f"images/{rid.split('-')[0]}/{rid}.jpg",
            }
        )
    card = "# CII-Bench: synthetic sample\n\nInvented questions in the m-a-p/CII-Bench schema. Smoke tests only; see docs/cii.md."
    return write_cii_dataset(out_dir, splits, card, {"source": "synthetic sample"})
