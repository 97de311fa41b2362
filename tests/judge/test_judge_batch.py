"""Batch mode (``--judge-batch``, :mod:`harness.judge.batch`): every vendor's judge calls of a round go
through the provider's files and batches API, offline against the realistic test judge and the reference
judge; a kill -9 while a batch is in flight resumes on the same batch; errors in a batch are the cells'
errors, never scores; the judge cache answers before any batch; money at the batch price."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading

from harness.api import evaluate
from harness.cases.load import load_cases
from harness.judge.batch import BatchConfig, read_lines
from harness.run.runner import JudgeConfig, RunOptions
from harness.run.runner import run as run_harness

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.judges.realistic import MODEL, serve

FAST = {"poll_s": 0.01, "window_s": 600.0}
"""Tests poll at once and never send a batch on the clock: a batch goes when its round is complete."""
FINAL = ("scored", "unscored", "vendor_nan", "not_applicable")


def _eval(judge_url, out, run_id, metrics=("inhouse.span",), **opts):
    judge = {"url": judge_url, "model": MODEL} if judge_url else None
    return evaluate(CANONICAL, list(metrics), judge, out_dir=str(out), run_id=run_id, report=False, progress=False,
                    concurrency=24, **opts)


def _scores(res):
    return res.cells.set_index(["case_id", "metric"])[["status", "score"]].sort_index()


def _book(store_path):
    with sqlite3.connect(store_path) as db:
        batches = db.execute("SELECT batch_id, endpoint, requests, state, status FROM judge_batches").fetchall()
        reqs = db.execute("SELECT state, COUNT(*) FROM judge_batch_requests GROUP BY state").fetchall()
    return batches, dict(reqs)


def _bodies(service) -> list[str]:
    """Every request body the judge was sent in a batch input file (canonical JSON), over all its batches."""
    out = []
    for b in service.batches.values():
        for line in read_lines(service.files[b["input_file_id"]]["data"], "input"):
            out.append(json.dumps(line["body"], sort_keys=True))
    return out


def test_a_batch_run_and_a_plain_run_give_identical_scores(tmp_path):
    """Replay: the same judge answers the same requests, whether one by one or in batches; the batch run's every
    live call went through a batch recorded in the store, and the judge saw exactly the same request bodies."""
    with serve(mode="openai") as judge:
        plain = _eval(judge.url, tmp_path, "plain", ("inhouse.span", "trulens.groundedness"), cache_mode="live")
        asked_plain = judge.stats()["bodies"]
        judge.reset()
        batch = _eval(judge.url, tmp_path, "batch", ("inhouse.span", "trulens.groundedness"), cache_mode="live",
                      judge_batch=FAST)
        asked_batch = judge.stats()["bodies"]
        service = judge.judge.batches
    assert plain.counts == batch.counts and set(plain.counts["inhouse.span"]) <= set(FINAL)
    assert _scores(plain).equals(_scores(batch))
    ledger = ["calls", "prompt_tokens", "completion_tokens", "billed_prompt_tokens", "billed_completion_tokens", "errors"]
    assert plain.cells[ledger].sum().to_dict() == batch.cells[ledger].sum().to_dict()
    assert asked_plain == asked_batch                         # the bodies exactly as the vendors sent them
    batches, reqs = _book(batch.store_path)
    assert reqs == {"answered": int(batch.cells["calls"].sum())}     # every call answered by a batch
    assert all(state == "ended" and status == "completed" for *_, state, status in batches)
    assert {e for _, e, *_ in batches} == {"/v1/chat/completions", "/v1/responses"}   # TruLens asks both routes
    assert service.created == len(batches) and len(_bodies(service)) == sum(r for _, _, r, *_ in batches)
    # rounds, not one batch per call: the first round holds the first call of every cell that calls the judge
    assert len(batches) < len(_bodies(service)) / 4, batches


VENDORS = ("ragas.faithfulness", "ragas.response_groundedness", "deepeval.faithfulness", "phoenix.faithfulness",
           "opik.hallucination", "mlflow.groundedness")
"""Every other vendor of the main environment (TruLens above; MLflow through the loopback face)."""


def test_every_vendor_scores_in_batch_mode_as_it_does_call_by_call(tmp_path):
    """Each vendor's own client waits for its batch (their HTTP timeouts are longer than these rounds) and gets
    the judge's replies unchanged: the same outcomes, the same scores, the same request bodies."""
    with serve(mode="openai") as judge:
        plain = _eval(judge.url, tmp_path, "plain", VENDORS, cache_mode="live")
        asked_plain = judge.stats()["bodies"]
        judge.reset()
        batch = _eval(judge.url, tmp_path, "batch", VENDORS, cache_mode="live", judge_batch=FAST)
        asked_batch = judge.stats()["bodies"]
    assert plain.counts == batch.counts and set(plain.counts) == set(VENDORS)
    assert all(set(c) <= set(FINAL) for c in batch.counts.values()), batch.counts   # no errored cell
    assert _scores(plain).equals(_scores(batch))
    assert asked_plain == asked_batch
    _, reqs = _book(batch.store_path)
    assert reqs == {"answered": int(batch.cells["calls"].sum())}


