"""``--workers N``: cells in N local worker processes, the runner the single writer.

Imports are paid once. The workers are started by a forkserver of the run's own (multiprocessing's
``forkserver`` start method, where the platform has it; ``spawn`` elsewhere): a fresh interpreter, never a fork of
the runner (the runner's threads, open SQLite handles and event loop stay where they are), that first forces the
vendor switches (:mod:`harness.metric.vendor_env`: telemetry off, no dotenv), then imports the vendor stacks of the
metrics left to compute, and only those (:mod:`harness.run.preload`), and then forks each worker. A worker starts
with every vendor it needs already imported (10-17 s of CPU per process otherwise) and scores cells with a
:class:`~harness.run.cellwork.CellWorker` (its own gateway, in-process transport, up to its share of
``--concurrency`` cells in flight). The forkserver is the run's: started for it, with its metrics, and stopped
once its workers are gone.

The imports overlap with scoring. A worker can be forked only once the forkserver's imports are done (10-17 s of
CPU with every vendor); meanwhile the runner scores, in its own process with the whole ``--concurrency``, the
cells of the metrics that import nothing (those with no ``prepare``: ``inhouse.span``, ``baseline.similarity``,
``cascade.*``, ``nli.*``; the runner hands them out first), on the core the imports leave. It stops at the first
cell of a metric with a vendor or as soon as the workers are forked, and the workers take every cell left. So a
vendor cell is only ever scored in a fork of the forkserver (never in a process that lacked its imports), and the
runner imports no vendor. The store's ``overlap`` fact says how many cells the runner scored, and when.

The forkserver imports the cheapest vendor stacks first (:mod:`harness.run.stages`) and then forks an early
worker with them (:func:`~harness.run.early.early_main`), connected to the runner over a socket of the run's own: it takes the
cells from the runner (the vendor-free cells left, then those of its vendors, handed out next) while the
forkserver imports the rest, and exits once the workers are forked and its cells are done. On the canonical set
at 200 ms a call, 2 workers took 13.4 s instead of 16.9 s (0.91x of imports + judge-latency bound, was 1.17x).

Cells are streamed: a feeder thread in the runner walks the cells left to compute and puts them on
a bounded queue (at most twice the cells the workers can hold in flight); idle workers take the next
one, so a slow cell never holds up the others and the run's memory does not grow with its size.
Finished cells come back on a result queue and the runner writes them (store, cache entries, fault
events) one at a time: the runner is the only writer, so resume and a SIGKILL at any moment behave as
with one process (a cell is in the store whole or not at all).

With no more workers than cores, each worker stays on a core of its own (:func:`worker_cores`;
``--no-pin`` turns it off): the threads of one worker then hand the GIL to one another on that core.

A worker that dies (killed, out of memory) fails the run with a message; its finished cells are
stored and a rerun with the same run id computes the rest. A worker whose runner died exits by itself.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import queue
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import replace

from harness.metric import registry
from harness.metric.vendor_env import quiet_vendors
from harness.run.cellwork import CellWorker, WorkerFailed, usable_cores
from harness.run.early import Early
from harness.run.handout import Lead, Source
from harness.run.stages import early_stage, import_rank, needs_import
from harness.run.vendorlog import VendorLog, log_path
from harness.run.workerloop import exit_with_parent, serve

__all__ = ["WorkerFailed", "default_workers", "run_in_processes", "worker_cores", "worker_main"]


def default_workers() -> int:
    """The machine's cores available to this process (the most ``--workers`` picks by itself)."""
    return max(1, len(usable_cores() or ()) or os.cpu_count() or 1)


CELLS_PER_EXTRA_WORKER = 200
"""Vendor cells per further worker. Set when each worker imported its own vendors (16-19 s of CPU on 2 cores,
beside the first worker's); the workers now fork from a forkserver that imported them once, so a further worker
costs its first calls' warm-up, its share of the hand-over to the runner and memory. Measured on 2 cores with
``bench/bench_workers.py`` (bench/README.md): at 240 vendor cells (the canonical set, every metric) 2 workers
were as fast as 1 or a little faster (30.8 s vs 32.1 s at 0 ms judge latency, 37.3 s vs 39.6 s at 200 ms), at
1,920 vendor cells 1.22x faster (52.9 s vs 64.3 s)."""
WORKER_BYTES = 1 << 30
"""Memory one worker takes with every vendor stack imported (~810 MB RSS measured), rounded up: the default
starts no more workers than the memory available holds."""


