"""The early worker of ``--workers N`` (:mod:`harness.run.stages`): forked by the run's forkserver once the
cheapest vendor stacks are imported (:func:`harness.run.preload._fork_early`), it scores cells while the
forkserver imports the rest. :class:`Early` is the runner's end of it, :func:`early_main` the worker itself; they
speak over a socket of the run's own (:func:`harness.run.workers.worker_context`)."""
from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import select
import socket
import threading
from multiprocessing.connection import Connection

from harness.run.cellwork import CellWorker
from harness.run.handout import Source
from harness.run.vendorlog import VendorLog, log_path
from harness.run.workerloop import exit_with_runner, serve


class Early:
    """The runner's end of the early worker (:func:`early_main`), in a thread of its own: it waits for the
    worker's connection (made by the forkserver, :func:`harness.run.preload._fork_early`, before its imports
    end: once the workers are being forked it is there or none is coming), sends it the run's spec, answers each
    of its requests for a cell with the next cell it can score (one of ``metrics``: the vendor-free ones and the early
    stage's, until the workers are forked)
    or with None, and puts what it sends back (finished cells, its start-up facts, an error) on the result
    queue, which the runner drains as it does the workers'. Its last message there is ``("exit", index)``,
    whatever happened."""

    def __init__(self, sock: socket.socket, source: Source, spec, metrics: list, index: int, results_q,
                 started: threading.Event, stop: threading.Event):
        self.sock, self.source, self.spec, self.metrics, self.index = sock, source, spec, metrics, index
        self.results_q, self.started, self.stop = results_q, started, stop
        self.connected = threading.Event()
        self.conn: Connection | None = None
        self.held = 0   # cells sent to the worker and not back yet
        self._closing = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="harness-early-worker", daemon=True)

    def _ours(self, task) -> bool:
        return task.metric in self.metrics

    def _accept(self) -> Connection | None:
        while not self.stop.is_set():
            if select.select([self.sock], [], [], 0.2)[0]:
                conn, _ = self.sock.accept()
                return Connection(conn.detach())
            if self.started.is_set() and not select.select([self.sock], [], [], 0)[0]:
                return None   # the forkserver's imports are done and it made no connection: no early worker
        return None

    def _run(self) -> None:
        try:
            self.conn = conn = self._accept()
            if conn is None:
                return
            self.connected.set()
            conn.send((self.spec, self.metrics, self.index))
            while True:
                kind, payload = conn.recv()
                if kind == "want":
                    late = self.started.is_set() or self.stop.is_set()
                    task = None if late else self.source.take(self._ours)
                    conn.send(task)
                    self.held += task is not None
                elif kind == "exit":
                    return
                else:
                    self.held -= kind == "done"
                    self.results_q.put((kind, payload))
        except (EOFError, OSError) as e:
            # a worker that dies holding cells fails the run (they are lost to it: a rerun computes them); one that
            # held none loses nothing, and the workers take every cell
            if self.held and not self.stop.is_set():
                self.results_q.put(("error", f"the early worker process died holding {self.held} cell(s) "
                                             f"({type(e).__name__})"))
        finally:
            with self._closing:
                if self.conn is not None:
                    self.conn.close()
            self.results_q.put(("exit", self.index))

    def close(self) -> None:
        """End the worker now (the run failed or was interrupted): the connection is shut down, so the worker and
        this end's thread both see it end; the thread alone closes it (a descriptor closed twice, from two
        threads, could close another file opened between the two)."""
        with self._closing:
            if self.conn is None or self.conn.closed:
                return
            with contextlib.suppress(OSError):
                with socket.socket(fileno=os.dup(self.conn.fileno())) as s:
                    s.shutdown(socket.SHUT_RDWR)


def early_main(conn: Connection, runner_pid: int) -> None:
    """The early worker, forked by the forkserver once the cheap vendor stacks are imported
    (:func:`harness.run.preload._fork_early`): a worker like :func:`harness.run.workers.worker_main` that gets its cells one at a time
    from the runner over ``conn`` (each request answered with one of the cells it may score, or None: no more for
    it) and sends back what a worker puts on the result queue. It ends with its runner."""
    threading.Thread(target=exit_with_runner, args=(runner_pid,), name="harness-runner-watch", daemon=True).start()
    link = _Link(conn)
    spec, metrics, index = conn.recv()
    vlog = VendorLog(log_path(spec.log_dir, index)) if spec.log_dir else contextlib.nullcontext()
    try:
        with vlog:
            worker = CellWorker(spec, remote=True)
            me = {"worker": index, "pid": os.getpid(), "early": True}
            worker.prepare(metrics, on_ready=lambda facts: link.put(("ready", {**facts, **me})))
            asyncio.run(serve(worker, link, link))
            if worker.startup is None:   # out of cells before its vendors imported
                link.put(("ready", {**worker.startup_so_far(), **me}))
    except BaseException as e:  # noqa: BLE001 - reported to the runner, which fails the run
        msg = " ".join(str(e).split())[:300]
        with contextlib.suppress(OSError):
            link.put(("error", f"the early worker process failed: {type(e).__name__}: {msg}"))
        raise
    link.put(("exit", index))


class _Link:
    """The early worker's end of its connection, as the queues a worker reads and writes: :meth:`get` asks the
    runner for a cell and waits for it (one reader), :meth:`put` sends (from any thread)."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.lock = threading.Lock()

    def put(self, item) -> None:
        with self.lock:
            self.conn.send(item)

    def get_nowait(self):
        raise queue.Empty   # every cell is asked for

    def get(self):
        self.put(("want", None))
        return self.conn.recv()