def test_the_reference_judge_serves_batches_in_process_and_over_http(tmp_path):
    """The embedded reference judge answers batches in the run's process, and ``harness judge serve`` serves
    the files and batches routes (each line's cell from its custom_id): both give the plain run's scores."""
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import ReferenceUpstream

    plain = _eval(None, tmp_path, "plain")
    inproc = _eval(None, tmp_path, "inproc", judge_batch=True)   # the defaults: a round goes when it is complete
    assert _scores(plain).equals(_scores(inproc))
    batches, reqs = _book(inproc.store_path)
    assert batches and reqs == {"answered": int(inproc.cells["calls"].sum())}

    cases = load_cases(CANONICAL)

    class AnyRun(dict):
        def __missing__(self, key):
            return cases.by_id(key[1])

    up = ReferenceUpstream(AnyRun())
    gw = Gateway(up, keep_ledger=False).start()
    try:
        served = evaluate(CANONICAL, ["inhouse.span"], {"url": f"{gw.base}/v1", "model": "reference-judge"},
                          out_dir=str(tmp_path), run_id="served", report=False, progress=False, concurrency=24,
                          cache_mode="live", judge_batch=FAST)
    finally:
        gw.stop()
    assert _scores(plain).equals(_scores(served))
    assert up.batch_service().created == len(_book(served.store_path)[0]) > 0


def _cmd(url, out, *extra):
    return [sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span",
            "--judge-url", url, "--judge-model", MODEL, "--cache", "live", "--concurrency", "24", "--out", str(out),
            "--run-id", "k", "--no-progress", *extra]


BATCH = ["--judge-batch", "--judge-batch-poll", "0.01", "--judge-batch-window", "600"]


