"""Reliability probes of issue 13: an outage never becomes a finished score; the cache knows which
judge answered; a run is locked while it runs; usage is optional; each cell has a bounded time."""
import json
import math

from harness.cases.load import CaseSet
from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest


def _cells(path):
    s = RunStore.open(path)
    try:
        return {(r[0], r[1]): r[2:] for r in s.rows(
            "SELECT case_id, metric, status, score, errors, calls, detail FROM cells")}
    finally:
        s.close()


def _same_score(a, b):
    return a == b or (a is not None and b is not None and math.isclose(a, b))


def test_an_outage_is_an_error_and_a_resume_recomputes_it(canonical, tmp_path):
    """Probe 2 (--faults 500=0.7 --retries 0): no cell with a failed judge call is stored as finished
    (vendor_nan or a score from the calls that did answer); after the judge recovers, the resumed run
    equals a run that never saw the outage."""
    metric = "ragas.response_groundedness"
    clean = _cells(run(RunOptions(cases=canonical, metrics=[metric], out_dir=str(tmp_path), run_id="clean",
                                  progress=False)).store_path)
    opts = dict(cases=canonical, metrics=[metric], out_dir=str(tmp_path), run_id="outage", progress=False)
    faulted = _cells(run(RunOptions(**opts, retry_attempts=1,
                                    upstream_wrapper=FaultInjector(FaultSpec.parse("500=0.7"), 0))).store_path)
    hit = {k: v for k, v in faulted.items() if v[2]}
    assert len(hit) > len(faulted) // 2                           # the outage did hit most cells
    assert {v[0] for v in hit.values()} == {"error"}
    returned = {json.loads(v[4]).get("vendor_status") for v in hit.values()}
    # what the vendor made of it is kept: with instructor's stock retries (any exception, 3 attempts) Ragas scores
    # from the calls that did answer, and the cell is an error all the same
    assert "scored" in returned and returned <= {"scored", "vendor_nan", None}
    resumed = _cells(run(RunOptions(**opts)).store_path)
    assert {k: v[0] for k, v in resumed.items()} == {k: v[0] for k, v in clean.items()}
    assert all(_same_score(resumed[k][1], clean[k][1]) for k in clean)


def test_a_store_from_before_the_rule_is_recomputed(canonical, tmp_path):
    """A vendor_nan cell with failed calls, as older harness versions stored it, is not kept by a resume."""
    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"),), canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="old", progress=False))
    s = RunStore(out.store_path)
    s.db.execute("UPDATE cells SET status = 'vendor_nan', score = NULL, errors = 3")
    s.close()
    again = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="old", progress=False))
    assert (again.computed, again.reused) == (1, 0)
    assert _cells(again.store_path)[("cookie-yield", "inhouse.span")][:3] == ("scored", 0.75, 0)


# --- the cache knows which judge answered (probe 3) -------------------------------------------------

class _Named:
    """A tiny OpenAI-compatible judge that answers every request with its own name."""

    def __init__(self, name):
        import http.server
        import threading

        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.calls += 1
                body = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": name}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.calls = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()