def memory_workers() -> int:
    """How many workers the memory available now holds (``MemAvailable`` / :data:`WORKER_BYTES`); a large
    number when it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            kb = next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return 1 << 16
    return max(1, kb * 1024 // WORKER_BYTES)


def auto_workers(cells: int, judge_bound: bool, cores: int | None = None) -> int:
    """``--workers`` left unset: how many worker processes are fastest for a run of ``cells`` vendor cells.

    One, when the run is judge-bound (a real judge, whose calls take seconds: one process keeps every
    call of ``--concurrency`` in flight, and a second only splits them while costing ~1 GB) or too small for
    a second worker to pay; else one more per :data:`CELLS_PER_EXTRA_WORKER` cells, up to the machine's cores
    and to what the memory available holds. The offline reference judge is CPU-bound even with an injected
    latency of 200 ms per call.

    The load other programs put on the cores does not count. It once did (one worker on a busy 2-core machine),
    when each worker imported the vendor stacks itself and a second worker cost ~17 s more CPU; with the imports
    paid once, two workers used the CPU one does (21.7 s against 21.4 s on the canonical set, bench/README.md),
    and a second process on a shared machine only gets the run a larger share of the cores.

    >>> auto_workers(199, False, 2), auto_workers(240, False, 2), auto_workers(1920, False, 2) == min(2, memory_workers())
    (1, 2, True)
    >>> auto_workers(50000, True, 2), auto_workers(50000, False, 4) == min(4, memory_workers())
    (1, True)
    """
    cores = cores or default_workers()
    if judge_bound:
        return 1
    return max(1, min(cores, 1 + cells // CELLS_PER_EXTRA_WORKER, memory_workers()))


def worker_cores(n: int) -> list[int] | None:
    """The core each of ``n`` worker processes stays on, or None (the OS places them).

    With no more workers than usable cores, worker ``i`` gets the ``i``-th core of this process's
    affinity mask: a worker's threads (the event loop, the threads TruLens's synchronous calls run in,
    the per-sentence threads TruLens starts) then hand the GIL to one another on one core instead of
    being woken on the other core, where the other worker is running. Measured on 2 cores
    (bench/README.md): pinned, each worker of a CPU-bound TruLens run keeps its core ~93 % busy, against
    ~80 % when the OS moves its threads. More workers than cores: None (pinning would stack them).

    >>> worker_cores(1) == [sorted(os.sched_getaffinity(0))[0]]
    True
    >>> worker_cores(len(os.sched_getaffinity(0)) + 1) is None
    True
    """
    cores = usable_cores()
    return cores[:n] if cores and n <= len(cores) else None


QUIET_TRACKER = "ignore:resource_tracker:UserWarning"
"""The warning filter handed to the resource tracker (see :func:`run_in_processes`)."""


BURST = 64
"""At most this many finished cells waiting on the result queue are handed over together."""


def run_in_processes(spec, tasks, n: int, metrics, on_done, batch=None, on_ready=None, pin: bool = True,
                     here=None, on_here=None, concurrency: int | None = None) -> None:
    """Score every :class:`~harness.run.cellwork.CellTask` of the iterable ``tasks`` in ``n`` worker
    processes, calling ``on_done(CellDone)`` in this thread for each finished cell. ``batch``: a
    context-manager factory (the store's :meth:`~harness.store.runstore.RunStore.batch`) around the ``on_done``
    calls of the cells that were waiting together, so a burst of them is one commit. ``on_ready(facts)``:
    a worker's start-up facts (:attr:`~harness.run.cellwork.CellWorker.startup`, with its index and process id;
    its ``cores`` are those it ran on).
    ``pin``: keep each worker on a core of its own (:func:`worker_cores`) when there are enough cores.

    ``here(cells)``: scores an iterable of cells in this process (the runner's in-process scorer, calling
    ``on_done`` itself). Given, and some of ``metrics`` have a vendor stack to import, the imports overlap with
    scoring: while the forkserver imports, this process scores the leading cells of the metrics that import
    nothing (``tasks`` yields those first; :class:`~harness.run.handout.Lead`), and the workers take the rest once they are forked.
    Where the cheap vendor stacks can be imported first (:mod:`harness.run.stages`; ``tasks`` then yields their
    cells next), the forkserver forks an early worker with them and imports the rest: the early worker takes the
    cells from this process (``concurrency``: the cells it holds in flight, this process's own) until the
    workers are forked, then finishes those it holds and exits.
    ``on_here(facts)``: what that phase did (``cells`` scored here; ``began``, ``first``, ``ended``: epoch
    seconds; ``ended_by``: ``vendor cell``, ``workers`` (forked), ``early worker`` (come) or ``cells`` (none
    left); ``pid``)."""

    batch = batch or contextlib.nullcontext

    # Ctrl-C ends the run with os._exit (harness/run/interrupt.py): the queues' semaphores are then left to
    # multiprocessing's resource tracker, which removes them and warns about each. The tracker takes its
    # warning filters from sys.warnoptions when it starts, so it cleans up without the warning.
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)
    classes = _classes(metrics)   # an unknown metric imports nothing here: its cells say so in the worker
    metrics = sorted(metrics, key=lambda m: import_rank(classes[m]) if m in classes else (1, float("inf")))
    vendored = {m for m, cls in classes.items() if needs_import(cls)}
    if not vendored:   # nothing to import: the workers are forked at once, and the overlap has nothing to hide
        here = None
    # the early worker (harness.run.stages): only beside the runner's own scoring of the vendor-free cells, whose
    # place it takes (the runner stops taking cells when it comes), and only where the memory holds one more process
    early = early_stage({m: classes[m] for m in vendored}) if here is not None and memory_workers() > n else []
    with worker_context(metrics, getattr(spec, "log_dir", None), early[-1] if early else None) as (ctx, abort, sock):
        _run_in_processes(ctx, abort, spec, tasks, n, metrics, on_done, batch, on_ready, pin, here, on_here, vendored,
                          (sock, early), concurrency)


def _classes(metrics) -> dict:
    out = {}
    for m in metrics:
        try:
            out[m] = registry.get(m)
        except Exception:  # noqa: BLE001 - an unknown metric's cells say so in the worker
            pass
    return out


def _run_in_processes(ctx, abort, spec, tasks, n: int, metrics, on_done, batch, on_ready, pin: bool, here,
                      on_here, vendored: set, early_plan, concurrency: int | None = None) -> None:
    tasks_q = ctx.Queue(maxsize=max(2, 2 * n * spec.concurrency))
    results_q = ctx.Queue()
    cores = worker_cores(n) if pin else None
    procs = [ctx.Process(target=worker_main, args=(spec, list(metrics), tasks_q, results_q, i, os.getpid(),
                                                    cores[i] if cores else None),
                         name=f"harness-worker-{i}", daemon=True) for i in range(n)]
    started = threading.Event()
    stop = threading.Event()
    state: dict = {}
    live: list = []          # the workers started so far
    failed_start: list = []
    source = Source(tasks)
    sock, early_metrics = early_plan
    early = None
    if sock is not None:
        # the runner's whole --concurrency (its own scoring's, which the early worker takes over), a worker's pace
        whole = replace(spec, concurrency=concurrency or spec.concurrency * n)
        early = Early(sock, source, whole, [m for m in metrics if m not in vendored] + early_metrics, n, results_q,
                      started, stop)
        early.thread.start()

    def start_all():
        # each start waits for the forkserver, which forks only once its preload (the vendor imports) is done
        try:
            for p in procs:
                if stop.is_set():
                    return
                p.start()
                live.append(p)
        except BaseException as e:  # noqa: BLE001 - reported by the runner's thread
            failed_start.append(e)
        finally:
            started.set()
            results_q.put(("started", None))   # wakes the runner's loop, which then feeds the workers

    starter = None
    try:
        if here is None:
            start_all()
        else:
            starter = threading.Thread(target=start_all, name="harness-workers-start", daemon=True)
            starter.start()
            lead = Lead(source, vendored, started, early.connected if early is not None else None)
            began = time.time()
            here(lead)   # this process scores the cells that need no vendor while the forkserver imports
            if on_here is not None:
                on_here({"cells": lead.count, "began": began, "first": lead.first, "ended": time.time(),
                         "ended_by": lead.ended_by, "pid": os.getpid()})
        _serve_workers(procs, source, tasks_q, results_q, on_done, batch, on_ready, stop, state, started,
                       failed_start, 1 if early is not None else 0)
    finally:
        stop.set()
        if early is not None:
            early.close()
        if starter is not None and starter.is_alive():   # interrupted while the forkserver imports: end it now
            abort()
            starter.join(30)
        for p in live:
            if p.is_alive() and not state.get("exited"):
                p.terminate()
        for p in live:
            p.join(30)
        for p in live:   # the forkserver ends only when its last worker has: none is left behind
            if p.is_alive():
                p.kill()
                p.join(5)
        tasks_q.cancel_join_thread()
        if state.get("feeder") is not None:
            state["feeder"].join(5)
        if early is not None:
            early.thread.join(5)


def _serve_workers(procs, source: Source, tasks_q, results_q, on_done, batch, on_ready, stop, state, started,
                   failed_start: list, extra: int = 0) -> None:
    """Hand each finished cell to ``on_done`` until every worker has exited, and once the workers are started
    (``started``; its message on ``results_q`` wakes this loop) feed them the cells left in ``source``.
    ``extra``: further ``exit`` messages to wait for (the early worker's). ``state["exited"]`` is set at the end;
    ``state["feeder"]``: the feeding thread."""
    n = len(procs)
    fed: list = []

    def put(item) -> bool:
        while not stop.is_set():
            try:
                tasks_q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def feed():
        try:
            for task in source.rest():
                if not put(task):
                    return
        except BaseException as e:  # noqa: BLE001 - reported by the runner's thread
            fed.append(e)
        for _ in procs:
            put(None)

    exited = 0
    while exited < n + extra:
        if "feeder" not in state and started.is_set():
            if failed_start:
                e = failed_start[0]
                raise WorkerFailed(f"the worker processes could not be started: {type(e).__name__}: {e}") from e
            feeder = state["feeder"] = threading.Thread(target=feed, name="harness-cells-out", daemon=True)
            feeder.start()
        try:
            burst = [results_q.get(timeout=0.5)]
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                p = dead[0]
                raise WorkerFailed(f"worker process {p.name} died (exit code {p.exitcode}); finished cells "
                                   "are stored, rerun with the same --run-id to compute the rest") from None
            continue
        while len(burst) < BURST:
            try:
                burst.append(results_q.get_nowait())
            except queue.Empty:
                break
        failed = None
        with batch():
            for kind, payload in burst:   # every finished cell of the burst is stored, a failure or not
                if kind == "done":
                    on_done(payload)
                elif kind == "ready":
                    if on_ready is not None:
                        on_ready(payload)
                elif kind == "exit":
                    exited += 1
                elif kind == "started":
                    pass
                elif failed is None:
                    failed = payload
        if failed is not None:
            raise WorkerFailed(f"{failed}; finished cells are stored, rerun with the same --run-id to resume")
    state["exited"] = True
    if fed:
        raise fed[0]


PRELOAD_ENV = "HARNESS_FORKSERVER_PRELOAD"
"""The variable that carries the run's metrics to the forkserver's preload (:data:`harness.run.preload.ENV`, the
same name: the preload is the leaf, so this module does not import it)."""
FORKSERVER_LOCK = threading.Lock()
"""One run's forkserver at a time in a process (its preload is the run's metrics): a second run with workers,
started from another thread of the same process, waits for the first's workers to end."""


@contextlib.contextmanager
def worker_context(metrics: list[str], log_dir: str | None = None, early_after: str | None = None):
    """``(context, abort, sock)``: the multiprocessing context a run's workers start from, a function that ends its
    forkserver at once (a run interrupted while the forkserver imports; a no-op without one), and the listening
    socket the early worker connects to (None: no early worker).

    The context is a forkserver that imports the vendor stacks of ``metrics`` (only those, in that order) with the
    vendor switches forced first (:mod:`harness.run.preload`), started here (its imports begin at once, in its own
    process) and stopped when the block ends; ``spawn`` where there is no forkserver, or where one not the
    harness's is already running in this process (its preload cannot be changed, nor can it be stopped while its
    own children run). Each worker then imports what it needs itself (the same result, the imports paid per
    worker). ``early_after``: the metric after whose import the forkserver forks the early worker
    (:mod:`harness.run.stages`); the socket is in a directory only this user can enter, removed at the end."""
    if "forkserver" not in mp.get_all_start_methods():   # pragma: no cover - not on Linux or macOS
        yield mp.get_context("spawn"), _nothing, None
        return
    from multiprocessing import forkserver  # noqa: PLC0415 - lazy: only a run with workers starts one

    server = forkserver._forkserver
    with FORKSERVER_LOCK:
        if server._forkserver_pid is not None or not hasattr(server, "_stop"):
            yield mp.get_context("spawn"), _nothing, None
            return
        sock, folder, early = None, None, None
        if early_after is not None:
            folder = tempfile.mkdtemp(prefix="harness-early-")   # mode 0700
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address = os.path.join(folder, "early")
            sock.bind(address)
            sock.listen(1)
            early = {"after": early_after, "address": address}
        try:
            forkserver.set_forkserver_preload(["harness.run.preload"])
            os.environ[PRELOAD_ENV] = json.dumps({"metrics": list(metrics), "log_dir": log_dir, "early": early})
            try:   # the forkserver is started with this environment (the variable is the preload's only input)
                forkserver.ensure_running()
            finally:
                os.environ.pop(PRELOAD_ENV, None)
            pid = server._forkserver_pid

            def abort() -> None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

            try:
                yield mp.get_context("forkserver"), abort, sock
            finally:
                # every worker has ended (run_in_processes waits for them or kills them). The forkserver only
                # imported: it is killed rather than left to run the vendors' exit hooks and tear its interpreter
                # down (measured: up to ~15 s on a loaded machine, after the last cell), then reaped (its CPU, and
                # its workers', counts to this process's children)
                abort()
                server._stop()
        finally:
            if sock is not None:
                sock.close()
                shutil.rmtree(folder, ignore_errors=True)


def _nothing() -> None:
    """No forkserver to end."""


def worker_main(spec, metrics, tasks_q, results_q, index: int, parent_pid: int, core: int | None = None) -> None:
    """A worker process: import the vendors once, then score cells until the runner says stop.
    ``core``: the one core this process and every thread it starts stay on (None: any)."""
    if core is not None:   # first, so every thread of this process inherits it
        try:
            os.sched_setaffinity(0, {core})
        except OSError:    # a container that forbids it: the worker runs where the OS puts it
            pass
    quiet_vendors()   # this process is the harness's own: the switches hold for its life, before any vendor import
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the runner's to handle
    # A cell finished as the runner went away must not print the queue's broken-pipe traceback onto the
    # terminal the runner shared (the runner says how to resume; this worker exits at once, below).
    results_q._ignore_epipe = True
    threading.Thread(target=exit_with_parent, args=(parent_pid,), name="harness-parent-watch", daemon=True).start()

    vlog = VendorLog(log_path(spec.log_dir, index)) if spec.log_dir else contextlib.nullcontext()
    try:
        with vlog:
            worker = CellWorker(spec, remote=True)
            preloaded = _preloaded()
            me = {"worker": index, "pid": os.getpid(), **preloaded}
            worker.prepare(metrics, on_ready=lambda facts: results_q.put(("ready", {**facts, **me})))
            asyncio.run(serve(worker, tasks_q, results_q))
            if worker.startup is None:   # out of cells before its vendors imported: it is in the record all the same
                results_q.put(("ready", {**worker.startup_so_far(), **me}))
    except BaseException as e:  # noqa: BLE001 - reported to the runner, which fails the run
        msg = " ".join(str(e).split())[:300]
        results_q.put(("error", f"worker process {index} failed: {type(e).__name__}: {msg}"))
        results_q.close()
        results_q.join_thread()
        sys.exit(1)
    results_q.put(("exit", index))
    results_q.close()
    results_q.join_thread()


def _preloaded() -> dict:
    """``{"preload": facts}`` when this worker is a fork of the run's forkserver (its vendor imports were done
    there, once for every worker: :data:`harness.run.preload.FACTS`); else ``{}``."""
    mod = sys.modules.get("harness.run.preload")
    facts = getattr(mod, "FACTS", None)
    return {"preload": dict(facts)} if facts else {}
