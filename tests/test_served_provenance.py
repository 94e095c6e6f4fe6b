"""The engine that generated a run's answers is part of its provenance (report, ``hanyi submit``): answers can move
between engines for the same weights (docs/run-at-scale.md), so a served run says it was served, and where."""

from __future__ import annotations

import json

import pytest

from hanyi.results.provenance import model_backend, task_provenance


@pytest.mark.parametrize(
    ("model", "args", "expected"),
    [
        ("openai", "model=Qwen/Qwen2.5-VL-7B-Instruct,base_url=http://127.0.0.1:8000/v1,api_key=EMPTY",
         {"engine": "openai-compatible server", "served_model": "Qwen/Qwen2.5-VL-7B-Instruct",
          "endpoint_host": "127.0.0.1:8000", "served_by": "not recorded by the client"}),
        ("async_openai", "model_version=m,num_cpus=64",
         {"engine": "openai-compatible server", "served_model": "m",
          "endpoint_host": "from $OPENAI_API_BASE (not recorded)", "served_by": "not recorded by the client"}),
        ("vllm", "model=Qwen/Qwen2.5-VL-72B-Instruct,tensor_parallel_size=8",
         {"engine": "vllm", "tensor_parallel_size": "8"}),
        ("sglang", "model=Qwen/Qwen2.5-VL-72B-Instruct,tp_size=4", {"engine": "sglang", "tensor_parallel_size": "4"}),
        ("llava_hf", "pretrained=llava-hf/llava-1.5-7b-hf", {"engine": "transformers"}),
        ("qwen2_5_vl", "pretrained=Qwen/Qwen2.5-VL-7B-Instruct", {"engine": "transformers"}),
        ("replay", "path=out/", {"engine": "replay"}),
        ("my_wrapper", "", {"engine": "my_wrapper"}),
    ],
)  # fmt: skip
def test_the_backend_is_named_from_the_model_and_its_args(model, args, expected):
    assert model_backend(model, args) == expected


def test_an_endpoints_credentials_path_and_query_are_never_recorded():
    backend = model_backend("openai", "model=m,base_url=https://user:s3cret@api.example.org/v1?key=k3y,api_key=sk-zzz")
    assert backend["endpoint_host"] == "api.example.org"
    assert not any(s in json.dumps(backend) for s in ("s3cret", "k3y", "sk-zzz", "user", "/v1"))


def test_a_submission_carries_the_backend_of_a_served_run(tmp_path):
    from hanyi.submit import main

    run = tmp_path / "out" / "m"
    run.mkdir(parents=True)
    args = "model=Qwen/Qwen2.5-VL-7B-Instruct,base_url=http://gpu7:8000/v1"
    data = {"results": {"cii_none": {"alias": "cii_none", "acc,none": 50.0}},
            "n-samples": {"cii_none": {"original": 2, "effective": 2}},
            "configs": {"cii_none": {"task": "cii_none", "dataset_path": str(tmp_path / "prepared" / "cii")}},
            "config": {"model": "openai", "model_args": args}, "lmms_eval_version": "0.7.3"}  # fmt: skip
    (run / "20250101_000000_results.json").write_text(json.dumps(data))
    assert task_provenance(data, "cii_none", None)["model_backend"]["engine"] == "openai-compatible server"
    rows = [{"doc_id": i, "target": "A", "resps": [["A"]], "filtered_resps": ["A"]} for i in range(2)]
    (run / "20250101_000000_samples_cii_none.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main([str(tmp_path / "out"), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 0
    doc = json.loads((tmp_path / "sub" / "cii_submission.json").read_text(encoding="utf-8"))
    assert doc["tasks"]["cii_none"]["provenance"]["model_backend"] == {
        "engine": "openai-compatible server",
        "served_model": "Qwen/Qwen2.5-VL-7B-Instruct",
        "endpoint_host": "gpu7:8000",
        "served_by": "not recorded by the client",
    }
