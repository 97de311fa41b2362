"""Fault injection (harness/judge/faults.py) and the harness-owned retries, through the real gateway.

Every check reads what was recorded (the injector's attempt log, the gateway ledger and call
records), never the wall clock of the test.
"""
import http.server
import json
import threading

from harness.judge.cache import request_key
from harness.judge.faults import KINDS, FaultInjector, FaultSpec, FaultyUpstream, corrupt, decide
from harness.judge.gateway import Gateway
from harness.judge.upstream import HttpUpstream, ReferenceUpstream, RetryPolicy, UpstreamError

import httpx
import pytest

JSON_BODY = {"model": "m", "messages": [{"role": "user", "content": "rate it"}], "temperature": 0,
             "response_format": {"type": "json_object"}}
SCHEMA = {"type": "object", "required": ["claims", "n"],
          "properties": {"claims": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}}}
SCHEMA_BODY = {**JSON_BODY, "response_format": {"type": "json_schema",
                                                "json_schema": {"name": "Claims", "schema": SCHEMA, "strict": True}}}
TEXT_BODY = {k: v for k, v in JSON_BODY.items() if k != "response_format"}


class Fixed:
    """An upstream that always answers ``content`` (or raises ``error``)."""

    kind, model = "fixed", "m"

    def __init__(self, content='{"claims": ["a", "b"], "n": 2}', error=None):
        self.content, self.error, self.calls = content, error, 0

    def scope(self, cell):
        return ""

    async def complete(self, cell, body):
        self.calls += 1
        if self.error is not None:
            raise self.error
        return {"id": "x", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": self.content}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}

    async def aclose(self):
        pass


def _post(gw, body, case="c", metric="m"):
    return httpx.post(f"{gw.cell_url('r', case, metric)}/chat/completions", json=body, timeout=60)


def _seed_for(spec, wanted, body=JSON_BODY, case="c", metric="m"):
    """The first seed whose attempts 1.. fault exactly as ``wanted`` (None = passes): decisions are a
    pure function of (seed, case, metric, request key, occurrence, attempt), so a test can pick one."""
    key = request_key(body)
    for seed in range(10_000):
        if [decide(spec, seed, case, metric, key, a) for a in range(1, len(wanted) + 1)] == list(wanted):
            return seed
    raise AssertionError(f"no seed gives {wanted}")


# --- the spec ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,described", [
    ("500=0.05,429=0.05,timeout=0.01,malformed=0.02,truncated=0.02,schema=0.02",
     "500=0.05,429=0.05,timeout=0.01,malformed=0.02,truncated=0.02,schema=0.02"),
    ("schema=0.1, 500=0.2", "500=0.2,schema=0.1"),
    ("429=1,retry_after=0.25", "429=1,retry_after=0.25"),
], ids=["all-kinds", "reordered-spaces", "retry-after"])
def test_spec_parses(text, described):
    assert FaultSpec.parse(text).describe() == described


@pytest.mark.parametrize("text,message", [
    ("", "--faults: empty spec; expected e.g. 500=0.05,429=0.05,timeout=0.01"),
    ("500", "--faults: '500' is not KIND=RATE"),
    ("503=0.1", "--faults: unknown fault kind '503'; known: 500, 429, timeout, malformed, truncated, schema, "
                "retry_after"),
    ("500=lots", "--faults: 500='lots' is not a number"),
    ("500=1.5", "--faults: 500=1.5 is not a probability between 0 and 1"),
    ("500=0.6,429=0.6", "--faults: the rates add up to 1.2; they must add up to at most 1"),
    ("500=0.1,500=0.2", "--faults: 500 given twice"),
    ("retry_after=-1", "--faults: retry_after=-1 must be between 0 and 3600 seconds"),
], ids=["empty", "no-rate", "unknown-kind", "not-a-number", "above-1", "sum-above-1", "twice", "negative-wait"])
def test_spec_errors_name_the_item(text, message):
    with pytest.raises(ValueError) as e:
        FaultSpec.parse(text)
    assert str(e.value) == message


# --- decisions: seeded, per request, independent of order and concurrency ------------------------