def test_kill_9_while_a_batch_is_in_flight_resumes_on_the_same_batch(tmp_path):
    """SIGKILL the run while its first batch is held at the judge, release it, rerun the same run id: the
    resumed run re-attaches to the batch id in the store (polls it again, never creates it again), finishes
    every cell, and scores as a run without batches on the same judge."""
    hold = threading.Event()
    with serve(mode="openai", batch_hold=hold) as judge:
        service = judge.judge.batches
        hold.set()    # a reference: the same run uninterrupted, in batch mode, and without batches
        ref = subprocess.run(_cmd(judge.url, tmp_path / "ref", *BATCH), cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
        assert ref.returncode == 0, ref.stderr[-2000:]
        rounds = service.created
        plain = subprocess.run(_cmd(judge.url, tmp_path / "plain"), cwd=ROOT, capture_output=True, text=True,
                               timeout=600)
        assert plain.returncode == 0, plain.stderr[-2000:]
        hold.clear()
        service.batches.clear()
        service.created = 0

        p = subprocess.Popen(_cmd(judge.url, tmp_path / "out", *BATCH), cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            assert service.wait_created(1, 300)
            first = next(iter(service.batches))
            # polled once: the run wrote the batch id to its store before it began to wait (state, not time)
            assert service.wait_retrieved(first, 1, 300)
            os.killpg(p.pid, signal.SIGKILL)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(60)
        store = str(tmp_path / "out" / "k" / "store.sqlite")
        batches, reqs = _book(store)
        assert [(b[0], b[3]) for b in batches] == [(first, "waiting")] and reqs == {"waiting": batches[0][2]}
        polled = service.retrieved[first]
        assert service.batches[first]["status"] == "in_progress"

        hold.set()
        done = subprocess.run(_cmd(judge.url, tmp_path / "out", *BATCH), cwd=ROOT, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        assert service.retrieved[first] > polled                    # the resumed run polled the same batch
        assert service.created == rounds                            # and created none again
        bodies = _bodies(service)
        assert len(bodies) == len(set(bodies))                      # no request was ever sent in two batches
    batches, reqs = _book(store)
    assert all(b[3] == "ended" and b[4] == "completed" for b in batches) and set(reqs) == {"answered"}

    def cells(out):
        with sqlite3.connect(os.path.join(out, "k", "store.sqlite")) as db:
            return sorted(db.execute("SELECT case_id, metric, status, score FROM cells").fetchall())

    got, want = cells(tmp_path / "out"), cells(tmp_path / "plain")
    assert len(got) == 24 and all(c[2] in FINAL for c in got)
    assert got == want == cells(tmp_path / "ref")


def _opts(url, out, run_id, **kw):
    return RunOptions(cases=load_cases(CANONICAL), metrics=["inhouse.span"], judge=JudgeConfig(url=url, model=MODEL),
                      cache_mode=kw.pop("cache_mode", "live"), out_dir=str(out), run_id=run_id, progress=False,
                      concurrency=24, judge_batch=BatchConfig(**FAST), **kw)


def _cells(out, run_id):
    with sqlite3.connect(os.path.join(str(out), run_id, "store.sqlite")) as db:
        return {(c, m): (s, sc, r) for c, m, s, sc, r in
                db.execute("SELECT case_id, metric, status, score, reason FROM cells")}


@pytest.mark.parametrize("fault", ["error lines", "expired", "failed"])
def test_errors_in_a_batch_are_resumable_judge_faults(tmp_path, fault):
    """A request's error line, or a batch that ends expired or failed, is that call's error: the cell is ERROR
    (never a score), the batch is marked ended (not re-attached), and a rerun computes the cells in new
    batches, scoring as the plain run."""
    with serve(mode="openai") as judge:
        plain = run_harness(RunOptions(cases=load_cases(CANONICAL), metrics=["inhouse.span"],
                                       judge=JudgeConfig(url=judge.url, model=MODEL), cache_mode="live",
                                       out_dir=str(tmp_path), run_id="plain", progress=False, concurrency=24))
        assert set(plain.counts["inhouse.span"]) <= set(FINAL)
        service = judge.judge.batches
        bad: set = set()
        if fault == "error lines":
            def errs(cid):   # every third request of the first batch
                if service.created == 1 and int(cid[1:].split("|")[0]) % 3 == 0:
                    bad.add(cid)
                    return True
                return False
            service.error_ids = errs
        else:
            service.end = fault
        out = run_harness(_opts(judge.url, tmp_path, "b"))
        cells = _cells(tmp_path, "b")
        errors = {k: v for k, v in cells.items() if v[0] == "error"}
        assert errors and all(v[1] is None for v in errors.values())
        if fault == "error lines":
            assert bad and all("the judge's batch gave an error" in v[2] for v in errors.values()), errors
        else:
            assert len(errors) == out.counts["inhouse.span"]["error"] and all(f"ended '{fault}'" in v[2] for v in
                                                                              errors.values()), errors
        with sqlite3.connect(os.path.join(str(tmp_path), "b", "store.sqlite")) as db:
            assert not db.execute("SELECT COUNT(*) FROM judge_batches WHERE state != 'ended'").fetchone()[0]
            assert db.execute("SELECT COUNT(*) FROM judge_batch_requests WHERE state = 'error'").fetchone()[0]
        service.error_ids, service.end = None, None
        before = service.created
        run_harness(_opts(judge.url, tmp_path, "b"))
        assert service.created > before
    again = _cells(tmp_path, "b")
    assert {k: v[:2] for k, v in again.items()} == {k: v[:2] for k, v in _cells(tmp_path, "plain").items()}


def test_a_cached_reply_never_enters_a_batch(tmp_path):
    """Record mode: a second run whose calls are all in the judge cache creates no batch and gets the same scores."""
    with serve(mode="openai") as judge:
        cache = str(tmp_path / "cache.sqlite")
        run_harness(_opts(judge.url, tmp_path, "first", cache_mode="record", cache_path=cache))
        service = judge.judge.batches
        made = service.created
        assert made > 0
        calls = judge.stats()["calls"]
        run_harness(_opts(judge.url, tmp_path, "second", cache_mode="record", cache_path=cache, reuse_cells=False))
        assert service.created == made and judge.stats()["calls"] == calls
    with sqlite3.connect(str(tmp_path / "second" / "store.sqlite")) as db:
        assert db.execute("SELECT SUM(calls), SUM(cache_hits) FROM cells").fetchone()[0] > 0
        hits, n = db.execute("SELECT SUM(cache_hits), SUM(calls) FROM cells").fetchone()
        assert hits == n
        assert not db.execute("SELECT COUNT(*) FROM judge_batches").fetchone()[0]
    assert {k: v[:2] for k, v in _cells(tmp_path, "second").items()} == \
        {k: v[:2] for k, v in _cells(tmp_path, "first").items()}


def test_money_is_at_the_batch_price(tmp_path):
    """The run spec's price table is the batch price: the table's batch fields where it has them, else the list
    price times the factor; the terminal's money line uses it."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({MODEL: {"input": 2.0, "output": 8.0},
                                  "other": {"input": 1.0, "output": 1.0, "batch_input": 0.3, "batch_output": 0.4}}))
    with serve(mode="openai") as judge:
        p = subprocess.run([*_cmd(judge.url, tmp_path, *BATCH, "--prices", str(prices), "--batch-price-factor", "0.25")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    with open(tmp_path / "k" / "spec.json") as fh:
        spec = json.load(fh)
    assert spec["prices"]["models"] == {MODEL: {"input": 0.5, "output": 2.0}, "other": {"input": 0.3, "output": 0.4}}
    assert spec["judge_batch"]["price_factor"] == 0.25
    with sqlite3.connect(str(tmp_path / "k" / "store.sqlite")) as db:
        bp, bc = db.execute("SELECT SUM(billed_prompt_tokens), SUM(billed_completion_tokens) FROM cells").fetchone()
    money = (bp * 0.5 + bc * 2.0) / 1e6
    line = next(x for x in p.stdout.splitlines() if x.startswith("judge traffic:"))
    assert f"money: {money:.4g}" in line, (line, money)
    # the report with another price table (harness report --prices) reads it at the run's batch price too
    from harness.judge.accounting import prices_from_args
    from harness.reports.analysis.cost import judge_price
    from harness.reports.build import build

    later = tmp_path / "later.json"
    later.write_text(json.dumps({MODEL: {"input": 4.0, "output": 12.0}}))
    table = prices_from_args(type("Args", (), {"prices": str(later), "price_in": None, "price_out": None})(), MODEL)
    rep = build(str(tmp_path / "k"), str(tmp_path / "report"), prices=table).report
    price, note = judge_price(rep.data)
    assert (price.input, price.output) == (1.0, 3.0) and "batch price" in note, note


@pytest.mark.parametrize("extra, message", [
    (["--judge-batch-size", "0"], "harness: --judge-batch: judge batch size must be 1 to 50,000, not 0"),
    (["--judge-batch-poll", "-1"], "harness: --judge-batch: judge batch poll_s must be a number of seconds >= 0, not -1.0"),
    (["--ray", "auto"], "harness: --judge-batch gathers the run's judge calls in one process: leave out --ray"),
])
def test_bad_batch_options_exit_2_with_one_line(tmp_path, extra, message):
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span",
                        "--judge-batch", *extra, "--out", str(tmp_path), "--no-progress"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.strip() == message, p.stderr


def test_a_batch_the_judge_no_longer_knows_is_sent_again(tmp_path):
    """The embedded reference judge's batches end with its process: a resumed run whose pending batch the judge
    answers 404 for marks it lost and sends its calls again, in a new batch, and scores as before."""
    first = _eval(None, tmp_path, "r", judge_batch=FAST)
    store = first.store_path
    with sqlite3.connect(store) as db:   # as if the run had been killed while its first batch was pending
        bid = db.execute("SELECT batch_id FROM judge_batches ORDER BY created LIMIT 1").fetchone()[0]
        db.execute("UPDATE judge_batches SET state = 'waiting' WHERE batch_id = ?", (bid,))
        db.execute("UPDATE judge_batch_requests SET state = 'waiting' WHERE batch_id = ?", (bid,))
        cells = [r for r in db.execute("SELECT case_id, metric FROM judge_batch_requests WHERE batch_id = ?", (bid,))]
        db.executemany("UPDATE cells SET status = 'error', score = NULL WHERE case_id = ? AND metric = ?", cells)
    again = _eval(None, tmp_path, "r", judge_batch=FAST)
    assert _scores(again).equals(_scores(first))
    with sqlite3.connect(store) as db:
        states = {b: (state, status) for b, state, status in db.execute("SELECT batch_id, state, status FROM judge_batches")}
        resent = db.execute("SELECT COUNT(*) FROM judge_batch_requests r JOIN judge_batches b USING (batch_id) "
                            "WHERE b.created > (SELECT created FROM judge_batches WHERE batch_id = ?)",
                            (bid,)).fetchone()[0]
    assert states.pop(bid) == ("ended", "lost") and set(states.values()) == {("ended", "completed")}
    assert resent >= len(cells)


def test_a_call_record_names_its_batch_and_the_reply_comes_back_unchanged():
    """Through the gateway: the vendor's call gets the judge's reply as the judge would have given it alone,
    and the call record names the batch; an error line of the batch is the call's error, its status 502."""
    import asyncio

    from harness.judge.batch import BatchUpstream
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import Cell, HttpUpstream

    body = {"model": MODEL, "messages": [{"role": "user", "content": "Is the sky green?"}], "temperature": 0}

    async def ask(url, cell):
        inner = HttpUpstream(url, MODEL, None)
        up = BatchUpstream(inner, BatchConfig(**FAST))
        gw = Gateway(up, batch=up).attach()
        gw.budgets.open(cell, 60)
        try:
            got = await gw.handle(cell, body)
            return got, gw.take(cell.run, cell.case, cell.metric)[1]
        finally:
            await gw.aclose()

    with serve(mode="openai") as judge:
        (status, reply), calls = asyncio.run(ask(judge.url, Cell("r", "c", "m")))
        assert status == 200 and reply == judge.judge.complete(body)
        assert [c.batch for c in calls] == list(judge.judge.batches.batches) and calls[0].ok
        judge.judge.batches.error_ids = lambda cid: True
        (status, reply), calls = asyncio.run(ask(judge.url, Cell("r", "c2", "m")))
    assert status == 502 and "the judge's batch gave an error" in reply["error"]["message"]
    assert not calls[0].ok and calls[0].batch.startswith("batch-") and calls[0].error.startswith("batch batch-")


def test_opik_waits_for_its_batch_with_the_cells_client_timeout(tmp_path, monkeypatch):
    """Opik's judge model gives each call 60 s of its own; in batch mode, where a call waits hours for its batch,
    the adapter gives it the cell's client timeout (which grows by the batch's wait) instead. Outside batch mode
    Opik keeps its own. Seen in the arguments Opik hands LiteLLM."""
    import litellm

    seen: list = []
    real = litellm.acompletion

    async def spy(*args, **kwargs):
        seen.append(kwargs.get("timeout"))
        return await real(*args, **kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    with serve(mode="openai") as judge:
        plain = _eval(judge.url, tmp_path, "plain", ("opik.hallucination",), cache_mode="live")
        n = len(seen)
        batch = _eval(judge.url, tmp_path, "batch", ("opik.hallucination",), cache_mode="live", judge_batch=FAST)
    assert plain.counts == batch.counts and set(batch.counts["opik.hallucination"]) <= set(FINAL)
    assert n and all(t.read == 60.0 and t.connect == 10.0 for t in seen[:n]), seen[:n]   # Opik's own (httpx)
    wait = BatchConfig(**FAST).wait_s
    assert len(seen) > n and all(isinstance(t, float) and t >= wait for t in seen[n:]), seen[n:]
