"""The realistic test judge with a fixed delay per request, injected server-side.

Every chat completion is answered ``delay_s`` seconds after it arrives (the clean realistic judge:
no noise, usage always). The delay is a property of the server that a test reads back (``GET
/v1/delay``), so a test asserts against what the server did, not against a number it assumes.

``with serve(delay_s=0.05) as judge: judge.url, judge.delay_s()``.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.request
from http.server import ThreadingHTTPServer

from tests.helpers.judges.realistic import Noise, RealisticJudge, Served, _Handler


class _Delayed(_Handler):
    delay_s: float = 0.0

    def do_GET(self):
        if self.path.rstrip("/").endswith("/delay"):
            return self._send(200, {"delay_s": self.delay_s})
        return super().do_GET()

    def do_POST(self):
        if self.path.rstrip("/").endswith("/chat/completions"):
            time.sleep(self.delay_s)   # the judge's own time: the test's subject, not a synchronisation
        return super().do_POST()


class DelayedServed(Served):
    def delay_s(self) -> float:
        """The delay the server applies, read back from it."""
        with urllib.request.urlopen(f"{self.url}/delay", timeout=10) as r:
            return float(json.loads(r.read())["delay_s"])


def start(delay_s: float) -> DelayedServed:
    judge = RealisticJudge(Noise.none())
    handler = type("Handler", (_Delayed,), {"judge": judge, "prefix": "", "lanes": None, "delay_s": delay_s})
    server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256, "daemon_threads": True})
    server = server_cls(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, name="delayed-judge", daemon=True).start()
    return DelayedServed(f"http://127.0.0.1:{server.server_address[1]}/v1", judge, server)


@contextlib.contextmanager
def serve(delay_s: float):
    s = start(delay_s)
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()
