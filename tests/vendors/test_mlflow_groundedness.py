"""``mlflow.groundedness``: the loopback face as MLflow uses it (what it passes on and what it keeps back) and the
shim (MLflow's own retries off: a judge fault reaches MLflow once and ends as an error cell, fast).
"""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.cases.load import CaseSet
from harness.judge.faults import FaultInjector, FaultSpec
from harness.metric.endpoint import Endpoint
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

pytest.importorskip("mlflow.genai")

import contextlib  # noqa: E402

from harness.adapters.mlflow.groundedness import LOOPBACK  # noqa: E402
from harness.judge import loopback  # noqa: E402

HEADER = loopback.TOKEN_HEADER


@contextlib.contextmanager
def open_cell(endpoint):
    """A cell open at the face as MLflow's adapter opens it; yields the headers MLflow is given."""
    with loopback.cell(endpoint, LOOPBACK) as opened:
        yield opened.headers


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


def test_the_face_passes_the_body_and_the_answer_as_they_are_and_no_header(upstream):
    handler, base = upstream
    handler.status, handler.body = 503, b'{"error": {"message": "busy", "type": "x"}}'
    cell = f"{base}/cell/run%201/case%2F1/mlflow.groundedness/v1"
    body = b'{"model": "m", "messages": [{"role": "user", "content": "caf\\u00e9"}]}'
    with open_cell(Endpoint(cell, "m")) as headers:
        assert list(headers) == [HEADER] and "case" not in headers[HEADER]   # a random token, not the cell
        status, payload = _post(f"{os.environ['OPENAI_API_BASE']}/chat/completions", body,
                                {**headers, "Authorization": "Bearer sk-user-real-key", "X-Other": "1"})
    assert (status, payload) == (503, handler.body)              # the gateway's answer, byte for byte
    path, sent, data = handler.seen[0]
    assert path == "/cell/run%201/case%2F1/mlflow.groundedness/v1/chat/completions" and data == body
    assert sent["Authorization"] == "Bearer harness-gateway"     # the endpoint's placeholder, not the user's key
    assert "X-Other" not in sent and HEADER not in sent


def test_the_face_refuses_a_closed_cell_and_other_routes_without_reaching_the_judge(upstream):
    handler, base = upstream
    endpoint = Endpoint(f"{base}/cell/r/c/mlflow.groundedness/v1", "m")
    with open_cell(endpoint) as headers:
        url = os.environ["OPENAI_API_BASE"]
        assert _post(f"{url}/completions", b"{}", headers)[0] == 404
    status, payload = _post(f"{url}/chat/completions", b"{}", headers)   # a late request of the cell
    assert status == 401 and "only the cells of its own run" in json.loads(payload)["error"]["message"]
    assert handler.seen == []


def test_the_face_points_mlflow_at_itself_while_a_cell_runs_and_puts_the_environment_back(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-kept")
    monkeypatch.setenv("OPENAI_API_BASE", "http://example.invalid/v1")
    monkeypatch.setenv("NO_PROXY", "corp")
    monkeypatch.delenv("no_proxy", raising=False)
    before = dict(os.environ)
    with open_cell(Endpoint("http://127.0.0.1:9/v1", "m")):
        assert os.environ["OPENAI_API_BASE"].startswith("http://127.0.0.1:")
        assert os.environ["OPENAI_API_KEY"] == "sk-kept"
        assert os.environ["NO_PROXY"].split(",") == ["corp", "127.0.0.1", "localhost"]
    assert dict(os.environ) == before


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
    from harness.adapters.mlflow._retries import MARK, SHIM, no_vendor_retries
    from harness.adapters.mlflow.groundedness import MlflowGroundedness

    from mlflow.genai.judges import builtin

    no_vendor_retries()
    once = builtin.invoke_judge_model
    no_vendor_retries()
    assert builtin.invoke_judge_model is once and getattr(once, MARK)
    assert MlflowGroundedness.shims == (SHIM,) and "num_retries=0" in SHIM.text


def test_an_mlflow_cell_through_evaluate_leaves_the_callers_environment_as_it_found_it(canonical, tmp_path,
                                                                                       monkeypatch):
    """Issue 33.1: after an MLflow cell ``OPENAI_API_BASE`` pointed at the loopback face in the caller's process, so a
    later LiteLLM call went there. Now every variable the cell set is back (unset ones unset)."""
    import harness

    monkeypatch.setenv("OPENAI_API_BASE", "http://my-litellm.invalid/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("NO_PROXY", "corp.example")
    before = dict(os.environ)
    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"),), canonical.sha256)
    result = harness.evaluate(cases, ["mlflow.groundedness"], report=False, out_dir=str(tmp_path), progress=False)
    assert dict(os.environ) == before
    store = RunStore.open(result.store_path)
    try:
        assert store.rows("SELECT status FROM cells") == [("scored",)]
    finally:
        store.close()
