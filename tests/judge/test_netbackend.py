"""The upstream client's network streams (harness.judge.netbackend): connections are reused while
the server keeps them, and an idle connection the server closed is noticed (not reused) as before;
a request's head leaves with its body, before any read."""
from __future__ import annotations

import asyncio

from harness.judge import netbackend

import httpx


async def _serve(close_after_reply: bool):
    """A tiny HTTP/1.1 server on loopback; counts the connections it accepted."""
    accepted, closed = [], asyncio.Event()

    async def handle(reader, writer):
        accepted.append(writer)
        while True:
            head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
            if not head:
                break
            length = next((int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), 0)
            body = await reader.readexactly(length)
            reply = b'{"n": %d, "got": %d}' % (len(accepted), len(body))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(reply), reply))
            await writer.drain()
            if close_after_reply:
                writer.close()
                await writer.wait_closed()
                closed.set()
                break

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, accepted, closed


async def _two_requests(close_after_reply: bool):
    server, accepted, closed = await _serve(close_after_reply)
    port = server.sockets[0].getsockname()[1]
    client = httpx.AsyncClient(timeout=10)
    assert netbackend.install(client)
    assert not netbackend.install(client)   # once only
    try:
        r1 = await client.post(f"http://127.0.0.1:{port}/x", json={"a": 1})
        if close_after_reply:   # wait for state: the server has closed its end
            await closed.wait()   # the server closed its end (on loopback its FIN is in the client's socket)
        r2 = await client.post(f"http://127.0.0.1:{port}/x", json={"a": 2})
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    return r1.json(), r2.json(), len(accepted)


def test_connection_reused_while_open():
    r1, r2, conns = asyncio.run(_two_requests(close_after_reply=False))
    assert r1["got"] == r2["got"] == len(b'{"a":1}')
    assert conns == 1


def test_closed_idle_connection_is_noticed_and_replaced():
    r1, r2, conns = asyncio.run(_two_requests(close_after_reply=True))
    assert (r1["n"], r2["n"]) == (1, 2)
    assert conns == 2


def test_streams_wrapped_and_socket_looked_up_once():
    import socket

    a, b = socket.socketpair()

    class Inner:
        asked = 0

        def get_extra_info(self, info):
            Inner.asked += 1
            return a if info == "socket" else None

    s = netbackend._Stream(Inner())
    try:
        assert s.get_extra_info("is_readable") is False
        b.sendall(b"x")   # the same socket's state is read at every check
        assert s.get_extra_info("is_readable") is True
        assert Inner.asked == 1
        assert s.get_extra_info("server_addr") is None and Inner.asked == 2
    finally:
        a.close()
        b.close()


def test_request_head_leaves_with_its_body_and_before_any_read():
    class Inner:
        def __init__(self):
            self.log = []

        async def write(self, buffer, timeout=None):
            self.log.append(("write", buffer))

        async def read(self, max_bytes, timeout=None):
            self.log.append(("read", max_bytes))
            return b""

    async def go():
        inner = Inner()
        s = netbackend._Stream(inner)
        await s.write(b"POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\n")
        await s.write(b"{}")
        await s.read(10)
        await s.write(b"GET /y HTTP/1.1\r\n\r\n")   # no body: sent before the read that waits for its answer
        await s.read(10)
        return inner.log

    assert asyncio.run(go()) == [("write", b"POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"), ("read", 10),
                                 ("write", b"GET /y HTTP/1.1\r\n\r\n"), ("read", 10)]
