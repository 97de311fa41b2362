"""The HTTP judge's client (harness.judge.upstream.HttpEndpoint through aiohttp): no request of it needs the
event loop's default executor, so sync vendors' threads that fill that executor while they wait for their
judge calls cannot starve those calls (the hang test_security's run had); the environment's proxy and TLS
settings are honoured as httpx honoured them; redirects are not followed (httpx followed none).

Each test serves a small HTTP/1.1 judge on loopback in its own event loop and waits for its replies,
never for time."""
from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import ipaddress
import json
import ssl

from harness.judge.cell import Cell, UpstreamError
from harness.judge.upstream import HttpUpstream

import pytest

CELL = Cell("r", "c", "inhouse.span")
PROXY_VARS = ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
"""The proxy variables a proxy test clears first (the machine's own must not decide it)."""
BODY = {"model": "m", "messages": [{"role": "user", "content": "Is it supported?"}]}
REPLY = {"id": "x", "object": "chat.completion", "model": "m",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}]}


async def _judge(seen: list, status: int = 200, extra: bytes = b"", ssl_context=None, reply=REPLY):
    """A judge on 127.0.0.1 (keep-alive); each request's first line and headers go to ``seen``."""

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)}
                await reader.readexactly(int(headers.get("content-length", 0)))
                seen.append((lines[0], headers))
                body = json.dumps(reply).encode()
                writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
                             % (status, len(body), extra, body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ssl_context)
    return server, server.sockets[0].getsockname()[1]


def _recording_pool(max_workers: int):
    """A default executor that notes every job the event loop hands it (a subclass of the
    ``ThreadPoolExecutor`` class of now: TruLens, once imported, has replaced it, and asyncio insists)."""

    class Recording(concurrent.futures.ThreadPoolExecutor):
        jobs: list = []

        def submit(self, fn, *args, **kwargs):
            self.jobs.append(getattr(fn, "__qualname__", repr(fn)))
            return super().submit(fn, *args, **kwargs)

    Recording.jobs = []
    return Recording(max_workers=max_workers)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_no_request_uses_the_event_loops_default_executor(host, monkeypatch):
    # the environment's proxy and .netrc are asked for (aiohttp's trust_env asked for them in the default
    # executor at every request); "localhost" needs a name lookup
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", host)
    seen = []

    async def go():
        executor = _recording_pool(2)
        asyncio.get_running_loop().set_default_executor(executor)
        server, port = await _judge(seen)
        up = HttpUpstream(f"http://{host}:{port}/v1", "m", None)
        try:
            replies = [await up.complete(CELL, BODY) for _ in range(3)]
        finally:
            await up.aclose()
            server.close()
        return replies, executor.jobs

    replies, jobs = asyncio.run(go())
    assert replies == [REPLY] * 3 and len(seen) == 3   # direct to the judge (NO_PROXY), every call answered
    assert jobs == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_judge_calls_finish_while_waiting_threads_fill_the_default_executor(host):
    """TruLens's cells: each holds a default-executor thread (``asyncio.to_thread``) that waits for the
    judge call it handed to the gateway's loop. More cells than the executor has threads: every call
    still finishes (a call that needed a default-executor thread would wait for one of its own waiters)."""
    seen = []

    async def go():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        server, port = await _judge(seen)
        up = HttpUpstream(f"http://{host}:{port}/v1", "m", None)

        def sync_vendor_call(i):
            call = asyncio.run_coroutine_threadsafe(up.complete(CELL, {**BODY, "user": str(i)}), loop)
            return call.result(timeout=120)   # a guard: a deadlock fails the test instead of hanging it

        try:
            return await asyncio.gather(*(asyncio.to_thread(sync_vendor_call, i) for i in range(6)))
        finally:
            await up.aclose()
            server.close()

    assert asyncio.run(go()) == [REPLY] * 6
    assert len(seen) == 6


@pytest.mark.parametrize("var", ["HTTP_PROXY", "ALL_PROXY"])
def test_the_environments_proxy_is_used(var, monkeypatch):
    """HTTP_PROXY (or, when no variable names the judge URL's scheme, ALL_PROXY, as httpx read it) sends the
    judge's requests to the proxy (absolute-form request line), the key with them; read once, when the
    endpoint's session starts."""
    seen = []
    for k in PROXY_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HARNESS_TEST_KEY", "sk-test-proxy")

    async def go():
        proxy, port = await _judge(seen)
        monkeypatch.setenv(var, f"http://127.0.0.1:{port}")
        up = HttpUpstream("http://judge.example:8080/v1", "m", "HARNESS_TEST_KEY")
        try:
            return await up.complete(CELL, BODY)
        finally:
            await up.aclose()
            proxy.close()

    assert asyncio.run(go()) == REPLY
    [(line, headers)] = seen
    assert line == "POST http://judge.example:8080/v1/chat/completions HTTP/1.1"
    assert headers["authorization"] == "Bearer sk-test-proxy" and headers["x-harness-cell"] == CELL.header()


@pytest.mark.parametrize("var,value", [("ALL_PROXY", "socks5://127.0.0.1:9"), ("HTTP_PROXY", "https://127.0.0.1:9")])
def test_a_proxy_the_client_cannot_speak_is_an_error_that_names_it_never_a_direct_call(var, value, monkeypatch):
    seen = []
    for k in PROXY_VARS:
        monkeypatch.delenv(k, raising=False)

    async def go():
        server, port = await _judge(seen)
        monkeypatch.setenv(var, value)
        up = HttpUpstream(f"http://127.0.0.1:{port}/v1", "m", None)
        try:
            with pytest.raises(UpstreamError) as e:
                await up.complete(CELL, BODY)
            return e.value
        finally:
            await up.aclose()
            server.close()

    err = asyncio.run(go())
    assert var in str(err) and "http:// proxies only" in str(err) and not err.retryable
    assert seen == []   # nothing went to the judge directly


def test_a_redirect_is_not_followed():
    seen = []

    async def go():
        server, port = await _judge(seen, status=307, extra=b"Location: http://127.0.0.1:9/v1/chat/completions\r\n",
                                    reply={"moved": True})
        up = HttpUpstream(f"http://127.0.0.1:{port}/v1", "m", None)
        try:
            return await up.complete(CELL, BODY)
        finally:
            await up.aclose()
            server.close()

    assert asyncio.run(go()) == {"moved": True}   # the 307's own body, as httpx handed it on
    assert len(seen) == 1


def _self_signed(tmp_path):
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "harness test judge")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_pem, key_pem = tmp_path / "judge.pem", tmp_path / "judge.key"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return str(cert_pem), str(key_pem)


@pytest.mark.parametrize("trusted", [True, False])
def test_tls_trusts_ssl_cert_file(tmp_path, monkeypatch, trusted):
    """An https judge whose certificate the user's SSL_CERT_FILE holds is trusted; without it (certifi's
    roots, as httpx) it is refused as unreachable."""
    cert, key = _self_signed(tmp_path)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    if trusted:
        monkeypatch.setenv("SSL_CERT_FILE", cert)
    else:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    seen = []

    async def go():
        server, port = await _judge(seen, ssl_context=served)
        up = HttpUpstream(f"https://127.0.0.1:{port}/v1", "m", None)
        try:
            return await up.complete(CELL, BODY)
        finally:
            await up.aclose()
            server.close()

    if trusted:
        assert asyncio.run(go()) == REPLY and len(seen) == 1
    else:
        with pytest.raises(UpstreamError, match="judge unreachable: .*[Cc]ertificate"):
            asyncio.run(go())
        assert seen == []
