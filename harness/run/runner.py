"""Run every (case, metric) cell concurrently, isolated, resumable, through one gateway."""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass, field, replace

from harness.cases.load import CaseSet, case_digest
from harness.core.records import Case
from harness.core.redact import url_without_credentials
from harness.judge.budget import DEFAULT_CELL_TIMEOUT_S
from harness.judge.cache import JudgeCache
from harness.judge.pace import for_workers
from harness.judge.reference import refuse_unannotated
from harness.judge.upstream import DEFAULT_MAX_REPLY_BYTES, RetryPolicy
from harness.metric import registry
from harness.metric.facts import MetricFacts
from harness.run.cellwork import CellTask, WorkerSpec, run_in_process, store_done
from harness.run.keyguard import confine_key
from harness.run.progress import Progress
from harness.run.rundir import RunLock, check_run_id
from harness.run.spec import build_spec
from harness.run.stages import import_rank, needs_import
from harness.run.vendorlog import VendorLog, log_path, offsets, summary
from harness.store.repeats import finished as finished_repeats
from harness.store.runstore import FINAL, RunStore, StoreWriteError


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
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    """An HTTP judge's reply larger than this is refused, read no further (``--max-reply-mb``)."""
    key_confined: bool = False
    """The key occurs in the run's case text: it is removed from the judge's replies, errors and headers
    only, never from the cases (:mod:`harness.run.keyguard`)."""

    @property
    def is_reference(self) -> bool:
        return self.url is None

    def describe(self) -> str:
        if self.is_reference:
            return "reference (annotation-driven, offline)"

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
    """Total seconds per cell, every judge call, retry and wait included (``harness.judge.budget``)."""
    retry_attempts: int = 4
    retry_base_delay_s: float = 0.5
    call_timeout_s: float = 120.0
    upstream_wrapper: object = None
    """Optional callable(upstream) -> upstream (fault injection)."""
    embeddings: object = None
    """``harness.judge.embeddings.EmbedConfig`` of the gateway's /v1/embeddings route; None: the embedded model."""
    metric_args: dict = field(default_factory=dict)
    """metric name -> keyword arguments of its adapter class (e.g. a similarity threshold); in the spec."""
    prices: dict | None = None
    """The user's price table, as ``harness.judge.accounting.prices_from_args`` gives it (kept in the run spec)."""
    workers: int | None = 1
    """Worker processes (``harness run --workers``); 1 scores in this process; None: picked for the run
    (:func:`harness.run.workers.auto_workers`, the CLI's default)."""
    pin_workers: bool = True
    """With ``workers`` > 1 and no more workers than cores, keep each worker process on a core of its own
    (:func:`harness.run.workers.worker_cores`); False: ``--no-pin``."""
    ray: str | None = None
    """``auto`` or a Ray cluster address: the workers are Ray actors there (``--ray``)."""
    repeats: int = 1
    """Judge every cell this many times (``--repeats``): repeat 0 is the run's cell, the others are kept
    beside it (:mod:`harness.store.repeats`) for the stability figures."""
    judge_rpm: float | None = None
    """The judge's requests per minute as the provider states them (``--judge-rpm``): one pace for every
    metric's calls, shared among the workers (:mod:`harness.judge.pace`); None: unpaced."""
    judge_tpm: float | None = None
    """The judge's tokens per minute as the provider states them (``--judge-tpm``); None: unpaced."""
    judge_window_s: float = 60.0
    """The window the provider enforces its per-minute limits over (``--judge-window``; Azure OpenAI: 10)."""
    judge_batch: object = None
    """Batch mode (``--judge-batch``): a :class:`harness.judge.batch.BatchConfig`; every vendor's judge calls of a
    round go through the provider's batch API, at its batch price (docs/batch.md). None: one call at a time."""
    reuse_cells: bool = True
    """Record / replay: reuse a cell from the cell cache (:mod:`harness.run.cellmemo`); False: ``--recompute``."""


