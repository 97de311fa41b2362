"""The loopback face serves only its own run (issue 33.1): any other local process could reach the judge
with the run's key through the MLflow relay and Azure's per-cell relay, read the replies and turn the cells
it named into errors; the MLflow relay read a body of any size and a bad length printed a traceback.

Here another client, without the token the face handed to the vendor, gets 401 and the judge sees nothing;
an oversized or malformed body is refused unread with a one-line error and nothing on stderr."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.judge.loopback import MAX_REQUEST_BYTES, TOKEN_HEADER, face
from harness.metric.endpoint import Endpoint

import pytest


class _Judge(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append((self.path, dict(self.headers), data))
        body = b'{"choices": [{"message": {"content": "the judge speaks"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        return None


@pytest.fixture()
def cell():
    """A cell open at the face, its gateway a recording judge: (pass, requests the judge saw)."""
    handler = type("H", (_Judge,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = Endpoint(f"http://127.0.0.1:{server.server_address[1]}/cell/run-1/case-1/mlflow.groundedness/v1", "m")
    try:
        with face().open(endpoint) as p:
            yield p, handler.seen
    finally:
        server.shutdown()
        server.server_close()


def _raw(request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is to the face; (status, body)."""
    host, port = face().url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    if not data.startswith(b"HTTP/"):
        return 0, data                     # an HTTP/0.9 answer: no status line
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _post(url: str, headers: dict | None = None, body: bytes = b'{"messages": []}') -> tuple[int, bytes]:
    import httpx

    r = httpx.post(url, content=body, headers=headers or {}, trust_env=False)
    return r.status_code, r.content


def test_the_vendor_with_the_token_reaches_its_cell_by_path_or_header(cell):
    p, seen = cell
    assert _post(f"{p.base_url}/chat/completions")[0] == 200
    assert _post(f"{face().url}/v1/chat/completions", p.headers)[0] == 200
    assert [path for path, *_ in seen] == ["/cell/run-1/case-1/mlflow.groundedness/v1/chat/completions"] * 2


@pytest.mark.parametrize("how", ["no token", "cell id as header", "cell id in path", "wrong token",
                                 "token of a closed cell", "token prefix", "run's key as bearer"])
def test_another_client_without_the_token_gets_401_and_nothing_from_the_judge(cell, how):
    p, seen = cell
    base = face().url
    with face().open(Endpoint("http://127.0.0.1:9/v1", "m")) as closed:
        pass
    url, headers = {
        "no token": (f"{base}/v1/chat/completions", {}),
        "cell id as header": (f"{base}/v1/chat/completions", {"X-Harness-Cell": "run-1/case-1/mlflow.groundedness"}),
        "cell id in path": (f"{base}/cell/run-1/case-1/mlflow.groundedness/v1/chat/completions", {}),
        "wrong token": (f"{base}/{'A' * 43}/v1/chat/completions", {}),
        "token of a closed cell": (f"{closed.base_url}/chat/completions", {}),
        "token prefix": (f"{base}/{p.token[:20]}/v1/chat/completions", {TOKEN_HEADER: p.token[:-1]}),
        "run's key as bearer": (f"{base}/v1/chat/completions", {"Authorization": "Bearer harness-gateway"}),
    }[how]
    status, body = _post(url, headers)
    assert status == 401 and b"judge speaks" not in body
    assert json.loads(body)["error"]["message"] == "the harness's loopback face serves only the cells of its own run"
    assert seen == []


def test_tokens_are_random_per_cell_and_never_the_cell_id():
    endpoint = Endpoint("http://127.0.0.1:9/cell/r/c/m/v1", "m")
    with face().open(endpoint) as a, face().open(endpoint) as b:
        assert a.token != b.token and len(a.token) >= 40 and "r/c/m" not in a.base_url


@pytest.mark.parametrize("head, status", [
    (f"Content-Length: {MAX_REQUEST_BYTES + 1}", 413),
    ("Content-Length: 99999999999999999999", 413),
    ("Content-Length: -1", 400),
    ("Content-Length: abc", 400),
    ("", 411),
    ("Transfer-Encoding: chunked", 411),
])
def test_a_body_over_the_cap_or_of_no_honest_length_is_refused_unread_without_a_traceback(cell, capfd, head, status):
    p, seen = cell
    request = (f"POST /{p.token}/v1/chat/completions HTTP/1.1\r\nHost: x\r\n{head}\r\n\r\n".replace("\r\n\r\n\r\n", "\r\n\r\n")
               .encode() + b"x" * 1000)
    got, body = _raw(request)
    assert got == status and json.loads(body)["error"]["code"] == status
    assert seen == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and err == ""


def test_garbage_on_the_socket_is_an_http_error_and_nothing_on_stderr(cell, capfd):
    p, seen = cell
    assert _raw(b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 501
    assert _raw(f"GET /{p.token}/v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n".encode())[0] == 404
    _raw(b"\x16\x03\x01 not http at all\r\n\r\n")     # a TLS hello: the stdlib answers it as HTTP/0.9
    assert capfd.readouterr().err == "" and seen == []