def test_decisions_follow_the_rates_and_depend_only_on_their_inputs():
    spec = FaultSpec.parse("500=0.1,429=0.1,timeout=0.05,malformed=0.05,truncated=0.05,schema=0.05")
    draws = [decide(spec, 7, f"case-{i % 50}", "m", f"key-{i}", 1 + i % 4) for i in range(20_000)]
    frac = {k: draws.count(k) / len(draws) for k in KINDS}
    for kind, rate in spec.rates:
        assert abs(frac[kind] - rate) < 0.01, (kind, frac[kind], rate)
    assert abs(draws.count(None) / len(draws) - 0.6) < 0.01
    # the same inputs give the same answer; the seed, the attempt and the occurrence each change it
    again = [decide(spec, 7, f"case-{i % 50}", "m", f"key-{i}", 1 + i % 4) for i in range(20_000)]
    assert again == draws
    other_seed = [decide(spec, 8, f"case-{i % 50}", "m", f"key-{i}", 1 + i % 4) for i in range(20_000)]
    assert sum(a != b for a, b in zip(draws, other_seed)) > 5_000
    assert any(decide(spec, 7, "c", "m", "k", 1, 0) != decide(spec, 7, "c", "m", "k", 1, n) for n in range(1, 20))


def test_content_corruptions():
    good = '{"claims": ["a", "b"], "n": 2}'
    assert not _is_json(corrupt("malformed", good)) and "claims" in corrupt("malformed", good)
    assert not _is_json(corrupt("truncated", good))
    missing, wrong = corrupt("schema", good, 0.1), corrupt("schema", good, 0.9)
    assert json.loads(missing) == {"n": 2}
    assert json.loads(wrong) == {"claims": "a b", "n": 2}
    assert json.loads(corrupt("schema", "['Hello there.', 'It is 5 km.']")) == {"unexpected": "shape"}
    # a text-mode list reply, made malformed, is no longer a Python literal either (TruLens eval()s it)
    with pytest.raises(SyntaxError):
        compile(corrupt("malformed", "['Hello there.', 'It is 5 km.']"), "<reply>", "eval")


def _is_json(s):
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


# --- retries through the real gateway --------------------------------------------------------------

def test_429_with_retry_after_waits_then_succeeds():
    spec = FaultSpec.parse("429=0.5,retry_after=1")
    seed = _seed_for(spec, ["429", None])
    up = FaultyUpstream(Fixed(), spec, seed)
    with Gateway(up, policy=RetryPolicy(max_attempts=4, base_delay_s=0.001)) as gw:
        r = _post(gw, JSON_BODY)
        ledger, calls = gw.take("r", "c", "m")
    assert r.status_code == 200
    assert [(e.attempt, e.kind) for e in up.events] == [(1, "429"), (2, None)]
    assert up.events[1].t - up.events[0].t >= 0.99       # the recorded attempts are Retry-After apart
    assert calls[0].attempts == 2 and ledger.retries == 1 and ledger.errors == 0
    assert calls[0].latency_ms >= 990                    # the wait is inside the call, in the ledger


def test_retries_stop_at_max_attempts_and_the_error_is_recorded():
    up = FaultyUpstream(Fixed(), FaultSpec.parse("500=1"), 0)
    with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
        r = _post(gw, JSON_BODY)
        ledger, calls = gw.take("r", "c", "m")
    assert r.status_code == 500 and r.json()["error"]["message"] == "injected fault: judge HTTP 500"
    assert [e.attempt for e in up.events] == [1, 2, 3] and up.inner.calls == 0
    assert (ledger.calls, ledger.errors, ledger.retries) == (1, 1, 2)
    assert calls[0].attempts == 3 and calls[0].error == "injected fault: judge HTTP 500"


def test_a_non_retryable_400_is_not_retried():
    up = FaultyUpstream(Fixed(error=UpstreamError("judge HTTP 400: bad request", status=400, retryable=False)),
                        FaultSpec.parse("500=0"), 0)
    with Gateway(up, policy=RetryPolicy(max_attempts=4, base_delay_s=0.001)) as gw:
        r = _post(gw, JSON_BODY)
        ledger, calls = gw.take("r", "c", "m")
    assert r.status_code == 400 and up.inner.calls == 1 and len(up.events) == 1
    assert calls[0].attempts == 1 and ledger.retries == 0 and ledger.errors == 1


