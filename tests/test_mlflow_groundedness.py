"""``mlflow.groundedness``: the loopback relay (what it passes on and what it keeps back) and the
shim (MLflow's own retries off: a judge fault reaches MLflow once and ends as an error cell, fast).
"""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.cases.load import CaseSet
from harness.judge.faults import FaultInjector, FaultSpec
from harness.metric.protocol import Endpoint
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

pytest.importorskip("mlflow.genai")

from adapters.mlflow.relay import HEADER, cell_key, relay  # noqa: E402


class _Upstream(BaseHTTPRequestHandler):
    """Answers every POST with a fixed status and body and keeps what it was sent."""

    seen: list = []
    status, body = 200, b'{"ok": true}'

    def do_POST(self):  # noqa: N802
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append((self.path, dict(self.headers), data))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *a):
        return None


@pytest.fixture()
def upstream():
    handler = type("H", (_Upstream,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _post(url: str, body: bytes, headers: dict) -> tuple[int, bytes]:
    import httpx

    r = httpx.post(url, content=body, headers=headers, trust_env=False)
    return r.status_code, r.content


def test_the_relay_passes_the_body_and_the_answer_as_they_are_and_no_header(upstream):
    handler, base = upstream
    handler.status, handler.body = 503, b'{"error": {"message": "busy", "type": "x"}}'
    cell = f"{base}/cell/run%201/case%2F1/mlflow.groundedness/v1"
    r = relay()
    body = b'{"model": "m", "messages": [{"role": "user", "content": "caf\\u00e9"}]}'
    with r.open(Endpoint(cell, "m")) as headers:
        assert headers == {HEADER: "run%201/case%2F1/mlflow.groundedness"}
        status, payload = _post(f"{r.url}/chat/completions", body,
                                {**headers, "Authorization": "Bearer sk-user-real-key", "X-Other": "1"})
    assert (status, payload) == (503, handler.body)              # the gateway's answer, byte for byte
    path, sent, data = handler.seen[0]
    assert path == "/cell/run%201/case%2F1/mlflow.groundedness/v1/chat/completions" and data == body
    assert sent["Authorization"] == "Bearer harness-gateway"     # the endpoint's placeholder, not the user's key
    assert "X-Other" not in sent and HEADER not in sent


def test_the_relay_refuses_a_closed_cell_and_other_routes_without_reaching_the_judge(upstream):
    handler, base = upstream
    r = relay()
    endpoint = Endpoint(f"{base}/cell/r/c/mlflow.groundedness/v1", "m")
    with r.open(endpoint) as headers:
        assert _post(f"{r.url}/embeddings", b"{}", headers)[0] == 404
        with pytest.raises(RuntimeError, match="already has cell"):
            with r.open(endpoint):
                pass
    status, payload = _post(f"{r.url}/chat/completions", b"{}", headers)   # a late request of the cell
    assert status == 400 and "no open cell" in json.loads(payload)["error"]["message"]
    assert handler.seen == []


def test_the_relay_points_mlflow_at_itself_and_keeps_a_key_that_is_there(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-kept")
    r = relay()
    assert os.environ["OPENAI_API_BASE"] == r.url and r.url.startswith("http://127.0.0.1:")
    assert os.environ["OPENAI_API_KEY"] == "sk-kept"
    assert "127.0.0.1" in os.environ["NO_PROXY"].split(",")
    assert cell_key("http://h/v1") == "/v1"


@pytest.mark.parametrize("fault", ["500", "429"])
def test_a_judge_that_keeps_failing_reaches_mlflow_once_and_is_an_error(canonical, tmp_path, fault):
    """The shim: stock MLflow would retry a 500 or a 429 ten times over ~3 minutes; here each cell makes
    one request (its gateway attempts: the run's retries) and ends as an error naming MLflow's failure."""
    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"), canonical.by_id("leave-grounded")),
                    canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["mlflow.groundedness"], out_dir=str(tmp_path), run_id="down",
                         progress=False, upstream_wrapper=FaultInjector(FaultSpec.parse(f"{fault}=1"), seed=0),
                         retry_attempts=2, retry_base_delay_s=0.01))
    store = RunStore.open(out.store_path)
    try:
        cells = store.rows("SELECT status, score, reason FROM cells")
        calls = store.rows("SELECT case_id, COUNT(*), SUM(attempts) FROM calls GROUP BY case_id")
    finally:
        store.close()
    assert len(cells) == 2 and all(s == "error" and v is None and "Failed to invoke judge model" in r
                                   for s, v, r in cells), cells
    assert sorted(n for _, n, _ in calls) == [1, 1] and all(a == 2 for *_, a in calls), calls


def test_the_shim_is_on_the_card_and_idempotent():
    from mlflow.genai.judges import builtin

    from adapters.mlflow._retries import MARK, SHIM, no_vendor_retries
    from adapters.mlflow.groundedness import MlflowGroundedness

    no_vendor_retries()
    once = builtin.invoke_judge_model
    no_vendor_retries()
    assert builtin.invoke_judge_model is once and getattr(once, MARK)
    assert MlflowGroundedness.shims == (SHIM,) and "num_retries=0" in SHIM.text