@dataclass
class RunOutcome:
    run_id: str
    run_dir: str
    store_path: str
    computed: int
    reused: int
    counts: dict  # metric -> {status: n}
    repeat_errors: int = 0
    """Cells of repeats 1..K-1 (``--repeats``) that errored: a rerun with the run id resumes them."""


def client_timeout(opts: RunOptions) -> float:
    """How long an adapter's client waits for one gateway answer: every attempt, every backoff wait
    (Retry-After included, each capped at the policy's max delay), and a margin."""

    waits = (opts.retry_attempts - 1) * RetryPolicy().max_delay_s
    return opts.call_timeout_s * opts.retry_attempts + waits + 30


def default_run_id() -> str:
    """``run-<date>-<time>-<6 random hex digits>``: two runs started in the same second (two threads of
    a notebook, two terminals) get two directories.

    >>> a, b = default_run_id(), default_run_id()
    >>> a != b and a.startswith("run-") and len(a) == len("run-20261201-120000-0a1b2c")
    True
    """
    return f"{time.strftime('run-%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def effective_cache_mode(opts: RunOptions) -> str:
    """``auto``: live for the reference judge (free and deterministic), record for a real judge."""
    if opts.cache_mode != "auto":
        return opts.cache_mode
    return "live" if opts.judge.is_reference else "record"


def run(opts: RunOptions) -> RunOutcome:
    """Run (or resume) a run; returns where it went and what it counted."""

    classes = {name: registry.get(name) for name in opts.metrics}
    if opts.judge.is_reference:   # before any cell runs, before the store is created

        refuse_unannotated(opts.cases)

    if opts.judge.key_env:   # a key that is also case text: said now, kept out of the judge's text only
        opts.judge = confine_key(opts.judge, opts.cases)
    run_id = check_run_id(opts.run_id or default_run_id())
    if opts.ray:   # no cluster there: one clear error (RayUnavailable) before the run directory is made
        from harness.run.rayrun import connect  # noqa: PLC0415 - lazy: Ray is an optional extra, slow to import

        connect(opts.ray)
    run_dir = os.path.join(opts.out_dir, run_id)
    os.makedirs(run_dir, exist_ok=True)
    with RunLock(run_dir, run_id):        # one process per run: a second is refused at once
        return _run_locked(opts, run_id, run_dir, classes)


def _run_locked(opts: RunOptions, run_id: str, run_dir: str, classes: dict) -> RunOutcome:

    store = RunStore.create(run_dir)
    mode = effective_cache_mode(opts)
    spec = build_spec(opts, run_id, mode, classes)
    old = store.spec()
    if old and old.get("judge") != spec["judge"]:
        store.close()
        raise ValueError(f"run {run_id!r} exists with another judge ({old.get('judge')}); use a new --run-id")
    for key in ("embeddings", "metric_args"):
        if old and key in old and _differ(key, old[key], spec[key]):
            store.close()
            raise ValueError(f"run {run_id!r} exists with other {key} ({old[key]}); use a new --run-id")
    store.write_spec(spec)
    store.write_metric_facts(MetricFacts.of(c) for c in classes.values())
    store.write_cases(opts.cases)

    try:
        with open(os.path.join(run_dir, "spec.json"), "w") as fh:
            json.dump(spec, fh, indent=2, sort_keys=True)
    except OSError as e:
        store.close()
        raise StoreWriteError(os.path.join(run_dir, "spec.json"), e) from None
    try:
        since = offsets(run_dir)
        with VendorLog(log_path(run_dir)):   # vendors' log records to vendor.log, not the terminal
            computed, reused = _run_cells(opts, run_id, store, classes, mode, run_dir)
        if opts.progress:
            for line in summary(run_dir, since):
                print(line, file=sys.stderr)
        counts = status_counts(store)
        repeat_errors = store.rows("SELECT COUNT(*) FROM repeat_cells WHERE status = 'error'")[0][0] \
            if opts.repeats > 1 else 0
    finally:
        store.close()
    return RunOutcome(run_id, run_dir, os.path.join(run_dir, RunStore.FILENAME), computed, reused, counts,
                      repeat_errors)