def test_an_unrecognised_reference_request_is_a_400_and_not_retried(canonical):
    case = canonical.by_id("cookie-yield")
    up = FaultyUpstream(ReferenceUpstream({("r", case.id): case}), FaultSpec.parse("500=0"), 0)
    with Gateway(up, policy=RetryPolicy(max_attempts=4, base_delay_s=0.001)) as gw:
        r = _post(gw, TEXT_BODY, case=case.id, metric="inhouse.span")
        _, calls = gw.take("r", case.id, "inhouse.span")
    assert r.status_code == 400 and "unrecognised request" in r.json()["error"]["message"]
    assert calls[0].attempts == 1


def test_a_hang_is_cut_by_the_per_call_timeout_and_retried():
    spec = FaultSpec.parse("timeout=0.5")
    seed = _seed_for(spec, ["timeout", None])
    up = FaultyUpstream(Fixed(), spec, seed)
    with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001, timeout_s=0.2)) as gw:
        r = _post(gw, JSON_BODY)
        ok_ledger, ok_calls = gw.take("r", "c", "m")
    assert r.status_code == 200 and ok_calls[0].attempts == 2 and ok_ledger.retries == 1
    up = FaultyUpstream(Fixed(), FaultSpec.parse("timeout=1"), 0)
    with Gateway(up, policy=RetryPolicy(max_attempts=2, base_delay_s=0.001, timeout_s=0.2)) as gw:
        r = _post(gw, JSON_BODY)
        _, calls = gw.take("r", "c", "m")
    assert r.status_code == 504 and r.json()["error"]["message"] == "judge call timed out after 0.2s"
    assert calls[0].attempts == 2


@pytest.mark.parametrize("kind,body,problem", [
    ("malformed", JSON_BODY, "response_format json_object asked, reply is not JSON"),
    ("truncated", JSON_BODY, "response_format json_object asked, reply is not JSON"),
    ("malformed", SCHEMA_BODY, "response_format json_schema asked, reply is not JSON"),
    ("schema", SCHEMA_BODY, "reply lacks required key 'claims' of schema Claims"),
], ids=["malformed-json-object", "truncated-json-object", "malformed-json-schema", "schema-missing-key"])
def test_content_faults_on_json_requests_reach_the_caller_observed(kind, body, problem):
    """A content fault is not a transport fault: the gateway hands the reply on as it came (the
    vendor's parser, re-asks and fallbacks decide, as in stock use), one attempt, the misfit recorded."""
    seed = next(s for s in range(10_000) if _schema_variant(FaultSpec.parse(f"{kind}=1"), s, body, 1) < 0.5) \
        if kind == "schema" else 0
    up = FaultyUpstream(Fixed(), FaultSpec.parse(f"{kind}=1"), seed)
    with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
        r = _post(gw, body)
        ledger, calls = gw.take("r", "c", "m")
    u = _schema_variant(FaultSpec.parse(f"{kind}=1"), seed, body, 1)
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == corrupt(kind, Fixed().content, u)
    assert calls[0].attempts == 1 and ledger.retries == 0
    assert calls[0].reply_fit == problem and ledger.format_misfits == 1


def _schema_variant(spec, seed, body, attempt):
    from harness.judge.faults import _uniforms

    return _uniforms(seed, "c", "m", request_key(body), attempt)[1]


def test_a_wrong_typed_value_is_handed_on_and_recorded_as_a_misfit():
    up = Fixed('{"claims": "a b", "n": 2}')
    with Gateway(up, policy=RetryPolicy(max_attempts=2, base_delay_s=0.001)) as gw:
        r = _post(gw, SCHEMA_BODY)
        _, calls = gw.take("r", "c", "m")
    assert r.status_code == 200 and up.calls == 1
    assert r.json()["choices"][0]["message"]["content"] == '{"claims": "a b", "n": 2}'
    assert calls[0].reply_fit == "reply does not fit schema Claims: $.claims is str, expected array"


def test_content_faults_on_text_requests_reach_the_caller():
    """A text-mode request has no shape the gateway can check: the vendor's own parsing applies."""
    for kind in ("malformed", "truncated", "schema"):
        up = FaultyUpstream(Fixed("['Hello there.', 'It is 5 km.']"), FaultSpec.parse(f"{kind}=1"), 0)
        with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
            r = _post(gw, TEXT_BODY)
            _, calls = gw.take("r", "c", "m")
        choice = r.json()["choices"][0]
        assert r.status_code == 200 and calls[0].attempts == 1
        assert choice["message"]["content"] == corrupt(kind, "['Hello there.', 'It is 5 km.']", 0)
        assert choice["finish_reason"] == ("length" if kind == "truncated" else "stop")


