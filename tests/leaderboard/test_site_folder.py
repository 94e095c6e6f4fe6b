"""The board's site folder and what it writes: never through a symlinked cache or page, one build at a time, deletes
only what its own manifest lists, and no credential in any file it writes, whatever quotes or brackets hold it."""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time

import pytest

from hanyi.leaderboard import eee, folder, ranking
from hanyi.leaderboard.entries import Entry
from hanyi.leaderboard.site import MANIFEST, write_site
from hanyi.outputs import UnsafeOutputError
from tests.leaderboard.test_site import hand_board


def build(args: list[str], capsys) -> tuple[int, str]:
    from hanyi.cli import main

    code = main(["leaderboard", "build", *args])
    return code, capsys.readouterr().err


@pytest.fixture
def no_submissions(tmp_path):
    empty = tmp_path / "submissions"
    empty.mkdir()
    return str(empty)


# ---- the cache and the pages are never written through a symlink --------------------------------------------------


def test_a_symlinked_cache_is_refused_with_one_line_and_nothing_is_written_where_it_leads(
    tmp_path, no_submissions, capsys
):
    outside, site = tmp_path / "outside", tmp_path / "site"
    outside.mkdir()
    site.mkdir()
    os.symlink(outside, site / ".cache")
    code, err = build([no_submissions, "--out", str(site)], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "symlink" in err
    assert list(outside.iterdir()) == [] and not (site / "index.html").exists()


def test_a_cache_that_is_a_file_is_refused_with_one_line(tmp_path, no_submissions, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / ".cache").write_text("not a folder")
    code, err = build([no_submissions, "--out", str(site)], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "not a folder" in err


def test_a_page_replaced_by_a_symlink_is_never_written_through(tmp_path):
    site, victim = tmp_path / "site", tmp_path / "victim.txt"
    write_site(hand_board(), str(site))
    victim.write_text("keep me")
    os.remove(site / "index.html")
    os.symlink(victim, site / "index.html")
    with pytest.raises(UnsafeOutputError, match="symlink"):
        write_site(hand_board(), str(site))
    assert victim.read_text() == "keep me"


def test_a_symlinked_lock_or_records_folder_is_never_written_through(tmp_path, no_submissions, capsys):
    outside, site = tmp_path / "outside", tmp_path / "site"
    outside.mkdir()
    (site / ".cache").mkdir(parents=True)
    os.symlink(outside / "lock", site / ".cache" / "build.lock")
    code, err = build([no_submissions, "--out", str(site)], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and not (outside / "lock").exists()
    os.remove(site / ".cache" / "build.lock")
    os.symlink(outside, site / "eee")
    with pytest.raises(UnsafeOutputError):
        write_site(hand_board(), str(site))
    assert list(outside.iterdir()) == []


# ---- one build at a time ------------------------------------------------------------------------------------------


def test_a_second_build_into_a_held_folder_exits_1_with_one_line(tmp_path, no_submissions, capsys, monkeypatch):
    site = tmp_path / "site"
    monkeypatch.setattr(folder, "LOCK_WAIT", 0.3)
    with folder.claim_site(str(site)):
        start = time.monotonic()
        code, err = build([no_submissions, "--out", str(site)], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "another hanyi leaderboard build" in err
    assert 0.3 <= time.monotonic() - start < 10
    assert not (site / "index.html").exists()


def test_a_second_build_waits_for_the_first_and_then_runs(tmp_path, no_submissions, capsys):
    site = tmp_path / "site"
    held, done = threading.Event(), threading.Event()

    def first():
        with folder.claim_site(str(site)):
            held.set()
            time.sleep(0.5)
        done.set()

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(5)
    code, _ = build([no_submissions, "--out", str(site)], capsys)
    thread.join()
    assert code == 0 and done.is_set() and (site / "index.html").is_file()


# ---- deletion: only the files of the build's own manifest ----------------------------------------------------------


def test_editing_the_public_files_list_deletes_nothing_and_a_stale_file_of_the_board_goes(tmp_path):
    site = tmp_path / "site"
    write_site(hand_board(), str(site))
    notes = site / "notes.txt"
    notes.write_text("the owner's notes")
    public = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    public["files"].append("notes.txt")
    (site / "leaderboard.json").write_text(json.dumps(public), encoding="utf-8")
    smaller = hand_board()
    smaller.sections = smaller.sections[:1]  # the apart row (model-d) is gone: its record is stale
    stale = [n for n in public["files"] if n.startswith("eee/") and eee.file_uuid("cii", "d" * 64) in n]
    assert stale
    write_site(smaller, str(site))
    assert notes.read_text() == "the owner's notes"  # listed in the public JSON only: kept
    assert not (site / stale[0]).exists()  # the board's own file, unchanged since: removed
    manifest = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    assert "leaderboard.json" in manifest["files"] and "notes.txt" not in manifest["files"]


def test_a_file_of_the_board_changed_since_it_was_written_is_not_deleted(tmp_path):
    site = tmp_path / "site"
    write_site(hand_board(), str(site))
    manifest = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    stale = next(n for n in manifest["files"] if n.startswith("eee/") and eee.file_uuid("cii", "d" * 64) in n)
    (site / stale).write_text("edited by the owner")
    smaller = hand_board()
    smaller.sections = smaller.sections[:1]
    write_site(smaller, str(site))
    assert (site / stale).read_text() == "edited by the owner"


# ---- credentials: none in any file the site writes ------------------------------------------------------------------

#: model_args as a submitter may write them; every ``LEAK...`` must be gone from every file the site writes.
SECRET_ARGS = [
    'pretrained=org/m,password=pw"LEAK1,max_new_tokens=5',
    "pretrained=org/m,api_key='a,LEAK2',batch_size=1",
    "pretrained=org/m,token=[x,LEAK3]",
    '{"api_key": "sk\\"LEAK4", "pretrained": "org/m"}',
    "base_url=https://u:LEAK5@judge.example/v1?key=LEAK6&model=x",
    "pretrained=org/m,secret={'a': 'LEAK7'}",
]


def secret_entry(i: int, args: str, source: str, digest: str) -> Entry:
    per = {d: float(d % (i + 2) == 0) for d in range(12)}
    return Entry(
        submission_hash=digest,
        benchmark="cii",
        model=f"model-{i}",
        model_args=args,
        date="2026-11-28",
        hanyi_version="0.9",
        lmms_eval_version="0.7.3",
        values={"cii_none": {"acc": math.fsum(per.values()) / 12}},
        per_doc={"cii_none": {"acc": per}},
        protocol={"cii_none": {"task_version": "1.0"}},
        provenance={"cii_none": {"model_args": args}},
        source_path=source,
    )


def test_no_secret_of_any_quoting_style_reaches_any_file_the_site_writes(tmp_path):
    entries = []
    for i, args in enumerate(SECRET_ARGS):
        sub = tmp_path / f"m{i}_submission.json"
        doc = {"format": "hanyi-submission", "model": f"model-{i}", "model_args": args, "config": {"args": args}}
        sub.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        entries.append(secret_entry(i, args, str(sub), hashlib.sha256(sub.read_bytes()).hexdigest()))
    board = ranking.rank(entries, [], str(tmp_path / "no-anchors"))
    site = tmp_path / "site"
    written = write_site(board, str(site))
    kinds = {os.path.splitext(p)[1] for p in written}
    assert {".html", ".csv", ".json"} <= kinds
    assert any("/eee/" in p for p in written) and any("/predictions/" in p for p in written)
    for root, _dirs, names in os.walk(site):
        for name in names:
            if ".cache" in root:
                continue
            text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
            assert "LEAK" not in text, f"{os.path.relpath(os.path.join(root, name), site)} holds a secret"
    for p in written:
        if p.endswith(".json"):
            json.loads(open(p, encoding="utf-8").read())  # still JSON
