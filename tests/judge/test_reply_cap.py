"""Judge replies have a size cap (issue 25, probe 10): two 50 MB replies took a run to 1.2 GB. A reply
over the cap (``--max-reply-mb``, default 8) is refused with a reason naming the cap, and is read in
chunks, never held whole."""
import http.server
import threading
import tracemalloc

from harness.judge.upstream import Cell, HttpUpstream, UpstreamError

import pytest

CELL = Cell("r", "c", "inhouse.span")
BIG = 50 * 2**20


class _Big(http.server.BaseHTTPRequestHandler):
    """A 200 reply of 50 MB of JSON, with a Content-Length (``?chunked``: without one)."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        head = b'{"choices": [{"message": {"role": "assistant", "content": "'
        tail = b'"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        chunked = "chunked" in self.path
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + BIG + len(tail)))
        self.end_headers()
        try:
            parts = [head] + [b"y" * 2**20] * (BIG // 2**20) + [tail]
            for part in parts:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def big_judge():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Big)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("route", ["v1", "chunked/v1"])
def test_a_reply_over_the_cap_is_refused_and_never_held_whole(big_judge, route):
    import asyncio

    up = HttpUpstream(f"{big_judge}/{route}", "m", None, max_reply_bytes=2 * 2**20)

    async def call():
        try:
            return await up.complete(CELL, {"messages": [{"role": "user", "content": "hi"}]})
        finally:
            await up.aclose()

    tracemalloc.start()
    try:
        with pytest.raises(UpstreamError) as e:
            asyncio.run(call())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "reply is larger than the 2 MB cap" in str(e.value) and "--max-reply-mb" in str(e.value)
    assert e.value.retryable is False
    assert peak < 12 * 2**20, peak                               # 50 MB were sent; a few MB were held


def test_the_default_cap_is_8_mb_and_a_reply_under_it_passes(big_judge):
    import asyncio

    from harness.judge.upstream import DEFAULT_MAX_REPLY_BYTES

    assert DEFAULT_MAX_REPLY_BYTES == 8 * 2**20
    up = HttpUpstream(f"{big_judge}/v1", "m", None, max_reply_bytes=64 * 2**20)

    async def call():
        try:
            return await up.complete(CELL, {"messages": [{"role": "user", "content": "hi"}]})
        finally:
            await up.aclose()

    reply = asyncio.run(call())
    assert len(reply["choices"][0]["message"]["content"]) == BIG


def test_the_cap_is_a_run_option_and_its_reason_reaches_the_cell(big_judge, tmp_path, capsys):
    from harness.console import main
    from harness.store.runstore import RunStore

    from tests.conftest import CANONICAL

    cases = tmp_path / "one.jsonl"
    cases.write_text(open(CANONICAL, encoding="utf-8").readline(), encoding="utf-8")
    rc = main(["run", "--cases", str(cases), "--metrics", "inhouse.span", "--judge-url", f"{big_judge}/v1",
               "--judge-model", "m", "--max-reply-mb", "1", "--retries", "0", "--out", str(tmp_path / "out"),
               "--run-id", "cap", "--no-progress", "--no-report", "--workers", "1"])
    capsys.readouterr()
    assert rc == 1
    s = RunStore.open(str(tmp_path / "out" / "cap"))
    try:
        reason = s.rows("SELECT reason FROM cells")[0][0]
    finally:
        s.close()
    assert "reply is larger than the 1 MB cap (--max-reply-mb)" in reason


@pytest.mark.parametrize("value", ["0", "-1", "nan", "100000"])
def test_a_bad_cap_is_one_line_exit_2(value, tmp_path, capsys):
    from harness.console import main

    rc = main(["run", "--metrics", "inhouse.span", "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m",
               "--max-reply-mb", value, "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("harness: --max-reply-mb must be") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
