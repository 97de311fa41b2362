"""Security: no API key anywhere a run writes; loopback only; no judge reply is ever executed; judge
text in the report is escaped.

The key check plants a random canary key in an environment variable, runs real-judge runs against
(a) the standalone reference judge, (b) an unreachable URL and (c) a judge that echoes the request
headers (the Authorization header included) into its error body, then searches every file the runs
and the judge server wrote (the run directory, the cache, HOME, TMPDIR, the working directory) and all
captured output for the key's bytes. The echo judge is the positive control: it proves the key was
really sent, so its absence everywhere else means something.
"""
import http.server
import json
import os
import re
import secrets
import subprocess
import sys
import threading

from harness.judge.gateway import Gateway

import pytest

from tests.conftest import CANONICAL

KEY_ENV = "HARNESS_TEST_CANARY_KEY"
SMALL = ("cookie-yield", "trivial-greeting", "abstain-answerable", "citation-misattributed", "empty-answer")


def _small_cases(path):
    with open(CANONICAL, encoding="utf-8") as fh:
        lines = [ln for ln in fh if json.loads(ln)["id"] in SMALL]
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


class _Echo(http.server.BaseHTTPRequestHandler):
    """A judge that rejects every request with 401 and echoes the request headers in the body."""

    seen: list = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization")
        type(self).seen.append(auth)
        body = json.dumps({"error": {"message": f"bad key {auth!r}; headers: {dict(self.headers)}"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _listening_address(port: int) -> str | None:
    """The local address a LISTEN socket on ``port`` is bound to (Linux /proc), e.g. '127.0.0.1'."""
    import ipaddress

    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as fh:
            for line in list(fh)[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, p = local.split(":")
                if int(p, 16) == port and state == "0A":
                    raw = bytes.fromhex(addr)
                    if len(raw) == 4:
                        return str(ipaddress.IPv4Address(raw[::-1]))
                    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    return str(ipaddress.IPv6Address(words))
    return None


def test_no_key_in_any_file_or_output(tmp_path):
    key = f"sk-harness-canary-{secrets.token_hex(16)}"
    home, tmp, cwd, out = (tmp_path / d for d in ("home", "tmp", "cwd", "out"))
    for d in (home, tmp, cwd):
        d.mkdir()
    env = {**os.environ, KEY_ENV: key, "HOME": str(home), "TMPDIR": str(tmp)}
    cases = _small_cases(tmp_path / "small.jsonl")
    outputs = []

    server = subprocess.Popen([sys.executable, "-m", "harness", "judge", "serve", "--port", "0", "--cases", cases],
                              cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(server.stdout.readline())
        port = int(info["url"].rsplit(":", 1)[1].split("/")[0])
        assert info["url"].startswith("http://127.0.0.1:")
        bound = _listening_address(port)
        assert bound in (None, "127.0.0.1"), bound          # None: no /proc here, nothing to check

        def harness_run(run_id, url, *extra):
            p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", cases, "--out", str(out),
                                "--run-id", run_id, "--judge-url", url, "--judge-model", "reference-judge",
                                "--judge-key-env", KEY_ENV, "--cache", "record", "--no-progress", *extra],
                               cwd=str(cwd), env=env, capture_output=True, text=True, timeout=600)
            outputs.extend([p.stdout, p.stderr])
            return p

        ok = harness_run("served", info["url"])
        assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
        # its own cache: with the first run's cache every request would be a hit and nothing would fail
        dead = harness_run("unreachable", "http://127.0.0.1:9/v1", "--retries", "0", "--metrics", "inhouse.span",
                           "--cache-path", str(out / "unreachable-cache.sqlite"))
        assert dead.returncode == 1 and "judge unreachable" in dead.stdout

        _Echo.seen = []
        echo = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
        threading.Thread(target=echo.serve_forever, daemon=True).start()
        try:
            echoed = harness_run("echoed", f"http://127.0.0.1:{echo.server_address[1]}/v1", "--metrics",
                                 "inhouse.span", "--cache-path", str(out / "echoed-cache.sqlite"))
        finally:
            echo.shutdown()
        assert echoed.returncode == 1
        assert _Echo.seen and set(_Echo.seen) == {f"Bearer {key}"}       # positive control: the key was sent
        assert "bad key 'Bearer ***'" in echoed.stdout                    # ... and redacted from the echo
    finally:
        server.terminate()
        s_out, s_err = server.communicate(timeout=10)
        outputs.extend([s_out, s_err])

    written = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    assert any(p.endswith("store.sqlite") for p in written) and any(p.endswith("judge-cache.sqlite") for p in written)
    assert any(p.endswith("index.html") for p in written)
    needle = key.encode()
    leaks = [p for p in written if needle in open(p, "rb").read()]
    leaks += [f"captured output #{i}" for i, text in enumerate(outputs) if key in (text or "")]
    assert leaks == []


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", ""])
def test_gateway_refuses_a_non_loopback_host(host):
    from harness.judge.upstream import ReferenceUpstream

    with pytest.raises(ValueError, match="the gateway binds loopback only"):
        Gateway(ReferenceUpstream({}), host=host)


def test_a_run_gateway_is_bound_to_loopback():
    from harness.judge.upstream import ReferenceUpstream

    with Gateway(ReferenceUpstream({})) as gw:
        addrs = [s.getsockname()[0] for site in gw._runner.sites for s in site._server.sockets]
        bound = _listening_address(gw.port)
    assert addrs == ["127.0.0.1"] and bound in (None, "127.0.0.1")


def test_http_upstream_repr_and_errors_hide_the_key(monkeypatch):
    from harness.judge.faults import FaultInjector, FaultSpec
    from harness.judge.upstream import HttpUpstream

    key = f"sk-harness-canary-{secrets.token_hex(8)}"
    monkeypatch.setenv(KEY_ENV, key)
    up = HttpUpstream("http://127.0.0.1:9/v1", "m", KEY_ENV)
    wrapped = FaultInjector(FaultSpec.parse("500=0.1"))(up)
    assert key not in repr(up) and key not in repr(wrapped)   # (it is in memory, by design)
    assert wrapped.redact(f"echo: Bearer {key}") == "echo: Bearer ***"


# --- no judge reply is ever executed ---------------------------------------------------------------

class Hostile:
    """Wraps an upstream: every reply's content becomes Python code that would create ``marker`` if
    anything evaluated it, still shaped as a list so a careless ``eval`` would accept the result."""

    def __init__(self, inner, marker):
        self.inner, self.kind, self.model = inner, inner.kind, inner.model
        self.payload = (f"__import__('pathlib').Path({str(marker)!r}).touch() or "
                        f"__import__('os').system('touch {marker}') or ['Hello.']")

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        resp = await self.inner.complete(cell, body)
        resp = json.loads(json.dumps(resp))
        resp["choices"][0]["message"]["content"] = self.payload
        return resp

    async def aclose(self):
        await self.inner.aclose()


def test_no_judge_reply_is_executed_by_any_metric(canonical, tmp_path):
    """Every metric, every reply hostile (TruLens's trivial filter eval()s its reply unless shimmed)."""
    from harness.cases.load import CaseSet
    from harness.metric import registry
    from harness.run.runner import RunOptions, run
    from harness.store.runstore import RunStore

    marker = tmp_path / "pwned"
    cases = CaseSet(canonical.path, tuple(canonical.by_id(c) for c in ("cookie-yield", "trivial-greeting")),
                    canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=registry.names(), out_dir=str(tmp_path), run_id="hostile",
                         progress=False, retry_attempts=1, upstream_wrapper=lambda up: Hostile(up, marker)))
    assert not marker.exists()
    s = RunStore.open(out.store_path)
    try:
        rows = s.rows("SELECT metric, case_id, status, reason FROM cells")
    finally:
        s.close()
    assert len(rows) == 2 * len(registry.names())
    for metric, case_id, status, reason in rows:      # each cell ended somewhere, with a reason unless scored
        assert status in ("scored", "vendor_nan", "unscored", "not_applicable", "error"), (metric, case_id)
        assert status == "scored" or reason, (metric, case_id, status)


def test_trulens_trivial_filter_reply_is_not_executed(canonical, tmp_path):
    """The TruLens adapter's shim, cross-checked at the harness level: only the filter's reply is hostile,
    so the rest of the cell runs as usual and the filter's failure path (keep every sentence) is taken."""
    from harness.metric import registry

    if "trulens.groundedness" not in registry.names():
        pytest.skip("no trulens.* metric registered")
    from harness.judge.upstream import ReferenceUpstream

    from tests.helpers.scoring import score_one

    marker = tmp_path / "pwned-trivial"
    case = canonical.by_id("cookie-yield")

    class TrivialOnly(Hostile):
        async def complete(self, cell, body):
            if body.get("response_format"):
                return await self.inner.complete(cell, body)
            return await super().complete(cell, body)

    up = TrivialOnly(ReferenceUpstream({("test", case.id): case}), marker)
    got = score_one("trulens.groundedness", case, upstream=up)
    assert not marker.exists()
    assert got.result.status in ("scored", "error", "vendor_nan"), got.result
    if got.result.status != "scored":
        assert got.result.reason


# --- judge text reaches the report escaped ----------------------------------------------------------

class ScriptInReasons:
    """Wraps an upstream: every string under a reason-like key of a JSON reply gets a script tag."""

    TAG = "<script>document.title='JUDGE'</script>"

    def __init__(self, inner):
        self.inner, self.kind, self.model = inner, inner.kind, inner.model

    def scope(self, cell):
        return self.inner.scope(cell)

    def _taint(self, v):
        if isinstance(v, dict):
            return {k: (x + self.TAG if isinstance(x, str) and k in ("reason", "reasons", "criteria",
                                                                     "supporting_evidence") else self._taint(x))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [self._taint(x) for x in v]
        return v

    async def complete(self, cell, body):
        resp = json.loads(json.dumps(await self.inner.complete(cell, body)))
        msg = resp["choices"][0]["message"]
        try:
            msg["content"] = json.dumps(self._taint(json.loads(msg["content"])))
        except ValueError:
            pass
        return resp

    async def aclose(self):
        await self.inner.aclose()


def test_judge_text_in_the_report_is_escaped(canonical, tmp_path):
    try:
        from harness.reports.build import build
    except ImportError:
        pytest.skip("no report builder")
    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run
    from harness.store.runstore import RunStore

    cases = CaseSet(canonical.path, (canonical.by_id("cookie-yield"),), canonical.sha256)
    metrics = [m for m in ("inhouse.span", "deepeval.faithfulness") if m in __import__("harness.metric.registry", fromlist=["names"]).names()]
    out = run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="xss", progress=False,
                         upstream_wrapper=ScriptInReasons))
    s = RunStore.open(out.store_path)
    try:
        tainted = s.rows("SELECT COUNT(*) FROM units WHERE reason LIKE '%<script>%'")[0][0]
    finally:
        s.close()
    assert tainted > 0                                   # the judge's text did reach the store
    built = build(out.run_dir)
    html = open(built.html_path, encoding="utf-8").read()
    md = open(built.md_path, encoding="utf-8").read()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.S | re.I)
    assert [a for a, _ in scripts] == [' type="application/json" id="cb-data"', ""]   # the case browser's own
    assert "<" not in scripts[0][1]                      # the judge's text sits in its JSON, escaped
    html = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S | re.I)
    assert "<script" not in html.lower() and "<script" not in md.lower()


