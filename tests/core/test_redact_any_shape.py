"""Redaction whatever the key's shape (issue 33.3): a lower-case passphrase key such as
correct-horse-battery-staple was never redacted, and a judge echoing it got it into the store, index.html
and the judge cache. Now any key is removed from every file and output of the run; a key that is an
ordinary word occurring in the cases is said up front and removed only from what the judge sent, and the
cases stay exact.

The judge is the reference judge served on loopback behind ``tests.judge.test_security._Echo200``, a proxy that
echoes the request's ``Authorization`` header in every reason of its 200 replies."""
from __future__ import annotations

import json
import os
import random
import string
import threading
from http.server import ThreadingHTTPServer

from harness.cases.load import load_cases
from harness.core import redact
from harness.judge.gateway import Gateway
from harness.judge.upstream import ReferenceUpstream

import pytest

from tests.conftest import CANONICAL
from tests.judge.test_security import _Echo200

KEY_ENV = "HARNESS_TEST_SHAPE_KEY"


@pytest.fixture()
def echo_judge(tmp_path):
    """(judge URL, cases file): two canonical cases, the first one's question carrying a rare word."""
    word = "zephyr" + "".join(random.choices(string.ascii_lowercase, k=8))
    rows = [json.loads(ln) for ln in open(CANONICAL, encoding="utf-8")]
    rows = [r for r in rows if r["id"] in ("cookie-yield", "abstain-answerable")]
    rows[0]["question"] += f" (asked by {word})"
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cases = load_cases(str(path))

    class AnyRun(dict):
        def __missing__(self, key):
            return cases.by_id(key[1])

    gw = Gateway(ReferenceUpstream(AnyRun()), keep_ledger=False).start()
    _Echo200.upstream, _Echo200.seen = f"{gw.base}/v1", []
    echo = ThreadingHTTPServer(("127.0.0.1", 0), _Echo200)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{echo.server_address[1]}/v1", str(path), word
    finally:
        echo.shutdown()
        gw.stop()
        redact.guard(None)


def _run(tmp_path, url, cases, capsys):
    from harness.console import main

    out = tmp_path / "out"
    rc = main(["run", "--cases", cases, "--metrics", "inhouse.span", "--judge-url", url, "--judge-model",
               "reference-judge", "--judge-key-env", KEY_ENV, "--cache", "record", "--retries", "0", "--out", str(out),
               "--run-id", "shape", "--no-progress", "--workers", "1", "--scores-csv", str(out / "scores.csv")])
    rep = main(["report", "shape", "--out", str(out), "--report-dir", str(out / "again")])
    said = capsys.readouterr()
    written = {os.path.join(d, f): open(os.path.join(d, f), "rb").read() for d, _, fs in os.walk(tmp_path) for f in fs}
    assert rc in (0, 1) and rep == 0, said.err[-2000:]
    for must in ("store.sqlite", "spec.json", "index.html", "report.md", "scores.csv", "judge-cache.sqlite"):
        assert any(w.endswith(must) for w in written), must
    return said, written


def test_a_passphrase_key_echoed_by_the_judge_is_in_no_file_and_no_output(echo_judge, tmp_path, capsys,
                                                                           monkeypatch):
    url, cases, _ = echo_judge
    key = "correct-horse-battery-staple-" + "".join(random.choices(string.ascii_lowercase, k=10))
    monkeypatch.setenv(KEY_ENV, key)
    said, written = _run(tmp_path, url, cases, capsys)
    assert _Echo200.seen and set(_Echo200.seen) == {f"Bearer {key}"}     # it was sent, and echoed
    pieces = {key, key[:12], key[-12:], key.replace("-", "%2D")}
    leaks = [(path, p) for path, blob in written.items() for p in pieces if p.encode() in blob]
    assert leaks == []
    assert not [p for p in pieces if p in said.out + said.err]
    assert "occurs in the case text" not in said.err
    import sqlite3

    db = sqlite3.connect(str(tmp_path / "out" / "shape" / "store.sqlite"))
    try:   # positive control: the echo reached the stored reasons, scrubbed
        assert db.execute("SELECT COUNT(*) FROM units WHERE reason LIKE '%Bearer ***%'").fetchone()[0] > 0
    finally:
        db.close()


def test_a_key_that_is_a_word_of_the_cases_is_said_up_front_and_removed_from_the_judge_only(echo_judge, tmp_path,
                                                                                             capsys, monkeypatch):
    url, cases, word = echo_judge
    monkeypatch.setenv(KEY_ENV, word)
    said, written = _run(tmp_path, url, cases, capsys)
    assert said.err.count("occurs in the case text (case cookie-yield)") == 1 and word not in said.err
    assert set(_Echo200.seen) == {f"Bearer {word}"}
    import sqlite3

    db = sqlite3.connect(str(tmp_path / "out" / "shape" / "store.sqlite"))
    try:
        stored = "\n".join(str(r) for r in db.execute("SELECT * FROM cases").fetchall())
        echoed = db.execute("SELECT COUNT(*) FROM units WHERE reason LIKE '%Bearer ***%'").fetchone()[0]
        leaked = db.execute("SELECT COUNT(*) FROM units WHERE reason LIKE ?", (f"%Bearer {word}%",)).fetchone()[0]
    finally:
        db.close()
    assert f"(asked by {word})" in stored                # the case text is exact
    assert echoed > 0 and leaked == 0                    # the judge's echo of the key is not
    cache = written[str(tmp_path / "out" / "judge-cache.sqlite")]
    assert f"Bearer {word}".encode() not in cache