def test_an_upstream_bug_is_a_recorded_error_naming_it():
    up = Fixed(error=RuntimeError("handler bug"))
    with Gateway(up, policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
        r = _post(gw, JSON_BODY)
        ledger, calls = gw.take("r", "c", "m")
    assert r.status_code == 500 and up.calls == 1
    assert r.json()["error"]["message"] == "judge upstream failed: RuntimeError: handler bug"
    assert ledger.calls == 1 and ledger.errors == 1 and calls[0].error == r.json()["error"]["message"]


# --- a real HTTP judge: Retry-After read from the header ----------------------------------------------

class _Flaky(http.server.BaseHTTPRequestHandler):
    """429 with ``Retry-After: 1`` on the first request, then a JSON reply."""

    hits: list = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        type(self).hits.append(self.headers.get("authorization"))
        if len(type(self).hits) == 1:
            self.send_response(429)
            self.send_header("Retry-After", "1")
            body = b'{"error": {"message": "slow down"}}'
        else:
            self.send_response(200)
            body = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"a": 1}'}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_http_judge_429_retry_after_header_is_honoured():
    _Flaky.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        up = HttpUpstream(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", None, timeout_s=10)
        inj = FaultInjector(FaultSpec.parse("500=0"))     # pass-through wrapper: records the attempts
        with Gateway(inj(up), policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
            r = _post(gw, JSON_BODY)
            ledger, calls = gw.take("r", "c", "m")
    finally:
        srv.shutdown()
    assert r.status_code == 200 and len(_Flaky.hits) == 2
    ev = inj.events
    assert [e.attempt for e in ev] == [1, 2] and ev[1].t - ev[0].t >= 0.99
    assert calls[0].attempts == 2 and ledger.retries == 1


# --- whole runs: the same seed faults the same calls, whatever the concurrency ----------------------

SPEC = "500=0.08,429=0.08,timeout=0.04,malformed=0.06,truncated=0.06,schema=0.06,retry_after=0.01"


def _faulted_run(canonical, tmp_path, run_id, seed, concurrency):
    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run
    from harness.store.runstore import RunStore

    cases = CaseSet(canonical.path, canonical.cases[:12], canonical.sha256)
    inj = FaultInjector(FaultSpec.parse(SPEC), seed=seed)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id=run_id,
                         progress=False, concurrency=concurrency, call_timeout_s=0.3, retry_base_delay_s=0.001,
                         upstream_wrapper=inj))
    s = RunStore.open(out.store_path)
    try:
        cells = s.rows("SELECT case_id, status, score, reason, calls, retries FROM cells ORDER BY case_id")
        calls = s.rows("SELECT case_id, seq, attempts, ok, request_key, error FROM calls ORDER BY case_id, seq")
    finally:
        s.close()
    faulted = sorted((e.case, e.key, e.occurrence, e.attempt, e.kind) for e in inj.events if e.kind)
    return faulted, cells, calls


def test_two_runs_with_the_same_seed_fault_the_same_calls(canonical, tmp_path):
    a = _faulted_run(canonical, tmp_path, "a", seed=7, concurrency=1)
    b = _faulted_run(canonical, tmp_path, "b", seed=7, concurrency=8)   # another run id, other timing
    c = _faulted_run(canonical, tmp_path, "c", seed=8, concurrency=8)
    assert len(a[0]) >= 5 and {k for *_, k in a[0]} >= {"500", "429", "malformed"}
    assert a == b                  # same faults, same stored cells and calls (attempts, errors)
    assert a[0] != c[0]            # another seed, other faults


# --- the CLI --------------------------------------------------------------------------------------

def test_cli_fault_run_prints_the_spec_and_loses_nothing(tmp_path, capsys):
    from harness.console import main

    rc = main(["run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "f", "--no-progress",
               "--faults", "500=0.1,429=0.1,malformed=0.1,retry_after=0.01", "--fault-seed", "7"])
    out = capsys.readouterr().out
    assert "faults: 500=0.1,429=0.1,malformed=0.1,retry_after=0.01 per attempt (seed 7)" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("  inhouse.span  scored "))
    counts = [int(w.rstrip(",")) for w in line.split() if w.rstrip(",").isdigit()]
    assert sum(counts) == 24                                  # every cell accounted for
    assert rc == (1 if counts[-1] else 0)                     # exit 1 exactly when a cell errored


