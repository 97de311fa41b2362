"""A recording relay in front of a real judge, so two clients of it get the same reply to the same request.

A real model is not a function of its prompt: llama.cpp's server batches, caches prompts and samples,
so the same request can be answered differently twice, and a parity comparison against it would count
that as a difference of the harness's. This relay forwards each request to the judge as it came (path,
body, content type) and stores the judge's reply (status, body, content type) under the request: the
path and the body's JSON with its keys sorted (or its raw bytes when it is not JSON). The same request
asked again, by either side, is answered from the record; a request first seen is sent to the judge.

Each side of a comparison uses its own prefix, ``/<side>/v1/...`` (for example ``/harness`` and
``/stock``), so the relay can count, per side, the requests it answered from the record and those it had
to forward: a stock request that the harness never sent (a miss on the stock side after the harness's
run) is traffic the harness did not reproduce.

    python -m tests.helpers.judges.same_replies --upstream http://127.0.0.1:8081 --port 0 [--record FILE]

prints one JSON line ``{"url": "http://127.0.0.1:PORT"}``; ``GET /stats`` answers the per-side counts.
``--record FILE`` keeps the replies in a JSONL file (appended; read back on start), so a later process
sees the same judge. Authorization and other headers are not stored.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

FORWARDED_HEADERS = ("content-type", "authorization", "accept")


def request_key(path: str, body: bytes) -> str:
    """The record's key for one request: its path and its JSON body with keys sorted (raw bytes otherwise)."""
    try:
        canon = json.dumps(json.loads(body), sort_keys=True, ensure_ascii=False).encode()
    except ValueError:
        canon = body
    return hashlib.sha256(path.encode() + b"\0" + canon).hexdigest()


class Record:
    """Replies by request key, with one lock per key so concurrent twins wait for the first."""

    def __init__(self, path: str | None):
        self.path, self.replies, self.locks = path, {}, {}
        self.guard = threading.Lock()
        self.counts: dict[str, Counter] = {}
        self.statuses: dict[str, int] = {}
        """Route after ``/v1`` (``/responses``, ``/chat/completions``) -> the status the judge last gave."""
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    row = json.loads(line)
                    self.replies[row["key"]] = (row["status"], row["body"].encode(), row["type"])

    def lock(self, key: str) -> threading.Lock:
        with self.guard:
            return self.locks.setdefault(key, threading.Lock())

    def count(self, side: str, what: str) -> None:
        with self.guard:
            self.counts.setdefault(side, Counter())[what] += 1

    def keep(self, key: str, reply: tuple) -> None:
        self.replies[key] = reply
        if self.path:
            with self.guard, open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "status": reply[0], "body": reply[1].decode("utf-8", "replace"),
                                     "type": reply[2]}) + "\n")


def make_handler(upstream: str, record: Record, client: httpx.Client):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        relay_record = record

        def log_message(self, *args):   # quiet
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/stats":
                self._send(200, json.dumps({s: dict(c) for s, c in record.counts.items()}).encode(),
                           "application/json")
                return
            side, _, rest = self.path.lstrip("/").partition("/")
            r = client.get(f"{upstream}/{rest}")
            self._send(r.status_code, r.content, r.headers.get("content-type", "application/json"))

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            side, _, rest = self.path.lstrip("/").partition("/")
            key = request_key("/" + rest, body)
            with record.lock(key):
                reply = record.replies.get(key)
                record.count(side, "recorded" if reply else "forwarded")
                if reply is None:
                    record.count(side, f"{rest.removeprefix('v1')} forwarded")
                    headers = {h: v for h in FORWARDED_HEADERS if (v := self.headers.get(h))}
                    try:
                        r = client.post(f"{upstream}/{rest}", content=body, headers=headers)
                    except httpx.HTTPError as e:   # the judge went away mid-call: a 502 the client retries
                        self._send(502, json.dumps({"error": {"message": f"relay: {type(e).__name__}"}}).encode(),
                                   "application/json")
                        return
                    reply = (r.status_code, r.content, r.headers.get("content-type", "application/json"))
                    if r.status_code < 500:   # a server fault is not the judge's answer: not kept
                        record.keep(key, reply)
                record.statuses[rest.removeprefix("v1")] = reply[0]
            self._send(*reply)

    return Handler


def serve(upstream: str, port: int = 0, record: str | None = None) -> ThreadingHTTPServer:
    """Start the relay in a thread of this process; ``server.server_address`` has its port."""
    client = httpx.Client(timeout=httpx.Timeout(3600.0, connect=30.0))
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(upstream.rstrip("/"), Record(record), client))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="the judge's root URL (without /v1)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--record", help="JSONL file the replies are kept in (and read back from)")
    args = ap.parse_args(argv)
    server = serve(args.upstream, args.port, args.record)
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