# --- a judge that echoes the key in 200 replies ----------------------------------------------------

class _Echo200(http.server.BaseHTTPRequestHandler):
    """A proxy in front of a real judge that answers 200 and echoes the request's headers: as text
    appended to a plain-text reply, inside the JSON of a JSON reply (every reason-like field), and as
    an extra top-level field of the response object."""

    upstream = ""
    seen: list = []
    REASONS = ("reason", "reasons", "criteria", "supporting_evidence", "statements")

    def _taint(self, v, echo):
        if isinstance(v, dict):
            return {k: (x + echo if isinstance(x, str) and k in self.REASONS else self._taint(x, echo))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [self._taint(x, echo) for x in v]
        return v

    def do_POST(self):
        import urllib.request

        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization")
        type(self).seen.append(auth)
        req = urllib.request.Request(f"{self.upstream}/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Harness-Cell": self.headers.get("x-harness-cell", "")})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                reply = json.loads(r.read())
        except urllib.error.HTTPError as e:
            reply = json.loads(e.read())
        echo = f" (sent with Authorization: {auth}; headers {dict(self.headers)})"
        if reply.get("choices"):
            msg = reply["choices"][0]["message"]
            try:
                msg["content"] = json.dumps(self._taint(json.loads(msg["content"]), echo))
            except (ValueError, TypeError):
                msg["content"] = f"{msg.get('content') or ''}\n{echo}"
        reply["x_echo"] = {"authorization": auth, "headers": dict(self.headers)}
        out = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("credential", ["key", "url-userinfo"])