def test_cli_run_where_every_judge_call_fails_exits_1_with_reasons(tmp_path, capsys):
    from harness.console import main
    from harness.store.runstore import RunStore

    rc = main(["run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "dead", "--no-progress",
               "--faults", "500=1", "--retries", "1"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "inhouse.span  scored 0, unscored 1, unscored by the vendor 0, not applicable 0, errored 23" in out
    s = RunStore.open(str(tmp_path / "dead"))
    try:
        rows = s.rows("SELECT case_id, status, score, reason, retries FROM cells")
    finally:
        s.close()
    assert len(rows) == 24                                     # nothing dropped
    for cid, status, score, reason, retries in rows:
        if cid == "empty-answer":                              # makes no judge call
            assert status == "unscored"
            continue
        assert status == "error" and score is None, cid        # never scored 0
        assert "injected fault: judge HTTP 500" in reason and retries == 1, (cid, reason)


@pytest.mark.parametrize("argv,message", [
    (["--faults", "oops=1"], "harness: --faults: unknown fault kind 'oops'"),
    (["--faults", "500=2"], "harness: --faults: 500=2 is not a probability between 0 and 1"),
    (["--fault-seed", "3"], "harness: --fault-seed needs --faults"),
], ids=["unknown-kind", "bad-rate", "seed-alone"])
def test_cli_bad_fault_options_exit_2_and_create_nothing(argv, message, tmp_path, capsys):
    from harness.console import main

    assert main(["run", "--out", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err.startswith(message)
    assert not any(tmp_path.iterdir())


def test_settle_waits_for_a_call_still_in_flight():
    """A cell can end while one of its calls is still being answered (a vendor that sends two steps at
    once and raises on the first failure); the runner settles before it takes the ledger."""
    import asyncio

    class Slow(Fixed):
        async def complete(self, cell, body):
            await asyncio.sleep(0.3)
            return await super().complete(cell, body)

    with Gateway(Slow()) as gw:
        t = threading.Thread(target=_post, args=(gw, JSON_BODY))
        t.start()
        for _ in range(500):
            if gw.inflight("r", "c", "m"):
                break
            threading.Event().wait(0.005)
        assert gw.inflight("r", "c", "m") == 1
        asyncio.run(gw.settle("r", "c", "m", 30))
        ledger, calls = gw.take("r", "c", "m")
        t.join()
    assert gw.inflight("r", "c", "m") == 0 and ledger.calls == 1 and calls[0].ok


def test_a_corrupted_reply_is_never_cached(tmp_path):
    """A text-mode reply the gateway cannot check passes through corrupted, but record mode must not
    store it: a later run would replay the fault without --faults."""
    from harness.judge.cache import JudgeCache

    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    up = FaultyUpstream(Fixed("['Hello there.']"), FaultSpec.parse("malformed=1"), 0)
    with Gateway(up, cache=cache, mode="record") as gw:
        r = _post(gw, TEXT_BODY)
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"].startswith("Here is the JSON")
    assert len(cache) == 0
    with Gateway(FaultyUpstream(Fixed("['Hello there.']"), FaultSpec.parse("malformed=0"), 0), cache=cache,
                 mode="record") as gw:
        assert _post(gw, TEXT_BODY).status_code == 200
    assert len(cache) == 1


def test_a_finished_cell_accepts_no_more_calls():
    """A vendor's background task can outlive its cell; once the runner has taken the cell's ledger, a
    late request is refused before it reaches the judge, so no call is made that no ledger records."""
    up = Fixed()
    with Gateway(up) as gw:
        assert _post(gw, JSON_BODY).status_code == 200
        ledger, _ = gw.take("r", "c", "m")
        late = _post(gw, JSON_BODY)
        other = _post(gw, JSON_BODY, case="c2")
    assert ledger.calls == 1 and up.calls == 2            # the late request never reached the judge
    assert late.status_code == 409
    assert late.json()["error"]["message"] == "cell r/c/m is finished; no more judge calls for it"
    assert other.status_code == 200