def test_a_cache_recorded_from_one_judge_never_answers_for_another(tmp_path):
    from harness.judge.cache import JudgeCache
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import HttpUpstream

    import httpx

    body = {"model": "same-model", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    a, b = _Named("judge A"), _Named("judge B")

    def ask(url, mode, path=""):
        with Gateway(HttpUpstream(url + path, "same-model", None), cache=cache, mode=mode) as gw:
            r = httpx.post(f"{gw.cell_url('r', 'c', 'm')}/chat/completions", json=body, timeout=30)
        return r.status_code, (r.json().get("choices") or [{}])[0].get("message", {}).get("content")

    try:
        assert ask(a.url, "record") == (200, "judge A")
        assert ask(a.url, "record", "/") == (200, "judge A") and a.calls == 1   # the same judge: a hit
        assert ask(b.url, "replay")[0] == 400                                  # A's answer is not B's
        assert ask(b.url, "record") == (200, "judge B") and b.calls == 1
        assert ask(a.url, "replay") == (200, "judge A") and len(cache) == 2
    finally:
        a.close()
        b.close()


# --- one process per run (probe 5) ------------------------------------------------------------------

def test_a_second_process_on_the_same_run_is_refused(tmp_path, capsys):
    import os

    from harness.console import main
    from harness.run.rundir import RunLock

    from tests.conftest import ROOT

    valid = os.path.join(ROOT, "tests", "data", "bad_input", "valid.jsonl")
    argv = ["run", "--cases", valid, "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "busy",
            "--no-progress"]
    (tmp_path / "busy").mkdir()
    with RunLock(str(tmp_path / "busy"), "busy"):          # another process holds the run
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == (f"harness: run 'busy' is in use by another harness process (pid {os.getpid()}); "
                       f"wait for it to finish, or use another --run-id\n")
        assert not (tmp_path / "busy" / "store.sqlite").exists()        # nothing computed, nothing written
    assert main(argv) == 0                                              # released: the run goes ahead
    assert main(argv) == 0                                              # and resumes (nothing to do)
    assert _cells(str(tmp_path / "busy"))[("bake", "inhouse.span")][0] == "scored"


def test_two_runs_racing_for_one_run_id_one_is_refused(tmp_path):
    """Two real processes started together on one run id, with different judges: exactly one runs."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    valid = os.path.join(ROOT, "tests", "data", "bad_input", "valid.jsonl")
    procs = [subprocess.Popen([sys.executable, "-m", "harness", "run", "--cases", valid, "--metrics", "inhouse.span",
                               "--out", str(tmp_path), "--run-id", "race", "--no-progress", "--judge-latency-ms",
                               str(ms)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for ms in (1500, 1600)]
    results = sorted((p.wait(timeout=300), p.stderr.read()) for p in procs)
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [rc for rc, _ in results] == [0, 2], results
    assert "is in use by another harness process" in results[1][1]
    spec = json.load(open(tmp_path / "race" / "spec.json"))
    assert spec["judge"]["kind"] == "reference"


# --- usage is optional (probe 8) ---------------------------------------------------------------------

class _Usage:
    """Wraps an upstream: every reply's usage is left out, null, garbled or not an object."""

    def __init__(self, inner, mode):
        self.inner, self.kind, self.model, self.mode = inner, inner.kind, inner.model, mode
        self.replies = 0

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        r = json.loads(json.dumps(await self.inner.complete(cell, body)))
        self.replies += 1
        if self.mode == "missing":
            r.pop("usage", None)
        elif self.mode == "null":
            r["usage"] = None
        elif self.mode == "garbled":
            r["usage"] = {"prompt_tokens": "12", "completion_tokens": "many", "total_tokens": [1]}
        else:
            r["usage"] = "n/a"
        return r

    async def aclose(self):
        await self.inner.aclose()


def _chat_metrics():
    """The metrics whose judge calls are chat completions (the similarity ones also embed, elsewhere)."""
    from harness.metric import registry

    return [m for m in registry.names() if not m.startswith(("baseline.", "cascade."))]


@pytest.fixture(scope="module")
def usage_cases(canonical):
    return CaseSet(canonical.path, (canonical.by_id("cookie-yield"), canonical.by_id("citations-correct")),
                   canonical.sha256)


@pytest.fixture(scope="module")
def usage_baseline(usage_cases, tmp_path_factory):

    out = run(RunOptions(cases=usage_cases, metrics=_chat_metrics(), out_dir=str(tmp_path_factory.mktemp("u")),
                         run_id="base", progress=False))
    return _cells(out.store_path)


def _usage_run(mode, cases, tmp_path):

    wrappers = []

    def wrap(up):
        wrappers.append(_Usage(up, mode))
        return wrappers[0]

    out = run(RunOptions(cases=cases, metrics=_chat_metrics(), out_dir=str(tmp_path), run_id=mode, progress=False,
                         retry_attempts=1, upstream_wrapper=wrap))
    s = RunStore.open(out.store_path)
    try:
        usage = s.rows("SELECT usage, COUNT(*), SUM(prompt_tokens) FROM calls GROUP BY usage")
        reasons = s.rows("SELECT metric, reason FROM cells WHERE status IN ('error', 'vendor_nan')")
    finally:
        s.close()
    return _cells(out.store_path), usage, reasons, wrappers[0].replies


NULL_USAGE_FAILS = {"mlflow.groundedness": "MLflow 3.17.2 reads usage.get(...) on the reply's usage: a null usage "
                                            "raises in its own code, in stock use the same (card)"}
"""Metrics whose vendor fails on ``"usage": null`` as it would in stock use: an error cell whose reason says the
reply carried no readable usage, never a changed score."""


@pytest.mark.parametrize("mode", ["missing", "null"])
def test_a_judge_that_sends_no_usage_changes_no_score(mode, usage_cases, usage_baseline, tmp_path):
    """Every metric (DeepEval included: it read usage.prompt_tokens unconditionally) scores as with usage;
    every call is in the ledger, marked as carrying no usage, with no invented tokens."""
    cells, usage, reasons, replies = _usage_run(mode, usage_cases, tmp_path)
    failing = NULL_USAGE_FAILS if mode == "null" else {}
    assert all(m in failing and "no readable usage" in r for m, r in reasons), reasons
    assert {k: (v[0], v[1]) for k, v in cells.items() if k[1] not in failing} == {
        k: (v[0], v[1]) for k, v in usage_baseline.items() if k[1] not in failing}
    assert usage == [(0, replies, 0)] and replies > 0                  # usage 0: not reported


@pytest.mark.parametrize("mode", ["garbled", "not-an-object"])
def test_garbled_usage_never_crashes_the_gateway(mode, usage_cases, usage_baseline, tmp_path):
    """Every call reaches the ledger (none lost to a crashed handler), marked as carrying no readable
    usage, no tokens guessed; a vendor that fails on such usage (as it would in stock use) errors or
    returns NaN with a reason that says so, and every other cell scores as with usage."""
    cells, usage, reasons, replies = _usage_run(mode, usage_cases, tmp_path)
    assert usage == [(0, replies, 0)] and replies > 0
    assert sum(v[3] for v in cells.values()) == replies
    for metric, reason in reasons:
        assert "no readable usage" in reason, (metric, reason)
    for k, v in cells.items():
        if v[0] not in ("error", "vendor_nan") or usage_baseline[k][0] == "vendor_nan":
            assert (v[0], v[1]) == usage_baseline[k][:2], k
    assert any(v[0] == "scored" for v in cells.values())


# --- Ctrl-C (probe 7) -----------------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["importing vendors", "mid-run"])
def test_ctrl_c_ends_the_run_at_once_with_only_the_resume_message(when, tmp_path):
    """SIGINT while the vendors import (which used to finish first: 5-19 s) or while cells run (TruLens
    and the HTTP clients used to print errors while torn down): the process ends at once, printing
    only the resume line; the store holds only whole cells and a rerun resumes."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from harness.run.interrupt import MESSAGE

    from tests.conftest import ROOT

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "harness", "run", "--out", str(out), "--run-id", "int", "--no-progress",
           "--judge-latency-ms", "100"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().startswith("judge: ")
    store = out / "int" / "store.sqlite"
    if when == "mid-run":
        for _ in range(6000):
            try:
                with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
                    if db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] >= 5:
                        break
            except sqlite3.Error:
                pass
            time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=3)           # liveness: it used to take 5-19 s while vendors imported
    assert (p.returncode, err) == (1, MESSAGE + "\n")
    done = subprocess.run(cmd[:-2], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert os.path.exists(store)


# --- a bounded time per cell (probe 10) --------------------------------------------------------------

class _Hung:
    """A judge that accepts every request and never answers."""

    kind, model = "http", "hung"

    def __init__(self, inner):
        self.inner = inner

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        import asyncio

        await asyncio.sleep(3600)

    async def aclose(self):
        await self.inner.aclose()


def test_a_hung_judge_costs_each_cell_its_budget_not_hours(canonical, tmp_path):
    """With the default per-call timeout (120 s) and retries (4 attempts), a hung judge used to hold each
    call ~8 minutes; within the cell budget every cell of every vendor ends as an error that names the
    budget, with its calls in the ledger, and the run returns."""
    import threading

    from harness.metric import registry

    metrics = [m for m in ("inhouse.span", "ragas.faithfulness", "deepeval.faithfulness", "trulens.groundedness")
               if m in registry.names()]
    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"),), canonical.sha256)
    got = {}
    opts = RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="hung", progress=False,
                      cell_timeout_s=1.5, upstream_wrapper=_Hung)
    t = threading.Thread(target=lambda: got.update(out=run(opts)), daemon=True)
    t.start()
    t.join(180)                       # liveness bound only: without the budget this takes 8+ minutes
    assert not t.is_alive()
    s = RunStore.open(got["out"].store_path)
    try:
        rows = s.rows("SELECT metric, status, reason, calls, errors FROM cells")
        budget_errors = s.rows("SELECT COUNT(*) FROM calls WHERE error LIKE '%time budget%'")[0][0]
    finally:
        s.close()
    assert sorted(r[0] for r in rows) == sorted(metrics)
    for metric, status, reason, calls, errors in rows:
        assert status == "error" and calls >= 1 and errors >= 1, (metric, status, reason)
    assert budget_errors >= len(metrics)


def test_the_cell_budget_is_on_by_default_and_in_help():
    from harness.console import build_parser
    from harness.judge.budget import DEFAULT_CELL_TIMEOUT_S

    assert RunOptions(cases=None, metrics=[]).cell_timeout_s == DEFAULT_CELL_TIMEOUT_S == 300
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["run"].format_help().split())
    assert "--cell-timeout S total seconds per cell, every judge call, retry and wait included (default 300)" in text


# --- stores are opened read-only to be read (probe 9) ---------------------------------------------

def test_a_read_only_store_is_reported_from_without_being_written(canonical, tmp_path, capsys):
    """`harness report` on a store it may not write (read-only file and directory, a --report-dir
    elsewhere): the report is built and the store's bytes are untouched. (Root may write anything, so
    the connection itself is checked to be read-only too.)"""
    import hashlib
    import sqlite3
    import stat

    from harness.console import main

    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"),), canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="ro", progress=False))
    run_dir = tmp_path / "ro"
    digest = hashlib.sha256(open(out.store_path, "rb").read()).hexdigest()
    s = RunStore.open(out.store_path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            s.db.execute("DELETE FROM cells")
    finally:
        s.close()
    for p in [*run_dir.iterdir(), run_dir]:
        p.chmod(stat.S_IRUSR | stat.S_IXUSR | (stat.S_IRGRP if p.is_file() else 0))
    try:
        rc = main(["report", str(run_dir), "--report-dir", str(tmp_path / "elsewhere")])
        assert rc == 0, capsys.readouterr().err
        assert (tmp_path / "elsewhere" / "index.html").exists()
        assert hashlib.sha256(open(out.store_path, "rb").read()).hexdigest() == digest
    finally:
        for p in [run_dir, *run_dir.iterdir()]:
            p.chmod(stat.S_IRWXU)


def test_a_file_that_is_not_a_store_is_one_line(tmp_path, capsys):
    from harness.console import main

    bogus = tmp_path / "run" / "store.sqlite"
    bogus.parent.mkdir()
    bogus.write_text("not a database")
    assert main(["report", str(bogus.parent)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness: {bogus}: cannot be read as a run store (") and err.count("\n") == 1


# --- a full disk (Low list) -------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [60_000, 400_000])
def test_a_full_disk_is_one_line_and_the_run_resumes(limit, tmp_path):
    """The process may write no file beyond ``limit`` bytes (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail
    as on a full disk), first while the store is being set up, then mid-run: one line, exit 2, no
    traceback; the store stays whole, and the same run, with room again, resumes and completes."""
    resource = pytest.importorskip("resource")
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT

    def cap():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    cmd = [sys.executable, "-m", "harness", "run", "--out", str(tmp_path), "--run-id", "full", "--no-progress",
           "--metrics", "inhouse.span,ragas.faithfulness"]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, preexec_fn=cap)
    assert p.returncode == 2, p.stderr[-3000:]
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.stderr.startswith(f"harness: {tmp_path / 'full' / 'store.sqlite'}: cannot write the run store: ")
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    cells = _cells(str(tmp_path / "full" / "store.sqlite"))
    from harness.cases.load import load_cases

    from tests.conftest import CANONICAL

    assert len(cells) == 2 * len(load_cases(CANONICAL))
    assert {v[0] for v in cells.values()} <= {"scored", "unscored", "vendor_nan"}