def test_no_key_anywhere_after_a_judge_that_echoes_it_in_200_replies(credential, tmp_path):
    """Issue 13 probe 1: the key, the Authorization value and URL credentials reach no file the harness
    writes (store, spec.json, cache, reports, scores CSV) and none of its output, whatever the judge
    echoes in a 200 reply; a reply holding the key is never cached."""
    import base64
    import sqlite3

    key = f"sk-harness-canary-{secrets.token_hex(16)}"
    password = f"pw-canary-{secrets.token_hex(8)}"
    home, tmp, cwd, out = (tmp_path / d for d in ("home", "tmp", "cwd", "out"))
    for d in (home, tmp, cwd):
        d.mkdir()
    env = {**os.environ, KEY_ENV: key, "HOME": str(home), "TMPDIR": str(tmp)}
    with open(CANONICAL, encoding="utf-8") as fh:
        lines = [ln for ln in fh if json.loads(ln)["id"] in ("cookie-yield", "abstain-answerable")]
    cases = tmp_path / "two.jsonl"
    cases.write_text("".join(lines), encoding="utf-8")
    outputs = []
    server = subprocess.Popen([sys.executable, "-m", "harness", "judge", "serve", "--port", "0", "--cases",
                               str(cases)], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        _Echo200.upstream = json.loads(server.stdout.readline())["url"]
        _Echo200.seen = []
        echo = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo200)
        threading.Thread(target=echo.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{echo.server_address[1]}/v1"
        auth = ["--judge-key-env", KEY_ENV]
        if credential == "url-userinfo":        # an HTTP client sends these as Basic auth instead of the key
            url, auth = url.replace("http://", f"http://judge-user:{password}@"), []
        try:
            p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", str(cases), "--out", str(out),
                                "--run-id", "echo200", "--judge-url", url, "--judge-model", "reference-judge",
                                *auth, "--cache", "record", "--no-progress", "--retries", "0",
                                "--scores-csv", str(out / "scores.csv")],
                               cwd=str(cwd), env=env, capture_output=True, text=True, timeout=600)
            outputs.extend([p.stdout, p.stderr])
            rep = subprocess.run([sys.executable, "-m", "harness", "report", "echo200", "--out", str(out),
                                  "--report-dir", str(out / "again")],
                                 cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300)
            outputs.extend([rep.stdout, rep.stderr])
        finally:
            echo.shutdown()
    finally:
        server.terminate()
        outputs.extend(server.communicate(timeout=10))
    assert p.returncode in (0, 1), p.stderr[-3000:]
    assert rep.returncode == 0, rep.stderr[-3000:]
    basic = base64.b64encode(f"judge-user:{password}".encode()).decode()
    sent = f"Bearer {key}" if credential == "key" else f"Basic {basic}"
    assert _Echo200.seen and set(_Echo200.seen) == {sent}                   # positive control: it was sent
    db = sqlite3.connect(str(out / "echo200" / "store.sqlite"))
    scrubbed = db.execute("SELECT COUNT(*) FROM units WHERE reason LIKE '%Authorization: %***%'").fetchone()[0]
    scrubbed += db.execute("SELECT COUNT(*) FROM cells WHERE reason LIKE '%Authorization: %***%'").fetchone()[0]
    db.close()
    assert scrubbed > 0                                          # the echo reached the vendors' reasons
    cache = sqlite3.connect(str(out / "judge-cache.sqlite"))
    cached = [json.loads(r[0]) for r in cache.execute("SELECT request FROM responses")]
    assert not [r for r in cached if "messages" in r]     # no chat reply cached: every one echoed the key
    cache.close()
    written = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    for must in ("store.sqlite", "spec.json", "index.html", "report.md", "scores.csv", "judge-cache.sqlite"):
        assert any(w.endswith(must) for w in written), must
    canaries = (key, password, basic)
    leaks = [(w, s) for w in written for s in canaries if s.encode() in open(w, "rb").read()]
    leaks += [(f"output #{i}", s) for i, text in enumerate(outputs) for s in canaries if s in (text or "")]
    assert leaks == []
    assert "judge-user" not in open(out / "echo200" / "spec.json").read()
