"""Run every (case, metric) cell concurrently, isolated, resumable, through one gateway."""
from __future__ import annotations

import asyncio
import functools
import os
import sys
import time
from dataclasses import dataclass, field, replace

from harness.budget import DEFAULT_CELL_TIMEOUT_S
from harness.cases import CaseSet, case_digest
from harness.gateway import Gateway
from harness.metric import Endpoint
from harness.model import Case, CellResult
from harness.store import RunStore, StoreWriteError
from harness.upstream import Cell


CELL_GRACE_S = 10.0
"""After its judge calls' budget, a cell's vendor code gets this long to report the failure before the
runner ends the cell itself."""


@dataclass(frozen=True)
class JudgeConfig:
    """Which judge serves the run. ``url`` None means the embedded reference judge."""

    url: str | None = None
    """OpenAI-compatible base URL (``.../v1``); None: the reference judge."""
    model: str = "reference-judge"
    """Model id sent upstream (pin a dated id for a cache that stays valid)."""
    key_env: str | None = None
    """NAME of the environment variable holding the key (the key itself is never stored)."""
    latency_ms: float = 0.0
    """Injected latency per call, reference judge only (benchmarks)."""

    @property
    def is_reference(self) -> bool:
        return self.url is None

    def describe(self) -> str:
        if self.is_reference:
            return "reference (annotation-driven, offline)"
        from harness.redact import url_without_credentials

        url = url_without_credentials(self.url)
        return f"{self.model} at {url}" + (f" (key from ${self.key_env})" if self.key_env else " (no key)")


@dataclass
class RunOptions:
    """Everything ``harness run`` takes."""

    cases: CaseSet
    metrics: list[str]
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    cache_mode: str = "auto"
    cache_path: str | None = None
    concurrency: int = 8
    out_dir: str = "reports/out"
    run_id: str | None = None
    progress: bool = True
    cell_timeout_s: float = DEFAULT_CELL_TIMEOUT_S
    """Total seconds per cell, every judge call, retry and wait included (``harness.budget``)."""
    retry_attempts: int = 4
    retry_base_delay_s: float = 0.5
    call_timeout_s: float = 120.0
    upstream_wrapper: object = None
    """Optional callable(upstream) -> upstream (fault injection)."""
    embeddings: object = None
    """``harness.embeddings.EmbedConfig`` of the gateway's /v1/embeddings route; None: the embedded model."""
    metric_args: dict = field(default_factory=dict)
    """metric name -> keyword arguments of its adapter class (e.g. a similarity threshold); in the spec."""
    prices: dict | None = None
    """The user's price table, as ``harness.accounting.prices_from_args`` gives it (kept in the run spec)."""


@dataclass
class RunOutcome:
    run_id: str
    run_dir: str
    store_path: str
    computed: int
    reused: int
    counts: dict  # metric -> {status: n}


def client_timeout(opts: RunOptions) -> float:
    """How long an adapter's client waits for one gateway answer: every attempt, every backoff wait
    (Retry-After included, each capped at the policy's max delay), and a margin."""
    from harness.upstream import RetryPolicy

    waits = (opts.retry_attempts - 1) * RetryPolicy().max_delay_s
    return opts.call_timeout_s * opts.retry_attempts + waits + 30


def default_run_id() -> str:
    return time.strftime("run-%Y%m%d-%H%M%S")


def effective_cache_mode(opts: RunOptions) -> str:
    """``auto``: live for the reference judge (free and deterministic), record for a real judge."""
    if opts.cache_mode != "auto":
        return opts.cache_mode
    return "live" if opts.judge.is_reference else "record"


def run(opts: RunOptions) -> RunOutcome:
    """Run (or resume) a run; returns where it went and what it counted."""
    from harness import registry

    classes = {name: registry.get(name) for name in opts.metrics}
    if opts.judge.is_reference:   # before any cell runs, before the store is created
        from harness.reference import refuse_unannotated

        refuse_unannotated(opts.cases)
    from harness.rundir import RunLock, check_run_id

    run_id = check_run_id(opts.run_id or default_run_id())
    run_dir = os.path.join(opts.out_dir, run_id)
    os.makedirs(run_dir, exist_ok=True)
    with RunLock(run_dir, run_id):        # one process per run: a second is refused at once
        return _run_locked(opts, run_id, run_dir, classes)