def _differ(key: str, old, new) -> bool:
    """Does a resume change a setting? Metric arguments are compared for the metrics both passes run (a
    cascade's stages resume one run, each pass with its own metric)."""
    if key != "metric_args" or not isinstance(old, dict) or not isinstance(new, dict):
        return old != new
    return any(old[m] != new[m] for m in set(old) & set(new))


def _open_cache(opts: RunOptions, mode: str):
    """The run's judge cache (None in live mode), opened by the runner: its only writer."""

    if mode == "live":
        return None
    path = opts.cache_path or os.path.join(opts.out_dir, "judge-cache.sqlite")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return JudgeCache(path)


def _worker_spec(opts: RunOptions, run_id: str, mode: str, cache, workers: int, remote: bool):

    wrapper = opts.upstream_wrapper
    if remote and callable(getattr(wrapper, "for_worker", None)):
        wrapper = wrapper.for_worker()
    return WorkerSpec(run_id=run_id, judge=opts.judge, mode=mode, cache_path=cache.path if cache is not None else None,
                      retry_attempts=opts.retry_attempts, retry_base_delay_s=opts.retry_base_delay_s,
                      call_timeout_s=opts.call_timeout_s, cell_timeout_s=opts.cell_timeout_s,
                      client_timeout_s=client_timeout(opts), concurrency=max(1, -(-opts.concurrency // workers)),
                      upstream_wrapper=wrapper, embeddings=opts.embeddings, metric_args=dict(opts.metric_args),
                      # each worker paces its share (Ray divides among its actors itself: harness.run.rayrun)
                      judge_window_s=opts.judge_window_s, **dict(zip(("judge_rpm", "judge_tpm"),
                                 for_workers(opts.judge_rpm, opts.judge_tpm, 1 if opts.ray else workers))))


def _run_cells(opts: RunOptions, run_id: str, store: RunStore, classes: dict, mode: str,
               run_dir: str | None = None) -> tuple[int, int]:
    """Compute the cells left to compute, in this process, in ``opts.workers`` processes or on Ray;
    every finished cell is written here (the single writer)."""

    done = store.finished()
    done_repeats = finished_repeats(store, FINAL) if opts.repeats > 1 else {}
    digests = {case.id: case_digest(case) for case in opts.cases}

    def left(case: Case, name: str, repeat: int = 0) -> bool:
        got = done.get((case.id, name)) if repeat == 0 else done_repeats.get((case.id, name, repeat))
        return got != (digests[case.id], classes[name].version)

    # metric by metric: those with no vendor stack to import first (the judge is kept busy while the
    # vendor stacks import), then the others in the order their vendors import (the cheapest first, which the
    # early worker of --workers N scores: harness.run.stages)
    by_import = sorted(classes, key=lambda n: import_rank(classes[n]))

    def tasks():   # streamed to the workers, never a list of every cell
        for name in by_import:
            for case in opts.cases:
                for repeat in range(opts.repeats):
                    if left(case, name, repeat):
                        yield CellTask(case, name, digests[case.id], repeat)

    cache = _open_cache(opts, mode)
    memo = None
    try:  # the cell cache and the judge cache are closed whatever happens
        if cache is not None and opts.reuse_cells and opts.upstream_wrapper is None:
            from harness.run.cellmemo import CellMemo  # noqa: PLC0415 - lazy: loaded only when cells may be reused

            memo = CellMemo(cache.path, store.spec(), run_id)
        needed: dict[str, int] = {}   # metric -> cells left (a vendor is imported only if a cell needs it)
        replayed = 0
        for case in opts.cases:
            for name in classes:
                if left(case, name):
                    hit = memo.lookup(case.id, name, classes[name].version, digests[case.id]) if memo else None
                    if hit is not None:   # the cell cache: the same cell from the same cached answers
                        store_done(store, None, None, hit)
                        done[(case.id, name)] = (digests[case.id], classes[name].version)
                        replayed += 1
                    else:
                        needed[name] = needed.get(name, 0) + 1
                more = sum(left(case, name, r) for r in range(1, opts.repeats))   # --repeats: never from the memo
                if more:
                    needed[name] = needed.get(name, 0) + more
        total = sum(needed.values())
        reused = len(opts.cases) * len(classes) * opts.repeats - total - replayed
        if replayed and opts.progress:
            print(f"cell cache: {replayed} cell(s) reused (same case, metric version, vendor versions and judge; "
                  "every judge answer cached); --recompute runs their vendor code instead", file=sys.stderr)
        if not total:
            if opts.progress and not replayed:
                print(f"resume: all {reused} cell(s) already finished; nothing to compute", file=sys.stderr)
            return replayed, reused
        if opts.judge_batch is not None and opts.ray:
            raise ValueError("--judge-batch gathers the run's judge calls in one process: leave out --ray")
        if opts.judge_batch is not None:   # one gateway gathers every call of a round (and records its batches)
            workers = 1
        elif opts.workers is None:
            from harness.run.workers import auto_workers  # noqa: PLC0415 - lazy: multiprocessing only when asked

            judge_bound = not opts.judge.is_reference   # a real judge; the reference judge stays CPU-bound
            workers = auto_workers(sum(n for m, n in needed.items() if needs_import(classes[m])),
                                   judge_bound)
        else:
            workers = max(1, min(opts.workers, total))
        spec = replace(_worker_spec(opts, run_id, mode, cache, workers, remote=bool(opts.ray) or workers > 1),
                       log_dir=run_dir if workers > 1 and not opts.ray else None)
        if opts.judge_batch is not None:   # a call waits for its batch: the budgets grow by the batch's longest wait
            wait = opts.judge_batch.wait_s
            spec = replace(spec, judge_batch=opts.judge_batch, batch_store=store.path,
                           cell_timeout_s=spec.cell_timeout_s + wait, client_timeout_s=spec.client_timeout_s + wait)
        progress = Progress(total, reused, enabled=opts.progress)
        startup: list = []

        def on_done(cell) -> None:
            store_done(store, cache, opts.upstream_wrapper, cell)
            if memo is not None:
                memo.keep(cell)
            progress.tick(cell.result.status)

        try:
            if opts.ray:
                from harness.run.rayrun import run_on_ray  # noqa: PLC0415 - lazy: loaded only for --ray

                run_on_ray(opts.ray, spec, tasks(), list(needed), on_done, concurrency=opts.concurrency, cells=total)
            elif workers > 1:
                from harness.run.workers import run_in_processes  # noqa: PLC0415 - lazy: loaded only for more than one worker

                # while the workers' forkserver imports the vendor stacks, this process scores the cells that
                # need none, with the whole --concurrency (the workers are not forked yet) and its share of the pace
                here_spec = replace(_worker_spec(opts, run_id, mode, cache, workers, remote=False),
                                    concurrency=max(1, opts.concurrency))

                def here(cells) -> None:
                    asyncio.run(run_in_process(here_spec, cells, [], cache, on_done))

                run_in_processes(spec, tasks(), workers, list(needed), on_done, batch=store.batch,
                                 on_ready=startup.append, pin=opts.pin_workers, here=here,
                                 on_here=lambda facts: store.write_meta("overlap", facts),
                                 concurrency=here_spec.concurrency)
            else:
                asyncio.run(run_in_process(spec, tasks(), list(needed), cache, on_done,
                                           on_ready=lambda facts: startup.append({**facts, "worker": 0})))
        finally:
            progress.close()
        if startup:   # each worker's vendor imports (start-up, paid once per worker process): one record per worker,
            # the finished one where a worker reported both (its imports ended as its cells ran out)
            one = {}
            for f in sorted(startup, key=lambda f: bool(f.get("unfinished"))):
                one.setdefault(f["worker"], f)
            store.write_meta("startup", [one[w] for w in sorted(one)])
        return total + replayed, reused
    finally:
        if memo is not None:
            memo.close()
        if cache is not None:
            cache.close()


def status_counts(store: RunStore) -> dict:
    out: dict = {}
    for metric, status, n in store.rows("SELECT metric, status, COUNT(*) FROM cells GROUP BY metric, status"):
        out.setdefault(metric, {})[status] = n
    return out
