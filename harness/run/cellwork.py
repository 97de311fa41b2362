"""Scoring cells: the one piece of code that turns a (case, metric) cell into a finished cell.

A :class:`CellWorker` owns what scoring needs in one process: a gateway attached to the running event
loop (in-process transport, no socket), the shared HTTP client pools and the upstream judge. The
runner uses one in its own process (``--workers 1``); :mod:`harness.run.workers` runs one per worker
process and :mod:`harness.run.rayrun` one per Ray actor. Everything a worker needs crosses a process
boundary as plain picklable data: a :class:`WorkerSpec` once, a :class:`CellTask` per cell, a
:class:`CellDone` back.

The single writer. Only the runner's process writes the run store and the judge cache. A worker in
another process reads the cache read-only (:class:`ReadOnlyCache`: SQLite opened ``mode=ro``, so
record and replay hit what earlier runs stored) and hands every response it would have stored back
with the next finished cell (``CellDone.cache_entries``); the runner writes them. A response recorded
by one worker is therefore visible to the others once the runner has written it; until then an
identical request in another cell is a miss and goes upstream once more (record mode only: a
reference-judge request's key carries its case and metric, so two cells never share one).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field, replace

from harness.cases.load import remember_digest
from harness.core import redact
from harness.core.aligner import place_units
from harness.core.records import Case, CellResult, Ledger
from harness.core.threads import plain_thread_pool
from harness.judge import minilm
from harness.judge.embeddings import is_embedded, make_upstream
from harness.judge.gateway import Gateway
from harness.judge.pace import Pace
from harness.judge.readonly_cache import ReadOnlyCache
from harness.judge.transport import GatewayTransport
from harness.judge.upstream import (
    DEFAULT_MAX_REPLY_BYTES,
    Cell,
    HttpUpstream,
    ReferenceUpstream,
    RetryPolicy,
    repeat_label,
)
from harness.metric import registry
from harness.metric.endpoint import Endpoint
from harness.metric.http import Pools
from harness.metric.vendor_env import IMPORT_LOCK
from harness.run.stages import needs_import

CELL_GRACE_S = 10.0
"""After its judge calls' budget, a cell's vendor code gets this long to report the failure before the
runner ends the cell itself."""


def usable_cores() -> list[int] | None:
    """The cores this process may run on (its affinity mask), or None where the OS does not say."""

    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return None


class WorkerFailed(RuntimeError):
    """A worker process or actor failed or died; the finished cells are stored, the run can be resumed."""


@dataclass(frozen=True)
class WorkerSpec:
    """What any worker needs to score any cell of a run (picklable; no key, only its env var's name)."""

    run_id: str
    judge: object
    """The run's :class:`harness.run.runner.JudgeConfig`."""
    mode: str
    """Effective cache mode: live | record | replay."""
    cache_path: str | None
    retry_attempts: int
    retry_base_delay_s: float
    call_timeout_s: float
    cell_timeout_s: float
    client_timeout_s: float
    concurrency: int
    """Cells in flight in this worker."""
    upstream_wrapper: object = None
    """Optional callable(upstream) -> upstream (fault injection), as in ``RunOptions``."""
    embeddings: object = None
    """``harness.judge.embeddings.EmbedConfig`` of the gateway's /v1/embeddings route (None: the embedded model)."""
    metric_args: dict = field(default_factory=dict)
    """metric name -> keyword arguments of its adapter class, as in ``RunOptions``."""
    judge_rpm: float | None = None
    """This worker's share of ``--judge-rpm`` (the run's limit divided among its workers); None: unpaced."""
    judge_tpm: float | None = None
    """This worker's share of ``--judge-tpm``; None: unpaced."""
    judge_window_s: float = 60.0
    """The window the judge's per-minute limits are kept over (``--judge-window``)."""
    log_dir: str | None = None
    """The run directory: a worker process writes its vendors' log records to ``vendor-w<N>.log`` there."""
    judge_batch: object = None
    """Batch mode's :class:`harness.judge.batch.BatchConfig` (``--judge-batch``); None: calls go to the judge one by one."""
    batch_store: str | None = None
    """Batch mode: the run store, where the batches in flight are recorded (one worker, the runner's process)."""


@dataclass(frozen=True)
class CellTask:
    """One cell to compute."""

    case: Case
    metric: str
    digest: str
    """The case's digest (the runner computed it once)."""
    repeat: int = 0
    """Which repeat of ``--repeats`` (0: the run's own cell)."""


@dataclass
class CellDone:
    """One finished cell, as the runner stores it."""

    case_id: str
    metric: str
    version: str
    digest: str
    result: CellResult
    ledger: Ledger
    calls: list
    wall_ms: float
    cache_entries: list = field(default_factory=list)
    """(key, request body, response) the worker's gateway would have cached: the runner writes them."""
    report: object = None
    """What the upstream wrapper observed since the last cell (fault events), for the runner's copy."""
    repeat: int = 0
    """Which repeat of ``--repeats`` it is."""


def make_gateway(spec: WorkerSpec, cases: dict, cache):
    """The gateway of one worker: the run's upstream judge (wrapped for fault injection), ``cache``
    (None in live mode) and the run's retry policy."""

    judge = spec.judge
    if judge.is_reference:
        upstream = ReferenceUpstream(cases, latency_ms=judge.latency_ms)
    else:
        if judge.key_env and not os.environ.get(judge.key_env) and spec.mode != "replay":
            # a Ray actor reads the key from its own node's environment: without it every request would
            # go out with no Authorization header, under a run header saying "key from $VAR"
            raise WorkerFailed(f"--judge-key-env {judge.key_env}: the variable {judge.key_env} is not set in this "
                               f"worker's environment (host {socket.gethostname()}); set it where the workers run")
        upstream = HttpUpstream(judge.url, judge.model, judge.key_env, timeout_s=spec.call_timeout_s,
                                max_reply_bytes=getattr(judge, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES),
                                key_confined=getattr(judge, "key_confined", False))
    batch = None
    if spec.judge_batch is not None:   # the judge through its batch API: a call waits for its batch
        from harness.judge.batch import BatchUpstream  # noqa: PLC0415 - lazy: batch mode only

        upstream = batch = BatchUpstream(upstream, spec.judge_batch, spec.batch_store)
    if spec.upstream_wrapper is not None:
        upstream = spec.upstream_wrapper(upstream)
    policy = RetryPolicy(max_attempts=spec.retry_attempts, base_delay_s=spec.retry_base_delay_s,
                         timeout_s=spec.call_timeout_s + (spec.judge_batch.wait_s if batch is not None else 0))

    embeddings = make_upstream(spec.embeddings, spec.call_timeout_s)
    if spec.upstream_wrapper is not None:   # fault injection reaches the embedding calls too
        wrapped = spec.upstream_wrapper(embeddings)
        if callable(getattr(type(wrapped), "embed", None)):
            embeddings = wrapped
    pace = Pace(spec.judge_rpm, spec.judge_tpm, window_s=spec.judge_window_s) if spec.judge_rpm or spec.judge_tpm else None
    return Gateway(upstream, cache=cache, mode=spec.mode, policy=policy, embeddings=embeddings, cases=cases, pace=pace,
                   batch=batch)


class CellWorker:
    """Scores cells in the running event loop: :meth:`start`, then :meth:`score` (concurrently), then
    :meth:`close`. ``cache``: the runner's own :class:`~harness.judge.cache.JudgeCache` when it runs in the
    runner's process; None in a worker process (a :class:`ReadOnlyCache` then, outside live mode).
    ``remote``: the worker runs in another process than the runner (new cache entries and the fault
    injector's events go back with each finished cell)."""

    def __init__(self, spec: WorkerSpec, cache=None, *, remote: bool = False):
        self.spec = spec
        self.cache = cache
        self.remote = remote
        self._cases: dict[tuple[str, str], Case] = {}
        self._users: dict[str, int] = {}
        self._classes: dict[str, type] = {}
        self.gateway = None
        self.pools = None
        self._ready: dict = {}
        self.startup: dict | None = None
        """Once the vendor imports are done: which metrics' vendors, when they were ready (epoch
        seconds), their wall and CPU seconds (start-up a worker pays once; the run store keeps it), and
        the cores this process may run on (one: a pinned worker, :func:`harness.run.workers.worker_cores`)."""

    def prepare(self, metrics, on_ready=None) -> None:
        """Import each metric's vendor stack once per process, in a background thread, in the order given:
        cells start at once, and a cell waits only for its own vendor (``inhouse.span`` for none), so
        the judge is kept busy while the vendor stacks import. A failed import is that metric's cells'
        error, named. ``on_ready(facts)``, if given, is called from that thread once every import is done
        (:attr:`startup`)."""

        order = [n for n in metrics if needs_import(self._cls(n))]
        self._ready = {n: concurrent.futures.Future() for n in order}
        began = time.time()
        self._began = (order, began)
        # Cells that need no vendor run while the vendors import, and two threads importing one module at
        # once can leave it half made: what those cells import lazily is imported here first (the
        # aligner's rapidfuzz; the embedded model's runtime, ~0.25 s of CPU, which it imports under
        # harness.metric.vendor_env.IMPORT_LOCK: a vendor-free cell's first embedding would otherwise wait on that
        # lock through every vendor's import in the thread below).
        import rapidfuzz.fuzz  # noqa: F401, PLC0415 - lazy: imported once per worker before its threads start
        if order and len(order) < len(metrics) and is_embedded(self.spec.embeddings):
            try:
                minilm.import_runtime()
            except Exception:  # noqa: BLE001 - the cells that embed meet it again and say so
                pass

        def load() -> None:

            for n in order:
                try:
                    with IMPORT_LOCK:
                        self._cls(n).prepare()
                    self._ready[n].set_result(None)
                except BaseException as e:  # noqa: BLE001 - reported by each of the metric's cells
                    self._ready[n].set_exception(e)
            self.startup = {"metrics": order, "ready": time.time(), "import_s": round(time.time() - began, 3),
                            "import_cpu_s": round(time.thread_time(), 3), "cores": usable_cores()}
            if on_ready is not None:
                on_ready(self.startup)

        threading.Thread(target=load, name="harness-vendor-import", daemon=True).start()

    def startup_so_far(self) -> dict:
        """The start-up facts of a worker whose vendor imports had not all finished when its cells ran out
        (``imported``: the metrics whose vendor was ready)."""
        order, began = getattr(self, "_began", ([], time.time()))
        return {"metrics": order, "ready": None, "import_s": None, "unfinished": True,
                "imported": [n for n in order if self._ready[n].done()], "waited_s": round(time.time() - began, 3),
                "cores": usable_cores()}

    async def _vendor_ready(self, name: str) -> str | None:
        """None once the metric's vendor is imported; else why it could not be."""
        fut = self._ready.get(name)
        if fut is None:
            return None
        try:
            await asyncio.shield(asyncio.wrap_future(fut)) if not fut.done() else fut.result()
        except Exception as e:  # noqa: BLE001
            return f"importing the vendor of {name} failed: {error_reason(e)}"
        return None

    def _cls(self, name: str):
        cls = self._classes.get(name)
        if cls is None:

            cls = self._classes[name] = registry.get(name)
        return cls

    async def start(self) -> "CellWorker":

        # batch mode: a sync vendor's call holds its thread until the batch returns, so every cell in flight
        # needs one (else the round never completes: harness.judge.batch)
        threads = self.spec.concurrency * 2 + 4 if self.spec.judge_batch is not None else None
        asyncio.get_running_loop().set_default_executor(plain_thread_pool(threads, prefix="harness-sync"))
        if self.remote and self.spec.mode != "live":
            self.cache = ReadOnlyCache(self.spec.cache_path)
        self.gateway = make_gateway(self.spec, self._cases, self.cache).attach()
        self.pools = Pools(max_connections=max(16, self.spec.concurrency * 4),
                           transport=GatewayTransport(self.gateway))
        return self

    async def close(self) -> None:
        try:
            if self.pools is not None:
                await self.pools.aclose()
        finally:
            if self.gateway is not None:
                await self.gateway.aclose()
            if isinstance(self.cache, ReadOnlyCache):
                self.cache.close()

    async def score(self, task: CellTask) -> CellDone:
        """Compute one cell: the adapter through this worker's gateway, its ledger and calls."""
        case, name = task.case, task.metric
        run_id = repeat_label(self.spec.run_id, task.repeat)   # a repeat is a cell of its own in the gateway
        cls = self._cls(name)
        failed = await self._vendor_ready(name)
        if failed is not None:
            return CellDone(case.id, name, cls.version, task.digest, CellResult.error(failed), Ledger(), [], 0.0,
                            repeat=task.repeat)
        if self.remote:

            remember_digest(case, task.digest)
        self._cases[(run_id, case.id)] = case
        self._users[case.id] = self._users.get(case.id, 0) + 1
        try:
            t0 = time.perf_counter()
            args = self.spec.metric_args.get(name)
            result, ledger, calls = await run_cell(self.gateway, functools.partial(cls, **args) if args else cls,
                                                   run_id, case, name, self.spec.judge.model, self.pools,
                                                   self.spec.client_timeout_s, self.spec.cell_timeout_s)
            wall_ms = (time.perf_counter() - t0) * 1000.0
        finally:
            self._users[case.id] -= 1
            if not self._users[case.id]:        # the case's last cell here: forget it (memory stays flat)
                del self._users[case.id]
                self._cases.pop((run_id, case.id), None)
        done = CellDone(case.id, name, cls.version, task.digest, result, ledger, calls, wall_ms, repeat=task.repeat)
        if self.remote:
            done.cache_entries = self.cache.drain() if isinstance(self.cache, ReadOnlyCache) else []
            take = getattr(self.spec.upstream_wrapper, "take_report", None)
            done.report = take() if callable(take) else None
        return done


def store_done(store, cache, wrapper, done: CellDone) -> None:
    """The runner's side (the single writer): store a finished cell and what came back with it."""
    if cache is not None:
        for key, body, response in done.cache_entries:
            cache.put(key, body, response)
    if done.report is not None and callable(getattr(wrapper, "absorb", None)):
        wrapper.absorb(done.report)
    store.write_cell(done.case_id, done.metric, done.version, done.digest, done.result, done.ledger, done.calls,
                     done.wall_ms, repeat=done.repeat, vendor=vendor_versions(done.metric))


@functools.lru_cache(maxsize=None)
def vendor_versions(metric: str) -> str:
    """The metric's vendor distributions and their installed versions, as the drift sentinel records them
    (``deepeval 4.3.1, openai 1.109.1``; "" for a metric that names none)."""
    from harness.run.spec import package_versions  # noqa: PLC0415 - lazy: importlib.metadata only when a cell is stored

    try:
        names = registry.get(metric).vendor_packages or ()
    except Exception:  # noqa: BLE001 - an unknown metric's cell records no vendor
        return ""
    return ", ".join(f"{p} {v or 'not installed'}" for p, v in package_versions(names).items())


async def run_in_process(spec: WorkerSpec, tasks, metrics, cache, on_done, on_ready=None) -> None:
    """Score ``tasks`` in this process and event loop, ``spec.concurrency`` cells at a time, taken from
    the iterable as slots free up (a million cells are never a million coroutines). ``on_ready``: as
    in :meth:`CellWorker.prepare` (called from the import thread)."""
    worker = CellWorker(spec, cache=cache)
    worker.prepare(metrics, on_ready=on_ready)
    await worker.start()
    running: set = set()

    async def one(task: CellTask) -> None:
        on_done(await worker.score(task))

    try:
        for task in tasks:
            while len(running) >= spec.concurrency:
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                raise_first(finished)
            running.add(asyncio.create_task(one(task)))
        while running:
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            raise_first(finished)
    finally:
        for t in running:
            if t.done():
                raise_first((t,), quiet=True)   # its failure is read, not left for asyncio to print
            else:
                t.cancel()
        await worker.close()


def raise_first(finished, quiet: bool = False) -> None:
    """Read every finished task's outcome (so none is reported as "never retrieved") and raise the first
    failure, unless ``quiet``."""
    errors = [f.exception() for f in finished if not f.cancelled() and f.exception() is not None]
    if errors and not quiet:
        raise errors[0]


async def run_cell(gateway, cls, run_id: str, case: Case, name: str, model: str, pools,
                   client_timeout_s: float, cell_timeout_s: float):
    """One cell from start to end, the only place that does it (the runner and the tests' scorer
    both call it): the adapter scores the case through the cell's gateway URL, the calls still in
    flight settle, and the cell's ledger and call records are taken. Returns (result, ledger, calls)."""


    endpoint = Endpoint(gateway.cell_url(run_id, case.id, name), model, timeout_s=client_timeout_s, pool=pools,
                        batched=bool(getattr(gateway, "batched", False)))
    gateway.budgets.open(Cell(run_id, case.id, name), cell_timeout_s)   # every judge call ends by then
    result = await score_cell(cls, case, endpoint, cell_timeout_s + CELL_GRACE_S,
                              lambda: gateway.peek(run_id, case.id, name))
    await gateway.settle(run_id, case.id, name, endpoint.timeout_s)   # calls still in flight count too
    ledger, calls = gateway.take(run_id, case.id, name)
    result = judge_failures_are_errors(result, ledger)
    if result.status in ("error", "vendor_nan") and any(getattr(c, "ok", True) and not getattr(c, "usage", True)
                                                        for c in calls):   # a reply came, without usage
        result = replace(result, reason=f"{result.reason} | the judge's replies carried no readable usage "
                                        f"(absent, or token counts that are not integers)")
    return result, ledger, calls


async def score_cell(cls, case: Case, endpoint: Endpoint, timeout_s: float, peek=None) -> CellResult:
    """Run one adapter on one case; any exception becomes that cell's error with a short reason."""
    try:
        result = await asyncio.wait_for(cls().score(case, endpoint), timeout=timeout_s)
        if not isinstance(result, CellResult):
            return CellResult.error(f"adapter returned {type(result).__name__}, not CellResult")
        return place_units(case, result)   # every unit's span in the answer, with how it was found
    except asyncio.CancelledError:
        raise
    except asyncio.TimeoutError:
        return CellResult.error(f"cell timed out after {timeout_s:g}s")
    except Exception as e:  # noqa: BLE001 - isolation: a cell's failure is that cell's error
        return CellResult.error(error_reason(e, peek() if peek else None),
                                detail={"raised_in": raised_in(e), "exception": vendor_exception(e)})


def judge_failures_are_errors(result: CellResult, ledger) -> CellResult:
    """A cell any of whose judge calls failed (after the gateway's retries) is an error, whatever the
    vendor made of the failure (NaN, a score from the calls that did answer, "unscored"): an outage is
    never a finished cell, so a resume recomputes it. What the vendor returned is kept in ``detail``.

    >>> from harness.core.records import Ledger
    >>> judge_failures_are_errors(CellResult.vendor_nan("no statements"), Ledger(calls=2, errors=2,
    ...     last_error="judge HTTP 500")).reason
    '2 of 2 judge call(s) failed (the vendor returned vendor_nan): judge HTTP 500'
    >>> judge_failures_are_errors(CellResult.scored(0.5), Ledger(calls=2)).status
    'scored'
    """
    if result.status == "error" or not getattr(ledger, "errors", 0):
        return result
    got = result.status + (f" {result.score:g}" if result.score is not None else "")
    reason = f"{ledger.errors} of {ledger.calls} judge call(s) failed (the vendor returned {got})"
    if ledger.last_error:
        reason += f": {redact.cut(ledger.last_error, 200)}"
    detail = {**result.detail, "vendor_status": result.status, "vendor_score": result.score,
              "vendor_reason": result.reason, "vendor_flags": list(result.flags)}
    return CellResult.error(reason, result.units, detail=detail)


def vendor_exception(exc: BaseException) -> str:
    """The qualified type of the exception behind ``exc`` that the vendor's code raised: a wrapper of the
    project's own (a class under ``harness.adapters.`` or ``harness.``, raised ``from`` the vendor's exception, as
    ``RagasStepError`` names the failed step) is unwrapped to its cause, so a failure compares with stock
    use by the vendor's exception (builtins unqualified, as the stock-parity scripts name them).

    >>> class StepError(RuntimeError): pass
    >>> StepError.__module__ = "harness.adapters.x"
    >>> try:
    ...     try:
    ...         raise KeyError("k")
    ...     except KeyError as inner:
    ...         raise StepError("step 'nli' failed") from inner
    ... except StepError as e:
    ...     vendor_exception(e)
    'KeyError'
    """
    while type(exc).__module__.split(".")[0] in ("adapters", "harness") and exc.__cause__ is not None:
        exc = exc.__cause__
    kind = type(exc)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def raised_in(exc: BaseException) -> str:
    """The module whose code raised ``exc``: the innermost frame of its traceback outside the standard
    library and pydantic (``json.loads`` failing inside a vendor's parser is the vendor's), so an error
    of the harness's own code (``harness.``, ``harness.adapters.``) is told from a vendor's; "" if unknown.

    >>> def vendor_parse():
    ...     import json
    ...     return json.loads("not json")
    >>> try:
    ...     vendor_parse()
    ... except ValueError as e:
    ...     raised_in(e)
    'harness.run.cellwork'
    """
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_globals.get("__name__", ""))
        tb = tb.tb_next
    for name in reversed(frames):
        top = name.split(".")[0]
        if name and top not in sys.stdlib_module_names and top not in ("pydantic", "pydantic_core"):
            return name
    return frames[-1] if frames else ""


def error_reason(exc: BaseException, ledger=None, limit: int = 300) -> str:
    """A short reason: the exception type and message, plus the judge's last error if any."""
    msg = " ".join(str(exc).split()) or repr(exc)
    reason = f"{type(exc).__name__}: {msg}"
    if len(reason) > limit:
        reason = redact.cut(reason, limit - 3) + "..."
    last = getattr(ledger, "last_error", None)
    if last and last[:60] not in reason:
        reason += f" | judge: {redact.cut(last, 200)}"
    return reason