def _run_locked(opts: RunOptions, run_id: str, run_dir: str, classes: dict) -> RunOutcome:
    from harness.spec import build_spec

    store = RunStore.create(run_dir)
    mode = effective_cache_mode(opts)
    spec = build_spec(opts, run_id, mode, classes)
    old = store.spec()
    if old and old.get("judge") != spec["judge"]:
        store.close()
        raise ValueError(f"run {run_id!r} exists with another judge ({old.get('judge')}); use a new --run-id")
    for key in ("embeddings", "metric_args"):
        if old and key in old and old[key] != spec[key]:
            store.close()
            raise ValueError(f"run {run_id!r} exists with other {key} ({old[key]}); use a new --run-id")
    store.write_spec(spec)
    store.write_cases(opts.cases)
    import json

    try:
        with open(os.path.join(run_dir, "spec.json"), "w") as fh:
            json.dump(spec, fh, indent=2, sort_keys=True)
    except OSError as e:
        store.close()
        raise StoreWriteError(os.path.join(run_dir, "spec.json"), e) from None
    try:
        computed, reused = asyncio.run(_run_cells(opts, run_id, store, classes, mode))
        counts = status_counts(store)
    finally:
        store.close()
    return RunOutcome(run_id, run_dir, os.path.join(run_dir, RunStore.FILENAME), computed, reused, counts)


def _make_gateway(opts: RunOptions, run_id: str, mode: str) -> Gateway:
    from harness.cache import JudgeCache
    from harness.upstream import HttpUpstream, ReferenceUpstream, RetryPolicy

    if opts.judge.is_reference:
        upstream = ReferenceUpstream({(run_id, c.id): c for c in opts.cases}, latency_ms=opts.judge.latency_ms)
    else:
        upstream = HttpUpstream(opts.judge.url, opts.judge.model, opts.judge.key_env, timeout_s=opts.call_timeout_s)
    if opts.upstream_wrapper is not None:
        upstream = opts.upstream_wrapper(upstream)
    cache = None
    if mode != "live":
        path = opts.cache_path or os.path.join(opts.out_dir, "judge-cache.sqlite")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        cache = JudgeCache(path)
    policy = RetryPolicy(max_attempts=opts.retry_attempts, base_delay_s=opts.retry_base_delay_s,
                         timeout_s=opts.call_timeout_s)
    from harness.embeddings import make_upstream

    return Gateway(upstream, cache=cache, mode=mode, policy=policy,
                   embeddings=make_upstream(opts.embeddings, opts.call_timeout_s))


async def _run_cells(opts: RunOptions, run_id: str, store: RunStore, classes: dict, mode: str) -> tuple[int, int]:
    from harness.http import Pools

    done = store.finished()
    digests = {case.id: case_digest(case) for case in opts.cases}
    todo: list[tuple[Case, str]] = []
    reused = 0
    for case in opts.cases:
        for name, cls in classes.items():
            if done.get((case.id, name)) == (digests[case.id], cls.version):
                reused += 1
            else:
                todo.append((case, name))
    if not todo:
        if opts.progress:
            print(f"resume: all {reused} cell(s) already finished; nothing to compute", file=sys.stderr)
        return 0, reused
    for name in dict.fromkeys(name for _, name in todo):   # import a vendor only if a cell needs it
        prepare = getattr(classes[name], "prepare", None)
        if callable(prepare):
            prepare()
    from harness.transport import GatewayTransport

    gateway = _make_gateway(opts, run_id, mode).attach()   # in-process: the clients' transport calls it
    pools = Pools(max_connections=max(16, opts.concurrency * 4), transport=GatewayTransport(gateway))
    sem = asyncio.Semaphore(max(1, opts.concurrency))
    progress = Progress(len(todo), reused, enabled=opts.progress)

    async def one(case: Case, name: str):
        async with sem:
            cls = classes[name]
            t0 = time.perf_counter()
            args = opts.metric_args.get(name)
            result, ledger, calls = await run_cell(gateway, functools.partial(cls, **args) if args else cls, run_id,
                                                   case, name, opts.judge.model, pools, client_timeout(opts),
                                                   opts.cell_timeout_s)
            store.write_cell(case.id, name, cls.version, digests[case.id], result, ledger, calls,
                             (time.perf_counter() - t0) * 1000.0)
            progress.tick(result.status)

    tasks = [asyncio.ensure_future(one(c, n)) for c, n in todo]
    try:
        await asyncio.gather(*tasks)
    finally:   # on a failure (the store cannot be written), end the other cells here, quietly
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        progress.close()
        await pools.aclose()
        await gateway.aclose()
    return len(todo), reused


