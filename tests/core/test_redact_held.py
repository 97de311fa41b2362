"""Redaction by what the run holds (issue 25, probes 1 and 2).

Probe 1: a judge answering HTTP 500 with 180 filler characters and then the bare key; the error text
was cut (200 characters) before it was scrubbed, so the first 20 characters of the key reached stdout,
the store, index.html and report.md. Probe 2: a case that documents an API ("Authorization: Bearer
tok12345678", "api_key=demo1234") was never cached and its stored text was rewritten, so
``--cache replay`` failed every such cell.
"""
import http.server
import json
import os
import re
import secrets
import subprocess
import sys
import threading

from tests.conftest import CANONICAL, ROOT

KEY_ENV = "HARNESS_TEST_CANARY_KEY"
LOOKS_LIKE = " To call the API, send the header Authorization: Bearer tok12345678 with api_key=demo1234."


def _fragments(key: str, n: int = 8) -> set[str]:
    """The key's identifying fragments: every run of 8 characters but those of lower-case letters and
    separators only (the ``sk-probe`` every such key starts with identifies none)."""
    return {g for g in (key[i:i + n] for i in range(len(key) - n + 1)) if not re.fullmatch(r"[a-z_.-]+", g)}


class _Key500(http.server.BaseHTTPRequestHandler):
    """Every request: HTTP 500 whose body is 180 filler characters, then the bare key."""

    key = ""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = ("x" * 180 + type(self).key).encode()
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_scrub_removes_fragments_of_a_held_key_and_nothing_shaped_like_one():
    from harness.core import redact

    key = "sk-frag-" + "".join(f"{secrets.choice('abcdef')}{secrets.randbelow(10)}" for _ in range(12))
    with redact.isolated():
        _held_key_checks(redact, key)


def _held_key_checks(redact, key):
    redact.register(key)
    frags = _fragments(key)
    for text in ("x" * 180 + key[:20], key[-9:] + " tail", f"mid {key[5:15]} end"):   # cut by a truncation
        out = redact.scrub(text)
        assert "***" in out and not any(f in out for f in frags), (text, out)
    assert redact.scrub(key[-9:] + " tail") == "*** tail"
    assert redact.scrub(f"short {key[-7:]}") == f"short {key[-7:]}"        # 7 characters identify nothing
    assert redact.scrub("sk-frag- is a prefix") == "sk-frag- is a prefix"   # a word-like run neither
    cut = redact.cut("y" * 190 + key, 200)
    assert not any(f in cut for f in frags) and cut.startswith("y" * 190)
    plain = "send the header Authorization: Bearer tok12345678, api_key=demo1234, https://u:pw@h/v1"
    assert redact.scrub(plain) == plain and not redact.has_secret(plain)


def test_a_key_cut_by_an_error_truncation_reaches_no_output(tmp_path):
    """Probe 1, whole: stdout, the store (cells.reason, calls.error), index.html and report.md."""
    key = f"sk-probe-{secrets.token_hex(11)}"         # 31 characters, as in the probe
    _Key500.key = key
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Key500)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cases = tmp_path / "one.jsonl"
    with open(CANONICAL, encoding="utf-8") as fh:
        cases.write_text(fh.readline(), encoding="utf-8")
    env = {**os.environ, KEY_ENV: key}
    try:
        p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", str(cases), "--metrics", "inhouse.span",
                            "--judge-url", f"http://127.0.0.1:{server.server_address[1]}/v1", "--judge-model", "m",
                            "--judge-key-env", KEY_ENV, "--retries", "0", "--out", str(tmp_path / "out"),
                            "--run-id", "p1", "--no-progress", "--workers", "1"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
    assert p.returncode == 1, p.stderr[-2000:]
    assert "judge HTTP 500: xxxx" in p.stdout                              # positive control: the body was kept
    written = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "out") for f in fs]
    assert any(w.endswith("index.html") for w in written) and any(w.endswith("report.md") for w in written)
    frags = _fragments(key)
    leaks = [w for w in written for f in frags if f.encode() in open(w, "rb").read()]
    leaks += [f"stdout/stderr: {f}" for f in frags if f in p.stdout + p.stderr]
    assert leaks == []


def test_case_text_that_looks_like_a_credential_is_stored_cached_and_replayed(tmp_path):
    """Probe 2: record, then ``--cache replay`` (the CI workflow of docs/ci.md): every cell replays, the
    stored case text is the text given."""
    import sqlite3

    case = json.loads(open(CANONICAL, encoding="utf-8").readline())
    case["id"] = "documents-an-api"
    case["contexts"][-1]["text"] += LOOKS_LIKE
    cases = tmp_path / "cred.jsonl"
    cases.write_text(json.dumps(case) + "\n", encoding="utf-8")
    out = tmp_path / "out"

    def run(run_id, mode):
        return subprocess.run([sys.executable, "-m", "harness", "run", "--cases", str(cases), "--metrics",
                               "inhouse.span", "--cache", mode, "--out", str(out), "--run-id", run_id,
                               "--no-progress", "--no-report", "--workers", "1"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    rec = run("rec", "record")
    assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    rep = run("rep", "replay")
    assert rep.returncode == 0 and "replay miss" not in rep.stdout, rep.stdout[-2000:]
    for run_id in ("rec", "rep"):
        db = sqlite3.connect(out / run_id / "store.sqlite")
        stored = json.loads(db.execute("SELECT json FROM cases").fetchone()[0])
        status = db.execute("SELECT status FROM cells").fetchone()[0]
        db.close()
        assert stored["contexts"][-1]["text"].endswith(LOOKS_LIKE) and status == "scored"
