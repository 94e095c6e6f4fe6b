"""Nothing generated is lost: a run killed while scoring is re-scored from lmms-eval's response
cache (``--use_cache DIR``) by the replay model, with no generation repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hanyi.models.replay import ReplayFileError, ReplayModel, cache_audit_files, load_records

LIMIT = 3


def _audit_responses(cache) -> dict[int, str]:
    out = {}
    for path in cache_audit_files(str(cache)):
        for line in open(path, encoding="utf-8"):
            entry = json.loads(line)
            out[entry["doc_id"]] = json.loads(entry["response"])
    return out


@pytest.mark.slow
def test_a_run_killed_while_scoring_is_rescored_from_the_response_cache(tmp_path, tiny_llava, fake_judge, evaluate):
    cache, out = tmp_path / "cache", tmp_path / "out"
    with fake_judge(delay_s=600) as judge:  # the judge never answers in time: the run is stuck in scoring
        env = {**os.environ, "HANYI_JUDGE_BASE_URL": judge.base_url, "HANYI_JUDGE_MODEL": "slow-judge"}
        env |= {"HANYI_JUDGE_TIMEOUT": "900", "HANYI_JUDGE_CACHE_DIR": str(tmp_path / "judge-cache")}
        lmms_eval = os.path.join(os.path.dirname(sys.executable), "lmms-eval")
        cmd = [
            lmms_eval,
            "--model",
            "llava_hf",
            "--model_args",
            f"pretrained={tiny_llava},device_map=cpu,dtype=float32",
        ]
        cmd += ["--device", "cpu", "--tasks", "punrebus_expression", "--limit", str(LIMIT), "--gen_kwargs"]
        cmd += ["max_new_tokens=8", "--use_cache", str(cache), "--output_path", str(out), "--log_samples"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            deadline = time.monotonic() + 400
            while judge.total_requests == 0:  # generation is over once the judge is asked
                assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
                assert time.monotonic() < deadline, "the run never reached scoring"
                time.sleep(0.5)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not list(out.rglob("*.json*")), "the killed run wrote nothing (lmms-eval writes results and samples last)"
    cached = _audit_responses(cache)
    assert sorted(cached) == list(range(LIMIT))

    model = ReplayModel(path=str(cache))  # on_missing=error: every request answered from the cache
    res = evaluate(["punrebus_expression"], model, limit=LIMIT)
    assert {s["doc_id"]: s["filtered_resps"][0] for s in res["samples"]["punrebus_expression"]} == cached
    assert model.missing == []


def test_a_cache_with_two_models_needs_a_fingerprint(tmp_path):
    run = tmp_path / "cache" / "runs" / "r1"
    run.mkdir(parents=True)
    lines = [
        {"request_type": "generate_until", "task_name": "t", "doc_id": 0, "idx": 0, "response": json.dumps(r),
         "model_fingerprint_hash": m}
        for r, m in (("A", "m1"), ("B", "m2"))
    ]  # fmt: skip
    (run / "rank_0.audit.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(ReplayFileError, match="responses of 2 models \\(m1, m2\\)"):
        load_records(str(tmp_path / "cache"))
    by_doc_id, _ = load_records(str(tmp_path / "cache"), model_fingerprint="m2")
    assert by_doc_id["t", 0]["response"] == "B"
    (run / ".merged").touch()  # a merged run is read from the root log instead
    with pytest.raises(ReplayFileError, match="response cache"):
        load_records(str(tmp_path / "cache"))