async def run_cell(gateway: Gateway, cls, run_id: str, case: Case, name: str, model: str, pools,
                   client_timeout_s: float, cell_timeout_s: float):
    """One cell from start to end, the only place that does it (the runner and the tests' scorer
    both call it): the adapter scores the case through the cell's gateway URL, the calls still in
    flight settle, and the cell's ledger and call records are taken. Returns (result, ledger, calls)."""
    endpoint = Endpoint(gateway.cell_url(run_id, case.id, name), model, timeout_s=client_timeout_s, pool=pools)
    gateway.budgets.open(Cell(run_id, case.id, name), cell_timeout_s)   # every judge call ends by then
    result = await score_cell(cls, case, endpoint, cell_timeout_s + CELL_GRACE_S,
                              lambda: gateway.peek(run_id, case.id, name))
    await gateway.settle(run_id, case.id, name, endpoint.timeout_s)   # calls still in flight count too
    ledger, calls = gateway.take(run_id, case.id, name)
    result = judge_failures_are_errors(result, ledger)
    if result.status in ("error", "vendor_nan") and not all(getattr(c, "usage", True) for c in calls):
        result = replace(result, reason=f"{result.reason} | the judge's replies carried no readable usage "
                                        f"(absent, or token counts that are not integers)")
    return result, ledger, calls


async def score_cell(cls, case: Case, endpoint: Endpoint, timeout_s: float, peek=None) -> CellResult:
    """Run one adapter on one case; any exception becomes that cell's error with a short reason."""
    try:
        result = await asyncio.wait_for(cls().score(case, endpoint), timeout=timeout_s)
        if not isinstance(result, CellResult):
            return CellResult.error(f"adapter returned {type(result).__name__}, not CellResult")
        from harness.aligner import place_units

        return place_units(case, result)   # every unit's span in the answer, with how it was found
    except asyncio.CancelledError:
        raise
    except asyncio.TimeoutError:
        return CellResult.error(f"cell timed out after {timeout_s:g}s")
    except Exception as e:  # noqa: BLE001 - isolation: a cell's failure is that cell's error
        return CellResult.error(error_reason(e, peek() if peek else None))


def judge_failures_are_errors(result: CellResult, ledger) -> CellResult:
    """A cell any of whose judge calls failed (after the gateway's retries) is an error, whatever the
    vendor made of the failure (NaN, a score from the calls that did answer, "unscored"): an outage is
    never a finished cell, so a resume recomputes it. What the vendor returned is kept in ``detail``.

    >>> from harness.model import Ledger
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
        reason += f": {ledger.last_error[:200]}"
    detail = {**result.detail, "vendor_status": result.status, "vendor_score": result.score,
              "vendor_reason": result.reason, "vendor_flags": list(result.flags)}
    return CellResult.error(reason, result.units, detail=detail)


def error_reason(exc: BaseException, ledger=None, limit: int = 300) -> str:
    """A short reason: the exception type and message, plus the judge's last error if any."""
    msg = " ".join(str(exc).split()) or repr(exc)
    reason = f"{type(exc).__name__}: {msg}"
    if len(reason) > limit:
        reason = reason[: limit - 3] + "..."
    last = getattr(ledger, "last_error", None)
    if last and last[:60] not in reason:
        reason += f" | judge: {last[:200]}"
    return reason


def status_counts(store: RunStore) -> dict:
    out: dict = {}
    for metric, status, n in store.rows("SELECT metric, status, COUNT(*) FROM cells GROUP BY metric, status"):
        out.setdefault(metric, {})[status] = n
    return out


class Progress:
    """A progress bar on a terminal; a line per ~10 % elsewhere (logs, CI)."""

    def __init__(self, total: int, reused: int, enabled: bool = True):
        self.total, self.done, self.errors = total, 0, 0
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._bar = None
        self._next = 0.1
        if enabled and reused:
            print(f"resume: {reused} finished cell(s) kept, {total} to compute", file=sys.stderr)
        if enabled and self.tty:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True, mininterval=0.2)

    def tick(self, status: str) -> None:
        self.done += 1
        self.errors += status == "error"
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(1)
            if self.errors:
                self._bar.set_postfix(errors=self.errors)
        elif self.done / self.total >= self._next or self.done == self.total:
            print(f"progress: {self.done}/{self.total} cells ({self.errors} errors)", file=sys.stderr, flush=True)
            while self._next <= self.done / self.total:
                self._next += 0.1

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
