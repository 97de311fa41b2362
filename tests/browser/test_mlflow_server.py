"""``harness export --format mlflow`` against a real ``mlflow server``, read in MLflow's own UI in headless
Chromium: two harness runs of the canonical set are exported to the server, the experiment's Evaluation runs
page lists both, opening one shows one row per case with one assessment per metric (the harness's scores), a
trace opened from it shows the claim verdicts in the assessment's rationale, and the two runs compare there.

The server is the full ``mlflow`` at the pin of the project's ``mlflow-skinny``, from .venv-mlflow-server
(scripts/setup.sh builds it from tests/helpers/mlflow_server/uv.lock); it runs on a free loopback port with its own
sqlite store and artifact folder, and its process group is killed at the end. Screenshots are kept in
tests/browser/artifacts/ (mlflow_eval_run.png, mlflow_trace.png, mlflow_compare.png). Skipped only when the server
venv or Chromium is absent outside CI; in CI a missing one fails.
"""
from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import harness

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.review_browser import browser, shot  # noqa: F401 - fixture

MLFLOW = os.path.join(ROOT, ".venv-mlflow-server", "bin", "mlflow")
METRICS = ["deepeval.faithfulness", "inhouse.span"]
# no telemetry from the server or from the exporting harness
QUIET = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
STARTUP_CAP = 900   # seconds: an upper bound for a cold start on a loaded 2-core machine, not a wait


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``mlflow server`` on a free loopback port with a temp sqlite store and artifact root; its URL."""
    if not os.access(MLFLOW, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"{MLFLOW} is missing: scripts/setup.sh builds .venv-mlflow-server")
        pytest.skip("no .venv-mlflow-server (bash scripts/setup.sh builds it)")
    home = tmp_path_factory.mktemp("mlflow-server")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(home / "server.log", "w")
    proc = subprocess.Popen(
        [MLFLOW, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{home / 'mlflow.db'}", "--default-artifact-root", str(home / "artifacts")],
        cwd=home, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, **QUIET, "PYTHONDONTWRITEBYTECODE": "0"})
    try:
        deadline = time.monotonic() + STARTUP_CAP
        while True:   # wait for the state (the health endpoint answers), polling; the cap only ends a hung start
            assert proc.poll() is None, f"mlflow server exited: {(home / 'server.log').read_text()[-3000:]}"
            try:
                if _get(url + "/health", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"mlflow server never answered: {(home / 'server.log').read_text()[-3000:]}"
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)
        log.close()


@pytest.fixture(scope="module")
def exported(server, tmp_path_factory):
    """Run A: the canonical set; run B: the same cases with cookie-yield's unstated claim answered away and
    the empty answer dropped (another system's answers); both exported to the server by ``harness export``."""
    out = str(tmp_path_factory.mktemp("runs"))
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8")]
    for r in rows:
        if r["id"] == "cookie-yield":
            last = r["annotation"]["claims"].pop()
            r["answer"] = r["answer"][: last["answer_span"][0]].rstrip()
    rows = [r for r in rows if r["id"] != "empty-answer"]
    runs = {"a": harness.evaluate(CANONICAL, metrics=METRICS, out_dir=out, run_id="a", progress=False),
            "b": harness.evaluate(rows, metrics=METRICS, out_dir=out, run_id="b", progress=False)}
    ids = {}
    for name in runs:
        r = subprocess.run([sys.executable, "-m", "harness", "export", name, "--out", out, "--format", "mlflow"],
                           cwd=ROOT, capture_output=True, text=True, timeout=900,
                           env={**os.environ, **QUIET, "MLFLOW_TRACKING_URI": server})
        assert r.returncode == 0, r.stderr[-3000:]
        ids[name] = re.search(r"mlflow: run (\w+) \(new\)", r.stdout).group(1)
        assert "View run" not in r.stdout and "View run" in r.stderr, (r.stdout, r.stderr[-2000:])   # MLflow's own
    status, body = _get(server + "/api/2.0/mlflow/experiments/get-by-name?" +
                        urllib.parse.urlencode({"experiment_name": "groundedness-harness"}))
    assert status == 200, body
    return runs, ids, json.loads(body)["experiment"]["experiment_id"]


def _rows(text: str) -> list[tuple[str, str, list[str]]]:
    """The evaluation table's rows from the page's text: (question, answer, the assessment cells in column
    order) per row."""
    lines = [line.strip() for line in text.splitlines()]
    out = []
    for i, line in enumerate(lines):
        if re.fullmatch(r"tr-[0-9a-f]{32}", line):
            out.append((json.loads(lines[i + 1])["question"], json.loads(lines[i + 2])["answer"],
                        lines[i + 3: i + 3 + len(METRICS)]))
    return out


def _shown(value) -> str:
    """A harness score as the MLflow UI prints an assessment value (at most 3 decimals; null for none)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    return f"{float(value):.3f}".rstrip("0").rstrip(".")


def test_exported_runs_in_mlflows_evaluation_view(exported, server, browser):  # noqa: F811 - fixture
    runs, ids, exp = exported
    a = runs["a"]
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    try:
        page.goto(f"{server}/#/experiments/{exp}/evaluation-runs", timeout=300_000)
        # both exported runs are listed as evaluation runs
        for name in ("a", "b"):
            page.get_by_text(name, exact=True).first.wait_for(timeout=300_000)
        # opening run A shows its traces: one row per case, one assessment column per metric with its mean
        page.get_by_role("button", name="Close", exact=True).first.click()   # the assistant's side panel
        page.get_by_text("a", exact=True).first.click()
        n = len(a.case_ids)
        page.wait_for_function("n => document.body.innerText.includes(`${n} of ${n}`) && "
                               "document.body.innerText.includes('AVG')", arg=n, timeout=300_000)
        assert f"selectedRunUuid={ids['a']}" in page.url
        text = page.inner_text("body")
        for metric in METRICS:
            scored = a.cells[(a.cells.metric == metric) & (a.cells.status == "scored")]["score"].astype(float)
            assert f"{metric}\nAVG\n{scored.mean():.2f}" in text, metric
        # every case once, with the harness's score for each metric (null where the cell is not a score)
        case_of = {(r["question"], r["answer"]): r["id"] for r in map(json.loads, open(CANONICAL, encoding="utf-8"))}
        shown = _rows(text)
        assert sorted(case_of[q, ans] for q, ans, _ in shown) == sorted(a.case_ids)
        cells = a.cells.set_index(["case_id", "metric"])
        for q, ans, values in shown:
            cid = case_of[q, ans]
            want = [_shown(cells.loc[(cid, m), "score"] if cells.loc[(cid, m), "status"] == "scored" else None)
                    for m in METRICS]
            assert values == want, (cid, values, want)
        shot(page, "mlflow_eval_run.png")
        # a trace opened from the run: its assessments carry the claim verdicts in their rationale
        page.get_by_text("How do I bake these chocolate chip cookies", exact=False).first.click()
        page.get_by_role("button", name=re.compile("Assess")).first.click()
        page.wait_for_function("document.body.innerText.includes('Feedback (2)')", timeout=300_000)
        pill = page.get_by_text("0.75", exact=True).last   # inhouse.span's value in the assessments pane
        box = pill.bounding_box()
        page.mouse.click(box["x"] - 30, box["y"] + box["height"] / 2)   # its unlabelled expand chevron
        page.wait_for_function("document.body.innerText.includes('Rationale')", timeout=300_000)
        trace_text = page.inner_text("body")
        assert "scored 0.75\n" in trace_text and ": nan" not in trace_text
        assert "supported: The cookies bake at 350 F." in trace_text and "(supported)" not in trace_text
        assert "unsupported (not_found): The recipe makes two dozen cookies." in trace_text
        shot(page, "mlflow_trace.png")
        # the two runs compare: select both, Actions > Compare
        page.goto(f"{server}/#/experiments/{exp}/evaluation-runs", timeout=300_000)
        page.reload(timeout=300_000)   # a fresh page: no trace drawer, no selected run
        boxes = page.get_by_role("checkbox")
        boxes.nth(1).wait_for(timeout=300_000)
        for i in range(boxes.count()):
            boxes.nth(i).check()
        page.get_by_role("button", name="Actions").click()
        page.get_by_role("menuitem", name="Compare").click()
        # the compare view pairs the two runs' traces by request (it renders the rows lazily: the first pair is
        # enough to see it)
        page.wait_for_function("document.body.innerText.includes('Comparing') && "
                               "(document.body.innerText.match(/tr-[0-9a-f]{32}/g) || []).length >= 2",
                               timeout=300_000)
        query = urllib.parse.parse_qs(page.url.split("?", 1)[1])
        assert {query["selectedRunUuid"][0], query["compareToRunUuid"][0]} == set(ids.values())
        pair = re.search(r"Comparing\s+(?:#\w+\s+)?([ab])\s+to\s+(?:#\w+\s+)?([ab])\s", page.inner_text("body"))
        assert pair and set(pair.groups()) == {"a", "b"}
        shot(page, "mlflow_compare.png")
    finally:
        page.close()
